"""Progress of a running tool call, for whoever wants to hear it.

A tool that works in steps (an HTTP tool following pages) calls
``report_progress(...)``; a caller that wants to hear it runs the call inside
``reporting_progress(reporter)``. The reporter is held in a context variable,
so it follows the call into the executor's worker threads (they run in a copy
of the caller's context) and two concurrent calls each hear their own.

A reporter that raises is logged and dropped for the rest of the call: it
never breaks the call it listens to. Messages carry counts, never request
values (a URL may hold a secret).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final, final

__all__ = ["Progress", "ProgressReporter", "report_progress", "reporting_progress"]

logger = logging.getLogger("agentkit")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """One step done: ``done`` of ``total`` (None when unknown), and what it was."""

    done: int
    total: int | None
    message: str


ProgressReporter = Callable[[Progress], None]

_REPORTER: Final[contextvars.ContextVar[list[ProgressReporter] | None]] = contextvars.ContextVar(
    "agentkit_progress_reporter", default=None
)


@contextmanager
def reporting_progress(reporter: ProgressReporter) -> Iterator[None]:
    """Send the progress of calls made inside this block to ``reporter``."""
    token = _REPORTER.set([reporter])
    try:
        yield
    finally:
        _REPORTER.reset(token)


def report_progress(*, done: int, total: int | None = None, message: str) -> None:
    """Tell the active reporter, if any, that ``done`` steps (of ``total``) are done."""
    active = _REPORTER.get()
    if not active:
        return
    try:
        active[0](Progress(done=done, total=total, message=message))
    except Exception:  # a listener's failure is its own: the call goes on without it
        logger.exception("progress reporter failed; it hears no more of this call")
        active.clear()
