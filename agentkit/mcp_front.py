"""``agentkit serve`` over stdio, first answering without the MCP SDK (issue #10).

``serve`` loads and validates the tools, then answers the client's ``initialize``,
``notifications/initialized``, ``ping`` and first ``tools/list`` with
``agentkit.mcp_wire.Front``, before ``mcp``, ``mcp_types`` or pydantic is imported,
and before any event loop: it reads and writes the pipes with blocking calls
(``agentkit.mcp_pipes``), so neither asyncio nor anyio is imported until the first
listing is out. It hands over to the SDK (``agentkit.mcp_server.serve_stdio``) right
after that first listing, at the first line the front does not answer, when stdin
ends, on SIGHUP, or when the client has said nothing for ``IDLE_SECONDS`` after
``initialize``: the SDK reads the client's ``initialize`` again (``Front.replay``; its
answer, the client's second, is not sent), then every line the front did not answer
(the event loop's reader reads first the bytes the front read past its last line),
and serves on as it always has. Where the front cannot serve (stdin or stdout not a
pipe, a listing it cannot write as the SDK would) the SDK serves from the start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections import deque
from collections.abc import AsyncIterable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, final

from agentkit.credentials import CredentialsManager
from agentkit.mcp_pipes import PipeLines, stdio_pipes, write_all
from agentkit.mcp_wire import REPLAY_ID, Front, file_state

if TYPE_CHECKING:
    from types import FrameType

    from agentkit.mcp_claim import StdioWire
    from agentkit.toolregistry import ToolRegistry

__all__ = ["IDLE_SECONDS", "answer_first", "serve"]

#: How long after ``initialize`` the front waits for a line before handing over anyway,
#: so that a client that lists later still hears of reloads (``notifications/...``).
IDLE_SECONDS: Final = 0.5
_REPLAYED_ANSWER: Final = f'{{"jsonrpc":"2.0","id":"{REPLAY_ID}",'


class _Writer(Protocol):
    async def write(self, text: str) -> object: ...

    async def flush(self) -> None: ...


class _Lines(Protocol):
    def next_line(self, timeout: float | None = None) -> str | None: ...


def serve(
    load: Callable[[], ToolRegistry],
    files: Callable[[], Iterable[Path]],
    *,
    wire: StdioWire,
    watch: bool = False,
    interval: float = 1.0,
    credentials_file: str | None = None,
    **options: Any,
) -> None:
    """Serve the tools ``load()`` gives on ``wire`` (the client's stdin and stdout, as
    ``agentkit.mcp_claim.claim_stdio`` keeps them) until the client disconnects.

    ``files()`` lists the files a reload watches (with ``watch``, every ``interval``
    seconds; see ``agentkit.mcp_reload.Reloader``); ``options`` are
    ``agentkit.mcp_server.serve``'s. The tools are loaded and validated, and the
    credentials read, before the first answer: a problem is an error at start.
    """
    state = file_state(files()) if watch else ()
    registry = load()
    credentials = CredentialsManager.from_env(credentials_file)
    front = Front.for_tools(registry) if stdio_pipes(wire) else None
    hangup = _Hangup()
    replay: list[str] = []
    unread = b""
    if front is not None:
        # Answered with blocking reads and writes: no event loop, no thread, until
        # the first listing is out.
        hangup.install()
        try:
            lines = PipeLines(wire.read_fd, wake=hangup.wake)
            replay = answer_first(
                front, lines, lambda answer: write_all(wire.write_fd, answer.encode("utf-8"))
            )
            unread = lines.rest()
        finally:
            hangup.close()

    # The SDK, and the event loop, only now.
    import anyio

    from agentkit.mcp_limits import DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_WAITING, worker_threads
    from agentkit.mcp_reload import Reloader
    from agentkit.mcp_server import serve_stdio
    from agentkit.mcp_stdio import loop_stdio
    from agentkit.toolexecutor import ToolExecutor

    executor = ToolExecutor(
        credentials=credentials,
        # A sync call waiting for its user keeps its thread (agentkit.mcp_limits).
        max_workers=worker_threads(
            options.get("max_calls", DEFAULT_MAX_IN_FLIGHT),
            options.get("max_waiting", DEFAULT_MAX_WAITING),
        ),
    )

    async def run() -> None:
        async with loop_stdio(wire, unread) as (wire_in, wire_out):
            lines: Any = wire_in
            out: Any = wire_out
            if front is not None:
                lines = _Replaying(replay, wire_in)
                out = _WithoutReplayedAnswer(wire_out, front.expected)
            reloader = Reloader(
                load, files, watch=watch, interval=interval, loaded=(registry, state)
            )
            await serve_stdio(
                reloader.served,
                executor,
                lines,
                out,
                reloader=reloader,
                reload_now=hangup.seen,
                **options,
            )

    with executor:  # the thread pool goes when the client does
        anyio.run(run)


@final
class _Hangup:
    """SIGHUP while the front answers: noted (for a reload once the reloader listens),
    and the front's wait ends (a byte on ``wake``). The handler stays until the
    reloader's replaces it, so that a SIGHUP meanwhile does not end the process."""

    def __init__(self) -> None:
        self.seen = False
        #: The read end of the pipe the handler writes to while the front waits.
        self.wake: int | None = None
        self._wake_write: int | None = None

    def install(self) -> None:
        read, write = os.pipe()
        os.set_blocking(write, False)
        try:
            signal.signal(signal.SIGHUP, self._received)
        except (AttributeError, ValueError):  # no SIGHUP (Windows); not the main thread
            os.close(read)
            os.close(write)
            return
        self.wake, self._wake_write = read, write

    def _received(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True
        if self._wake_write is not None:
            with contextlib.suppress(OSError):  # the pipe is full: the front wakes anyway
                os.write(self._wake_write, b"\0")

    def close(self) -> None:
        """The front is done: its wake pipe goes, the handler only notes a SIGHUP."""
        wake, write = self.wake, self._wake_write
        self._wake_write = self.wake = None  # first: a signal now finds no pipe
        for fd in (wake, write):
            if fd is not None:
                os.close(fd)


def answer_first(
    front: Front,
    lines: _Lines,
    write: Callable[[str], None],
    *,
    idle_seconds: float = IDLE_SECONDS,
) -> list[str]:
    """Answer the lines ``front`` answers (``write`` sends each answer whole); the
    lines the SDK must read before the rest of ``lines`` (``Front.replay``, then the
    first line ``front`` declined, if any).

    Stops after the first ``tools/list`` answer, at a declined line, when ``lines``
    gives ``None`` (the end of the input, a SIGHUP), after ``idle_seconds`` without a
    line once ``initialize`` is answered, or when the client no longer reads (the SDK
    then meets the closed pipe as it would have). A line is taken only whole: a wait
    cut short leaves it for the SDK.
    """
    declined: list[str] = []
    while not front.listed:
        line = lines.next_line(idle_seconds if front.replay else None)
        if line is None:
            break
        answer = front.answer(line)
        if answer is None:
            declined.append(line)
            break
        if answer:
            try:
                write(answer)
            except BrokenPipeError:
                break
    return [*front.replay, *declined]


@final
class _Replaying:
    """The lines to replay, then the rest of ``lines``: what the SDK reads."""

    def __init__(self, replay: list[str], lines: AsyncIterable[str]) -> None:
        self._replay = deque(replay)
        self._lines = aiter(lines)

    def __aiter__(self) -> _Replaying:
        return self

    async def __anext__(self) -> str:
        if self._replay:
            return self._replay.popleft()
        return await anext(self._lines)


@final
class _WithoutReplayedAnswer:
    """What the SDK writes, except its answer to the replayed ``initialize``: the client
    has the front's. Should the two differ (an SDK the front does not match), stderr
    says so."""

    def __init__(self, out: _Writer, expected: str) -> None:
        self._out = out
        self._expected = expected

    async def write(self, text: str) -> None:
        if self._expected and text.startswith(_REPLAYED_ANSWER):
            expected, self._expected = self._expected, ""
            if text != expected:
                print(
                    "agentkit: warning: the MCP SDK answered the client's initialize "
                    f"otherwise than the server did at start: {text[:500]!r}",
                    file=sys.stderr,
                    flush=True,
                )
            return
        await self._out.write(text)

    async def flush(self) -> None:
        await self._out.flush()
