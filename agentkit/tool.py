"""The tool contract: a name, a description, a version, two schemas and ``execute``."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final, Protocol, final

from agentkit.content import Output
from agentkit.toolerrors import (
    Problem,
    SchemaDefinitionError,
    SemanticError,
    did_you_mean,
)
from agentkit.toolschema import FREE_FORM, Parameter, ToolSchema

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
#: The keys of ``TOOL_ANNOTATIONS``: MCP's tool hints, ``title`` a string, the rest booleans.
ANNOTATION_KEYS: Final = ("title", "read_only", "destructive", "idempotent", "open_world")


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
        tags = _check_tags(cls.TOOL_TAGS, problems, "TOOL_TAGS")
        credential_names = _check_credential_names(
            cls.CREDENTIAL_NAMES, problems, "CREDENTIAL_NAMES"
        )
        annotations = _check_annotations(cls.TOOL_ANNOTATIONS, problems)
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
        _refuse(f"{owner} is invalid", problems)
        input_schema = _compile_schema(cls.INPUT_SCHEMA, f"{owner} INPUT_SCHEMA")
        if max_output is not None:
            input_schema = _with_continuation(input_schema, problems)
            _refuse(f"{owner} is invalid", problems)
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
            output_schema=_compile_schema(cls.OUTPUT_SCHEMA, f"{owner} OUTPUT_SCHEMA"),
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
        extra_tags = _check_tags(tags, problems, "tags") if tags is not None else {}
        extra_names = (
            _check_credential_names(credential_names, problems, "credential_names")
            if credential_names is not None
            else ()
        )
        _refuse(f"Tool '{self.name}' ({self.source}): invalid Tool.__init__() arguments", problems)
        spec: ToolSpec = object.__new__(ToolSpec)
        _set_fields(spec, **{slot: getattr(self, slot) for slot in ToolSpec.__slots__})
        _set_fields(
            spec,
            tags=MappingProxyType({**self.tags, **extra_tags}),
            credential_names=tuple(dict.fromkeys((*self.credential_names, *extra_names))),
        )
        return spec


def _with_continuation(schema: ToolSchema, problems: list[str]) -> ToolSchema:
    """``schema`` with the optional argument that fetches the next page of an answer."""
    from agentkit.paging import CONTINUATION

    if schema.free_form:  # takes any argument already
        return schema
    if CONTINUATION in schema:
        problems.append(
            f"INPUT_SCHEMA declares '{CONTINUATION}', the argument a tool with MAX_OUTPUT "
            "takes to fetch the next page of an answer: rename the parameter"
        )
        return schema
    taken = Parameter(
        name=CONTINUATION,
        type="string",
        required=False,
        # Whoever holds it may read the rest of the answer: the audit trail masks it.
        sensitive=True,
        description=(
            "Only to fetch the next page of an answer given in pages: the continuation "
            "the previous page named."
        ),
    )
    return ToolSchema([*schema.parameters, taken])


def _set_fields(spec: ToolSpec, **fields: Any) -> None:
    for name, value in fields.items():
        object.__setattr__(spec, name, value)


def _source_of(cls: type[Tool]) -> str:
    return cls.SOURCE or f"{cls.__module__}.{cls.__qualname__}"


def _refuse(subject: str, problems: list[str]) -> None:
    if problems:
        raise SemanticError(f"{subject}:\n" + "\n".join(f"  - {p}" for p in problems))


def _compile_schema(definition: Any, owner: str) -> ToolSchema:
    if definition is None:
        return FREE_FORM
    if isinstance(definition, ToolSchema):
        return definition
    try:
        return ToolSchema.from_dict(definition)
    except SchemaDefinitionError as exc:
        raise exc.with_owner(owner) from exc
    except Exception as exc:  # a definition object that fails while being read
        problem = Problem(location=(), message=f"could not be read: {type(exc).__name__}: {exc}")
        raise SchemaDefinitionError([problem], owner=owner) from exc


def _check_tags(tags: Any, problems: list[str], label: str) -> Mapping[str, str]:
    if not isinstance(tags, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in tags.items()
    ):
        problems.append(f"{label} must map strings to strings, got {_shown(tags)}")
        return MappingProxyType({})
    return MappingProxyType(dict(tags))


def _check_credential_names(names: Any, problems: list[str], label: str) -> tuple[str, ...]:
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        problems.append(
            f"{label} must be a list of credential names, got {_shown(names)}"
            + (f" (write [{names!r}])" if isinstance(names, str) else "")
        )
        return ()
    if not all(isinstance(name, str) and name for name in names):
        problems.append(f"{label} must hold non-empty strings, got {_shown(names)}")
        return ()
    if len(set(names)) != len(names):
        problems.append(f"{label} lists a credential twice: {_shown(names)}")
    return tuple(names)


def _check_annotations(annotations: Any, problems: list[str]) -> Mapping[str, Any]:
    if not isinstance(annotations, Mapping):
        problems.append(f"TOOL_ANNOTATIONS must be a mapping, got {_shown(annotations)}")
        return MappingProxyType({})
    for key, value in annotations.items():
        if key not in ANNOTATION_KEYS:
            problems.append(
                f"TOOL_ANNOTATIONS has an unknown key {_shown(key)}"
                f"{did_you_mean(str(key), ANNOTATION_KEYS)}; "
                f"the keys are: {', '.join(ANNOTATION_KEYS)}"
            )
        elif not isinstance(value, str if key == "title" else bool):
            wanted = "a string" if key == "title" else "true or false"
            problems.append(f"TOOL_ANNOTATIONS['{key}'] must be {wanted}, got {_shown(value)}")
    return MappingProxyType(dict(annotations))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# Lowercase class attributes a subclass may write instead of the constants (the
# chapter declares ``credential_names = [...]``), and the ones it may not: the
# executor and the registry read the checked declaration, so an override of these
# properties would be silently ignored by the one and obeyed by the other.
_ADOPTED: Final = {"credential_names": "CREDENTIAL_NAMES", "tags": "TOOL_TAGS"}
_REFUSED: Final = {
    "name": "TOOL_NAME",
    "description": "TOOL_DESCRIPTION",
    "version": "TOOL_VERSION",
    "input_schema": "INPUT_SCHEMA",
    "output_schema": "OUTPUT_SCHEMA",
    "source": "SOURCE",
    "annotations": "TOOL_ANNOTATIONS",
    "backend_kind": "BACKEND_KIND",
    "definition": "DEFINITION",
}
_DECLARATIONS: Final = frozenset((*_ADOPTED, *_REFUSED))


def _adopt_lowercase_declarations(cls: type[Tool]) -> None:
    declared = _DECLARATIONS.intersection(cls.__dict__)  # most classes: none of them
    if not declared:
        return
    owner = f"Tool class {cls.__module__}.{cls.__qualname__}"
    for attribute in (*_ADOPTED, *_REFUSED):
        if attribute not in declared:
            continue
        value = cls.__dict__[attribute]
        constant = _ADOPTED.get(attribute) or _REFUSED[attribute]
        computed = hasattr(type(value), "__get__")  # a property, method or other descriptor
        if attribute not in _ADOPTED or computed:
            instead = (
                f" or pass {attribute}= to Tool.__init__() from the subclass's __init__"
                if attribute in _ADOPTED
                else ""
            )
            raise SemanticError(
                f"{owner} overrides '{attribute}', which the executor and the registry do not "
                f"read from the tool object; declare it as {constant} = ... on the class{instead}"
            )
        if constant in cls.__dict__:
            raise SemanticError(
                f"{owner} declares both {attribute} and {constant}; keep one of them"
            )
        problems: list[str] = []
        if attribute == "tags":
            checked: Any = _check_tags(value, problems, attribute)
        else:
            checked = _check_credential_names(value, problems, attribute)
        _refuse(f"{owner} is invalid", problems)
        setattr(cls, constant, checked)
        # Gone from the class, the base's read-only property answers again.
        delattr(cls, attribute)


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
        _adopt_lowercase_declarations(cls)
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
