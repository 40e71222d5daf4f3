"""One tool definition document: parsed, checked, and turned into a ``DeclarativeTool`` class."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final, TypeGuard, final

from agentkit.callcache import CacheSpec, parse_cache
from agentkit.declarative.backends import Backend, BackendContext, backend_kinds, find_backend
from agentkit.declarative.backends.base import SharedSource, SourceTable
from agentkit.declarative.backends.http.source_use import resolve_shared_parameters
from agentkit.declarative.backends.http.sources import parse_max_output
from agentkit.declarative.environment import Environment, Substituter, Substitution
from agentkit.declarative.limit_specs import parse_limits_at
from agentkit.declarative.problems import Location, Problems, check_keys, parse_tags
from agentkit.declarative.shorthand import written_in_full
from agentkit.declarative.yamlsource import clip, read_documents
from agentkit.ratelimits import Limits
from agentkit.schema.values import from_text
from agentkit.tool import ANNOTATION_KEYS, TOOL_NAME_PATTERN
from agentkit.toolerrors import PluginError, SchemaDefinitionError
from agentkit.toolexamples import ToolExample, parse_examples
from agentkit.toolschema import ToolSchema

__all__ = ["ANNOTATION_KEYS", "TOP_LEVEL_KEYS", "ToolDefinition", "parse_definition"]

TOP_LEVEL_KEYS: Final = (
    "name",
    "version",
    "description",
    "tags",
    "credentials",
    "input_schema",
    "output_schema",
    "annotations",
    "concurrency",
    "limits",
    "cache",
    "confirm",
    "deprecated",
    "max_output",
    "backend",
    "examples",
)
#: A definition's version when it gives none.
DEFAULT_VERSION: Final = "1.0.0"
#: The most calls of one tool a definition's ``concurrency:`` can allow at once.
MAX_CONCURRENCY: Final = 10_000
_SEMVER: Final = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    """A checked definition: everything a ``DeclarativeTool`` class is made from."""

    name: str
    version: str
    description: str
    tags: dict[str, str]
    credentials: tuple[str, ...]
    input_schema: ToolSchema
    output_schema: ToolSchema
    annotations: dict[str, Any]
    backend: Backend
    path: str
    line: int
    #: The text of the file the definition is in, and which of its documents it is:
    #: kept instead of the located YAML tree, which is many times the size.
    text: str
    document: int
    #: The source its HTTP backend uses, if any.
    http_source: SharedSource | None = None
    #: The ``${VAR}`` substitutions made in it (its source's not included).
    substitutions: tuple[Substitution, ...] = ()
    #: What its backend warned about while it was parsed.
    backend_warnings: tuple[str, ...] = ()
    #: The most calls of the tool a server runs at once (``concurrency:``); None: no limit.
    concurrency: int | None = None
    #: A served call asks the user before it acts (``confirm: true``).
    confirm: bool = False
    #: Why the tool is deprecated and what to use instead (``deprecated:``); None: it is not.
    deprecated: str | None = None
    #: The answer budget as written (``max_output: {bytes: N}`` or ``{tokens: N}``);
    #: None: answers are given whole.
    max_output: dict[str, int] | None = None
    #: Its examples (``examples:``), each checked against its schemas.
    examples: tuple[ToolExample, ...] = ()
    #: Its ``input_schema`` with the shared parameters it takes written out; None: it takes none.
    resolved_inputs: dict[str, Any] | None = None
    #: Its own call limits (``limits:``); None: none (its source's may apply).
    limits: Limits | None = None
    #: How long its answers are kept and for whom (``cache:``); None: not kept.
    cache: CacheSpec | None = None

    @property
    def source(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def raw(self) -> dict[str, Any]:
        """The definition as written (its YAML document), read again from ``text``."""
        documents, _ = read_documents(self.text)
        raw: dict[str, Any] = documents[self.document][0]
        return raw

    def to_dict(self) -> dict[str, Any]:
        """The definition as written, as plain JSON data (what ``agentkit show`` prints).

        Shared parameters it takes from its source are written out in full.
        """
        raw = self.raw
        if self.resolved_inputs is not None:
            raw = {**raw, "input_schema": self.resolved_inputs}
        plain: dict[str, Any] = json.loads(json.dumps(raw, default=str))
        return plain

    def loaded_with(self) -> dict[str, Any]:
        """Its source and the ``${VAR}`` substitutions made (the source's first), as plain data."""
        loaded: dict[str, Any] = {}
        substitutions = list(self.substitutions)
        if self.http_source is not None:
            loaded["http_source"] = self.http_source.describe()
            substitutions[:0] = self.http_source.substitutions
        if substitutions:
            loaded["substitutions"] = [item.to_dict() for item in substitutions]
        return loaded

    def warnings(self) -> list[str]:
        """What its backend warned about (a credential sent over plain ``http://`` ...)."""
        return list(self.backend_warnings)


def parse_definition(
    raw: Any,
    problems: Problems,
    *,
    text: str,
    document: int,
    environment: Environment | None = None,
    sources: SourceTable | None = None,
) -> ToolDefinition | None:
    """Check one document; problems go to ``problems``, and ``None`` comes back if any.

    ``raw`` is document number ``document`` (from 0) of ``read_documents(text)``.

    ``environment`` has the variables ``${VAR}`` may name (default: ``os.environ``),
    ``sources`` the sources a backend may use.
    """
    if not check_keys(raw, TOP_LEVEL_KEYS, (), problems, "a tool definition"):
        return None
    start = len(problems)
    substituter = Substituter(environment or Environment(), problems)

    name = raw.get("name")
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        problems.add(
            ("name",),
            f"invalid tool name {_quoted(name)}: use letters, digits, '_' and '-', starting with a "
            "letter, at most 64 characters"
            if name is not None
            else "missing 'name'",
        )
    # Left out, 1.0.0: a Python tool's TOOL_VERSION starts there too.
    version = raw.get("version", DEFAULT_VERSION)
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        problems.add(
            ("version",), f"version {_quoted(version)} must be a quoted string like '1.2.0'"
        )
    elif not isinstance(version, str) or not _SEMVER.fullmatch(version):
        problems.add(
            ("version",),
            f"invalid version {_quoted(version)}: use a semantic version such as 1.2.0, "
            f"or leave it out for {DEFAULT_VERSION}"
            if version is not None
            else f"'version' is empty: give a semantic version such as 1.2.0, or leave the "
            f"key out for {DEFAULT_VERSION}",
        )
    description = raw.get("description", "")
    if not isinstance(description, str):
        problems.add(("description",), "expected a string")
    tags = parse_tags(raw, problems)
    credentials = _parse_credentials(raw.get("credentials", []), problems)
    before_schema = len(problems)
    full = written_in_full(raw, problems)
    written_inputs, takes_shared = resolve_shared_parameters(
        full, sources or SourceTable(), problems
    )
    given_inputs = {"input_schema": written_inputs} if "input_schema" in raw else {}
    inputs = _parse_schema(given_inputs, "input_schema", problems, substituter)
    inputs_ok = len(problems) == before_schema
    outputs = _parse_schema(full, "output_schema", problems)
    context = BackendContext(
        location=("backend",),
        inputs=inputs if inputs_ok else None,
        outputs=outputs,
        credentials=credentials,
        problems=problems,
        substituter=substituter,
        sources=sources or SourceTable(),
    )
    backend = _parse_backend(raw.get("backend"), context)
    http_source = context.report.sources
    if context.report.output_schema is not None:
        outputs = context.report.output_schema
    if http_source:
        credentials = tuple(dict.fromkeys((*credentials, *http_source[0].credentials)))
        tags = {**http_source[0].tags, **tags}
    annotations = _parse_annotations(raw.get("annotations", {}), backend, problems)
    concurrency = _parse_concurrency(raw.get("concurrency"), problems)
    limits = parse_limits_at(raw, f"tool '{name}'", f"tool:{name}", problems)
    cache = _parse_cache(raw, annotations, problems)
    confirm = raw.get("confirm")
    if confirm is not None and not isinstance(confirm, bool):
        problems.add(
            ("confirm",),
            f"expected true or false, got {_quoted(confirm)} (true: a served call asks the "
            "user before it acts)",
        )

    deprecated = _parse_deprecated(raw.get("deprecated"), problems)
    max_output = _parse_max_output(raw, inputs, http_source, problems)
    examples: tuple[ToolExample, ...] = ()
    if "examples" in raw and len(problems) == start:
        # Checked against schemas that loaded: a broken schema's problems come first.
        examples, example_problems = parse_examples(
            raw["examples"], inputs, outputs, source=f"{problems.path}:{problems.start[0]}"
        )
        for example_problem in example_problems:
            problems.add(example_problem.location, example_problem.message)

    if len(problems) > start or backend is None:
        return None
    assert isinstance(name, str)
    assert isinstance(version, str)
    return ToolDefinition(
        name=name,
        version=version,
        description=description,
        tags=dict(tags),
        credentials=credentials,
        input_schema=inputs,
        output_schema=outputs,
        annotations=annotations,
        backend=backend,
        path=problems.path,
        line=problems.start[0],
        text=text,
        document=document,
        http_source=http_source[0] if http_source else None,
        substitutions=tuple(substituter.used),
        backend_warnings=tuple(context.report.warnings),
        concurrency=concurrency,
        confirm=confirm is True,
        deprecated=deprecated,
        max_output=max_output,
        examples=examples,
        resolved_inputs=written_inputs if takes_shared else None,
        limits=limits,
        cache=cache,
    )


def _parse_cache(
    raw: dict[str, Any], annotations: dict[str, Any], problems: Problems
) -> CacheSpec | None:
    if "cache" not in raw:
        return None
    spec, found = parse_cache(raw["cache"], read_only=annotations.get("read_only") is True)
    for keys, message in found:
        problems.add(("cache", *keys), message)
    return spec


def _quoted(value: Any) -> str:
    return f"'{clip(value)}'" if isinstance(value, str) else clip(value)


def _parse_concurrency(raw: Any, problems: Problems) -> int | None:
    if raw is None:
        return None
    if type(raw) is not int or not 1 <= raw <= MAX_CONCURRENCY:
        problems.add(
            ("concurrency",),
            f"expected a whole number of calls from 1 to {MAX_CONCURRENCY}, the most a server "
            f"runs at once, got {_quoted(raw)} (leave it out for no limit)",
        )
        return None
    return raw


def _parse_max_output(
    raw: dict[str, Any], inputs: ToolSchema, sources: list[SharedSource], problems: Problems
) -> dict[str, int] | None:
    """The tool's ``max_output``, else its source's; None when neither declares one."""
    if "max_output" in raw:
        where: Location = ("max_output",)
        max_output = parse_max_output(raw["max_output"], problems)
        if max_output is None:
            return None
        declared = "max_output"
    elif sources and sources[0].max_output is not None:
        where, max_output = ("input_schema",), dict(sources[0].max_output)
        declared = f"max_output (from source '{sources[0].name}', {sources[0].location})"
    else:
        return None
    from agentkit.paging import CONTINUATION  # only where a budget is declared

    if CONTINUATION in inputs:
        problems.add(
            where,
            f"input_schema declares '{CONTINUATION}', the argument a tool with {declared} "
            "takes to fetch the next page of an answer: rename that parameter",
        )
    return max_output


def _parse_deprecated(raw: Any, problems: Problems) -> str | None:
    """``deprecated: use close_issue_v2`` (what to use instead), or ``true``; None: not."""
    if raw is None or raw is False:
        return None
    if raw is True:
        return "no replacement is named"
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    problems.add(
        ("deprecated",),
        f"expected what to use instead (text such as 'use close_issue_v2') or true, "
        f"got {_quoted(raw)}",
    )
    return None


def _parse_credentials(raw: Any, problems: Problems) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(item, str) and item for item in raw):
        problems.add(("credentials",), "expected a list of credential names")
        return ()
    seen: set[str] = set()
    for index, item in enumerate(raw):
        if item in seen:
            problems.add(("credentials", index), f"credential '{clip(item)}' is listed twice")
        seen.add(item)
    return tuple(raw)


def _parse_schema(
    raw: dict[str, Any], key: str, problems: Problems, substituter: Substituter | None = None
) -> ToolSchema:
    given = raw.get(key, {})
    if substituter is not None:
        given = _substitute_defaults(given, (key,), substituter)
    try:
        return ToolSchema.from_dict(given)
    except SchemaDefinitionError as exc:
        for problem in exc.problems:
            problems.add((key, *problem.location), problem.message)
        return ToolSchema()


def _substitute_defaults(raw: Any, location: Location, substituter: Substituter) -> Any:
    """``raw`` (a schema) with ``${VAR}`` substituted in every parameter's string default.

    ``raw`` itself when there is nothing to substitute (most schemas), else a copy:
    the document itself stays as written. An ``integer``, ``float`` or
    ``boolean`` parameter's substituted default is read as that type, a union's as
    the first of its types it reads as (``from_text``).
    """
    if not isinstance(raw, dict) or not isinstance(raw.get("parameters"), list):
        return raw
    given = raw["parameters"]
    parameters = None  # a copy, once anything is substituted
    for index, param in enumerate(given):
        # Most parameters are flat and their default (if any) plain: passed over
        # without building their location.
        if not isinstance(param, dict) or not (
            "items" in param or "parameters" in param or _substitutes(param.get("default"))
        ):
            continue
        new = _substitute_parameter(param, (*location, "parameters", index), substituter)
        if new is not param:
            if parameters is None:
                parameters = list(given)
            parameters[index] = new
    return raw if parameters is None else {**raw, "parameters": parameters}


def _substitutes(default: Any) -> TypeGuard[str]:
    """True when ``default`` is text with a ``${VAR}`` to substitute."""
    return isinstance(default, str) and "${" in default


def _substitute_parameter(param: dict[str, Any], location: Location, sub: Substituter) -> Any:
    """``param`` with ``${VAR}`` substituted in its default, nested ones' too; a copy
    when anything was, else ``param`` itself."""
    items = param.get("items")
    if isinstance(items, dict):
        substituted = _substitute_parameter(items, (*location, "items"), sub)
        if substituted is not items:
            param = {**param, "items": substituted}
    param = _substitute_defaults(param, location, sub)
    default = param.get("default")
    if not _substitutes(default):
        return param
    param = dict(param)
    text = sub.text(default, (*location, "default"))
    if text is None:
        param.pop("default")  # the problem is reported; no second one about the default
        return param
    kind = param.get("type")
    kinds = kind if isinstance(kind, list) else [str(kind)]
    param["default"] = from_text(str(text), kinds)  # a plain str, not the substituted kind
    return param


def _parse_backend(raw: Any, context: BackendContext) -> Backend | None:
    """The one backend under ``backend:``, parsed by its kind from the table of kinds."""
    problems = context.problems
    if isinstance(raw, dict) and len(raw) == 1:
        ((kind, value),) = raw.items()
        try:
            backend_class = find_backend(str(kind))
        except PluginError as exc:
            problems.add(("backend", kind), str(exc))
            return None
        if backend_class is not None:
            # A context at the kind's own mapping; the report is shared with the caller's.
            return backend_class.parse(value, context.at(("backend", kind)))
    # Something is wrong: only now are every kind's names needed, for the message.
    kinds = backend_kinds()
    choices = " or ".join(f"{{{kind}: ...}}" for kind in kinds)
    if raw is None:
        problems.add((), f"missing 'backend': give {choices}")
    elif check_keys(raw, kinds, ("backend",), problems, "backend") and len(raw) != 1:
        problems.add(("backend",), f"give exactly one backend: {choices}")
    return None


def _parse_annotations(raw: Any, backend: Backend | None, problems: Problems) -> dict[str, Any]:
    if not check_keys(raw, ANNOTATION_KEYS, ("annotations",), problems, "annotations"):
        return {}
    annotations = dict(backend.default_annotations) if backend is not None else {}
    for key, value in raw.items():
        expected = str if key == "title" else bool
        if not isinstance(value, expected):
            wanted = "a string" if expected is str else "true or false"
            problems.add(("annotations", key), f"expected {wanted}")
            continue
        annotations[key] = value
    return annotations
