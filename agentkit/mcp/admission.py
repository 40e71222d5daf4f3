"""How many ``tools/call`` requests a server runs at once, and what happens past that.

``CallLimits`` admits a call when fewer than ``max_in_flight`` calls run and fewer than the
tool's own ``concurrency`` (from its definition) run of that tool; otherwise the call
waits, if fewer than ``max_queued`` calls are waiting, and is refused at once if not.
A refusal is a ``Busy`` the server turns into an ``isError`` result, so a client is told
to retry instead of waiting without bound. ``close`` refuses every new call (a draining
server), ``drained`` waits for the calls still running, and ``cut`` ends those still
running then: each raises ``CallInterrupted``, which the server answers as an ``isError`` result.

A call that waits for its user's answer (``Admission.asking``) gives its slots back
while it waits: a question costs no running slot, only one of ``max_waiting`` places,
for at most ``answer_timeout`` seconds. When the answer comes the call is admitted
again, as a new call would be (at once, or in the queue, or ``Busy``). Whether its
client is still there to answer is ``client_left``'s to say (``watching`` the
connection of an HTTP request).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any, Final, final

import anyio

from agentkit.context import ELICIT_SECONDS
from agentkit.toolerrors import Busy, CallInterrupted, ElicitationError, SemanticError

__all__ = [
    "DEFAULT_ANSWER_SECONDS",
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_MAX_QUEUED",
    "DEFAULT_MAX_WAITING",
    "MAX_WAITING",
    "Admission",
    "Busy",
    "CallInterrupted",
    "CallLimits",
    "ClientLeft",
    "client_left",
    "watching",
    "worker_threads",
]

DEFAULT_MAX_IN_FLIGHT: Final = 64
DEFAULT_MAX_QUEUED: Final = 64
#: How many calls may wait for their users' answers at once, by default (``--max-waiting``).
DEFAULT_MAX_WAITING: Final = 64
#: The most ``--max-waiting`` may be: each waiting call keeps its task (and a sync tool's
#: thread) and its question in memory.
MAX_WAITING: Final = 1024
#: How long a call waits for its user's answer, by default (``--answer-timeout``); at
#: most ``agentkit.context.ELICIT_SECONDS``.
DEFAULT_ANSWER_SECONDS: Final = 300.0
#: Where ``watching`` keeps, in an ASGI scope, the event set when the client leaves.
_LEFT: Final = "agentkit.client_left"

#: An ASGI ``receive`` (typed here without Starlette, which stdio serving does not need).
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


@final
class CallLimits:
    """Admission for calls: a global cap, a bounded queue, and per-tool caps.

    ``max_in_flight`` ``None`` means no global cap; ``max_queued`` 0 means a call that
    cannot run at once is refused. ``queue_timeout`` bounds the wait in the queue.
    ``max_waiting`` calls at most (1 to ``MAX_WAITING``) may wait for their users'
    answers at once, each for at most ``answer_timeout`` seconds (up to
    ``ELICIT_SECONDS``), holding no slot meanwhile (``Admission.asking``).
    """

    def __init__(
        self,
        *,
        max_in_flight: int | None = DEFAULT_MAX_IN_FLIGHT,
        max_queued: int = DEFAULT_MAX_QUEUED,
        queue_timeout: float | None = None,
        max_waiting: int = DEFAULT_MAX_WAITING,
        answer_timeout: float = DEFAULT_ANSWER_SECONDS,
    ) -> None:
        if max_in_flight is not None and (type(max_in_flight) is not int or max_in_flight < 1):
            raise SemanticError(
                f"max_in_flight must be a positive integer or None, got {max_in_flight!r}"
            )
        if type(max_queued) is not int or max_queued < 0:
            raise SemanticError(f"max_queued must be 0 or a positive integer, got {max_queued!r}")
        if type(max_waiting) is not int or not 1 <= max_waiting <= MAX_WAITING:
            raise SemanticError(
                f"max_waiting must be a whole number from 1 to {MAX_WAITING}, got {max_waiting!r}"
            )
        if not 0 < answer_timeout <= ELICIT_SECONDS:
            raise SemanticError(
                f"answer_timeout must be more than 0 and at most {ELICIT_SECONDS:g} seconds, "
                f"got {answer_timeout!r}"
            )
        self.max_in_flight = max_in_flight
        self.max_queued = max_queued
        self.queue_timeout = queue_timeout
        self.max_waiting = max_waiting
        self.answer_timeout = answer_timeout
        self._admitted = 0
        self._running = 0
        self._waiting = 0
        self._asking = 0
        self._per_tool: Counter[str] = Counter()
        self._closed = False
        self._changed = anyio.Condition()
        self._scopes: set[anyio.CancelScope] = set()
        #: The questions waiting for their answers (``Admission.asking``), for ``close``.
        self._questions: set[anyio.CancelScope] = set()
        self._cut = False

    @property
    def in_flight(self) -> int:
        """The calls admitted and not ended: running, or waiting for their users."""
        return self._admitted

    @property
    def running(self) -> int:
        """The calls holding a slot (not waiting for their users)."""
        return self._running

    @property
    def waiting(self) -> int:
        """The calls waiting in the queue for a slot."""
        return self._waiting

    @property
    def asking(self) -> int:
        """The calls waiting for their users' answers (``Admission.asking``)."""
        return self._asking

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
    async def admitted(self, name: str, tool_limit: int | None = None) -> AsyncIterator[Admission]:
        """The block runs as one admitted call of tool ``name``; ``Busy`` if there is no
        room. The ``Admission`` it gets lets the call wait for its user without a slot."""
        if self._closed:
            raise Busy("the server is shutting down")
        await self._room(name, tool_limit)
        admission = Admission(self, name, tool_limit)
        self._admitted += 1
        try:
            with anyio.CancelScope() as scope:
                self._scopes.add(scope)
                try:
                    yield admission
                finally:
                    self._scopes.discard(scope)
            if scope.cancelled_caught:  # only cut() cancels this scope
                raise CallInterrupted("the server shut down before the call finished")
        finally:
            self._admitted -= 1
            admission.release()
            await self._notify()

    async def _room(self, name: str, tool_limit: int | None, *, returning: bool = False) -> None:
        """Return once a call of ``name`` may run: at once if there is room, else after
        waiting in the queue; ``Busy`` when the queue is full. A ``returning`` call (in
        flight already, back from its user) runs at once on a closed server."""
        if (returning and self._closed) or self._has_room(name, tool_limit):
            return
        if self._waiting >= self.max_queued:
            raise Busy(self._why_full(name, tool_limit))
        await self._wait_for_room(name, tool_limit, returning=returning)

    async def _wait_for_room(
        self, name: str, tool_limit: int | None, *, returning: bool = False
    ) -> None:
        """Wait in the queue until the call may run; ``Busy`` when the server closes
        meanwhile (but not for a ``returning`` call, which is in flight already: a
        draining server lets it finish) or the queue timeout passes."""
        self._waiting += 1
        try:
            with anyio.move_on_after(_seconds(self.queue_timeout)) as waited:
                async with self._changed:
                    while not self._has_room(name, tool_limit) and not self._closed:
                        await self._changed.wait()
        finally:
            self._waiting -= 1
        if self._closed:
            if returning:
                return
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
        """Refuse every call from now on; calls waiting in the queue are refused too, and
        every question waiting for its user's answer is withdrawn (the call goes on and
        ends, having done nothing past it): a draining server takes no answer in."""
        self._closed = True
        for question in list(self._questions):
            question.cancel()
        await self._notify()

    def cut(self) -> int:
        """End every running call now (each raises ``CallInterrupted`` where it was admitted);
        how many were running."""
        self._cut = True
        scopes = list(self._scopes)
        for scope in scopes:
            scope.cancel()
        return len(scopes)

    async def drained(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the calls in flight (running or waiting for
        their users) to end; whether they did."""
        with anyio.move_on_after(timeout):
            async with self._changed:
                while self._admitted:
                    await self._changed.wait()
        return not self._admitted


@final
class Admission:
    """One admitted call's hold on a running slot and on a slot of its tool's own
    ``concurrency``, which it gives back while it waits for its user (``asking``)."""

    __slots__ = ("_asked", "_holding", "_limits", "_name", "_tool_limit")

    def __init__(self, limits: CallLimits, name: str, tool_limit: int | None) -> None:
        self._limits = limits
        self._name = name
        self._tool_limit = tool_limit
        self._holding = False
        #: The call's questions waiting now (an async tool may ask several at once):
        #: the slots go with the first and come back, once, with the last.
        self._asked = 0
        self._take()

    @property
    def answer_timeout(self) -> float:
        """How long the call may wait for its user's answer (the server's setting)."""
        return self._limits.answer_timeout

    def _take(self) -> None:
        limits = self._limits
        limits._running += 1
        limits._per_tool[self._name] += 1
        self._holding = True

    def release(self) -> None:
        """Give the slots back (nothing if they are given back already)."""
        if not self._holding:
            return
        self._holding = False
        limits = self._limits
        limits._running -= 1
        limits._per_tool[self._name] -= 1
        if not limits._per_tool[self._name]:
            del limits._per_tool[self._name]

    @asynccontextmanager
    async def asking(self) -> AsyncIterator[None]:
        """The block waits for the user's answer, holding no slot: one of the server's
        ``max_waiting`` places instead (``ElicitationError`` when all are taken). After
        it the call is admitted again, as a new call would be: at once if there is room,
        else in the queue (``Busy`` when that is full or its time runs out); so too
        after a question its tool stopped waiting for (its own ``timeout=``, which the
        server's calls end inside the block: ``CallContext.bounds_questions``). A
        cancelled question (its call withdrawn, cut or cancelled) takes the slots back
        at once, room or not, for the little the call does before it ends; waiting for
        room is no option while being cancelled.
        Once the server closes, no question waits: ``ElicitationError`` at once."""
        limits = self._limits
        if limits._closed:
            raise _shutting_down()
        if limits._asking >= limits.max_waiting:
            raise ElicitationError(
                f"too many calls wait for their users' answers already (at most "
                f"{limits.max_waiting:,}, the server's --max-waiting); the user was not "
                "asked and nothing was done: try again later"
            )
        limits._asking += 1
        self._asked += 1
        self.release()
        question = anyio.CancelScope()  # close() withdraws it, from now on
        limits._questions.add(question)
        try:
            with question:
                try:
                    await limits._notify()
                    yield
                finally:
                    limits._questions.discard(question)
        except Exception:
            self._answered()
            await self._back()
            raise
        except BaseException:
            if self._answered():
                self._take()
            raise
        self._answered()
        await self._back()
        if question.cancelled_caught:
            raise _shutting_down()

    def _answered(self) -> bool:
        """One question is over; whether it was the call's last (then the call is
        admitted again)."""
        self._limits._asking -= 1
        self._asked -= 1
        return self._asked == 0

    async def _back(self) -> None:
        limits = self._limits
        if self._asked:  # another question of the call still waits: no slot yet
            return
        await limits._room(self._name, self._tool_limit, returning=True)
        if self._asked:  # the call asked again while it waited: its last answer takes it
            return
        self._take()


def _shutting_down() -> ElicitationError:
    return ElicitationError(
        "the server is shutting down: no answer can reach it any more, so the question "
        "was withdrawn and nothing was done past it; call again (another instance)"
    )


def worker_threads(max_calls: int | None, max_waiting: int) -> int | None:
    """The threads a server's ``ToolExecutor`` needs so that no admitted sync call waits
    for one: a thread for each running call, and one for each call waiting for its user
    (a sync tool's question holds its thread); ``None`` (the pool's default) with no
    ``max_calls``."""
    return None if max_calls is None else max_calls + max_waiting


@final
class ClientLeft:
    """Whether a client has left (``left``), and ``wait`` for it to: one HTTP request's
    (``watching``), or a stdio server's one client (stdin ended). Cheap to make: the
    event to wait on is made only when someone waits (every POST gets one)."""

    __slots__ = ("_event", "left")

    def __init__(self) -> None:
        self.left = False
        self._event: anyio.Event | None = None

    def set(self) -> None:
        self.left = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        if self.left:
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


def watching(scope: MutableMapping[str, Any], receive: Receive) -> Receive:
    """``receive`` for the HTTP request of ``scope``, noting there when its client leaves
    (the ASGI server's ``http.disconnect``), for ``client_left``. It notes it only when
    someone reads: the SDK's streams do, the fast path does once a call asks."""
    departure = scope[_LEFT] = ClientLeft()

    async def watched() -> MutableMapping[str, Any]:
        message = await receive()
        if message["type"] == "http.disconnect":
            departure.set()
        return message

    return watched


def client_left(scope: Any) -> ClientLeft | None:
    """The ``ClientLeft`` of the client of the HTTP request of ``scope`` (see
    ``watching``); ``None`` when nobody watches (not an HTTP request)."""
    departure = scope.get(_LEFT) if isinstance(scope, MutableMapping) else None
    return departure if isinstance(departure, ClientLeft) else None


def _seconds(timeout: float | None) -> float:
    return math.inf if timeout is None else timeout
