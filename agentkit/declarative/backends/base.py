"""The backend seam: what a kind of backend (``backend: {KIND: ...}``) must provide.

A backend kind is a class with a ``kind`` name, a ``parse`` class method that
checks its part of the YAML and reports each problem at its place, and, on
the parsed instance, ``call(inputs, credentials)`` and ``default_annotations``.
The built-in kinds (``http``, ``python``) are two such classes; a package adds
one through ``agentkit.declarative.backends.register_backend`` or the
``agentkit.backends`` entry point group (see docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, final

from agentkit.declarative.environment import Substituter, Substitution
from agentkit.declarative.problems import Location, Problems, check_keys
from agentkit.ratelimits import Limits
from agentkit.toolschema import ToolSchema

__all__ = ["Backend", "BackendContext", "BackendReport", "SharedSource", "SourceTable"]


class SharedSource(Protocol):
    """A ``source:`` document as the definition around a backend reads it.

    A backend kind that lets its tools share settings defines what its sources
    hold (the HTTP backend's: ``backends/http/sources.py``); the definition needs
    only this of one: the credentials and tags its tools take on, its answer budget
    and limits, and how ``agentkit show`` describes it.
    """

    @property
    def name(self) -> str: ...
    @property
    def location(self) -> str:
        """``file:line`` of its ``source:`` key."""

    @property
    def credentials(self) -> tuple[str, ...]: ...
    @property
    def tags(self) -> Mapping[str, str]: ...
    @property
    def max_output(self) -> Mapping[str, int] | None: ...
    @property
    def limits(self) -> Limits | None:
        """The limits on all its tools together; None: none."""

    @property
    def substitutions(self) -> tuple[Substitution, ...]: ...
    def describe(self) -> dict[str, Any]:
        """What ``agentkit show`` prints of it."""


@final
class SourceTable:
    """The sources of one load by name; a name whose source has problems maps to its location."""

    __slots__ = ("broken", "sources")

    def __init__(self) -> None:
        self.sources: dict[str, SharedSource] = {}
        self.broken: dict[str, str] = {}  # name -> file:line

    def names(self) -> list[str]:
        return sorted({*self.sources, *self.broken})


@final
@dataclass(slots=True)
class BackendReport:
    """What parsing a backend found out besides the backend: filled in by ``parse``."""

    #: Shared definitions the backend drew settings from (an HTTP ``source:``).
    sources: list[SharedSource] = field(default_factory=list)
    #: Things that load but look wrong, for ``agentkit validate``.
    warnings: list[str] = field(default_factory=list)
    #: The tool's output schema when the backend fixes it (a binary HTTP reply's shape);
    #: None: the definition's ``output_schema``.
    output_schema: ToolSchema | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class BackendContext:
    """What a backend's ``parse`` knows of the definition around its mapping.

    ``inputs`` is None when the definition's input schema is itself broken: its
    problems are reported already, so references to inputs are not checked again.
    """

    location: Location  # ("backend", KIND): where the backend's own mapping is
    inputs: ToolSchema | None
    outputs: ToolSchema
    credentials: tuple[str, ...]  # the definition's declared credential names
    problems: Problems
    #: Substitutes ``${VAR}`` in a value, reporting an undefined variable at its place.
    substituter: Substituter
    #: The ``source:`` documents loaded with the definitions.
    sources: SourceTable
    report: BackendReport = field(default_factory=BackendReport)

    def at(self, location: Location) -> BackendContext:
        """This context at ``location``, sharing its report (``dataclasses.replace``,
        which reads the fields of the class each time, was a tenth of parsing a backend)."""
        return BackendContext(
            location=location,
            inputs=self.inputs,
            outputs=self.outputs,
            credentials=self.credentials,
            problems=self.problems,
            substituter=self.substituter,
            sources=self.sources,
            report=self.report,
        )

    def problem(self, message: str, *keys: str | int) -> None:
        """Report ``message`` at the backend's mapping, or at ``keys`` inside it."""
        self.problems.add((*self.location, *keys), message)

    def warn(self, message: str) -> None:
        """Report something that loads but looks wrong (``agentkit validate`` shows it)."""
        self.report.warnings.append(message)

    def use_source(self, source: SharedSource) -> None:
        """Record that the backend draws on ``source`` (its credentials join the tool's)."""
        self.report.sources.append(source)

    def check_keys(self, raw: Any, allowed: Sequence[str], what: str) -> bool:
        """Report each unknown key of ``raw`` (with a hint); False when it is not a mapping."""
        return check_keys(raw, allowed, self.location, self.problems, what)


class Backend(Protocol):
    """A kind of backend: parsed from its YAML mapping, called with checked inputs."""

    #: The key under ``backend:`` that selects this kind (``http``, ``python``).
    #: A kind may also give ``config_schema``, the JSON Schema of its value, which
    #: ``definition_schema()`` (``agentkit schema``) shows editors; it is optional
    #: and the loader never uses it: ``parse`` is what checks a definition. A kind
    #: whose ``call`` asks a ``confirm: true`` call's user itself, showing what it is
    #: about to send (``agentkit.context.confirm``), sets ``confirms_sends = True``;
    #: otherwise the user is asked with the call's arguments before ``call``.
    kind: ClassVar[str]

    @classmethod
    def parse(cls, raw: Any, context: BackendContext) -> Backend | None:
        """Check ``raw`` (the value under ``backend: {KIND: ...}``) and build the backend.

        Report every problem through ``context`` (``context.problem(message,
        *keys)``) and return None if there was any; raise nothing for bad input.
        """

    def call(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        """Do the tool's work; a dictionary (or an awaitable of one) for the output schema.

        ``inputs`` are validated, defaults applied; ``credentials`` holds the
        declared ones. Raise to fail the call: the executor keeps the type and
        redacts the credentials from the message and the chain.
        """

    @property
    def default_annotations(self) -> Mapping[str, Any]:
        """Hints this backend implies (``read_only`` ...); the file's ``annotations`` win."""
