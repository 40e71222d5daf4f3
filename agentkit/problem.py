"""The one problem type every check reports with, and the wording its messages share.

``Problem`` is a message and where it is (a path inside the thing checked; a file,
line and column where known). ``closest`` and ``did_you_mean`` make the "did you
mean" hint every unknown name gets; ``format_location`` writes a path of keys and
indexes the way an author reads it. ``SchemaProblem``, ``DefinitionProblem`` and
``DescriptionProblem`` are deprecated names that build a ``Problem``.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import final

__all__ = [
    "DefinitionProblem",
    "DescriptionProblem",
    "Problem",
    "SchemaProblem",
    "closest",
    "did_you_mean",
    "format_location",
]


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
