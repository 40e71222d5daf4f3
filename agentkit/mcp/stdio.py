"""stdin and stdout for the MCP stdio server, read and written on the event loop.

The SDK's ``stdio_server`` reads each line and writes each message through a worker
thread (``anyio.wrap_file``): three thread hand-offs a call, most of a sequential
call's time on a busy machine. ``loop_stdio`` gives it streams of its own instead,
served by the event loop's pipe transports on the fds ``agentkit.mcp.stdio_claim`` keeps
for the wire (fd 1 itself writes to stderr while serving, so that nothing but the
server's messages reaches the client), and keeps the SDK's guarantees: lines are
UTF-8 with bad bytes replaced, and the fds are blocking again on exit.

Where the loop cannot serve them (stdin or stdout is a regular file or a terminal,
Windows, another event loop than asyncio) it gives the SDK the wire's fds wrapped as
the SDK wraps its own stdin and stdout. Lines are split as a text file splits them
(``take_lines``).

The SDK drops a line it cannot read (no JSON, a ``\\ud800`` escape its parser refuses,
no JSON-RPC message) without an answer, and a client would wait for its id forever.
``ReadLines`` keeps each line the SDK reads until its message is taken, and
``refusal`` is the error that answers one it could not read: with the request's id
when it can be read, as JSON-RPC has it. An answer of the client's it could not read
(``lost_answer``) reaches the server as an error, so the question it answers ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import stat
import sys
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Final, Literal, final

import anyio

from agentkit.mcp.stdio_claim import StdioWire

__all__ = [
    "LineReader",
    "LineWriter",
    "ReadLines",
    "lone_surrogate",
    "loop_stdio",
    "lost_answer",
    "refusal",
    "stdio_pipes",
    "take_lines",
    "writable",
]

#: Past this many bytes read and not yet taken, reading pauses until the server catches up.
HIGH_WATER: Final = 4 * 1024 * 1024
#: How long the end of serving waits for the client to take the last answers.
CLOSE_SECONDS: Final = 5.0
#: JSON-RPC's error codes, as the SDK answers a body it cannot read over HTTP: -32700
#: for one its JSON parser refuses, -32602 for JSON that is no message it reads.
PARSE_ERROR: Final = -32700
INVALID_PARAMS: Final = -32602
_LONE_SURROGATE: Final = (
    "holds a lone surrogate escape (\\ud800-\\udfff without its pair), which is no Unicode "
    "character; send the text as UTF-8, or a character outside the BMP as a surrogate pair"
)


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
    serve: both pipes or sockets, and not on Windows (its loop takes no pipe there)."""
    return sys.platform != "win32" and _is_pipe(wire.read_fd) and _is_pipe(wire.write_fd)


def writable(text: str) -> bool:
    """Whether UTF-8 can carry ``text`` (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lone_surrogate(message: dict[str, Any]) -> str | None:
    """Where in ``message`` a key or a string holds a lone surrogate (``params.arguments``,
    ``the id``), or None. Searched without recursion: a deep message is no crash."""
    stack: list[tuple[Any, str]] = [(message, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if not writable(value):
                return f"the value of '{path}'" if path else "the message"
        elif isinstance(value, dict):
            for key, item in value.items():
                if not writable(key):
                    return f"a key in '{path}'" if path else "a key of the message"
                stack.append((item, f"{path}.{key}" if path else key))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{index}]") for index, item in enumerate(value))
    return None


@final
class LineReader(asyncio.Protocol):
    """The lines a pipe brings, as ``str`` with their ``\\n`` (``async for line in reader``).

    A last line without a newline is given at the end of the input, as a text file's is.
    """

    def __init__(self) -> None:
        self._partial = bytearray()
        self._lines: deque[bytes] = deque()
        self._pending = 0  # bytes read and not yet taken
        self._ended = False
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False

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
    wire: StdioWire,
) -> AsyncIterator[tuple[AsyncIterable[str], LineWriter | anyio.AsyncFile[str]]]:
    """The lines read from the wire and a writer to it, for the SDK's ``stdio_server``:
    served by the running asyncio loop's pipe transports where they can be, otherwise
    (a file or a terminal, Windows, trio) as the SDK wraps its own stdin and stdout,
    each read and write in a worker thread.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio)
        loop = None
    if loop is None or not stdio_pipes(wire):
        yield _text_file(wire.read_fd, "rb"), _text_file(wire.write_fd, "wb")
        return
    stdin_file = os.fdopen(wire.read_fd, "rb", buffering=0, closefd=False)
    stdout_file = os.fdopen(wire.write_fd, "wb", buffering=0, closefd=False)
    reading: asyncio.ReadTransport | None = None
    writing: tuple[asyncio.WriteTransport, LineWriter] | None = None
    try:
        reading, reader = await loop.connect_read_pipe(LineReader, stdin_file)
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
        for fd in (wire.read_fd, wire.write_fd):  # the transports made them non-blocking
            with contextlib.suppress(OSError):
                os.set_blocking(fd, True)


def _text_file(fd: int, mode: Literal["rb", "wb"]) -> anyio.AsyncFile[str]:
    """``fd`` as UTF-8 text, read and written in worker threads, as the SDK's
    ``stdio_server`` wraps stdin and stdout (bad bytes read are replaced). The fd is
    the wire's to close: a worker thread may still be blocked reading it."""
    binary = os.fdopen(fd, mode, closefd=False)
    return anyio.wrap_file(io.TextIOWrapper(binary, encoding="utf-8", errors="replace"))


@final
class ReadLines:
    """``lines`` as the SDK's ``stdio_server`` reads them, each kept until ``taken``.

    The SDK makes every line it reads one message, or the exception that says it could
    not read it, in order, and reads the next line only once that one is taken: so
    ``taken()``, called for each, gives the line it came from.
    """

    def __init__(self, lines: AsyncIterable[str]) -> None:
        self._lines = aiter(lines)
        self._read: deque[str] = deque()

    def __aiter__(self) -> ReadLines:
        return self

    async def __anext__(self) -> str:
        line = await anext(self._lines)
        self._read.append(line)
        return line

    def taken(self) -> str | None:
        """The line the message just taken came from (None if none is kept)."""
        return self._read.popleft() if self._read else None


def refusal(line: str) -> dict[str, Any] | None:
    """The JSON-RPC error (a ``JSONRPCError`` as a dictionary) answering ``line``, which the
    SDK could not read; None where no answer is due: a blank line, a notification, or a
    response (JSON-RPC answers neither).

    The error carries the request's ``id`` when it can be read (an integer, or a string
    UTF-8 can carry), so that the client stops waiting for it; ``null`` otherwise. Its
    code is the one the SDK answers over HTTP: -32700 for what its parser refuses (no
    JSON, or JSON holding a lone surrogate escape such as ``\\ud800``, which is no
    Unicode character), -32602 for JSON that is no JSON-RPC 2.0 message. The message
    names the member at fault and never shows a value of the line.
    """
    if not line.strip():
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    except RecursionError:
        return _error(None, PARSE_ERROR, "Parse error: the JSON is nested too deeply to read")
    if not isinstance(message, dict):
        return _error(
            None,
            INVALID_PARAMS,
            "Invalid request: a message must be one JSON-RPC 2.0 object "
            f"(got {_json_kind(message)}; a batch is not read)",
        )
    if "method" not in message and ("result" in message or "error" in message):
        return None  # a response from the client: never answered
    if "id" not in message and "method" in message:
        return None  # a notification: never answered, even a bad one
    request_id = message.get("id")
    readable = request_id if _is_request_id(request_id) else None
    at = lone_surrogate(message)
    if at is not None:
        return _error(
            readable,
            PARSE_ERROR,
            f"Parse error: {at} {_LONE_SURROGATE}",
        )
    return _error(readable, INVALID_PARAMS, f"Invalid request: {_not_a_request(message)}")


def lost_answer(line: str) -> dict[str, Any] | None:
    """What stands in for ``line``, which the SDK could not read, when it is the client's
    answer to a request of the server's (an elicitation's): a JSON-RPC error of the
    answer's id, for the server, so that the request ends now instead of waiting for
    an answer that was lost. None for any other line, or an id that cannot be read."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if (
        not isinstance(message, dict)
        or "method" in message
        or ("result" not in message and "error" not in message)
        or not _is_request_id(message.get("id"))
    ):
        return None
    at = lone_surrogate(message)
    why = f"{at} {_LONE_SURROGATE}" if at is not None else "it is no JSON-RPC 2.0 response"
    return _error(message["id"], PARSE_ERROR, f"its answer could not be read: {why}")


def _error(request_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _is_request_id(value: Any) -> bool:
    """An id MCP reads (an integer or a string) that UTF-8 can carry back."""
    if isinstance(value, str):
        return writable(value)
    return type(value) is int


def _not_a_request(message: dict[str, Any]) -> str:
    """What keeps ``message`` (a JSON object with an id or no method) from being a
    JSON-RPC 2.0 request, as a clause naming the member and what it must be."""
    if message.get("jsonrpc") != "2.0":
        return "'jsonrpc' must be \"2.0\""
    if "method" not in message:
        return "a request needs a 'method' (a message with an 'id' and no 'method' is no request)"
    if not isinstance(message["method"], str):
        return f"'method' must be a string, got {_json_kind(message['method'])}"
    if not _is_request_id(message.get("id")):
        return f"'id' must be a string or an integer, got {_json_kind(message.get('id'))}"
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return f"'params' must be an object, got {_json_kind(params)}"
    return "the server could not read it as a JSON-RPC 2.0 request of MCP"


def _json_kind(value: Any) -> str:
    """The JSON type of ``value`` (``an array``, ``a number``), never the value itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
