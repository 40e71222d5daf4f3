"""How many ``tools/call`` requests a server runs at once, and what happens past that.

``CallLimits`` admits a call when fewer than ``max_in_flight`` calls run and fewer than the
tool's own ``concurrency`` (from its definition) run of that tool; otherwise the call
waits, if fewer than ``max_queued`` calls are waiting, and is refused at once if not.
A refusal is a ``Busy`` the server turns into an ``isError`` result, so a client is told
to retry instead of waiting without bound. ``close`` refuses every new call (a draining
server), ``drained`` waits for the calls still running, and ``cut`` ends those still
running then: each raises ``CallCut``, which the server answers as an ``isError`` result.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final, final

import anyio

from agentkit.toolerrors import Busy, CallCut, SemanticError

__all__ = ["DEFAULT_MAX_IN_FLIGHT", "DEFAULT_MAX_QUEUED", "Busy", "CallCut", "CallLimits"]

DEFAULT_MAX_IN_FLIGHT: Final = 64
DEFAULT_MAX_QUEUED: Final = 64


@final
class CallLimits:
    """Admission for calls: a global cap, a bounded queue, and per-tool caps.

    ``max_in_flight`` ``None`` means no global cap; ``max_queued`` 0 means a call that
    cannot run at once is refused. ``queue_timeout`` bounds the wait in the queue.
    """

    def __init__(
        self,
        *,
        max_in_flight: int | None = DEFAULT_MAX_IN_FLIGHT,
        max_queued: int = DEFAULT_MAX_QUEUED,
        queue_timeout: float | None = None,
    ) -> None:
        if max_in_flight is not None and (type(max_in_flight) is not int or max_in_flight < 1):
            raise SemanticError(
                f"max_in_flight must be a positive integer or None, got {max_in_flight!r}"
            )
        if type(max_queued) is not int or max_queued < 0:
            raise SemanticError(f"max_queued must be 0 or a positive integer, got {max_queued!r}")
        self.max_in_flight = max_in_flight
        self.max_queued = max_queued
        self.queue_timeout = queue_timeout
        self._running = 0
        self._waiting = 0
        self._per_tool: Counter[str] = Counter()
        self._closed = False
        self._changed = anyio.Condition()
        self._scopes: set[anyio.CancelScope] = set()
        self._cut = False

    @property
    def in_flight(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def closed(self) -> bool:
        return self._closed

    def _has_room(self, name: str, tool_limit: int | None) -> bool:
        if self.max_in_flight is not None and self._running >= self.max_in_flight:
            return False
        return tool_limit is None or self._per_tool[name] < tool_limit

    def _why_full(self, name: str, tool_limit: int | None) -> str:
        if tool_limit is not None and self._per_tool[name] >= tool_limit:
            cap = f"tool '{name}' runs at most {tool_limit} calls at once (its concurrency)"
        else:
            cap = f"{self._running} calls are running, the server's limit"
        return f"{cap}, and {self._waiting} are waiting, the most the queue holds"

    @asynccontextmanager
    async def admitted(self, name: str, tool_limit: int | None = None) -> AsyncIterator[None]:
        """The block runs as one admitted call of tool ``name``; ``Busy`` if there is no room."""
        if self._closed:
            raise Busy("the server is shutting down")
        if not self._has_room(name, tool_limit):
            if self._waiting >= self.max_queued:
                raise Busy(self._why_full(name, tool_limit))
            await self._wait_for_room(name, tool_limit)
        self._running += 1
        self._per_tool[name] += 1
        try:
            with anyio.CancelScope() as scope:
                self._scopes.add(scope)
                try:
                    yield
                finally:
                    self._scopes.discard(scope)
            if scope.cancelled_caught:  # only cut() cancels this scope
                raise CallCut("the server shut down before the call finished")
        finally:
            self._running -= 1
            self._per_tool[name] -= 1
            if not self._per_tool[name]:
                del self._per_tool[name]
            await self._notify()

    async def _wait_for_room(self, name: str, tool_limit: int | None) -> None:
        self._waiting += 1
        try:
            with anyio.move_on_after(_seconds(self.queue_timeout)) as waited:
                async with self._changed:
                    while not self._has_room(name, tool_limit) and not self._closed:
                        await self._changed.wait()
        finally:
            self._waiting -= 1
        if self._closed:
            raise Busy("the server is shutting down")
        if waited.cancelled_caught:
            raise Busy(
                f"no room within {self.queue_timeout} s, the call deadline (--call-timeout): "
                f"{self._why_full(name, tool_limit)}"
            )

    async def _notify(self) -> None:
        with anyio.CancelScope(shield=True):
            async with self._changed:
                self._changed.notify_all()

    async def close(self) -> None:
        """Refuse every call from now on; calls waiting in the queue are refused too."""
        self._closed = True
        await self._notify()

    def cut(self) -> int:
        """End every running call now (each raises ``CallCut`` where it was admitted);
        how many were running."""
        self._cut = True
        scopes = list(self._scopes)
        for scope in scopes:
            scope.cancel()
        return len(scopes)

    async def drained(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the running calls to end; whether they did."""
        with anyio.move_on_after(timeout):
            async with self._changed:
                while self._running:
                    await self._changed.wait()
        return not self._running


def _seconds(timeout: float | None) -> float:
    return math.inf if timeout is None else timeout
