"""Tool definitions in the shapes LLM providers expect.

``export_tools(tools, "openai")`` returns an ``Export``: the JSON document and
any warnings. The formats are one table of ``ExportFormat`` records (a name,
a formatter, a description, the tool names the target accepts):

- ``openai`` -- Chat Completions: ``{"type": "function", "function": {...}}``;
- ``openai-responses`` -- the Responses API's flat ``{"type": "function", ...}``;
- ``anthropic`` -- ``{name, description, input_schema}``, and ``input_examples`` when a
  tool has examples that succeed;
- ``mcp`` -- ``{name, title, description, inputSchema, outputSchema, annotations}``;
- ``gemini`` -- one ``{"functionDeclarations": [...]}`` with ``parametersJsonSchema``;
- ``json-schema`` -- each tool's input and output schemas, with name and version.

``register_format()`` adds one in code; a package adds one with an entry point
in the ``agentkit.export_formats`` group naming an ``ExportFormat`` (see
docs/extending.md). ``agentkit export --format`` offers every one.

``strict=True`` (OpenAI formats) rewrites every object so that it lists all its
properties as required, optional ones becoming nullable, with defaults stated in
the description. A free-form ``dictionary``, or a ``list`` without an item type,
cannot be strict, so that tool is exported with ``strict: false`` and a warning.
Names a target forbids are refused, never silently changed.

``deferred=`` (names, or patterns such as ``jira_*``) keeps tools out of what the
model sees up front. A format with its provider's own tool search (``anthropic``:
``tool_search_tool_bm25``; ``openai-responses``: ``tool_search``) exports every tool,
the deferred ones with ``defer_loading: true``, and adds the provider's search tool.
Every other format leaves the deferred tools out and exports agentkit's search tool
``search_tools`` (``agentkit.toolsearch``) as an ordinary function, which the
application runs: ``agentkit.adapters.dispatch``'s functions take the same ``deferred=``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Protocol, final

from agentkit.binary import is_binary
from agentkit.plugins import PluginTable
from agentkit.problem import did_you_mean
from agentkit.schema.values import length_words
from agentkit.tool import Tool
from agentkit.toolerrors import ExportError
from agentkit.toolexamples import examples_of
from agentkit.toolschema import ToolSchema
from agentkit.toolsearch import SEARCH_TOOL_NAME, SearchTools, matching

__all__ = [
    "EXPORT_FORMATS",
    "EXPORT_FORMAT_GROUP",
    "FORMATS",
    "Export",
    "ExportError",
    "ExportFormat",
    "Formatter",
    "export_formats",
    "export_tools",
    "register_format",
]

EXPORT_FORMAT_GROUP: Final = "agentkit.export_formats"
_MCP_HINTS: Final = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}
_FORMAT_NAME: Final = re.compile(r"[a-z][a-z0-9_-]{0,63}")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Export:
    """An exported document and what the export had to warn about."""

    document: Any
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(self.document, indent=2, sort_keys=False)


class Formatter(Protocol):
    """Makes a format's document from ``tools`` (their names already checked).

    ``strict`` is the caller's request for strict schemas; a formatter that
    cannot honour something appends a sentence to ``warnings`` instead of failing.
    """

    def __call__(self, tools: Sequence[Tool], *, strict: bool, warnings: list[str]) -> Any: ...


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ExportFormat:
    """One export format: its name, what makes its document, and which tool names it takes."""

    name: str  # what ``--format`` says: lowercase letters, digits, '-' and '_'
    formatter: Formatter
    description: str
    #: The tool names the target accepts; a tool whose name does not match is refused.
    names: re.Pattern[str] = re.compile(r".+")
    #: ``names`` in words, for the refusal: "letters, digits, '_' and '-', 1 to 64".
    names_rule: str = "any non-empty name"
    #: Whether ``strict=True`` means something to it (else it is ignored, with a warning).
    supports_strict: bool = False
    #: The provider's own tool search, as an entry of its tools list. Given, deferred
    #: tools are exported with ``defer_loading: true`` beside this entry (the document
    #: must be a list of flat tool objects with a ``name``); None, they are left out and
    #: agentkit's ``search_tools`` is exported for the application to run.
    tool_search: Mapping[str, Any] | None = None


def _check(name: str, value: object) -> str | None:
    """Why ``value`` cannot be the export format ``name``; None when it can."""
    if not isinstance(value, ExportFormat):
        return f"expected an agentkit.adapters.export.ExportFormat, got {type(value).__name__}"
    if not _FORMAT_NAME.fullmatch(name):
        return (
            f"{name!r} cannot name a format: use lowercase letters, digits, '-' and '_', "
            "starting with a letter"
        )
    if value.name != name:
        return f"the format's name is {value.name!r}, not {name!r}; they must be the same"
    if not callable(value.formatter):
        return "its formatter is not callable"
    return None


#: The export formats, by name.
EXPORT_FORMATS: Final[PluginTable[ExportFormat]] = PluginTable(EXPORT_FORMAT_GROUP, _check)


def register_format(export_format: ExportFormat, *, replace: bool = False) -> None:
    """Make ``export_format`` one ``export_tools`` and ``agentkit export --format`` offer.

    Raises ``PluginError`` when its name breaks the rules or is taken (unless ``replace``).
    """
    origin = f"register_format({export_format.name!r})"
    EXPORT_FORMATS.register(export_format.name, export_format, origin=origin, replace=replace)


def export_formats() -> tuple[str, ...]:
    """Every format's name: the registered ones, then the entry points' (not imported yet)."""
    return EXPORT_FORMATS.names()


def export_tools(
    tools: Iterable[Tool], format: str, *, strict: bool = False, deferred: Iterable[str] = ()
) -> Export:
    """Export ``tools`` as ``format`` (one of ``export_formats()``); those ``deferred``
    names (a tool's name, or a pattern such as ``jira_*``) are found through a search
    tool instead of being shown up front (see the module's docstring).

    Raises ``ExportError`` for an unknown format, a name the target forbids, a
    ``deferred`` entry that matches no tool, or a tool named like the search tool;
    ``PluginError`` when the format's entry point cannot be used.
    """
    chosen = EXPORT_FORMATS.get(format)
    if chosen is None:
        raise ExportError(
            f"unknown export format '{format}'; choose one of: {', '.join(export_formats())}"
        )
    selected = list(tools)
    for tool in selected:
        if not chosen.names.fullmatch(tool.name):
            raise ExportError(
                f"tool '{tool.name}' cannot be exported as {format}: names must be "
                f"{chosen.names_rule}"
            )
    warnings: list[str] = []
    if strict and not chosen.supports_strict:
        warnings.append(f"--strict applies to the OpenAI formats; ignored for {format}")
        strict = False
    names = _deferred(selected, frozenset(deferred))
    if not names:
        document = chosen.formatter(selected, strict=strict, warnings=warnings)
        return Export(document=document, warnings=warnings)
    if chosen.tool_search is not None:
        search = dict(chosen.tool_search)
        _refuse_taken(selected, str(search.get("name", "")), format)
        document = chosen.formatter(selected, strict=strict, warnings=warnings)
        marked = [
            {**entry, "defer_loading": True} if entry.get("name") in names else entry
            for entry in document
        ]
        return Export(document=[search, *marked], warnings=warnings)
    _refuse_taken(selected, SEARCH_TOOL_NAME, format)
    listed = [tool for tool in selected if tool.name not in names]
    listed.append(SearchTools(tool for tool in selected if tool.name in names))
    document = chosen.formatter(listed, strict=strict, warnings=warnings)
    warnings.append(
        f"{len(names)} deferred tools are left out and found through '{SEARCH_TOOL_NAME}', "
        f"which {format} has no tool search of its own for: the application runs its "
        "calls (agentkit.adapters.dispatch with the same deferred=)"
    )
    return Export(document=document, warnings=warnings)


def _deferred(tools: Sequence[Tool], patterns: frozenset[str]) -> frozenset[str]:
    """The names of ``tools`` that ``patterns`` defer; each pattern must match one."""
    names = [tool.name for tool in tools]
    for pattern in sorted(patterns):
        if not matching(tools, (pattern,)):
            raise ExportError(
                f"deferred {pattern!r} names no exported tool{did_you_mean(pattern, names)}; "
                "give a tool's name or a pattern such as 'jira_*'"
            )
    return matching(tools, patterns)


def _refuse_taken(tools: Sequence[Tool], search: str, format: str) -> None:
    taken = next((tool for tool in tools if tool.name == search), None)
    if search and taken is not None:
        raise ExportError(
            f"tool '{search}' ({taken.source}) has the name of the search tool a {format} "
            "export with deferred tools adds; rename the tool, or defer none"
        )


def _openai_chat(tools: Sequence[Tool], *, strict: bool, warnings: list[str]) -> Any:
    return [{"type": "function", "function": _openai(t, strict, warnings)} for t in tools]


def _openai_responses(tools: Sequence[Tool], *, strict: bool, warnings: list[str]) -> Any:
    return [{"type": "function", **_openai(t, strict, warnings)} for t in tools]


def _anthropic(tools: Sequence[Tool], *, strict: bool, warnings: list[str]) -> Any:
    exported = []
    for t in tools:
        tool: dict[str, Any] = {
            "name": t.name,
            "description": t.description,
            "input_schema": t.input_schema.to_json_schema(),
        }
        # Anthropic's tool input examples (beta "advanced-tool-use-2025-11-20"): the
        # inputs of the examples that succeed; the only provider field for them.
        inputs = [dict(example.inputs) for example in examples_of(t) if example.fails is None]
        if inputs:
            tool["input_examples"] = inputs
        exported.append(tool)
    return exported


def _mcp(tools: Sequence[Tool], *, strict: bool, warnings: list[str]) -> Any:
    return [mcp_tool(t) for t in tools]


def _gemini(tools: Sequence[Tool], *, strict: bool, warnings: list[str]) -> Any:
    return {
        "functionDeclarations": [
            {
                "name": t.name,
                "description": t.description,
                "parametersJsonSchema": t.input_schema.to_json_schema(),
            }
            for t in tools
        ]
    }


def _json_schema(tools: Sequence[Tool], *, strict: bool, warnings: list[str]) -> Any:
    dialect = "https://json-schema.org/draft/2020-12/schema"
    return [
        {
            "name": t.name,
            "version": t.version,
            "description": t.description,
            "input_schema": {"$schema": dialect, **t.input_schema.to_json_schema()},
            "output_schema": {"$schema": dialect, **t.output_schema.to_json_schema()},
        }
        for t in tools
    ]


_PROVIDER_NAMES: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_PROVIDER_RULE: Final = "letters, digits, '_' and '-', 1 to 64"
_BUILT_IN: Final = (
    ExportFormat(
        name="openai",
        formatter=_openai_chat,
        description="OpenAI Chat Completions tools",
        names=_PROVIDER_NAMES,
        names_rule=_PROVIDER_RULE,
        supports_strict=True,
    ),
    ExportFormat(
        name="openai-responses",
        formatter=_openai_responses,
        description="OpenAI Responses API tools (flat)",
        names=_PROVIDER_NAMES,
        names_rule=_PROVIDER_RULE,
        supports_strict=True,
        # The Responses API's hosted tool search (gpt-5.4 and later).
        tool_search=MappingProxyType({"type": "tool_search"}),
    ),
    ExportFormat(
        name="anthropic",
        formatter=_anthropic,
        description="Anthropic Messages API tools",
        names=_PROVIDER_NAMES,
        names_rule=_PROVIDER_RULE,
        # Claude's server-side tool search: natural-language queries, ranked by BM25.
        tool_search=MappingProxyType(
            {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
        ),
    ),
    ExportFormat(
        name="mcp",
        formatter=_mcp,
        description="MCP tools/list entries, with annotations",
        names=re.compile(r"[A-Za-z0-9_.-]{1,128}"),
        names_rule="letters, digits, '_', '-' and '.', 1 to 128",
    ),
    ExportFormat(
        name="gemini",
        formatter=_gemini,
        description="Gemini function declarations",
        names=re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"),
        names_rule="a letter or '_', then letters, digits, '_', '.', ':' and '-', at most 64",
    ),
    ExportFormat(
        name="json-schema",
        formatter=_json_schema,
        description="each tool's input and output JSON Schemas, with name and version",
    ),
)
for _format in _BUILT_IN:
    register_format(_format)

#: The built-in formats' names (``export_formats()`` has every one).
FORMATS: Final = tuple(built_in.name for built_in in _BUILT_IN)


def mcp_tool(
    tool: Tool, *, schema: Callable[[ToolSchema], Any] = ToolSchema.to_json_schema
) -> dict[str, Any]:
    """One tool as MCP's ``tools/list`` describes it.

    ``schema`` writes its input and output schemas (as JSON Schema by default): a server
    that lists many tools sharing a few ``ToolSchema`` objects writes each once.
    """
    annotations = tool.annotations
    title = annotations.pop("title", None) or tool.name
    hints = {_MCP_HINTS[key]: value for key, value in annotations.items() if key in _MCP_HINTS}
    exported = {
        "name": tool.name,
        "title": title,
        "description": tool.description,
        "inputSchema": schema(tool.input_schema),
    }
    # A binary output is image, audio or resource content, not structured JSON.
    if not is_binary(tool):
        exported["outputSchema"] = schema(tool.output_schema)
    exported["annotations"] = {"title": title, **hints}
    return exported


def _openai(tool: Tool, strict: bool, warnings: list[str]) -> dict[str, Any]:
    parameters = tool.input_schema.to_json_schema()
    is_strict = False
    if strict:
        free_form = _free_form_path(parameters)
        if free_form is None:
            parameters = _strict(parameters)
            is_strict = True
        else:
            path, what = free_form
            warnings.append(
                f"tool '{tool.name}': '{path}' is {what}, "
                "which strict mode cannot express; exported with strict: false"
            )
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": parameters,
        "strict": is_strict,
    }


def _free_form_path(schema: dict[str, Any], path: str = "") -> tuple[str, str] | None:
    """The path of the first free-form value -- an object schema with no declared
    properties, or an array with no item type -- and which it is; None without one."""
    if schema.get("type") == "object" and "properties" not in schema:
        return path or "(the inputs)", "a dictionary without declared parameters"
    for name, prop in schema.get("properties", {}).items():
        found = _free_form_path(prop, f"{path}.{name}" if path else name)
        if found:
            return found
    items = schema.get("items")
    if schema.get("type") == "array" and not (isinstance(items, dict) and items):
        return path or "(the inputs)", "a list without an item type"
    if isinstance(items, dict) and items:
        return _free_form_path(items, f"{path}[]")
    for member in schema.get("anyOf", ()):  # a union's list or dictionary member
        found = _free_form_path(member, path)
        if found:
            return found
    return None


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` rewritten the way OpenAI's strict mode requires."""
    out = copy.deepcopy(schema)
    if out.get("type") == "object" and "properties" in out:
        required = set(out.get("required", []))
        properties = {}
        for name, prop in out["properties"].items():
            prop = _strict(prop)
            if name not in required:
                prop = _nullable(prop)
            properties[name] = prop
        out["properties"] = properties
        out["required"] = list(properties)
        out["additionalProperties"] = False
    elif out.get("type") == "array" and isinstance(out.get("items"), dict):
        out["items"] = _strict(out["items"])
    elif isinstance(out.get("anyOf"), list):  # a union: its list's items, its dictionary's fields
        out["anyOf"] = [_strict(member) for member in out["anyOf"]]
    if "minLength" in out or "maxLength" in out:
        # Not among strict mode's keywords: said in words (agentkit still checks them).
        words = length_words(out.pop("minLength", None), out.pop("maxLength", None))
        if words and words not in out.get("description", "").lower():
            _add_note(out, words[0].upper() + words[1:] + ".")
    if "default" in out:
        _add_note(out, f"Default: {json.dumps(out.pop('default'))}.")
    return out


def _add_note(schema: dict[str, Any], note: str) -> None:
    """``note``, a sentence, after ``schema``'s description."""
    described = schema.get("description", "").rstrip()
    if described and described[-1] not in ".!?":
        described += "."
    schema["description"] = f"{described} {note}" if described else note


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        schema["type"] = [kind, "null"]
    elif isinstance(schema.get("anyOf"), list):  # a union of types
        schema["anyOf"] = [*schema["anyOf"], {"type": "null"}]
    if "enum" in schema and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema
