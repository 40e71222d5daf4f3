"""Errors found before any call: in a command line, a schema, a definition file, a
template, an extension, an OpenAPI description. Each lists every ``Problem`` it
found, located, and exits the command line with status 2."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import final

from agentkit.errorbase import AgentKitError, SemanticError
from agentkit.problem import Problem

__all__ = [
    "DefinitionError",
    "ExportError",
    "OpenAPIError",
    "PluginError",
    "PointerError",
    "SchemaDefinitionError",
    "TemplateSyntaxProblem",
    "TextFileError",
    "UnexpressibleOperation",
    "UsageError",
]


class UsageError(SemanticError):
    """A mistake in how the command was called."""


class ExportError(SemanticError):
    """A tool cannot be exported in the requested format."""


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


class TemplateSyntaxProblem(AgentKitError):
    """A template is broken: bad syntax, or an operation refused at load time."""


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
