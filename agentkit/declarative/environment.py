"""``${VAR}`` in definitions: configuration substituted once, when the definitions load.

A value may name environment variables: ``${VAR}`` (the variable must be set),
``${VAR:-default}`` (the default when the variable is unset or empty), and
``$${`` for a literal ``${``. Variables come from ``os.environ`` (or the
``environ`` given to ``load_tools``) and from an ``--env-file`` / ``env_file``
of ``NAME=value`` lines, whose values win: a file named on the command line
is more deliberate than whatever the shell exported.

Where substitution happens, and nowhere else: a source's ``base_url``, the
literal values of ``headers:`` and ``query:`` (a source's and a tool's), and
parameter defaults. A substituted value is literal text: a ``{{`` that came
from a variable is never a template, and no argument can name a variable. A
value that mixes ``${VAR}`` with ``{{ ... }}`` is refused: the template would
render at call time, the variable at load time, and one value cannot mean both.

Variables are configuration, not secrets: ``agentkit show`` prints what was
substituted, and nothing redacts it. Credentials go under ``credentials:``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, final

from agentkit.credentials import read_env_file
from agentkit.declarative.problems import Location, Problems
from agentkit.problem import format_location
from agentkit.toolerrors import (
    DefinitionError,
    Problem,
    SemanticError,
)

__all__ = [
    "Environment",
    "Expansion",
    "LiteralText",
    "Substituter",
    "Substitution",
]

_NAME: Final = r"[A-Za-z_][A-Za-z0-9_]*"
# One match per "$${" (an escape), well-formed reference, or other "${" (a mistake).
_TOKEN: Final = re.compile(rf"\$\$\{{|\$\{{(?:({_NAME})(?::-([^{{}}]*))?\}})?")
_REFERENCE: Final = re.compile(rf"\$\{{{_NAME}(?::-[^{{}}]*)?\}}")
_TEMPLATE_DELIMITERS: Final = ("{{", "{%", "{#")


class LiteralText(str):
    """Text that is sent as it is: a value ``${VAR}`` substitution produced.

    The definition parser never compiles it as a template, whatever it holds.
    """

    __slots__ = ()


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Substitution:
    """One variable used at load time: the field it filled, its value and where that came from."""

    field: str
    variable: str
    value: str
    origin: str  # "environment", "env file PATH" or "default"

    def to_dict(self) -> dict[str, str]:
        return {
            "field": self.field,
            "variable": self.variable,
            "value": self.value,
            "from": self.origin,
        }


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Expansion:
    """What ``Environment.expand`` made of a value: its text, or why it has none."""

    text: str
    used: tuple[tuple[str, str, str], ...]  # (variable, value, origin), in order of use
    missing: tuple[str, ...]  # variables without a value or a default
    malformed: bool  # a "${" that starts no reference


class Environment:
    """The variables ``${VAR}`` may name during one load; immutable once made."""

    __slots__ = ("_file", "_file_values", "_values")

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        *,
        file_values: Mapping[str, str] | None = None,
        file: str | None = None,
    ) -> None:
        self._values = dict(os.environ if environ is None else environ)
        self._file_values = dict(file_values or {})
        self._file = file

    @classmethod
    def load(
        cls,
        env_file: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Environment:
        """``environ`` (default ``os.environ``) and ``env_file``'s variables, the file's winning.

        An unreadable or malformed file raises ``DefinitionError`` naming its
        path and line (never a value: an env file may hold secrets too).
        """
        if env_file is None:
            return cls(environ)
        path = os.fspath(env_file)
        try:
            values = read_env_file(path)
        except SemanticError as exc:
            raise DefinitionError(
                [Problem(file=path, path="--env-file", message=str(exc))]
            ) from None
        return cls(environ, file_values=values, file=path)

    def lookup(self, name: str) -> tuple[str, str] | None:
        """The value of ``name`` and where it came from, or None when it is not set."""
        if name in self._file_values:
            return self._file_values[name], f"env file {self._file}"
        if name in self._values:
            return self._values[name], "environment"
        return None

    def expand(self, text: str) -> Expansion:
        """``text`` with every reference replaced and every ``$${`` made ``${``."""
        pieces: list[str] = []
        used: list[tuple[str, str, str]] = []
        missing: list[str] = []
        malformed = False
        position = 0
        for match in _TOKEN.finditer(text):
            pieces.append(text[position : match.start()])
            position = match.end()
            token, name, default = match.group(0), match.group(1), match.group(2)
            if token == "$${":
                pieces.append("${")
            elif name is None:
                malformed = True
            else:
                found = self.lookup(name)
                if found is not None and (found[0] or default is None):
                    value, origin = found
                elif default is not None:
                    value, origin = default, "default"
                else:
                    missing.append(name)
                    continue
                pieces.append(value)
                used.append((name, value, origin))
        pieces.append(text[position:])
        return Expansion(
            text="".join(pieces), used=tuple(used), missing=tuple(missing), malformed=malformed
        )


class Substituter:
    """Substitution for one document: problems located in it, substitutions remembered."""

    __slots__ = ("environment", "problems", "used")

    def __init__(self, environment: Environment, problems: Problems) -> None:
        self.environment = environment
        self.problems = problems
        self.used: list[Substitution] = []

    def text(self, raw: str, location: Location) -> str | None:
        """``raw`` itself when it names no variable, else its ``LiteralText``; None on a problem."""
        if "${" not in raw:
            return raw
        if any(delimiter in raw for delimiter in _TEMPLATE_DELIMITERS):
            if _REFERENCE.search(raw.replace("$${", "")):
                self.problems.add(
                    location,
                    "a value cannot mix ${VAR} (substituted at load time) with '{{ ... }}' "
                    "(rendered at each call); give the variable a value of its own, such as "
                    "a header or query parameter",
                )
                return None
            return raw
        expansion = self.environment.expand(raw)
        if expansion.malformed:
            self.problems.add(
                location,
                "'${' starts no variable reference; write ${NAME} or ${NAME:-default} "
                "(NAME: letters, digits and '_'), or $${ for a literal '${'",
            )
            return None
        for name in expansion.missing:
            self.problems.add(
                location,
                f"environment variable '{name}' is not set and has no default; set it, put it "
                f"in the --env-file, or write ${{{name}:-default}}",
            )
        if expansion.missing:
            return None
        field = format_location(location)
        self.used.extend(
            Substitution(field=field, variable=name, value=value, origin=origin)
            for name, value, origin in expansion.used
        )
        return LiteralText(expansion.text)
