"""stdin and stdout as pipes, read and written without an event loop (issue #10).

The stdio front (``agentkit.mcp_front``) answers a client's first lines before asyncio
is imported: ``PipeLines`` takes whole lines from a pipe with blocking reads, each
wait bounded by ``select``, and ``write_all`` writes an answer whole. The event loop's
``agentkit.mcp_stdio.LineReader`` then reads on from where the front stopped
(``PipeLines.rest``, the bytes read and not taken). Both split lines with
``take_lines``, so the SDK reads exactly the lines the front did not, as it would
have read them itself.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import time
from collections import deque
from typing import Final, final

from agentkit.mcp_claim import StdioWire

__all__ = ["PipeLines", "stdio_pipes", "take_lines", "write_all"]

#: The most one read takes from the pipe (what asyncio's pipe transport reads).
READ_BYTES: Final = 256 * 1024


def take_lines(buffer: bytearray) -> list[bytes]:
    """The whole lines at the start of ``buffer``, with their ends, removed from it.

    Lines end as a text file's do: at ``\\n``, ``\\r\\n`` or a lone ``\\r``, but only
    bytes up to the last ``\\n`` are taken, so a ``\\r\\n`` is never cut in two and the
    split does not depend on how the bytes arrived.
    """
    end = buffer.rfind(b"\n")
    if end < 0:
        return []
    lines = bytes(buffer[: end + 1]).splitlines(keepends=True)
    del buffer[: end + 1]
    return lines


def _is_pipe(fd: int) -> bool:
    """A pipe or a socket; not a file, and not a terminal (non-blocking mode, which the
    event loop sets, would be the shell's too)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def stdio_pipes(wire: StdioWire) -> bool:
    """Whether the wire's stdin and stdout are pipes this module and the event loop can
    serve: both pipes or sockets, and not on Windows (``select`` takes no pipe there)."""
    return sys.platform != "win32" and _is_pipe(wire.read_fd) and _is_pipe(wire.write_fd)


@final
class PipeLines:
    """The lines a pipe brings, taken one at a time with blocking reads.

    ``next_line`` ends a wait early when ``wake`` (the read end of a pipe a signal
    handler writes to) becomes readable. A last line without a newline is given at the
    end of the input, as a text file's is; bad UTF-8 bytes are replaced, as
    ``LineReader`` replaces them.
    """

    def __init__(self, fd: int, *, wake: int | None = None) -> None:
        self._fd = fd
        self._wake = wake
        self._partial = bytearray()
        self._lines: deque[bytes] = deque()
        self._ended = False

    def next_line(self, timeout: float | None = None) -> str | None:
        """The next whole line; ``None`` at the end of the input, after ``timeout``
        seconds without one (a line begun meanwhile stays unread), or on a wake."""
        deadline = None if timeout is None else time.monotonic() + timeout
        waited = [self._fd] if self._wake is None else [self._fd, self._wake]
        while not self._lines:
            if self._ended:
                return None
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select(waited, [], [], remaining)
            if not readable or self._wake in readable:  # the time is up, or woken
                return None
            self._read()
        return self._lines.popleft().decode("utf-8", errors="replace")

    def _read(self) -> None:
        data = os.read(self._fd, READ_BYTES)
        if not data:
            self._ended = True
            if self._partial:
                self._lines.append(bytes(self._partial))
                self._partial.clear()
            return
        self._partial += data
        self._lines.extend(take_lines(self._partial))

    def rest(self) -> bytes:
        """The bytes read and not taken as lines, in their order: what whoever reads
        the pipe next must read first."""
        return b"".join(self._lines) + bytes(self._partial)


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` whole to ``fd``, waiting while the pipe is full (also when the
    pipe was given non-blocking). Raises ``BrokenPipeError`` when the reader is gone."""
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            select.select([], [fd], [])
            continue
        view = view[written:]
