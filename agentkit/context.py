"""What a running tool can reach of the call it serves, besides its inputs and credentials.

A Python tool keeps the chapter's ``execute(inputs, credentials)``; what the caller
(``agentkit serve``) offers beyond that is reached through module functions::

    from agentkit.context import log, report_progress

- ``report_progress(done=..., total=..., message=...)``: ``agentkit.progress``'s, the same
  function (MCP ``notifications/progress`` when the client asked for them);
- ``log(level, message)``: a message to the client (MCP ``notifications/message``), sent
  when it is at or above the level the client asked for.

The caller's ``CallContext`` is held in a context variable, like the progress reporter:
it follows the call into the executor's worker threads (they run in a copy of the
caller's context), and two concurrent calls each have their own. Outside a served call
these functions do nothing.

Text a tool sends this way goes through the call's redactor first (the one the executor
makes active while the tool runs): no credential value reaches the client in a message.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, Literal, get_args

from agentkit.progress import report_progress
from agentkit.redaction import active_redactor

__all__ = [
    "LOG_LEVELS",
    "CallContext",
    "LogLevel",
    "at_least",
    "current",
    "log",
    "report_progress",
    "serving",
]

logger = logging.getLogger("agentkit")

#: The levels of RFC 5424 (syslog), as MCP's logging names them, least severe first.
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: Final[tuple[LogLevel, ...]] = get_args(LogLevel)
_SEVERITY: Final[dict[str, int]] = {level: rank for rank, level in enumerate(LOG_LEVELS)}


def at_least(level: str, threshold: str) -> bool:
    """Whether ``level`` is as severe as ``threshold`` or more (both from ``LOG_LEVELS``)."""
    return _SEVERITY[level] >= _SEVERITY[threshold]


class CallContext:
    """What a caller offers the tool calls it runs: the base does nothing.

    ``agentkit serve`` passes a subclass to ``serving`` for each call; a subclass
    overrides what its client supports. Methods may be called from the event loop's
    thread or from a worker thread, and must not block.
    """

    def log(self, level: LogLevel, message: str, logger: str | None) -> None:
        """Send ``message`` at ``level`` to whoever listens (redacted already)."""


_NOTHING: Final = CallContext()
_CURRENT: Final[contextvars.ContextVar[CallContext]] = contextvars.ContextVar(
    "agentkit_call_context", default=_NOTHING
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
    ``logger_name`` says which part of the tool speaks (MCP's ``logger`` field).
    """
    if level not in _SEVERITY:
        raise ValueError(
            f"log level {level!r} is not one of {', '.join(LOG_LEVELS)} (RFC 5424, as MCP has it)"
        )
    context = _CURRENT.get()
    if context is _NOTHING:
        return
    redactor = active_redactor()
    text = redactor.redact(message) if redactor else message
    try:
        context.log(level, text, logger_name)
    except Exception:  # a listener's failure is its own: the call goes on without it
        logger.exception("sending a log message to the client failed")
