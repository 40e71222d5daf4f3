"""stdin and stdout for the MCP stdio server, read and written on the event loop.

The SDK's ``stdio_server`` reads each line and writes each message through a worker
thread (``anyio.wrap_file``): three thread hand-offs a call, most of a sequential
call's time on a busy machine. ``loop_stdio`` gives it streams of its own instead,
served by the event loop's pipe transports, and keeps the SDK's guarantees: while
serving, fd 0 reads the null device and fd 1 writes to stderr (a tool's stray
``print`` or a child process cannot corrupt the wire), lines are UTF-8 with bad bytes
replaced, and both descriptors are restored, blocking again, on exit.

Where the loop cannot serve them (stdin or stdout is a regular file or a terminal,
Windows, another event loop than asyncio) it yields ``None`` for both, and the SDK
does as it always has. Lines are split with ``agentkit.mcp_pipes.take_lines``, as
the stdio front split the lines it read first (``loop_stdio``'s ``unread`` are the
bytes it read past them).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections import deque
from collections.abc import AsyncIterator
from typing import Final, final

import anyio

from agentkit.mcp_pipes import stdio_pipes, take_lines

__all__ = ["LineReader", "LineWriter", "loop_stdio"]

#: Past this many bytes read and not yet taken, reading pauses until the server catches up.
HIGH_WATER: Final = 4 * 1024 * 1024
#: How long the end of serving waits for the client to take the last answers.
CLOSE_SECONDS: Final = 5.0


@final
class LineReader(asyncio.Protocol):
    """The lines a pipe brings, as ``str`` with their ``\\n`` (``async for line in reader``).

    A last line without a newline is given at the end of the input, as a text file's is.
    ``unread``: bytes someone else read from the pipe and did not take, read first.
    """

    def __init__(self, unread: bytes = b"") -> None:
        self._partial = bytearray()
        self._lines: deque[bytes] = deque()
        self._pending = 0  # bytes read and not yet taken
        self._ended = False
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False
        if unread:
            self.data_received(unread)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._pending += len(data)
        self._partial += data
        lines = take_lines(self._partial)
        if not lines:
            return
        self._lines.extend(lines)
        self._wake()
        if self._pending > HIGH_WATER and self._transport is not None and not self._paused:
            self._paused = True
            self._transport.pause_reading()

    def eof_received(self) -> bool:
        self._end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()

    def _end(self) -> None:
        if self._partial:
            self._lines.append(bytes(self._partial))
            self._partial.clear()
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while not self._lines:
            if self._ended:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        line = self._lines.popleft()
        self._pending -= len(line)
        if self._paused and self._pending <= HIGH_WATER // 2 and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return line.decode("utf-8", errors="replace")


@final
class LineWriter(asyncio.Protocol):
    """Text written to a pipe; ``flush`` waits while the pipe's buffer is over its limit."""

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._paused = False
        self._lost: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self._transport = transport

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = exc or BrokenPipeError("stdout was closed")
        self._wake()

    async def closed(self) -> None:
        """Until the transport is closed: everything written has gone out (or cannot)."""
        while self._lost is None:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def write(self, text: str) -> None:
        if self._lost is not None:
            raise BrokenPipeError("stdout was closed") from self._lost
        assert self._transport is not None
        self._transport.write(text.encode("utf-8"))

    async def flush(self) -> None:
        while self._paused and self._lost is None:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self._lost is not None:
            raise BrokenPipeError("stdout was closed") from self._lost


@contextlib.asynccontextmanager
async def loop_stdio(
    unread: bytes = b"",
) -> AsyncIterator[tuple[LineReader, LineWriter] | tuple[None, None]]:
    """stdin and stdout served by the running asyncio loop, or ``(None, None)`` where they
    cannot be (then the SDK's ``stdio_server`` reads and writes them its own way).
    ``unread``: bytes already read from stdin and not taken (``PipeLines.rest``)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio)
        loop = None
    if loop is None or not stdio_pipes():
        yield None, None
        return
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    stdin_file = os.fdopen(wire_in, "rb", buffering=0, closefd=False)
    stdout_file = os.fdopen(wire_out, "wb", buffering=0, closefd=False)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        # Flushed first: anything Python buffered for stdout goes to the wire, not stderr.
        sys.stdout.flush()
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    reading: asyncio.ReadTransport | None = None
    writing: tuple[asyncio.WriteTransport, LineWriter] | None = None
    try:
        reading, reader = await loop.connect_read_pipe(lambda: LineReader(unread), stdin_file)
        writing = await loop.connect_write_pipe(LineWriter, stdout_file)
        yield reader, writing[1]
    finally:
        if reading is not None:
            reading.close()
        if writing is not None:
            # What is still buffered goes out first, as the SDK's blocking writes had it.
            writing[0].close()
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECONDS):
                await writing[1].closed()
        for wire, fd in ((wire_in, 0), (wire_out, 1)):
            with contextlib.suppress(OSError):
                os.set_blocking(wire, True)
                os.dup2(wire, fd)
            with contextlib.suppress(OSError):
                os.close(wire)
