"""stdin and stdout taken over for the MCP stdio wire, before anything else can write.

An MCP client reads the server's stdout as JSON-RPC, one message a line: any other
byte there is a parse error to it, and a stricter client drops the connection.
``claim_stdio`` makes the wire the server's alone. It keeps private duplicates of
fds 0 and 1 for the wire (``StdioWire``), points fd 1 at stderr and fd 0 at the
null device, and makes ``sys.stdout`` stderr's stream. From then on a tool's
``print``, its writes to ``sys.stdout`` or ``sys.__stdout__``, a child process it
starts and a C extension writing to fd 1 all write to stderr, and so does what
Python buffered for stdout before (whether or not ``PYTHONUNBUFFERED`` is set: an
MCP client's environment does not set it); a child reading stdin reads nothing
instead of the client's messages. Serving enters it before the tools are loaded (a
backend module may print as it is imported), and reads and writes the wire only
through the fds it gives.

On exit the wire's fds are closed. With ``restore`` (a process that goes on after
serving) fds 0 and 1 and ``sys.stdout`` are put back first, once what Python and
the C library buffered meanwhile has gone to stderr. ``agentkit serve`` does not
restore: its process ends with serving, and a tool's thread still running or an
``atexit`` hook would write onto the client's pipe.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, TextIO, final

from agentkit.toolerrors import UsageError

__all__ = ["StdioWire", "claim_stdio"]

_STREAM_NAMES: Final = {0: "stdin", 1: "stdout"}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class StdioWire:
    """The fds the MCP stdio wire is read from (``read_fd``) and written to
    (``write_fd``): the client's stdin and stdout, private to serving."""

    read_fd: int
    write_fd: int


@contextlib.contextmanager
def claim_stdio(*, restore: bool = True) -> Iterator[StdioWire]:
    """The wire's fds, while fd 0 reads the null device and fd 1 and ``sys.stdout``
    write to stderr (see the module's docstring). ``restore``: put fds 0 and 1 and
    ``sys.stdout`` back on exit. Raises ``UsageError`` when stdin or stdout is not
    open (no client could be served)."""
    read_fd = _private_copy(0)
    try:
        write_fd = _private_copy(1)
    except BaseException:
        os.close(read_fd)
        raise
    try:
        try:
            diverted = _Diverted()
        except BaseException:
            _point_back(read_fd, write_fd)
            raise
        try:
            yield StdioWire(read_fd=read_fd, write_fd=write_fd)
        finally:
            if restore:
                diverted.restore(read_fd, write_fd)
    finally:
        for fd in (read_fd, write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def _private_copy(fd: int) -> int:
    """A duplicate of ``fd`` above the standard three (so that moving one of them
    never moves it), closed in any program a child process runs."""
    try:
        if sys.platform == "win32":
            return os.dup(fd)  # not inheritable, as every fd Python opens
        import fcntl

        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError as exc:
        raise UsageError(
            f"MCP over stdio reads the client's messages from stdin and writes the "
            f"answers to stdout, but {_STREAM_NAMES[fd]} (fd {fd}) is not open "
            f"({exc.strerror}); start the server with both connected, as an MCP client does"
        ) from exc


@final
class _Diverted:
    """fds 0 and 1 and ``sys.stdout`` pointed away from the wire; ``restore`` points
    them back at it."""

    def __init__(self) -> None:
        _move(0, os.devnull, os.O_RDONLY)
        try:
            os.dup2(2, 1)
            _rebind_std_handle(1)
        except OSError:  # no stderr: stray output is dropped
            _move(1, os.devnull, os.O_WRONLY)
        # What Python holds for fd 1, written before serving began, goes to stderr now.
        self._fd1_streams = _fd1_streams()
        self._line_buffering: list[tuple[io.TextIOWrapper, bool]] = []
        for stream in self._fd1_streams:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
            if isinstance(stream, io.TextIOWrapper):  # each line out as it is written
                self._line_buffering.append((stream, stream.line_buffering))
                with contextlib.suppress(OSError, ValueError):
                    stream.reconfigure(line_buffering=True)
        self._stdout = sys.stdout
        self._replacement = sys.stderr if sys.stdout in self._fd1_streams else None
        if self._replacement is not None:
            sys.stdout = self._replacement

    def restore(self, read_fd: int, write_fd: int) -> None:
        for stream in self._fd1_streams:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        for wrapper, line_buffering in self._line_buffering:
            with contextlib.suppress(OSError, ValueError):
                wrapper.reconfigure(line_buffering=line_buffering)
        _flush_c_stdio()
        if self._replacement is not None and sys.stdout is self._replacement:
            sys.stdout = self._stdout
        _point_back(read_fd, write_fd)


def _point_back(read_fd: int, write_fd: int) -> None:
    """fds 0 and 1 pointed at the wire again."""
    for fd, wire in ((0, read_fd), (1, write_fd)):
        with contextlib.suppress(OSError):
            os.dup2(wire, fd)
            _rebind_std_handle(fd)


def _move(fd: int, path: str, flags: int) -> None:
    """Point ``fd`` at the file ``path`` opens with ``flags``."""
    opened = os.open(path, flags)
    try:
        os.dup2(opened, fd)
        _rebind_std_handle(fd)
    finally:
        os.close(opened)


def _fd1_streams() -> list[TextIO]:
    """``sys.stdout`` and ``sys.__stdout__``, those of them that write to fd 1."""
    streams: list[TextIO] = []
    for stream in (sys.stdout, sys.__stdout__):
        if stream is None or any(stream is seen for seen in streams):
            continue
        with contextlib.suppress(AttributeError, OSError, ValueError):
            if stream.fileno() == 1:
                streams.append(stream)
    return streams


def _flush_c_stdio() -> None:
    """What C code buffered with stdio (``printf``) is written now, to stderr, rather
    than onto the wire once fd 1 is the wire again."""
    if sys.platform == "win32":
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)


def _rebind_std_handle(fd: int) -> None:
    """On Windows a child process inherits the standard handles, not the C runtime's
    fds: point the handle of ``fd`` where ``fd`` now points."""
    if sys.platform != "win32":
        return
    import ctypes
    import msvcrt

    std_handle = {0: -10, 1: -11}[fd]  # STD_INPUT_HANDLE, STD_OUTPUT_HANDLE
    ctypes.windll.kernel32.SetStdHandle(std_handle, msvcrt.get_osfhandle(fd))
