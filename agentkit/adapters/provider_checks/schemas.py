"""The JSON Schema rules of each provider, checked on one exported schema.

Each check takes the schema of a tool's inputs (or outputs) as agentkit exported it
and yields ``(path, message, fix, severity)`` for what the provider refuses
(``error``) or drops (``warning``); ``agentkit.adapters.provider_checks`` runs them on every
entry of an export. The keyword lists and limits are the providers' own, from:

- OpenAI strict mode: OPENAI_STRICT (supported schemas, limits), and the API's own
  "is not permitted" refusals of keywords the page leaves out (OPENAI_NOT_PERMITTED);
- OpenAI functions, strict or not: the root is a plain object (OPENAI_ROOT);
- Gemini's ``parametersJsonSchema``: GEMINI_SCHEMA ("the model ignores unsupported
  properties").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, Literal

from agentkit.schema.values import length_words

__all__ = [
    "GEMINI_FORMATS",
    "GEMINI_KEYWORDS",
    "OPENAI_STRICT_FORMATS",
    "OPENAI_STRICT_KEYWORDS",
    "OPENAI_STRICT_REFUSED",
    "SchemaCheck",
    "Severity",
    "free_form_path",
    "gemini_schema",
    "object_schema",
    "openai_schema",
    "openai_strict_schema",
    "walk",
]

OPENAI_STRICT: Final = (
    "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
)
OPENAI_NOT_PERMITTED: Final = "https://github.com/openai/openai-node/pull/2602"
OPENAI_ROOT: Final = "https://github.com/chatanywhere/GPT_API_free/issues/403"
GEMINI_SCHEMA: Final = "https://ai.google.dev/gemini-api/docs/structured-output#json-schema"

Severity = Literal["error", "warning"]
#: Checks one exported schema: yields (path below it, message, fix, severity).
SchemaCheck = Callable[[Mapping[str, Any]], Iterator[tuple[str, str, str, Severity]]]


def walk(
    schema: Mapping[str, Any], path: str = "", depth: int = 0
) -> Iterator[tuple[str, Mapping[str, Any], int]]:
    """Every subschema of ``schema`` with its path and how many objects enclose it (itself too)."""
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        depth += 1
    yield path, schema, depth
    for key, value in schema.items():
        where = f"{path}.{key}" if path else key
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            for name, sub in value.items():
                if isinstance(sub, Mapping):
                    yield from walk(sub, f"{where}.{name}", depth)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                if isinstance(sub, Mapping):
                    yield from walk(sub, f"{where}[{index}]", depth)
        elif key in _SCHEMA_ONE and isinstance(value, Mapping):
            yield from walk(value, where, depth)


_SCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_LISTS: Final = frozenset({"anyOf", "oneOf", "allOf", "prefixItems", "items"})
_SCHEMA_ONE: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)


def _object_root(schema: Mapping[str, Any], *, anyof_allowed: bool) -> Iterator[tuple[str, str]]:
    """(message, fix) when the root of a tool's inputs is not a plain object schema."""
    if schema.get("type") != "object":
        yield (
            f"the root is type {schema.get('type')!r}, not 'object'",
            "declare the inputs as parameters: the root of a tool's inputs is an object",
        )
    if not anyof_allowed:
        for key in ("anyOf", "oneOf", "allOf", "enum", "not"):
            if key in schema:
                yield (
                    f"'{key}' at the root",
                    f"move '{key}' into a parameter; the root must be a plain object",
                )


# -- OpenAI ------------------------------------------------------------------------------

#: The keywords OpenAI documents for strict mode (Supported schemas, Supported properties).
OPENAI_STRICT_KEYWORDS: Final = frozenset(
    {
        "type",
        "description",
        "title",
        "enum",
        "const",
        "anyOf",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "$ref",
        "$defs",
        "definitions",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
#: Keywords strict mode refuses ("'oneOf' is not permitted"): those the page lists as not
#: supported, and those the API is known to refuse.
OPENAI_STRICT_REFUSED: Final = frozenset(
    {
        "allOf",
        "not",
        "dependentRequired",
        "dependentSchemas",
        "if",
        "then",
        "else",
        "oneOf",
        "patternProperties",
        "propertyNames",
    }
)
OPENAI_STRICT_FORMATS: Final = (
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
)
#: Strict mode's documented size limits.
OPENAI_STRICT_MAX_DEPTH: Final = 10
OPENAI_STRICT_MAX_PROPERTIES: Final = 5000
OPENAI_STRICT_MAX_ENUM_VALUES: Final = 1000
OPENAI_STRICT_MAX_STRING_SIZE: Final = 120_000
OPENAI_STRICT_LONG_ENUM: Final = 250
OPENAI_STRICT_LONG_ENUM_SIZE: Final = 15_000


def openai_schema(schema: Mapping[str, Any]) -> Iterator[tuple[str, str, str, Severity]]:
    for message, fix in _object_root(schema, anyof_allowed=False):
        yield "", message, fix, "error"


def openai_strict_schema(schema: Mapping[str, Any]) -> Iterator[tuple[str, str, str, Severity]]:
    yield from openai_schema(schema)
    properties = enum_values = string_size = 0
    too_deep = False
    for path, node, depth in walk(schema):
        yield from _strict_node(path, node)
        if depth > OPENAI_STRICT_MAX_DEPTH and not too_deep:
            too_deep = True
            yield (
                path,
                f"objects nested {depth} deep; strict mode takes at most "
                f"{OPENAI_STRICT_MAX_DEPTH} levels",
                "flatten the nested dictionaries",
                "error",
            )
        names = node.get("properties")
        if isinstance(names, Mapping):
            properties += len(names)
            string_size += sum(len(str(name)) for name in names)
        for key in ("$defs", "definitions"):
            defined = node.get(key)
            if isinstance(defined, Mapping):
                string_size += sum(len(str(name)) for name in defined)
        values = node.get("enum")
        if isinstance(values, list):
            enum_values += len(values)
            texts = [value for value in values if isinstance(value, str)]
            string_size += sum(map(len, texts))
            size = sum(map(len, texts))
            if len(texts) > OPENAI_STRICT_LONG_ENUM and size > OPENAI_STRICT_LONG_ENUM_SIZE:
                yield (
                    f"{path}.enum" if path else "enum",
                    f"{len(texts)} string values of {size} characters in all; strict mode "
                    f"takes at most {OPENAI_STRICT_LONG_ENUM_SIZE} characters in an enum of "
                    f"more than {OPENAI_STRICT_LONG_ENUM} values",
                    "shorten the values, or take a plain string and check it in the tool",
                    "error",
                )
        if isinstance(node.get("const"), str):
            string_size += len(node["const"])
    for count, most, what in (
        (properties, OPENAI_STRICT_MAX_PROPERTIES, "object properties"),
        (enum_values, OPENAI_STRICT_MAX_ENUM_VALUES, "enum values"),
        (string_size, OPENAI_STRICT_MAX_STRING_SIZE, "characters of names and enum values"),
    ):
        if count > most:
            yield (
                "",
                f"{count} {what} in one schema; strict mode takes at most {most}",
                "split the tool, or export it without strict",
                "error",
            )


_COMBINATIONS: Final = ("anyOf", "oneOf", "allOf", "not")


def _strict_node(path: str, node: Mapping[str, Any]) -> Iterator[tuple[str, str, str, Severity]]:
    def at(key: str) -> str:
        return f"{path}.{key}" if path else key

    for key in node:
        if key in OPENAI_STRICT_REFUSED:
            yield (
                at(key),
                f"'{key}' is not permitted in strict mode",
                f"remove '{key}' (say the rule in the description), or export without strict",
                "error",
            )
        elif key not in OPENAI_STRICT_KEYWORDS:
            yield (
                at(key),
                f"'{key}' is not among the keywords OpenAI documents for strict mode",
                f"remove '{key}', or export without strict",
                "warning",
            )
    # A composition keyword stands for the type: it is reported on its own above.
    if not any(key in node for key in ("type", "$ref", "const", "enum", *_COMBINATIONS)):
        yield (
            path,
            "a schema without a 'type'; strict mode needs one on every schema",
            "declare the list's item type (items: string, say)"
            if path.endswith("items")
            else "give it a type",
            "error",
        )
    if isinstance(node.get("items"), list):
        yield (
            at("items"),
            "tuple items (a list of schemas); strict mode takes one schema for every item",
            "use one item schema, or a dictionary with named fields",
            "error",
        )
    fmt = node.get("format")
    if fmt is not None and fmt not in OPENAI_STRICT_FORMATS:
        yield (
            at("format"),
            f"format {fmt!r} is not one strict mode takes ({', '.join(OPENAI_STRICT_FORMATS)})",
            "remove the format (a pattern can say it), or use one of those",
            "error",
        )
    kind = node.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        if node.get("additionalProperties") is not False:
            shown = node.get("additionalProperties", "missing")
            yield (
                at("additionalProperties"),
                f"additionalProperties is {_shown(shown)}; strict mode needs false on every object",
                "declare the dictionary's parameters, or export without strict",
                "error",
            )
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            required = node.get("required")
            listed = set(required) if isinstance(required, list) else set()
            missing = [name for name in properties if name not in listed]
            if missing:
                names = ", ".join(f"'{name}'" for name in missing)
                yield (
                    at("required"),
                    f"every property must be required in strict mode; {names} not",
                    "list them in required, each nullable (type: [T, 'null']) to stay optional",
                    "error",
                )


def free_form_path(schema: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first free-form value strict mode cannot express: its path ("" for the root)
    and which it is, an object schema without declared properties or an array without
    an item type; None without one."""
    for path, node, _ in walk(schema):
        kind = node.get("type")
        if kind == "object" and "properties" not in node:
            return path, "dictionary"
        items = node.get("items")
        if kind == "array" and not (isinstance(items, Mapping) and items):
            return path, "list"
    return None


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# -- Gemini ------------------------------------------------------------------------------

#: The JSON Schema keywords Gemini documents; it ignores the others.
GEMINI_KEYWORDS: Final = frozenset(
    {
        "type",
        "title",
        "description",
        "enum",
        "format",
        "minimum",
        "maximum",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "anyOf",
        "$ref",
        "$defs",
        "propertyOrdering",
    }
)
GEMINI_FORMATS: Final = ("date-time", "date", "time")


def gemini_schema(schema: Mapping[str, Any]) -> Iterator[tuple[str, str, str, Severity]]:
    for message, fix in _object_root(schema, anyof_allowed=True):
        yield "", message, fix, "error"
    for path, node, _ in walk(schema):
        for key, value in node.items():
            where = f"{path}.{key}" if path else key
            if key in ("minLength", "maxLength") and _lengths_said(node):
                continue  # dropped by Gemini, but the description says it in words
            if key not in GEMINI_KEYWORDS:
                yield (
                    where,
                    f"Gemini ignores '{key}' (not in its JSON Schema subset)",
                    _gemini_fix(key),
                    "warning",
                )
            elif key == "format" and node.get("type") == "string" and value not in GEMINI_FORMATS:
                yield (
                    where,
                    f"Gemini ignores format {value!r} (it takes {', '.join(GEMINI_FORMATS)})",
                    "say the format in the description",
                    "warning",
                )


def _lengths_said(node: Mapping[str, Any]) -> bool:
    """Whether ``node``'s description already gives its string lengths in words, as
    the OpenAPI import and the strict export write them (``1 to 280 characters``)."""
    low, high = node.get("minLength"), node.get("maxLength")
    words = length_words(
        low if isinstance(low, int) else None, high if isinstance(high, int) else None
    )
    description = node.get("description")
    return bool(words) and isinstance(description, str) and words in description.lower()


def _gemini_fix(key: str) -> str:
    if key == "default":
        return "state the default in the description; agentkit still applies it"
    if key in ("pattern", "minLength", "maxLength", "multipleOf", "uniqueItems"):
        return f"say the rule in the description; agentkit still checks '{key}' on each call"
    return f"say what '{key}' means in the description, or remove it"


# -- Anthropic and MCP -------------------------------------------------------------------


def object_schema(schema: Mapping[str, Any]) -> Iterator[tuple[str, str, str, Severity]]:
    for message, fix in _object_root(schema, anyof_allowed=True):
        yield "", message, fix, "error"
