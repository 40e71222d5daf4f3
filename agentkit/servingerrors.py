"""What stops a call while it is served: the server's refusals (``Busy``), its
shutdown (``CallInterrupted``), and a question for the user that could not be asked,
was answered wrongly, or was declined."""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from agentkit.errorbase import AgentKitError, ServingError
from agentkit.problem import Problem

__all__ = [
    "AnswerError",
    "Busy",
    "CallInterrupted",
    "DeclinedError",
    "ElicitationError",
]


class Busy(ServingError):
    """A call refused for want of room; the message says why and that a retry may work."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"busy, retry later: {reason}")
        self.reason = reason


class CallInterrupted(ServingError):
    """A running call ended by ``CallLimits.cut``: the server shut down (its drain ran
    out) before the call finished. The server answers it as an ``isError`` result."""


class ElicitationError(AgentKitError):
    """A question for the user (``agentkit.context.elicit``) that could not be asked or got
    no answer; the message says why and what would make it work."""


@final
class AnswerError(ElicitationError):
    """An answer to a question that does not fit the form it was asked with
    (``agentkit.forms``): ``problems``, each with the field it is about (``path``). The
    message names each field and what it expected, never the value given."""

    #: Empty in a copy made without ``__init__`` (``Redactor.clean_exception``).
    problems: tuple[Problem, ...] = ()

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        listed = "; ".join(problem.message for problem in self.problems)
        super().__init__(
            f"the answer does not fit the form it was asked with, so it was not used: {listed}"
        )


class DeclinedError(AgentKitError):
    """The user was asked to allow what a ``confirm: true`` tool was about to do and did not:
    ``action`` is ``"decline"`` (said no) or ``"cancel"`` (dismissed the question)."""

    def __init__(self, action: str) -> None:
        self.action = action
        how = "" if action == "decline" else f" (the question was answered '{action}')"
        super().__init__(f"declined by the user{how}; nothing was done")
