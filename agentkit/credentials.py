"""Resolving the named credentials a tool declares.

A ``CredentialsManager`` asks an ordered chain of providers for each name and
takes the first value found. The providers shipped here read a mapping given in
code, environment variables, and ``.env``-style secrets files. A credential that
no provider has fails the call with a ``CredentialError`` naming every place
that was looked in -- never a value. So does one shorter than
``MIN_SECRET_LENGTH`` characters, naming where it came from: so short a value
turns up by chance in ordinary text, and could be kept out of nothing.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from agentkit.redaction import MIN_SECRET_LENGTH
from agentkit.textfile import TextFileError, read_text_file
from agentkit.toolerrors import CredentialError, SemanticError

__all__ = [
    "CredentialProvider",
    "CredentialsManager",
    "EnvironmentProvider",
    "MappingProvider",
    "SecretsFileProvider",
    "environment_name",
    "read_env_file",
    "read_user_file",
]

_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")


# Cached: every call of a tool with credentials asks for the same few names, and
# the substitution cost more than the lookup it names. Only names are kept, never values.
@functools.lru_cache(maxsize=1024)
def environment_name(credential: str) -> str:
    """The environment variable of a credential: ``weather-api-key`` -> ``WEATHER_API_KEY``."""
    return _NOT_ALPHANUMERIC.sub("_", credential).upper()


@runtime_checkable
class CredentialProvider(Protocol):
    """A source of credential values."""

    def get(self, name: str) -> str | None:
        """The value of credential ``name``, or ``None`` when this provider has none."""

    def describe(self, name: str) -> str:
        """Where this provider looked for ``name``, for error messages (no values)."""


class MappingProvider:
    """Credentials given in code: ``MappingProvider({"weather-api-key": "..."})``."""

    def __init__(
        self, values: Mapping[str, str], *, label: str = "the mapping given in code"
    ) -> None:
        self._values = dict(values)
        self._label = label

    def get(self, name: str) -> str | None:
        return self._values.get(name) or None

    def describe(self, name: str) -> str:
        return f"{self._label} (key '{name}')"


class EnvironmentProvider:
    """Credentials from environment variables, named by ``environment_name``.

    ``environ`` defaults to ``os.environ``, read at each lookup, so a variable
    set after start-up is seen.
    """

    def __init__(self, environ: Mapping[str, str] | None = None, *, prefix: str = "") -> None:
        self._environ = environ
        self._prefix = prefix

    def _variable(self, name: str) -> str:
        return self._prefix + environment_name(name)

    def get(self, name: str) -> str | None:
        environ = os.environ if self._environ is None else self._environ
        return environ.get(self._variable(name)) or None

    def describe(self, name: str) -> str:
        return f"environment variable {self._variable(name)}"


class SecretsFileProvider:
    """Credentials from a ``.env``-style file of ``NAME=value`` lines.

    A credential is found under its own name or its environment-variable name
    (``weather-api-key`` or ``WEATHER_API_KEY``). Blank lines and ``#`` comments
    are skipped; ``export`` prefixes and matching quotes around values are
    removed. The file is read once, when the provider is made; a malformed line
    raises ``SemanticError`` with its line number (never its text, which may
    hold a secret).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        self._values = read_env_file(self._path, "secrets file")

    def get(self, name: str) -> str | None:
        return self._values.get(name) or self._values.get(environment_name(name)) or None

    def describe(self, name: str) -> str:
        return f"secrets file {self._path} ('{name}' or '{environment_name(name)}')"


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def read_env_file(path: str | os.PathLike[str], what: str = "env file") -> dict[str, str]:
    """The ``NAME=value`` lines of a ``.env``-style file (see ``SecretsFileProvider``).

    Raises ``SemanticError`` naming ``what``, the path and the line, never a value.
    """
    return _parse_env_lines(read_user_file(path, what), os.fspath(path))


def read_user_file(path: str | os.PathLike[str], what: str) -> str:
    """``read_text_file`` for a file an option names (``what``: "env file", "the token
    file"): a regular file, at most ``MAX_FILE_BYTES``, UTF-8 with or without a BOM.

    Raises ``SemanticError`` naming ``what``, the path and the line, never the text.
    """
    try:
        return read_text_file(path)
    except TextFileError as exc:
        where = f"{os.fspath(path)}:{exc.line}:{exc.column}" if exc.line else os.fspath(path)
        raise SemanticError(f"Cannot read {what} {where}: {exc.message}") from None


def _parse_env_lines(text: str, path: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("export "):
            stripped = stripped[len("export ") :].lstrip()
        key, sep, value = stripped.partition("=")
        key = key.strip()
        if not sep or not _KEY.fullmatch(key):
            raise SemanticError(
                f"{path}:{number}: expected NAME=value (a name of letters, digits, "
                "'_', '-' or '.', then '=')"
            )
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key] = value
    return values


class CredentialsManager:
    """Resolves credential names through an ordered chain of providers; the first match wins."""

    def __init__(self, providers: Iterable[CredentialProvider] = ()) -> None:
        self._providers = tuple(providers)

    @classmethod
    def from_env(cls, secrets_file: str | os.PathLike[str] | None = None) -> CredentialsManager:
        """Environment variables (the executor's default), then ``secrets_file`` if given."""
        providers: list[CredentialProvider] = [EnvironmentProvider()]
        if secrets_file:
            providers.append(SecretsFileProvider(secrets_file))
        return cls(providers)

    @classmethod
    def from_mapping(cls, values: Mapping[str, str]) -> CredentialsManager:
        return cls([MappingProvider(values)])

    @property
    def providers(self) -> tuple[CredentialProvider, ...]:
        return self._providers

    def with_provider(
        self, provider: CredentialProvider, *, first: bool = False
    ) -> CredentialsManager:
        """A new manager that also asks ``provider`` (last, or first)."""
        chain = (provider, *self._providers) if first else (*self._providers, provider)
        return CredentialsManager(chain)

    def get(self, name: str) -> str | None:
        found = self._find(name)
        return found[0] if found is not None else None

    def _find(self, name: str) -> tuple[str, CredentialProvider] | None:
        """The first value found for ``name``, and the provider that had it."""
        for provider in self._providers:
            value = provider.get(name)
            if value:
                return value, provider
        return None

    def resolve(self, tool_name: str, names: Sequence[str]) -> dict[str, str]:
        """Every credential in ``names``, or ``CredentialError`` for the first one missing,
        or shorter than ``MIN_SECRET_LENGTH`` (named with where it came from, never its value).
        """
        resolved: dict[str, str] = {}
        for name in names:
            found = self._find(name)
            if found is None:
                raise CredentialError(
                    tool_name, name, [provider.describe(name) for provider in self._providers]
                )
            value, provider = found
            if len(value) < MIN_SECRET_LENGTH:
                raise CredentialError(
                    tool_name, name, [provider.describe(name)], refused=_too_short(provider, name)
                )
            resolved[name] = value
        return resolved


def _too_short(provider: CredentialProvider, name: str) -> str:
    """Why a credential's value from ``provider`` is refused: fewer than
    ``MIN_SECRET_LENGTH`` characters (its length is not said, nor its value)."""
    return (
        f"its value from {provider.describe(name)} is shorter than {MIN_SECRET_LENGTH} "
        f"characters, the least a credential needs: so short a value turns up by chance in "
        "ordinary text, and could be kept out of neither errors nor answers. Give the whole "
        "credential; a value that is not secret (a basic-auth username) is written in the "
        "definition instead (docs/tool-definitions.md, Basic auth)"
    )
