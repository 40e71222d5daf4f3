"""``agentkit serve`` over stdio, first answering without the MCP SDK (issue #10).

``serve`` loads and validates the tools, then answers the client's ``initialize``,
``notifications/initialized``, ``ping`` and first ``tools/list`` with
``agentkit.mcp_wire.Front``, before ``mcp``, ``mcp_types`` or pydantic is imported.
It hands over to the SDK (``agentkit.mcp_server.serve_stdio``) right after that first
listing, at the first line the front does not answer, when stdin ends, on SIGHUP, or
when the client has said nothing for ``IDLE_SECONDS`` after ``initialize``: the SDK reads
the client's ``initialize`` again (``Front.replay``; its answer, the client's second, is
not sent), then every line the front did not answer, and serves on as it always has.
Where the front cannot serve (stdin or stdout not a pipe, a listing it cannot write
as the SDK would) the SDK serves from the start.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import signal
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, final

import anyio

from agentkit.credentials import CredentialsManager
from agentkit.mcp_limits import DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_WAITING, worker_threads
from agentkit.mcp_stdio import loop_stdio
from agentkit.mcp_wire import REPLAY_ID, Front, file_state
from agentkit.toolexecutor import ToolExecutor

if TYPE_CHECKING:
    from agentkit.toolregistry import ToolRegistry

__all__ = ["IDLE_SECONDS", "answer_first", "serve"]

#: How long after ``initialize`` the front waits for a line before handing over anyway,
#: so that a client that lists later still hears of reloads (``notifications/...``).
IDLE_SECONDS: Final = 0.5
_REPLAYED_ANSWER: Final = f'{{"jsonrpc":"2.0","id":"{REPLAY_ID}",'


class _Writer(Protocol):
    async def write(self, text: str) -> None: ...

    async def flush(self) -> None: ...


def serve(
    load: Callable[[], ToolRegistry],
    files: Callable[[], Iterable[Path]],
    *,
    watch: bool = False,
    interval: float = 1.0,
    credentials_file: str | None = None,
    **options: Any,
) -> None:
    """Serve the tools ``load()`` gives on stdin/stdout until the client disconnects.

    ``files()`` lists the files a reload watches (with ``watch``, every ``interval``
    seconds; see ``agentkit.mcp_reload.Reloader``); ``options`` are
    ``agentkit.mcp_server.serve``'s. The tools are loaded and validated, and the
    credentials read, before the first answer: a problem is an error at start.
    """
    state = file_state(files()) if watch else ()
    registry = load()
    executor = ToolExecutor(
        credentials=CredentialsManager.from_env(credentials_file),
        # A sync call waiting for its user keeps its thread (agentkit.mcp_limits).
        max_workers=worker_threads(
            options.get("max_calls", DEFAULT_MAX_IN_FLIGHT),
            options.get("max_waiting", DEFAULT_MAX_WAITING),
        ),
    )
    front = Front.for_tools(registry)

    async def run() -> None:
        async with loop_stdio() as (wire_in, wire_out):
            lines: Any = wire_in
            out: Any = wire_out
            hangup = _Hangup()
            if front is not None and wire_in is not None and wire_out is not None:
                hangup.install()
                replay = await answer_first(front, wire_in, wire_out, hangup=hangup)
                lines = _Replaying(replay, wire_in)
                out = _WithoutReplayedAnswer(wire_out, front.expected)
            # The SDK, only now.
            from agentkit.mcp_reload import Reloader
            from agentkit.mcp_server import serve_stdio

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
    and the front hands over (``scope`` is cancelled). The handler stays until the
    reloader's replaces it, so that a SIGHUP meanwhile does not end the process."""

    def __init__(self) -> None:
        self.seen = False
        #: The front's wait, while it waits.
        self.scope: anyio.CancelScope | None = None

    def install(self) -> None:
        # Not on Windows, nor outside the main thread (then SIGHUP is not handled yet).
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self._received)

    def _received(self) -> None:
        self.seen = True
        if self.scope is not None:
            self.scope.cancel()


async def answer_first(
    front: Front,
    lines: AsyncIterator[str],
    out: _Writer,
    *,
    hangup: _Hangup | None = None,
    idle_seconds: float = IDLE_SECONDS,
) -> list[str]:
    """Answer the lines ``front`` answers; the lines the SDK must read before the rest
    of ``lines`` (``Front.replay``, then the first line ``front`` declined, if any).

    Stops after the first ``tools/list`` answer, at a declined line, at the end of
    ``lines``, on SIGHUP (``hangup``), or after ``idle_seconds`` without a line once
    ``initialize`` is answered. A line is taken only whole: a wait cut short leaves it
    for the SDK.
    """
    declined: list[str] = []
    with anyio.CancelScope() as waiting:
        if hangup is not None:
            hangup.scope = waiting
            if hangup.seen:
                waiting.cancel()
        while not front.listed:
            if front.replay:
                waiting.deadline = anyio.current_time() + idle_seconds
            try:
                line = await lines.__anext__()
            except StopAsyncIteration:
                break
            waiting.deadline = math.inf
            answer = front.answer(line)
            if answer is None:
                declined.append(line)
                break
            if answer:
                await out.write(answer)
                await out.flush()
    if hangup is not None:
        hangup.scope = None
    return [*front.replay, *declined]


@final
class _Replaying:
    """The lines to replay, then the rest of ``lines``: what the SDK reads."""

    def __init__(self, replay: list[str], lines: AsyncIterator[str]) -> None:
        self._replay = deque(replay)
        self._lines = lines

    def __aiter__(self) -> _Replaying:
        return self

    async def __anext__(self) -> str:
        if self._replay:
            return self._replay.popleft()
        return await self._lines.__anext__()


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
