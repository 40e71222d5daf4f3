"""The tool contract: a name, a description, a version, two schemas and ``execute``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final

from agentkit.toolerrors import SchemaDefinitionError, SemanticError
from agentkit.toolschema import ToolSchema

__all__ = ["TOOL_NAME_PATTERN", "Tool"]

#: Tool names every provider accepts (OpenAI, Anthropic, MCP, Gemini).
TOOL_NAME_PATTERN: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")

_NO_PARAMETERS: Final[Mapping[str, Any]] = MappingProxyType({"parameters": ()})


class _Spec:
    """What a tool class declares, checked and compiled once per class."""

    __slots__ = (
        "credential_names",
        "description",
        "input_schema",
        "name",
        "output_schema",
        "source",
        "tags",
        "version",
    )

    def __init__(self, cls: type[Tool]) -> None:
        self.name = cls.TOOL_NAME
        self.source = cls.SOURCE or f"{cls.__module__}.{cls.__qualname__}"
        owner = f"Tool '{self.name}' ({self.source})"
        problems: list[str] = []
        if not isinstance(self.name, str) or not TOOL_NAME_PATTERN.fullmatch(self.name):
            problems.append(
                f"TOOL_NAME {self.name!r} is invalid: use letters, digits, '_' and '-', "
                "starting with a letter, at most 64 characters"
            )
        self.description = cls.TOOL_DESCRIPTION
        if not isinstance(self.description, str):
            problems.append("TOOL_DESCRIPTION must be a string")
        self.version = cls.TOOL_VERSION
        if not isinstance(self.version, str) or not self.version.strip():
            problems.append(f"TOOL_VERSION must be a non-empty string, got {self.version!r}")
        self.tags = _check_tags(cls.TOOL_TAGS, problems)
        self.credential_names = _check_credential_names(cls.CREDENTIAL_NAMES, problems)
        if problems:
            raise SemanticError(f"{owner} is invalid:\n" + "\n".join(f"  - {p}" for p in problems))
        self.input_schema = _compile_schema(cls.INPUT_SCHEMA, f"{owner} INPUT_SCHEMA")
        self.output_schema = _compile_schema(cls.OUTPUT_SCHEMA, f"{owner} OUTPUT_SCHEMA")


def _compile_schema(definition: Any, owner: str) -> ToolSchema:
    if isinstance(definition, ToolSchema):
        return definition
    try:
        return ToolSchema.from_dict(definition)
    except SchemaDefinitionError as exc:
        raise exc.with_owner(owner) from None


def _check_tags(tags: Any, problems: list[str]) -> Mapping[str, str]:
    if not isinstance(tags, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in tags.items()
    ):
        problems.append("TOOL_TAGS must map strings to strings")
        return MappingProxyType({})
    return MappingProxyType(dict(tags))


def _check_credential_names(names: Any, problems: list[str]) -> tuple[str, ...]:
    if isinstance(names, str) or not isinstance(names, Sequence):
        problems.append("CREDENTIAL_NAMES must be a list of credential names")
        return ()
    if not all(isinstance(name, str) and name for name in names):
        problems.append("CREDENTIAL_NAMES must hold non-empty strings")
        return ()
    if len(set(names)) != len(names):
        problems.append("CREDENTIAL_NAMES lists a credential twice")
    return tuple(names)


def spec_of(tool: Tool) -> _Spec:
    """The checked declaration of ``tool``'s class (``SemanticError`` when it has no name)."""
    spec = tool._spec
    if spec is None:
        raise SemanticError("A Tool name is required.  Set TOOL_NAME on the class.")
    return spec


class Tool:
    """Base class of every tool.

    Subclasses set the class constants and implement ``execute``. The schemas are
    written as ``{"parameters": [...]}`` dictionaries (see ``ToolSchema``); they
    are checked when the class is defined, so a broken tool fails at import time
    with the tool named. Call tools through a ``ToolExecutor``, which validates
    inputs and outputs and resolves credentials; ``execute`` receives inputs that
    are already valid, with defaults applied.
    """

    TOOL_NAME: ClassVar[str] = ""
    TOOL_DESCRIPTION: ClassVar[str] = ""
    TOOL_VERSION: ClassVar[str] = "1.0.0"
    INPUT_SCHEMA: ClassVar[Mapping[str, Any]] = _NO_PARAMETERS
    OUTPUT_SCHEMA: ClassVar[Mapping[str, Any]] = _NO_PARAMETERS
    #: ``str -> str`` labels, used by ``ToolRegistry.lookup_by_tags``.
    TOOL_TAGS: ClassVar[Mapping[str, str]] = MappingProxyType({})
    #: Names of the credentials ``execute`` receives, resolved by the executor.
    CREDENTIAL_NAMES: ClassVar[Sequence[str]] = ()
    #: Where the tool is defined, for messages; defaults to the class's dotted name.
    SOURCE: ClassVar[str] = ""

    _spec: ClassVar[_Spec | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A class without a name is an abstract base (or a mistake reported at
        # instantiation); a named one is checked now, so errors surface at import.
        cls._spec = _Spec(cls) if cls.TOOL_NAME else None

    def __init__(self) -> None:
        spec = self._spec
        if spec is None:
            raise SemanticError("A Tool name is required.  Set TOOL_NAME on the class.")
        # Checked here rather than with abc: ABCMeta makes every isinstance(x, Tool)
        # several times slower, and the executor asks that on every call.
        if type(self).execute is Tool.execute:
            raise SemanticError(
                f"Tool '{spec.name}' ({spec.source}) does not implement "
                "execute(inputs, credentials)."
            )

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        """Do the tool's work.

        ``inputs`` have been validated against ``INPUT_SCHEMA`` (defaults applied);
        ``credentials`` maps each name in ``CREDENTIAL_NAMES`` to its value. Return
        a dictionary matching ``OUTPUT_SCHEMA``; raise to fail the call.

        The credential values are redacted from everything the call reports. A
        form you derive from one and send (a signature, an assembled header)
        is not known unless you register it first with
        ``agentkit.redaction.redact_also(form)``.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement execute()")

    @property
    def name(self) -> str:
        return spec_of(self).name

    @property
    def description(self) -> str:
        return spec_of(self).description

    @property
    def version(self) -> str:
        return spec_of(self).version

    @property
    def input_schema(self) -> ToolSchema:
        return spec_of(self).input_schema

    @property
    def output_schema(self) -> ToolSchema:
        return spec_of(self).output_schema

    @property
    def tags(self) -> dict[str, str]:
        return dict(spec_of(self).tags)

    @property
    def credential_names(self) -> tuple[str, ...]:
        return spec_of(self).credential_names

    @property
    def source(self) -> str:
        """Where the tool is defined: ``package.module.Class`` or ``path:line``."""
        return spec_of(self).source

    def __repr__(self) -> str:
        spec = self._spec
        if spec is None:
            return f"<{type(self).__name__} (no TOOL_NAME)>"
        return f"<{type(self).__name__} {spec.name} {spec.version}>"
