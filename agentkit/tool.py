"""The tool contract: a name, a description, a version, two schemas and ``execute``."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final, Protocol, final

from agentkit.content import Output
from agentkit.tooldeclarations import (
    ANNOTATION_KEYS,
    adopt_lowercase_declarations,
    check_annotations,
    check_credential_names,
    check_tags,
    compile_schema,
    refuse,
    with_continuation,
)
from agentkit.toolerrors import (
    SemanticError,
)
from agentkit.toolschema import ToolSchema

__all__ = [
    "ANNOTATION_KEYS",
    "TOOL_NAME_PATTERN",
    "AsyncTool",
    "Definition",
    "Tool",
    "ToolSpec",
    "spec_of",
]

#: Tool names every provider accepts (OpenAI, Anthropic, MCP, Gemini).
TOOL_NAME_PATTERN: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


class Definition(Protocol):
    """What a tool made from a definition file says about that file, for adapters.

    ``agentkit.declarative.ToolDefinition`` is one; a hand-written tool has none.
    """

    @property
    def source(self) -> str:
        """Where the definition is: ``path:line``."""

    def to_dict(self) -> dict[str, Any]:
        """The definition as written, as plain JSON data."""

    def loaded_with(self) -> dict[str, Any]:
        """What it took from outside its document when it loaded, as plain JSON data.

        ``http_source``: the HTTP source it uses (name, base URL, where it is defined,
        its definition); ``substitutions``: each ``${VAR}`` filled in. Empty when
        neither applies.
        """

    def warnings(self) -> list[str]:
        """What ``agentkit validate`` warns about it (``field: message``); none is a problem."""


_NO_PARAMETERS: Final[Mapping[str, Any]] = MappingProxyType({"parameters": ()})


@final
class ToolSpec:
    """What a tool declares, checked and compiled once per class: ``tool.spec``.

    Everything an executor needs for a call, in one attribute read: the name,
    version, description, the two compiled schemas (``input_schema.check``,
    ``output_schema.check``), the credential names, whether ``execute`` is a
    coroutine function (``is_async``), and the tags, annotations, source and
    backend kind. Immutable. A tool constructed with its own ``tags`` or
    ``credential_names`` holds a copy with those added, made once in
    ``Tool.__init__``, so reading it costs the same either way.

    Made by ``Tool`` when a class with a ``TOOL_NAME`` is defined; not meant to
    be constructed by hand.
    """

    __slots__ = (
        "annotations",
        "backend_kind",
        "credential_names",
        "description",
        "input_schema",
        "is_async",
        "max_output",
        "name",
        "output_schema",
        "source",
        "tags",
        "version",
    )
    name: str
    description: str
    version: str
    tags: Mapping[str, str]
    credential_names: tuple[str, ...]
    annotations: Mapping[str, Any]
    backend_kind: str
    #: Decided once per class: an executor awaits the tool on the event loop when
    #: ``execute`` is a coroutine function, and runs it in a worker thread otherwise.
    is_async: bool
    input_schema: ToolSchema
    output_schema: ToolSchema
    source: str
    #: The answer budget in bytes (``MAX_OUTPUT``); None: answers are never paged.
    max_output: int | None

    def __init__(self, cls: type[Tool]) -> None:
        name, description, version = cls.TOOL_NAME, cls.TOOL_DESCRIPTION, cls.TOOL_VERSION
        source = _source_of(cls)
        owner = f"Tool '{name}' ({source})"
        problems: list[str] = []
        if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
            problems.append(
                f"TOOL_NAME {name!r} is invalid: use letters, digits, '_' and '-', "
                "starting with a letter, at most 64 characters"
            )
        if not isinstance(description, str):
            problems.append("TOOL_DESCRIPTION must be a string")
        if not isinstance(version, str) or not version.strip():
            problems.append(f"TOOL_VERSION must be a non-empty string, got {version!r}")
        tags = check_tags(cls.TOOL_TAGS, problems, "TOOL_TAGS")
        credential_names = check_credential_names(
            cls.CREDENTIAL_NAMES, problems, "CREDENTIAL_NAMES"
        )
        annotations = check_annotations(cls.TOOL_ANNOTATIONS, problems)
        backend_kind = cls.BACKEND_KIND
        if not isinstance(backend_kind, str) or not backend_kind:
            problems.append(f"BACKEND_KIND must be a non-empty string, got {backend_kind!r}")
        max_output = None
        if cls.MAX_OUTPUT is not None:
            # Imported for the tools that page their answers only: start-up need not.
            from agentkit.paging import max_output_bytes

            max_output, wrong = max_output_bytes(cls.MAX_OUTPUT)
            if wrong is not None:
                problems.append(f"MAX_OUTPUT: {wrong}")
        refuse(f"{owner} is invalid", problems)
        input_schema = compile_schema(cls.INPUT_SCHEMA, f"{owner} INPUT_SCHEMA")
        if max_output is not None:
            input_schema = with_continuation(input_schema, problems)
            refuse(f"{owner} is invalid", problems)
        _set_fields(
            self,
            name=name,
            description=description,
            version=version,
            tags=tags,
            credential_names=credential_names,
            annotations=annotations,
            backend_kind=backend_kind,
            is_async=inspect.iscoroutinefunction(cls.execute),
            input_schema=input_schema,
            output_schema=compile_schema(cls.OUTPUT_SCHEMA, f"{owner} OUTPUT_SCHEMA"),
            source=source,
            max_output=max_output,
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ToolSpec is immutable; cannot set '{name}'")

    def __repr__(self) -> str:
        return f"<ToolSpec {self.name} {self.version}>"

    def with_instance_values(
        self, tags: Mapping[str, str] | None, credential_names: Sequence[str] | None
    ) -> ToolSpec:
        """This declaration plus one instance's ``tags`` and ``credential_names``.

        Instance tags override class tags of the same key; instance credential
        names are added after the class's (a name in both is kept once).
        """
        problems: list[str] = []
        extra_tags = check_tags(tags, problems, "tags") if tags is not None else {}
        extra_names = (
            check_credential_names(credential_names, problems, "credential_names")
            if credential_names is not None
            else ()
        )
        refuse(f"Tool '{self.name}' ({self.source}): invalid Tool.__init__() arguments", problems)
        spec: ToolSpec = object.__new__(ToolSpec)
        _set_fields(spec, **{slot: getattr(self, slot) for slot in ToolSpec.__slots__})
        _set_fields(
            spec,
            tags=MappingProxyType({**self.tags, **extra_tags}),
            credential_names=tuple(dict.fromkeys((*self.credential_names, *extra_names))),
        )
        return spec


def _set_fields(spec: ToolSpec, **fields: Any) -> None:
    for name, value in fields.items():
        object.__setattr__(spec, name, value)


def _source_of(cls: type[Tool]) -> str:
    return cls.SOURCE or f"{cls.__module__}.{cls.__qualname__}"


def spec_of(tool: Tool) -> ToolSpec:
    """``tool.spec``, the checked declaration, for code that cannot assume it is there.

    Raises ``SemanticError`` when the tool's class has no ``TOOL_NAME`` (an abstract
    base) or when the tool replaced ``spec`` with a value of its own.
    """
    spec = tool.spec
    if type(spec) is ToolSpec:
        return spec
    if spec is None:
        raise SemanticError("A Tool name is required.  Set TOOL_NAME on the class.")
    cls = type(tool)
    raise SemanticError(
        f"Tool class {cls.__module__}.{cls.__qualname__} replaced 'spec' with a "
        f"{type(spec).__name__}; 'spec' is the tool's checked declaration (a ToolSpec) "
        "that the executor reads: give the tool's own attribute another name"
    )


class Tool:
    """Base class of every tool.

    Subclasses set the class constants and implement ``execute``. The schemas are
    written as ``{"parameters": [...]}`` dictionaries (see ``ToolSchema``); they
    are checked when the class is defined, so a broken tool fails at import time
    with the tool named. A schema set to ``None`` is free-form: not checked, any
    dictionary passes (an omitted schema means no parameters). Call tools through
    a ``ToolExecutor``, which validates inputs and outputs and resolves
    credentials; ``execute`` receives inputs that are already valid, with
    defaults applied.

    ``execute`` may be ``async def`` (subclass ``AsyncTool`` for the types): the
    executor's ``aexecute`` awaits it on the event loop, and its ``execute``
    runs it to completion (see ``ToolExecutor.execute``).

    Tags and credential names are declared on the class (``TOOL_TAGS``,
    ``CREDENTIAL_NAMES``, or the lowercase ``tags`` / ``credential_names``), or
    given per instance: ``super().__init__(credential_names=["api-key"])``.
    """

    TOOL_NAME: ClassVar[str] = ""
    TOOL_DESCRIPTION: ClassVar[str] = ""
    TOOL_VERSION: ClassVar[str] = "1.0.0"
    INPUT_SCHEMA: ClassVar[Mapping[str, Any] | ToolSchema | None] = _NO_PARAMETERS
    OUTPUT_SCHEMA: ClassVar[Mapping[str, Any] | ToolSchema | None] = _NO_PARAMETERS
    #: ``str -> str`` labels, used by ``ToolRegistry.lookup_by_tags``.
    TOOL_TAGS: ClassVar[Mapping[str, str]] = MappingProxyType({})
    #: Names of the credentials ``execute`` receives, resolved by the executor.
    CREDENTIAL_NAMES: ClassVar[Sequence[str]] = ()
    #: Where the tool is defined, for messages; defaults to the class's dotted name.
    SOURCE: ClassVar[str] = ""
    #: Hints for clients (MCP's tool annotations): keys from ``ANNOTATION_KEYS``.
    TOOL_ANNOTATIONS: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    #: What runs the tool: ``"class"`` for a hand-written one, else its backend's kind.
    BACKEND_KIND: ClassVar[str] = "class"
    #: The parsed definition a tool was made from; None for a hand-written tool.
    DEFINITION: ClassVar[Definition | None] = None
    #: The most calls of this tool a server (``agentkit serve``) runs at once; None: no
    #: limit of its own. A definition's ``concurrency:``.
    CONCURRENCY: ClassVar[int | None] = None
    #: A call ``agentkit serve`` runs asks the user first (MCP elicitation), for a tool
    #: whose calls destroy or send something; a definition's ``confirm:``. A tool made
    #: from a definition asks just before it acts (``agentkit.context.confirm``); a
    #: hand-written one is asked about with its arguments before ``execute`` runs.
    CONFIRM: ClassVar[bool] = False
    #: Why the tool is deprecated and what to use instead; None when it is not. A call
    #: ``agentkit serve`` runs tells its client so (a ``warning`` log message). A
    #: definition's ``deprecated:``.
    DEPRECATED: ClassVar[str | None] = None
    #: The answer budget: ``{"bytes": N}`` or ``{"tokens": N}`` (a token estimated as 4
    #: bytes). An answer over it is given in pages, each valid against the output
    #: schema, and the tool takes an optional ``continuation`` argument to fetch the
    #: next (``agentkit.paging``). None: answers are given whole. A definition's
    #: ``max_output:``.
    MAX_OUTPUT: ClassVar[Mapping[str, int] | None] = None
    #: Example calls, each with its inputs and what the answer must be (mappings in a
    #: definition's ``examples:`` form, or ``agentkit.toolexamples.ToolExample``
    #: values): ``agentkit test`` runs them, and exports carry their inputs where a
    #: provider has a field for them. Checked by ``toolexamples.examples_of``.
    EXAMPLES: ClassVar[Sequence[Any]] = ()

    #: The checked declaration (see ``ToolSpec``): what the executor reads, once a
    #: call. Set by Tool for each class with a ``TOOL_NAME`` (None for an abstract
    #: base); an instance with its own tags or credential names holds its own copy
    #: (see ``Tool.__init__``). A subclass may not define or assign ``spec``.
    spec: ToolSpec | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "spec" in cls.__dict__:
            raise SemanticError(
                f"Tool class {cls.__module__}.{cls.__qualname__} defines 'spec', the name "
                "Tool keeps for the checked declaration (a ToolSpec) that the executor "
                "reads; give the class's own attribute another name"
            )
        adopt_lowercase_declarations(cls)
        # A class without a name is an abstract base (or a mistake reported at
        # instantiation); a named one is checked now, so errors surface at import.
        cls.spec = ToolSpec(cls) if cls.TOOL_NAME else None

    def __init__(
        self,
        tags: Mapping[str, str] | None = None,
        credential_names: Sequence[str] | None = None,
    ) -> None:
        """Check the tool is complete; ``tags`` and ``credential_names`` add to the class's.

        Both are resolved here, once, so they cost nothing per call.
        """
        spec = type(self).spec
        if spec is None:
            raise SemanticError("A Tool name is required.  Set TOOL_NAME on the class.")
        # Checked here rather than with abc: ABCMeta makes every isinstance(x, Tool)
        # several times slower, and the executor asks that on every call.
        if type(self).execute in _UNIMPLEMENTED:
            raise SemanticError(
                f"Tool '{spec.name}' ({spec.source}) does not implement "
                "execute(inputs, credentials)."
            )
        if tags is not None or credential_names is not None:
            self.spec = spec.with_instance_values(tags, credential_names)

    # Typed as either kind so both kinds of subclass check: a sync one narrows the
    # return to the dict, an async one (AsyncTool) to a coroutine of it.
    def execute(
        self, inputs: dict[str, Any], credentials: Mapping[str, str]
    ) -> dict[str, Any] | Output | Awaitable[dict[str, Any] | Output]:
        """Do the tool's work.

        ``inputs`` have been validated against ``INPUT_SCHEMA`` (defaults applied);
        ``credentials`` maps each of ``credential_names`` to its value (empty when
        the tool names none; the chapter's ``credentials: dict = None`` works). Return
        a dictionary matching ``OUTPUT_SCHEMA`` -- or, for images, audio, embedded
        resources and mixed content, an ``agentkit.content.Output`` whose
        ``structured`` part matches it; raise to fail the call. Written ``async
        def`` (see ``AsyncTool``), it is awaited.

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

    @property
    def annotations(self) -> dict[str, Any]:
        """Hints for clients (``title``, ``read_only``, ``destructive``, ...), as declared."""
        return dict(spec_of(self).annotations)

    @property
    def backend_kind(self) -> str:
        """``"class"`` for a hand-written tool; a definition's backend kind (``"http"`` ...)."""
        return spec_of(self).backend_kind

    @property
    def definition(self) -> Definition | None:
        """The parsed definition file the tool was made from; None for a hand-written tool."""
        return type(self).DEFINITION

    def __repr__(self) -> str:
        spec = self.spec
        if type(spec) is not ToolSpec:
            why = "no TOOL_NAME" if spec is None else "'spec' replaced"
            return f"<{type(self).__name__} ({why})>"
        return f"<{type(self).__name__} {spec.name} {spec.version}>"


class AsyncTool(Tool):
    """Base class of a tool whose ``execute`` is a coroutine (``async def execute``).

    ``await executor.aexecute(tool, inputs)`` awaits it on the running event loop
    (no thread); ``executor.execute(tool, inputs)`` works too and runs it to
    completion. Everything else is as for ``Tool``.
    """

    async def execute(
        self, inputs: dict[str, Any], credentials: Mapping[str, str]
    ) -> dict[str, Any] | Output:
        """Do the tool's work, awaiting what it waits on; see ``Tool.execute``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement execute()")


# The base classes' placeholders: a tool class still holding one is incomplete.
_UNIMPLEMENTED: Final = frozenset({Tool.execute, AsyncTool.execute})
