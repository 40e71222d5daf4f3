"""The exceptions agentkit raises.

Every error carries its facts as attributes; the message is built from those
attributes in one place, so a CLI, a log line and a result dictionary all say
the same thing.

    AgentKitError                   base of everything agentkit raises
    ├── SemanticError               misuse of the API: no TOOL_NAME, bad schema, duplicate name
    │   ├── SchemaDefinitionError   a schema definition with problems (each with its location)
    │   ├── UnknownToolError        (also a KeyError) no tool of that name; a "did you mean"
    │   ├── UsageError              a command line that cannot work (``agentkit`` command)
    │   ├── ExportError             a tool that cannot be exported in the requested format
    │   ├── TextFileError           a file an option or a folder names that cannot be read as
    │                               text (not a regular file, too big, not UTF-8); the caller
    │                               names the file
    │   └── OpenAPIError            an OpenAPI description that cannot be imported (each
    │                               problem located by a JSON pointer)
    ├── UnexpressibleOperation      an operation of a description the definition format cannot
    │                               say; the import skips it and reports why
    ├── PointerError                (also a ValueError) a ``$ref`` that is no JSON pointer in a
    │                               URI fragment; the import reports it, located, as a reason
    ├── DefinitionError             tool definition files with problems (each file:line:column)
    ├── TemplateSyntaxProblem       a broken template; the loader reports it as a problem
    ├── PluginError                 an extension (entry point or registration) that cannot be used
    ├── CallError                   a tool call that gave no answer: catch this for any of them
    │   ├── ToolValidationError     inputs or outputs that do not match a tool's schema
    │   ├── CredentialError         a credential that cannot be resolved
    │   ├── ToolExecutionError      a tool call that failed; the cause is kept
    │   └── ReplayMissError         a replayed call has no recorded counterpart
    ├── ToolTimeoutError            (also a TimeoutError) a call that did not finish in time;
    │                               the cause of the ToolExecutionError that reports it
    ├── SecretInOutputError         a call whose answer held a credential's value: the cause
    │                               of the ToolExecutionError that reports it (never the value)
    ├── ContinuationError           a continuation naming no page kept for this tool and caller
    │                               (``agentkit.paging``): reported as invalid input
    ├── SecretInRecordingError      a recording of an example refused: a credential's value
    │                               would have been written to it (never the value)
    ├── BackendError                a backend's own failure: the cause of the ToolExecutionError
    │   │                           that reports it
    │   ├── HttpCallError           an HTTP backend call failed (status, timeout, deadline...)
    │   ├── OAuth2Error             getting an OAuth 2.0 token failed
    │   ├── PaginationError         following an HTTP tool's pages failed
    │   ├── MultipartError          an HTTP tool's multipart body could not be built
    │   └── TemplateRenderError     a template failed while rendering
    │       └── MissingValue        a lookup found nothing: ``response.json has no key 'title'``
    ├── ServingError                a call the MCP server refused or stopped; it answers the
    │   │                           call as an ``isError`` result
    │   ├── Busy                    a call refused for want of room (the server's limits)
    │   └── CallInterrupted         a running call ended because the server shut down
    ├── ElicitationError            a question for the user that cannot be asked or answered
    │   │                           (``agentkit.context.elicit``): no client that can, no answer
    │   └── AnswerError             an answer that does not fit the form it was asked with
    │                               (each problem naming the field; no value of it shown)
    ├── DeclinedError               the user did not allow what a ``confirm: true`` tool was
    │                               about to do (``agentkit.context.confirm``)
    ├── LimitedError                a call refused by a declared limit (``limits:``) or while its
    │                               source is paused after a 429, before anything was sent; the
    │                               cause of the ToolExecutionError that reports it
    ├── RedactedError               not raised: stands in, as a ToolExecutionError's cause,
    │                               for an exception that could not be copied without the
    │                               secrets it held
    └── ReplayedFailure             not raised: the recorded cause of a failed call, as
                                    replay reports it

Where an error lists what is wrong (``SchemaDefinitionError``, ``DefinitionError``,
``OpenAPIError``, ``UnexpressibleOperation``, ``ToolValidationError``, ``AnswerError``),
each is a ``Problem``: a message and its path, with its file, line and column where
known, rendered one way.

Every class can be imported from here, whichever module defines it: the roots
in ``errorbase``, ``Problem`` in ``problem``, what is found before a call in
``definitionerrors``, a backend's failures in ``backenderrors``, a serving
refusal in ``servingerrors``, and the failed calls the executor reports here.
The modules that raise one re-export it (``agentkit.cli.UsageError`` is this
``UsageError``). A foreign exception
(``requests``, ``yaml``, ``jinja2``, ``json``) is translated once, where it
occurs, into one of these, with the original as ``__cause__``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from agentkit.backenderrors import (
    HttpCallError,
    LimitedError,
    MissingValue,
    MultipartError,
    OAuth2Error,
    PaginationError,
    TemplateRenderError,
)
from agentkit.definitionerrors import (
    DefinitionError,
    ExportError,
    OpenAPIError,
    PluginError,
    PointerError,
    SchemaDefinitionError,
    TemplateSyntaxProblem,
    TextFileError,
    UnexpressibleOperation,
    UsageError,
)
from agentkit.errorbase import AgentKitError, BackendError, CallError, SemanticError, ServingError
from agentkit.problem import (
    DefinitionProblem,
    DescriptionProblem,
    Problem,
    SchemaProblem,
    closest,
)
from agentkit.servingerrors import (
    AnswerError,
    Busy,
    CallInterrupted,
    DeclinedError,
    ElicitationError,
)

__all__ = [
    "AgentKitError",
    "AnswerError",
    "BackendError",
    "Busy",
    "CallError",
    "CallInterrupted",
    "ContinuationError",
    "CredentialError",
    "DeclinedError",
    "DefinitionError",
    "DefinitionProblem",
    "DescriptionProblem",
    "ElicitationError",
    "ExportError",
    "HttpCallError",
    "LimitedError",
    "MissingValue",
    "MultipartError",
    "OAuth2Error",
    "OpenAPIError",
    "PaginationError",
    "PluginError",
    "PointerError",
    "Problem",
    "RedactedError",
    "ReplayMissError",
    "ReplayedFailure",
    "SchemaDefinitionError",
    "SchemaProblem",
    "SecretInOutputError",
    "SecretInRecordingError",
    "SemanticError",
    "ServingError",
    "TemplateRenderError",
    "TemplateSyntaxProblem",
    "TextFileError",
    "ToolExecutionError",
    "ToolTimeoutError",
    "ToolValidationError",
    "UnexpressibleOperation",
    "UnknownToolError",
    "UsageError",
]

Direction = Literal["input", "output"]


class UnknownToolError(SemanticError, KeyError):
    """No tool of that name: the one error for it, from the registry, the CLI,
    dispatch and the MCP server alike.

    Also a ``KeyError`` (``registry[name]`` raised one before), but its message
    is the plain sentence, not ``KeyError``'s quoted repr. ``suggestion`` is the
    closest known name when one is near enough to be a likely typo.
    """

    #: At most this many known names are listed in the message.
    LISTED = 20

    def __init__(self, tool_name: str, known: Iterable[str] = ()) -> None:
        self.tool_name = tool_name
        self.known = tuple(sorted(known))
        self.suggestion = closest(tool_name, self.known)
        hint = f" (did you mean '{self.suggestion}'?)" if self.suggestion else ""
        listed = ", ".join(self.known[: self.LISTED]) or "none"
        if len(self.known) > self.LISTED:
            listed += f" and {len(self.known) - self.LISTED} more"
        shown = tool_name if len(tool_name) <= 100 else tool_name[:100] + "..."
        super().__init__(f"Unknown tool: '{shown}'{hint}. Available tools: {listed}.")

    def __str__(self) -> str:
        return str(self.args[0])


class CredentialError(CallError):
    """A credential a tool needs could not be found.

    The message names the tool, the credential and every place that was looked
    in; it never contains a credential value.
    """

    def __init__(
        self,
        tool_name: str,
        credential: str,
        looked_in: Sequence[str],
        *,
        refused: str | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.credential = credential
        self.looked_in = tuple(looked_in)
        self.refused = refused
        if refused is not None:  # found, but not usable as given
            super().__init__(f"Tool '{tool_name}' needs credential '{credential}': {refused}")
            return
        places = "; ".join(self.looked_in) or "no credential providers are configured"
        super().__init__(
            f"Tool '{tool_name}' needs credential '{credential}', which was not found. "
            f"Looked in: {places}. Provide it in one of those places."
        )


class ToolValidationError(CallError):
    """A tool's inputs or outputs do not match its schema.

    ``errors`` (the chapter's strings) may also be ``Problem`` values; either way
    the error has both: ``errors``, each problem's sentence, and ``problems``,
    each with its parameter path (a plain string has the empty path).
    """

    def __init__(
        self, tool_name: str, direction: Direction, errors: Sequence[str | Problem]
    ) -> None:
        self._tool_name = tool_name
        self._direction: Direction = direction
        self._problems = tuple(
            error if type(error) is Problem else Problem(path="", message=str(error))
            for error in errors
        )
        verb = "received invalid input" if direction == "input" else "returned invalid output"
        lines = [f"Tool '{tool_name}' {verb}:"]
        lines.extend(f"  - {problem.message}" for problem in self._problems)
        super().__init__("\n".join(lines))

    @property
    def tool_name(self) -> str:
        return self._tool_name

    @property
    def direction(self) -> Direction:
        """``"input"`` or ``"output"``."""
        return self._direction

    @property
    def errors(self) -> list[str]:
        """Each problem, in the schema's wording (a copy; changing it changes nothing)."""
        return [problem.message for problem in self._problems]

    @property
    def problems(self) -> tuple[Problem, ...]:
        """Each problem with the path of the parameter it is about."""
        return self._problems


class RedactedError(AgentKitError):
    """Stands in for an exception that could not be rebuilt without its secrets.

    ``original_type`` is the dotted name of the exception's type; the message
    is its text with every secret redacted.
    """

    def __init__(self, original_type: str, message: str) -> None:
        self.original_type = original_type
        super().__init__(message)


class ToolExecutionError(CallError):
    """A tool call failed: the tool raised, or what it needed (a credential) was missing.

    ``cause`` is the exception the tool raised -- for a tool with credentials,
    a copy of it and of its chain with the secrets redacted (see
    ``Redactor.clean_exception``) -- and is also chained as ``__cause__``.
    ``detail`` replaces the cause's text in the message where it had to be
    cleaned first (secrets redacted).
    """

    def __init__(self, tool_name: str, cause: BaseException, *, detail: str | None = None) -> None:
        self._tool_name = tool_name
        self._cause = cause
        self.__cause__ = cause
        self._detail = str(cause) if detail is None else detail
        kind = self.cause_type
        what = f"{kind}: {self._detail}" if self._detail else kind
        super().__init__(f"Tool '{tool_name}' failed: {what}")

    @property
    def tool_name(self) -> str:
        return self._tool_name

    @property
    def cause(self) -> BaseException:
        return self._cause

    @property
    def cause_type(self) -> str:
        """The cause's type name (the original's, when a ``RedactedError`` stands in)."""
        cause = self._cause
        if isinstance(cause, RedactedError):
            return cause.original_type.rpartition(".")[2]
        return type(cause).__name__

    @property
    def detail(self) -> str:
        """The cause's message as shown (secrets redacted)."""
        return self._detail


class ToolTimeoutError(AgentKitError, TimeoutError):
    """A tool call did not finish within its ``timeout``.

    The executor reports it as the cause of a ``ToolExecutionError``. An async
    tool has been cancelled (its ``finally`` blocks have run); a sync tool's
    thread cannot be stopped, so it is ``abandoned``: it keeps running and its
    result is discarded.
    """

    def __init__(self, tool_name: str, timeout: float, *, abandoned: bool) -> None:
        self.tool_name = tool_name
        self.timeout = timeout
        self.abandoned = abandoned
        fate = (
            "its thread cannot be stopped and runs on, its result will be discarded"
            if abandoned
            else "it was cancelled"
        )
        super().__init__(
            f"did not finish within {float(timeout)} s; {fate}. "
            "Pass a longer timeout= if the tool needs more time."
        )


class SecretInOutputError(AgentKitError):
    """A tool's successful answer held the value of a credential it was given.

    The executor fails the call with this as the cause of its ``ToolExecutionError``
    rather than answer: a success never carries a credential, and is never altered
    to hide one. ``credentials`` names the credentials found (every one the call
    has when only a form derived from them was, ``redact_also``); ``where`` is the
    place in the answer (``output.items[2].token``, ``a key of output.labels``,
    ``content[1].text``). Neither the value nor the text around it is kept.
    """

    def __init__(self, tool_name: str, credentials: Sequence[str], where: str) -> None:
        self.tool_name = tool_name
        self.credentials = tuple(credentials)
        self.where = where
        named = ", ".join(f"'{name}'" for name in self.credentials)
        what = (
            f"the value of credential {named}"
            if len(self.credentials) == 1
            else f"the value of one of the credentials {named}"
            if self.credentials
            else "a secret"
        )
        super().__init__(
            f"the answer holds {what} at {where} (in some spelling or letter case), so it "
            "was withheld: a call never returns a credential it uses, and never returns "
            "an answer altered to hide one. Change the tool so that its output does not "
            "echo the credential"
        )


class ContinuationError(AgentKitError):
    """A ``continuation`` that names no page kept for this tool and caller: unknown,
    expired, another caller's, malformed, or another tool's. The message says what to
    do instead; the executor reports it as a ``ToolValidationError`` of the argument."""


class SecretInRecordingError(AgentKitError):
    """A recording refused: a credential's value would have been written to it.

    ``agentkit test --record`` raises it for one of a tool's examples: ``credentials``
    names the credentials found, ``where`` the place in the exchange
    (``exchanges[0].response.json.token``); the value is never in it.
    """

    def __init__(
        self,
        *,
        tool: str,
        example: str,
        credentials: Sequence[str],
        where: str,
        derived: bool = False,
    ) -> None:
        self.tool, self.example, self.where = tool, example, where
        self.credentials = tuple(credentials)
        self.derived = derived
        named = ", ".join(f"'{name}'" for name in self.credentials) or "a credential"
        stand_in = f"agentkit-placeholder-{self.credentials[0] if self.credentials else 'NAME'}"
        if derived:
            # Not a credential's own value: one the call obtained with them.
            found = (
                f"a secret the call obtained with credential {named} (an OAuth2 access "
                f"token, say) is at {where}"
            )
        else:
            found = f"the value of credential {named} is at {where}"
        super().__init__(
            f"Tool '{tool}', example '{example}': the recording was not written: {found}, "
            "and a recording never holds a credential. Change the example (or the API it "
            "talks to) so that the value is not echoed, or write that exchange by hand "
            f"with the placeholder '{stand_in}'"
        )


class ReplayMissError(CallError):
    """A replayed call has no recorded counterpart."""


class ReplayedFailure(AgentKitError):
    """The recorded cause of a failed call, as replay re-raises it."""

    def __init__(self, cause_type: str, detail: str) -> None:
        self.cause_type = cause_type
        self.detail = detail
        super().__init__(f"{cause_type}: {detail}" if detail else cause_type)
