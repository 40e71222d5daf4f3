"""The roots of agentkit's error tree: the base of everything it raises and the
intermediate bases a caller catches (a misuse, a failed call, a backend's failure,
a serving refusal). The tree itself is drawn in ``agentkit.toolerrors``, where
every class can be imported from."""

from __future__ import annotations

__all__ = [
    "AgentKitError",
    "BackendError",
    "CallError",
    "SemanticError",
    "ServingError",
]


class AgentKitError(Exception):
    """Base class of every error agentkit raises.

    ``AgentKitError(message, cause=exc)`` keeps ``exc`` as ``__cause__``, the
    same as ``raise AgentKitError(message) from exc`` (the chapter's spelling).
    """

    #: The exit status the command-line interface uses for this kind of error.
    exit_code = 1

    def __init__(self, *args: object, cause: BaseException | None = None) -> None:
        super().__init__(*args)
        if cause is not None:
            self.__cause__ = cause

    def format_message(self) -> str:
        """The error's message, as the command line shows it."""
        return str(self)


class SemanticError(AgentKitError):
    """The API was used in a way that cannot work (a definition or call is wrong)."""

    exit_code = 2


class CallError(AgentKitError):
    """A tool call that gave no answer, as the executor raises it: arguments or an answer
    that do not fit the schema, a credential it could not resolve, a run that failed, a
    replayed call with no recording. Catch this to handle every failed call alike."""


class BackendError(AgentKitError):
    """A backend's own failure (an HTTP call, an OAuth 2.0 token, following pages, a
    multipart body, a template): raised inside the tool, and the cause of the
    ``ToolExecutionError`` that reports the call."""


class ServingError(AgentKitError):
    """A call the MCP server refused (``Busy``) or stopped (``CallInterrupted``); the
    server answers it as an ``isError`` result the model can act on."""
