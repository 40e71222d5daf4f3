"""Tool definitions in the shapes LLM providers expect.

``export_tools(tools, "openai")`` returns an ``Export``: the JSON document and
any warnings. Formats:

- ``openai`` -- Chat Completions: ``{"type": "function", "function": {...}}``;
- ``openai-responses`` -- the Responses API's flat ``{"type": "function", ...}``;
- ``anthropic`` -- ``{name, description, input_schema}``;
- ``mcp`` -- ``{name, title, description, inputSchema, outputSchema, annotations}``;
- ``gemini`` -- one ``{"functionDeclarations": [...]}`` with ``parametersJsonSchema``;
- ``json-schema`` -- each tool's input and output schemas, with name and version.

``strict=True`` (OpenAI formats) rewrites every object so that it lists all its
properties as required, optional ones becoming nullable, with defaults stated in
the description. A free-form ``dictionary`` cannot be strict, so that tool is
exported with ``strict: false`` and a warning. Names a target forbids are
refused, never silently changed.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from agentkit.tool import Tool
from agentkit.toolerrors import ExportError

__all__ = ["FORMATS", "Export", "ExportError", "export_tools"]

FORMATS: Final = ("openai", "openai-responses", "anthropic", "mcp", "gemini", "json-schema")

_NAME_RULES: Final = {
    "openai": (re.compile(r"[A-Za-z0-9_-]{1,64}"), "letters, digits, '_' and '-', 1 to 64"),
    "openai-responses": (
        re.compile(r"[A-Za-z0-9_-]{1,64}"),
        "letters, digits, '_' and '-', 1 to 64",
    ),
    "anthropic": (re.compile(r"[A-Za-z0-9_-]{1,64}"), "letters, digits, '_' and '-', 1 to 64"),
    "mcp": (re.compile(r"[A-Za-z0-9_.-]{1,128}"), "letters, digits, '_', '-' and '.', 1 to 128"),
    "gemini": (
        re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"),
        "a letter or '_', then letters, digits, '_', '.', ':' and '-', at most 64",
    ),
    "json-schema": (re.compile(r".+"), "any non-empty name"),
}
_MCP_HINTS: Final = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}


@dataclass(frozen=True)
class Export:
    """An exported document and what the export had to warn about."""

    document: Any
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(self.document, indent=2, sort_keys=False)


def export_tools(tools: Iterable[Tool], format: str, *, strict: bool = False) -> Export:
    """Export ``tools`` as ``format`` (one of ``FORMATS``)."""
    if format not in FORMATS:
        raise ExportError(f"unknown export format '{format}'; choose one of: {', '.join(FORMATS)}")
    chosen = list(tools)
    pattern, rule = _NAME_RULES[format]
    for tool in chosen:
        if not pattern.fullmatch(tool.name):
            raise ExportError(
                f"tool '{tool.name}' cannot be exported as {format}: names must be {rule}"
            )
    warnings: list[str] = []
    if format in ("openai", "openai-responses"):
        entries = [_openai(tool, format, strict, warnings) for tool in chosen]
        return Export(entries, warnings)
    if strict:
        warnings.append(f"--strict applies to the OpenAI formats; ignored for {format}")
    if format == "anthropic":
        document: Any = [
            {
                "name": t.name,
                "description": t.description,
                "input_schema": t.input_schema.to_json_schema(),
            }
            for t in chosen
        ]
    elif format == "mcp":
        document = [mcp_tool(t) for t in chosen]
    elif format == "gemini":
        document = {
            "functionDeclarations": [
                {
                    "name": t.name,
                    "description": t.description,
                    "parametersJsonSchema": t.input_schema.to_json_schema(),
                }
                for t in chosen
            ]
        }
    else:
        document = [
            {
                "name": t.name,
                "version": t.version,
                "description": t.description,
                "input_schema": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    **t.input_schema.to_json_schema(),
                },
                "output_schema": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    **t.output_schema.to_json_schema(),
                },
            }
            for t in chosen
        ]
    return Export(document, warnings)


def mcp_tool(tool: Tool) -> dict[str, Any]:
    """One tool as MCP's ``tools/list`` describes it."""
    annotations = tool.annotations
    title = annotations.pop("title", None) or tool.name
    hints = {_MCP_HINTS[key]: value for key, value in annotations.items() if key in _MCP_HINTS}
    return {
        "name": tool.name,
        "title": title,
        "description": tool.description,
        "inputSchema": tool.input_schema.to_json_schema(),
        "outputSchema": tool.output_schema.to_json_schema(),
        "annotations": {"title": title, **hints},
    }


def _openai(tool: Tool, format: str, strict: bool, warnings: list[str]) -> dict[str, Any]:
    parameters = tool.input_schema.to_json_schema()
    is_strict = False
    if strict:
        free_form = _free_form_path(parameters)
        if free_form is None:
            parameters = _strict(parameters)
            is_strict = True
        else:
            warnings.append(
                f"tool '{tool.name}': '{free_form}' is a dictionary without declared parameters, "
                "which strict mode cannot express; exported with strict: false"
            )
    function = {
        "name": tool.name,
        "description": tool.description,
        "parameters": parameters,
        "strict": is_strict,
    }
    if format == "openai":
        return {"type": "function", "function": function}
    return {"type": "function", **function}


def _free_form_path(schema: dict[str, Any], path: str = "") -> str | None:
    """The path of the first object schema with no declared properties, or None."""
    if schema.get("type") == "object" and "properties" not in schema:
        return path or "(the inputs)"
    for name, prop in schema.get("properties", {}).items():
        found = _free_form_path(prop, f"{path}.{name}" if path else name)
        if found:
            return found
    items = schema.get("items")
    if isinstance(items, dict) and items:
        return _free_form_path(items, f"{path}[]")
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
    if "default" in out:
        default = out.pop("default")
        note = f"Default: {json.dumps(default)}."
        described = out.get("description", "").rstrip()
        if described and described[-1] not in ".!?":
            described += "."
        out["description"] = f"{described} {note}" if described else note
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        schema["type"] = [kind, "null"]
    if "enum" in schema and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema
