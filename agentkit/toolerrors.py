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

Every class is defined here; the modules that raise one re-export it
(``agentkit.cli.UsageError`` is this ``UsageError``). A foreign exception
(``requests``, ``yaml``, ``jinja2``, ``json``) is translated once, where it
occurs, into one of these, with the original as ``__cause__``.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, final

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


@final
class TextFileError(SemanticError):
    """Why a file cannot be read (``agentkit.textfile.read_text_file``): ``message``
    without the path, which each caller names its own way, and ``line``/``column``
    (0 when the whole file is meant)."""

    def __init__(self, message: str, *, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One problem, located: the one type every check reports with.

    ``message`` says what is wrong and what would be right. ``path`` is where inside
    the thing checked, as its author writes it: a parameter (``filters.tags[2]``), a
    definition's field (``input_schema[2].type``), a JSON pointer into a description
    (``#/paths/~1pets/get``); ``""`` for the thing as a whole. ``file``, ``line`` and
    ``column`` (1-based; ``""`` and 0 when unknown) say where the thing was read from.

    ``location`` is ``path`` as keys and indexes (``("parameters", 1, "default")``),
    given where a caller needs them to find a line or to nest the problem in a larger
    document; ``path`` is then derived from it, so the two never disagree (giving both,
    different, raises ``ValueError``).

    ``str()`` renders ``file:line:column: path: message``, each part absent left out;
    a JSON pointer follows its file as a URI fragment does (``openapi.yaml#/paths``).
    A value checked against a schema reports ``message`` alone where the chapter's
    strings are shown (``ToolValidationError.errors``): it names the parameter already.
    """

    message: str
    path: str = ""
    file: str = ""
    line: int = 0
    column: int = 0
    location: tuple[str | int, ...] = ()

    def __post_init__(self) -> None:
        if not self.location:
            return
        derived = format_location(self.location)
        if not self.path:
            object.__setattr__(self, "path", derived)
        elif self.path != derived:
            raise ValueError(
                f"Problem: path {self.path!r} and location {self.location!r} disagree; "
                "give one of them"
            )

    def __str__(self) -> str:
        where = self.file
        if self.line:
            position = f"{self.line}:{self.column or 1}"
            where = f"{where}:{position}" if where else position
        path = self.path
        if where and not self.line and path.startswith("#"):
            where, path = where + path, ""
        return ": ".join(part for part in (where, path, self.message) if part)

    @property
    def field(self) -> str:
        """Deprecated: ``path``."""
        _deprecated("Problem.field", "Problem.path")
        return self.path

    @property
    def pointer(self) -> str:
        """Deprecated: ``path``."""
        _deprecated("Problem.pointer", "Problem.path")
        return self.path


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"{old} is deprecated and goes in the next release; use {new} instead",
        DeprecationWarning,
        stacklevel=3,
    )


class _ProblemAlias(type):
    """A name ``Problem`` had before there was one type: constructing one gives a
    ``Problem`` (and a ``DeprecationWarning``), and every ``Problem`` is an instance."""

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, Problem)


class SchemaProblem(metaclass=_ProblemAlias):
    """Deprecated: ``Problem(location=..., message=...)``."""

    def __new__(  # type: ignore[misc]  # an alias: it makes the type it stands for
        cls, *, location: Iterable[str | int], message: str
    ) -> Problem:
        _deprecated("SchemaProblem", "agentkit.Problem(location=..., message=...)")
        return Problem(location=tuple(location), message=message)


class DefinitionProblem(metaclass=_ProblemAlias):
    """Deprecated: ``Problem(file=..., line=..., column=..., path=..., message=...)``;
    its ``path`` (the file) is ``file``, its ``field`` is ``path``."""

    def __new__(  # type: ignore[misc]  # an alias: it makes the type it stands for
        cls, *, path: str, line: int, column: int, field: str, message: str
    ) -> Problem:
        _deprecated(
            "DefinitionProblem",
            "agentkit.Problem(file=..., line=..., column=..., path=..., message=...) "
            "(its path= is file=, its field= is path=)",
        )
        return Problem(file=path, line=line, column=column, path=field, message=message)


class DescriptionProblem(metaclass=_ProblemAlias):
    """Deprecated: ``Problem(path=..., message=...)``, the JSON pointer as ``path``."""

    def __new__(  # type: ignore[misc]  # an alias: it makes the type it stands for
        cls, *, pointer: str, message: str
    ) -> Problem:
        _deprecated(
            "DescriptionProblem", "agentkit.Problem(path=..., message=...) (pointer= is path=)"
        )
        return Problem(path=pointer, message=message)


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


class UsageError(SemanticError):
    """A mistake in how the command was called."""


class ExportError(SemanticError):
    """A tool cannot be exported in the requested format."""


class OpenAPIError(SemanticError):
    """An OpenAPI description cannot be imported; ``problems`` say where and why, each
    at a JSON pointer into the description at ``path`` (shown as the problem's file)."""

    def __init__(self, path: str, problems: Sequence[Problem]) -> None:
        self.path = path
        self.problems = tuple(problems)
        lines = "\n".join(
            f"  {problem if problem.file else replace(problem, file=path)}"
            for problem in self.problems
        )
        super().__init__(f"cannot import {path}:\n{lines}")


class PointerError(AgentKitError, ValueError):
    """A ``$ref`` that is no JSON pointer in a URI fragment; the message says why."""


class UnexpressibleOperation(AgentKitError):
    """An operation the definition format cannot say: the import skips it, with ``problem``."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


class SchemaDefinitionError(SemanticError):
    """A schema definition (``INPUT_SCHEMA``, ``OUTPUT_SCHEMA``) has problems."""

    def __init__(self, problems: Sequence[Problem], *, owner: str = "") -> None:
        self.problems = tuple(problems)
        self.owner = owner
        super().__init__(self._render())

    def _render(self) -> str:
        subject = f"{self.owner} is invalid" if self.owner else "Invalid schema"
        lines = [f"{subject}:"]
        lines.extend(f"  - {problem}" for problem in self.problems)
        return "\n".join(lines)

    def with_owner(self, owner: str) -> SchemaDefinitionError:
        """The same problems, attributed to ``owner`` (for example ``Tool 'x' INPUT_SCHEMA``)."""
        return SchemaDefinitionError(self.problems, owner=owner)


class DefinitionError(AgentKitError):
    """Tool definition files have problems; every problem of every file is listed at once."""

    exit_code = 2

    def __init__(self, problems: Iterable[Problem], *, not_shown: int = 0) -> None:
        self.problems = tuple(problems)
        #: Problems found but left out of ``problems`` (a cap keeps the report readable).
        self.not_shown = not_shown
        super().__init__(self._render())

    def _render(self) -> str:
        count = len(self.problems) + self.not_shown
        noun = "problem" if count == 1 else "problems"
        lines = [f"{count} {noun} in tool definitions:"]
        lines.extend(f"  {problem}" for problem in self.problems)
        if self.not_shown:
            lines.append(f"  ... {self.not_shown} more problems not shown; fix these and run again")
        return "\n".join(lines)


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


class PluginError(AgentKitError):
    """An extension that cannot be used: its entry point fails to load, or breaks a rule.

    ``group`` is the entry point group (``agentkit.backends``), ``name`` the
    extension's name there (a backend kind, a format), ``origin`` where it came
    from (``queue = agentkit_queue:QueueBackend`` from a distribution, or the
    ``register_...()`` call) and ``problem`` what was wrong and what would be right.
    """

    exit_code = 2

    def __init__(self, *, group: str, name: str, origin: str, problem: str) -> None:
        self.group = group
        self.name = name
        self.origin = origin
        self.problem = problem
        super().__init__(f"{group} '{name}' ({origin}): {problem}")


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


class ContinuationError(AgentKitError):
    """A ``continuation`` that names no page kept for this tool and caller: unknown,
    expired, another caller's, malformed, or another tool's. The message says what to
    do instead; the executor reports it as a ``ToolValidationError`` of the argument."""


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


class TemplateSyntaxProblem(AgentKitError):
    """A template is broken: bad syntax, or an operation refused at load time."""


class TemplateRenderError(BackendError):
    """A template failed while rendering (a missing key, a refused operation, its deadline).

    ``field`` is the definition field the template fills (``backend.http.query.q``),
    set once the error leaves ``Template.render``; ``reason`` says what went wrong.
    """

    def __init__(self, reason: str, *, field: str | None = None) -> None:
        self.reason = reason
        self.field = field
        super().__init__(f"{field}: {reason}" if field else reason)


class MissingValue(TemplateRenderError):
    """A lookup found nothing: ``walked`` (``response.json``, or ``a value`` when it
    was computed) has no key or item ``step``. One wording, whoever renders."""

    def __init__(self, walked: str, step: str | int) -> None:
        self.walked = walked
        self.step = step
        if isinstance(step, int):
            super().__init__(f"{walked} has no item [{step}]")
        else:
            super().__init__(f"{walked} has no key '{step}'")


class HttpCallError(BackendError):
    """An HTTP backend call failed; ``kind`` says how (status, timeout, deadline, ...)."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.kind = kind
        self.status = status
        #: The wait the reply's ``Retry-After`` asked for, in seconds (a 429), if any.
        self.retry_after = retry_after
        super().__init__(message)


class OAuth2Error(BackendError):
    """Getting a token from an OAuth 2.0 token endpoint failed.

    ``kind`` says how: ``config`` (the grant itself is invalid), ``connection``,
    ``timeout``, ``status`` (the endpoint refused; ``status``, ``error`` and
    ``error_description`` say what it said), ``response`` (the reply is not a
    usable token). ``token_url`` names the endpoint.
    """

    def __init__(
        self,
        token_url: str,
        kind: str,
        reason: str,
        *,
        status: int | None = None,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        self.token_url = token_url
        self.kind = kind
        self.reason = reason
        self.status = status
        self.error = error
        self.error_description = error_description
        super().__init__(f"OAuth2 token request to {token_url}: {reason}")


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


class LimitedError(AgentKitError):
    """A call refused by a limit before anything was sent: ``retry_after`` seconds from
    now it may pass. ``scope`` says which limit: ``"per_caller"``, ``"total"``,
    ``"concurrent"``, ``"paused"`` (the upstream answered 429) or ``"store"`` (the
    shared limits store could not be reached)."""

    def __init__(self, message: str, *, scope: str, retry_after: float) -> None:
        self.scope = scope
        self.retry_after = retry_after
        super().__init__(message)


class MultipartError(BackendError):
    """A multipart body could not be built: bad base64, over ``max_bytes``, a bad media type."""


class PaginationError(BackendError):
    """Following the pages failed: a page's records are not a list, a cursor is not text, ..."""


def format_location(location: Iterable[str | int]) -> str:
    """``("parameters", 1, "default")`` -> ``parameters[1].default``."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice nearest to ``word``, when one is near enough to be a likely typo."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(word: str, choices: Iterable[str], prefix: str = "") -> str:
    """`` (did you mean 'x'?)`` when a choice is close to ``word``, else ``""``."""
    match = closest(word, choices)
    return f" (did you mean '{prefix}{match}'?)" if match else ""
