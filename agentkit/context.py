"""What a running tool can reach of the call it serves, besides its inputs and credentials.

A Python tool keeps the chapter's ``execute(inputs, credentials)``; what the caller
(``agentkit serve``) offers beyond that is reached through module functions::

    from agentkit.context import aelicit, elicit, log, report_progress

- ``report_progress(done=..., total=..., message=...)``: ``agentkit.progress``'s, the same
  function (MCP ``notifications/progress`` when the client asked for them);
- ``log(level, message)``: a message to the client (MCP ``notifications/message``), sent
  when it is at or above the level the client asked for;
- ``await aelicit(message, schema)`` in an ``async def`` tool, ``elicit(message, schema)``
  in a sync one (it runs in the executor's worker thread and waits there): ask the user
  (MCP ``elicitation/create``), get an ``Elicited`` back;
- ``confirm(what)`` / ``await aconfirm(what)``: in a call of a ``confirm: true`` tool,
  ask the user to allow ``what`` the tool is about to do, once per call, just before it
  acts (an HTTP backend shows the request it is about to send); a refusal raises
  ``DeclinedError``. In any other call it returns at once.

The caller's ``CallContext`` is held in a context variable, like the progress reporter:
it follows the call into the executor's worker threads (they run in a copy of the
caller's context), and two concurrent calls each have their own. Outside a served call
``log`` and ``report_progress`` do nothing and ``elicit`` raises ``ElicitationError``:
there is nobody to ask.

A question waits no longer than its call: when the call ends (its deadline, or cancelled;
``CallContext.end``) it is withdrawn, the thread waiting for it stops waiting with an
``ElicitationError``, and an answer that comes later is ignored -- a confirmation
accepted too late lets nothing happen.

Text a tool sends this way goes through the call's redactor first (the one the executor
makes active while the tool runs): no credential value reaches the client in a message
or a question.
"""

from __future__ import annotations

import contextvars
import logging
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, final, get_args

from agentkit.confirmtext import (
    MAX_ENTRIES,
    MAX_LINES,
    MAX_VALUE_CHARS,
    arguments_shown,
    blank,
    invisible,
    redacted_text,
    shortened,
    spelled_alike,
    visible,
)
from agentkit.progress import report_progress
from agentkit.redaction import active_redactor
from agentkit.toolerrors import DeclinedError, ElicitationError

# asyncio is imported where a question is asked, never at import: a question needs an
# event loop running, which has imported it, while loading tools (which imports this
# module) must not (``agentkit serve`` answers its first requests before any loop).
if TYPE_CHECKING:
    import asyncio

__all__ = [
    "ELICIT_SECONDS",
    "LOG_LEVELS",
    "MAX_ENTRIES",
    "MAX_LINES",
    "MAX_VALUE_CHARS",
    "CallContext",
    "Elicited",
    "LogLevel",
    "aconfirm",
    "aelicit",
    "arguments_shown",
    "at_least",
    "blank",
    "confirm",
    "current",
    "elicit",
    "invisible",
    "log",
    "question_time_left",
    "question_timed_out",
    "report_progress",
    "serving",
    "shortened",
    "spelled_alike",
    "visible",
]

logger = logging.getLogger("agentkit")

#: The levels of RFC 5424 (syslog), as MCP's logging names them, least severe first.
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: Final[tuple[LogLevel, ...]] = get_args(LogLevel)
_SEVERITY: Final[dict[str, int]] = {level: rank for rank, level in enumerate(LOG_LEVELS)}


#: How long a question waits for the user's answer, by default; a server may wait less
#: (``agentkit serve --answer-timeout``, which this is the most of).
ELICIT_SECONDS: Final = 600.0
#: The form of a confirmation: nothing to fill in, only accept, decline or cancel.
CONFIRM_FORM: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Elicited:
    """The user's answer to a question: ``accept`` (with ``content``, the form's values),
    ``decline`` (said no) or ``cancel`` (dismissed it without choosing)."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


def at_least(level: str, threshold: str) -> bool:
    """Whether ``level`` is as severe as ``threshold`` or more (both from ``LOG_LEVELS``)."""
    return _SEVERITY[level] >= _SEVERITY[threshold]


class CallContext:
    """What a caller offers the tool calls it runs: the base does nothing.

    ``agentkit serve`` passes a subclass to ``serving`` for each call; a subclass
    overrides what its client supports. Methods may be called from the event loop's
    thread or from a worker thread, and must not block.
    """

    #: The event loop ``aelicit`` runs on, for a sync tool's ``elicit`` in a worker
    #: thread to hand its question to; None where there is nobody to ask.
    loop: asyncio.AbstractEventLoop | None = None
    #: The name of the tool whose call the user must allow before it acts (its
    #: ``confirm: true``); None when nothing is to be allowed, or once it was.
    confirming: str | None = None
    #: Whether ``aelicit``/``aconfirm`` end a question themselves when its time is up
    #: (``question_time_left``, then ``question_timed_out``): the tool's own
    #: ``timeout=`` then ends only the question, as an answer would, not by cancelling
    #: it from outside (``agentkit serve``'s contexts: the call is admitted again after
    #: it, see ``agentkit.mcp.admission.Admission.asking``). Otherwise the caller cancels it.
    bounds_questions: bool = False
    #: When the call's time is up (``time.monotonic()``), None for no deadline: no
    #: question waits past it, and an answer that comes later is ignored.
    deadline: float | None = None
    # Set by ``end``; the questions still waiting (tasks on ``loop``), to withdraw then.
    _ended: bool = False
    _asking: frozenset[asyncio.Future[Any]] = frozenset()

    @property
    def over(self) -> bool:
        """Whether the call ended (``end``) or its deadline passed: nothing more may be
        asked of the user, and an answer to an earlier question must not be acted on."""
        return self._ended or (self.deadline is not None and time.monotonic() >= self.deadline)

    def end(self) -> list[asyncio.Future[Any]]:
        """The call is over (answered, abandoned at its deadline, or cancelled): withdraw
        the questions still waiting (cancelled; the MCP SDK tells the client with
        ``notifications/cancelled``) and refuse any later one. A sync tool's thread that
        waits for an answer stops waiting at once. Returns the withdrawn tasks, for the
        caller to let their cancellation finish (on ``loop``)."""
        with _ENDING:
            self._ended = True
            asking, self._asking = self._asking, frozenset()
        for task in asking:
            task.cancel()
        return list(asking)

    def log(self, level: LogLevel, message: str, logger: str | None) -> None:
        """Send ``message`` at ``level`` to whoever listens (redacted already)."""

    async def aelicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        """Ask the user ``message`` with a form of ``schema`` (redacted already); runs on
        ``loop``. Raises ``ElicitationError`` when the question cannot be asked."""
        raise _nobody_to_ask()

    async def aconfirm(self, what: str) -> None:
        """Ask the user to allow ``what`` (redacted already) the tool ``confirming`` is
        about to do; raise ``DeclinedError`` unless they accept."""
        answer = await self.aelicit(
            f"Tool '{self.confirming}' wants to {what}\n\nAllow it?", CONFIRM_FORM
        )
        if not answer.accepted:
            raise DeclinedError(answer.action)
        self.confirming = None


#: Guards each context's ``_ended`` and ``_asking`` (changed from the loop and workers).
_ENDING: Final = threading.Lock()
_NOTHING: Final = CallContext()
_CURRENT: Final[contextvars.ContextVar[CallContext]] = contextvars.ContextVar(
    "agentkit_call_context", default=_NOTHING
)
#: The question being asked: when its time is up (``time.monotonic()``) and the tool's
#: ``timeout=`` it came from; set in the question's own task (``_asked``).
_QUESTION: Final[contextvars.ContextVar[tuple[float, float] | None]] = contextvars.ContextVar(
    "agentkit_question", default=None
)


@contextmanager
def serving(context: CallContext) -> Iterator[CallContext]:
    """Make ``context`` the one the calls made inside this block reach."""
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


def current() -> CallContext:
    """The context of the call running here (a do-nothing one outside a served call)."""
    return _CURRENT.get()


def log(level: LogLevel, message: str, *, logger_name: str | None = None) -> None:
    """Send ``message`` to the client at ``level`` (``"info"``, ``"warning"``, ...).

    The client receives it if it asked for that level or a less severe one. Secrets
    the call knows are redacted first. Outside a served call, nothing happens.
    ``logger_name`` says which part of the tool speaks (MCP's ``logger`` field), redacted
    like the message; raises ``TypeError`` when it is not a string.
    """
    if level not in _SEVERITY:
        raise ValueError(
            f"log level {level!r} is not one of {', '.join(LOG_LEVELS)} (RFC 5424, as MCP has it)"
        )
    if logger_name is not None and not isinstance(logger_name, str):
        raise TypeError(
            f"log(logger_name=...) must be a string (the part of the tool that speaks) or "
            f"None, got {type(logger_name).__name__}"
        )
    context = _CURRENT.get()
    if context is _NOTHING:
        return
    text = redacted_text(str(message))  # a tool may pass anything; the client gets text
    # The logger's name reaches the client as well: redacted like the message.
    name = None if logger_name is None else redacted_text(logger_name)
    try:
        context.log(level, text, name)
    except Exception:  # a listener's failure is its own: the call goes on without it
        logger.exception("sending a log message to the client failed")


async def aelicit(
    message: str, schema: Mapping[str, Any], *, timeout: float = ELICIT_SECONDS
) -> Elicited:
    """Ask the user ``message``, with a form of ``schema`` (a flat JSON Schema object of
    strings, numbers, booleans and enums, as MCP's ``elicitation/create`` has it).

    For an ``async def`` tool. Waits at most ``timeout`` seconds for the answer. Raises
    ``ElicitationError`` outside a served call, when the client cannot be asked (it did
    not declare the elicitation capability, or a stateless server has no way back to
    it) and when no answer came in time; ``AnswerError`` (an ``ElicitationError``) when
    the answer does not fit the form (``agentkit.forms``, checked by the server).
    """
    context = _CURRENT.get()
    return await _awaited(context, lambda: context.aelicit(*_redacted(message, schema)), timeout)


def elicit(message: str, schema: Mapping[str, Any], *, timeout: float = ELICIT_SECONDS) -> Elicited:
    """``aelicit`` for a sync tool: the question goes to the server's event loop and this
    thread (the executor's worker) waits for the answer. Not for an ``async def`` tool,
    whose loop it would block: that one awaits ``aelicit``."""
    context = _CURRENT.get()
    return _waited(context, lambda: context.aelicit(*_redacted(message, schema)), timeout)


async def aconfirm(what: str | Callable[[], str], *, timeout: float = ELICIT_SECONDS) -> bool:
    """``confirm`` for an ``async def`` tool."""
    context = _CURRENT.get()
    if context.confirming is None:
        return False
    text = visible(redacted_text(what() if callable(what) else what))
    await _awaited(context, lambda: context.aconfirm(text), timeout)
    return True


def confirm(what: str | Callable[[], str], *, timeout: float = ELICIT_SECONDS) -> bool:
    """In a call of a ``confirm: true`` tool, ask the user to allow ``what`` it is about to
    do (``"send this request: ..."``; a callable is called only when there is something to
    ask). Returns True once allowed, False when there was nothing to ask (another tool, or
    already allowed in this call); raises ``DeclinedError`` when the user declines or
    cancels, ``ElicitationError`` when the question cannot be asked. From a sync tool;
    an ``async def`` one awaits ``aconfirm``. ``what`` is shown redacted and ``visible``:
    no character in it can hide or reorder the rest.
    """
    context = _CURRENT.get()
    if context.confirming is None:
        return False
    text = visible(redacted_text(what() if callable(what) else what))
    _waited(context, lambda: context.aconfirm(text), timeout)
    return True


_T = TypeVar("_T")


async def _awaited(
    context: CallContext, ask: Callable[[], Coroutine[Any, Any, _T]], timeout: float
) -> _T:
    import asyncio

    if context.loop is None:
        raise _nobody_to_ask()
    wait = _within_the_call(context, timeout)
    try:
        answer = await asyncio.wait_for(
            _asked(context, ask, wait, timeout), None if context.bounds_questions else wait
        )
    except asyncio.TimeoutError as exc:
        raise _no_answer(context, timeout) from exc
    except asyncio.CancelledError:
        if context.over and not _cancelling():  # withdrawn by ``end``, not our own cancel
            raise _call_over() from None
        raise
    return _answer_in_time(context, answer)


def _waited(context: CallContext, ask: Callable[[], Coroutine[Any, Any, _T]], timeout: float) -> _T:
    """Run ``ask()`` on the context's loop and wait for it in this (worker) thread."""
    import asyncio
    import concurrent.futures

    loop = context.loop
    if loop is None:
        raise _nobody_to_ask()
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        raise ElicitationError(
            "a sync question would block the event loop this async tool runs on, and with "
            "it the answer: use 'await aelicit(...)' (or 'await aconfirm(...)') in an "
            "async def tool"
        )
    wait = _within_the_call(context, timeout)
    asking = asyncio.run_coroutine_threadsafe(_asked(context, ask, wait, timeout), loop)
    try:
        answer = asking.result(timeout=None if context.bounds_questions else wait)
    except concurrent.futures.TimeoutError as exc:
        asking.cancel()  # withdrawn from the client: nobody waits for it any more
        raise _no_answer(context, timeout) from exc
    except concurrent.futures.CancelledError:  # withdrawn by ``end``: the call is over
        raise _call_over() from None
    return _answer_in_time(context, answer)


async def _asked(
    context: CallContext, ask: Callable[[], Coroutine[Any, Any, _T]], wait: float, timeout: float
) -> _T:
    """``ask()`` as a task ``context.end`` can withdraw, which may wait ``wait`` seconds
    (``question_time_left``; the tool's ``timeout`` or less); refused once the call is
    over."""
    import asyncio

    _QUESTION.set((time.monotonic() + wait, timeout))  # this task's own context
    task = asyncio.current_task()
    assert task is not None  # a coroutine run by asyncio always runs in a task
    with _ENDING:
        if context.over:
            raise _call_over()
        context._asking = context._asking | {task}
    try:
        return await ask()
    finally:
        with _ENDING:
            context._asking = context._asking - {task}


def question_time_left() -> float | None:
    """How long the question being asked may still wait for its answer (the tool's
    ``timeout=``, or less when the call's deadline comes first); None outside a
    question. For a context that ``bounds_questions``."""
    question = _QUESTION.get()
    return None if question is None else max(0.0, question[0] - time.monotonic())


def question_timed_out(context: CallContext) -> ElicitationError:
    """The error a question ends in when ``question_time_left`` runs out unanswered."""
    question = _QUESTION.get()
    return _no_answer(context, ELICIT_SECONDS if question is None else question[1])


def _within_the_call(context: CallContext, timeout: float) -> float:
    """How long a question may wait: ``timeout``, or less when the call's deadline comes
    first; ``ElicitationError`` when the call is over already."""
    if context.over:
        raise _call_over()
    if context.deadline is None:
        return timeout
    return max(0.0, min(timeout, context.deadline - time.monotonic()))


def _answer_in_time(context: CallContext, answer: _T) -> _T:
    """``answer``, unless the call ended while it was on its way: then nothing the tool
    does with it could reach anyone, and a confirmation must not let it act."""
    if context.over:
        raise _call_over()
    return answer


def _cancelling() -> bool:
    """Whether this task is being cancelled itself (always assumed before Python 3.11,
    which cannot tell: a cancellation is never swallowed)."""
    import asyncio

    task = asyncio.current_task()
    if sys.version_info < (3, 11) or task is None:
        return True
    return task.cancelling() > 0


def _redacted(message: str, schema: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    if not isinstance(schema, Mapping):
        raise ElicitationError(
            f"the form must be a JSON Schema object (a mapping such as {{'type': 'object', "
            f"'properties': {{...}}}}), got {type(schema).__name__}"
        )
    message = str(message)
    redactor = active_redactor()
    if not redactor:
        return message, schema
    form: Mapping[str, Any] = redactor.redact_value(dict(schema))
    return redactor.redact(message), form


def _nobody_to_ask() -> ElicitationError:
    return ElicitationError(
        "there is nobody to ask: elicit() works only in a call an MCP server runs (agentkit serve)"
    )


def _no_answer(context: CallContext, timeout: float) -> ElicitationError:
    if context.over:
        return _call_over()
    return ElicitationError(
        f"the user did not answer within {timeout:g} s (pass a longer timeout= to wait more)"
    )


def _call_over() -> ElicitationError:
    return ElicitationError(
        "the call ended (its deadline passed, or it was cancelled) before the user answered: "
        "the question was withdrawn and nothing was done"
    )
