"""What one schema's keywords say, read without following ``$ref``: its type as
agentkit names it, whether it takes null, which values fit it, and its bounds,
lengths, pattern and default as a parameter spec writes them."""

from __future__ import annotations

import re
from typing import Any, Final, Literal, TypeGuard

from agentkit.openapi.descriptions import sentence
from agentkit.schema.values import enum_key, length_words

Direction = Literal["input", "output"]

TYPES: Final = {
    "string": "string",
    "integer": "integer",
    "number": "float",
    "boolean": "boolean",
    "array": "list",
    "object": "dictionary",
}


#: What a type of a union would need to check and a union cannot: its values, bounds, pattern.
CONSTRAINTS: Final = (
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "pattern",
    "minLength",
    "maxLength",
    "format",
)


#: The kinds a union may join: the scalars and a list (agentkit's ``UNION_TYPES``).
UNION_KINDS: Final = ("string", "integer", "float", "boolean", "list")


#: A union member: its kind, its schema (flat), and where that is.
Member = tuple[str, dict[str, Any], str]


def whole_match(pattern: str) -> str | None:
    """An OpenAPI pattern (found anywhere in the value) as one the whole value must match."""
    try:
        re.compile(pattern)
    except re.error:
        return None
    if pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$"):
        return pattern
    return f".*(?:{pattern}).*"


def lengths(spec: dict[str, Any], schema: dict[str, Any]) -> None:
    """``minLength`` / ``maxLength`` as ``min_length`` / ``max_length`` (beside any
    pattern, both checked), and in words in the description, which is what a model
    reads when a provider drops the keywords."""
    given_low, given_high = schema.get("minLength"), schema.get("maxLength")
    low: int = given_low if _count(given_low) else 0
    high: int | None = given_high if _count(given_high) else None
    if not low and high is None:
        return
    if high is not None and high < low:
        return
    if low:
        spec["min_length"] = low
    if high is not None:
        spec["max_length"] = high
    spec["description"] = sentence(spec.get("description"), length_words(low, high))


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1_000_000_000


def as_mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def names_in(value: Any) -> list[str]:
    """The names in a ``required`` list; anything else in it is not a name."""
    return [name for name in value if isinstance(name, str)] if isinstance(value, list) else []


def kind_of(schema: dict[str, Any]) -> str | None:
    declared = schema.get("type")
    if isinstance(declared, list):
        names = [name for name in declared if name != "null"]
        if len(names) > 1 and all(TYPES.get(str(name)) in UNION_KINDS for name in names):
            return None  # a union (type: [string, array]): the converter splits it
        declared = names[0] if len(names) == 1 else None
    if isinstance(declared, str):
        return TYPES.get(declared)
    if "properties" in schema or "additionalProperties" in schema:
        return "dictionary"
    if "items" in schema:
        return "list"
    if "const" in schema:
        return value_kind(schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        kinds = {value_kind(value) for value in enum if value is not None}
        return kinds.pop() if len(kinds) == 1 else None
    return None


def union_enum(members: list[Member]) -> list[Any] | None:
    """The values a union's scalars may take, as written (``[0, auto]``); None when a
    scalar member takes any value of its type (or none is listed)."""
    scalars = [(kind, sub) for kind, sub, _ in members if kind != "list"]
    if not any("enum" in sub or "const" in sub for _, sub in scalars):
        return None
    values: dict[tuple[str, Any], Any] = {}
    for kind, sub in scalars:
        if "const" in sub:
            listed = [sub["const"]]
        elif isinstance(sub.get("enum"), list):
            listed = sub["enum"]
        elif kind == "boolean":
            listed = [True, False]
        else:
            return None  # the constraints note says the others' values are not kept
        fitting = [value for value in listed if value is not None and fits(value, kind)]
        if not fitting:
            return None
        for value in fitting:
            values.setdefault(enum_key(value), value)
    return list(values.values())


def null_in_enum(schema: dict[str, Any]) -> bool:
    """An enum that lists null with no ``type`` to refuse it: the value may be null."""
    enum = schema.get("enum")
    return "type" not in schema and isinstance(enum, list) and None in enum


def only_null(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    return declared == "null" or declared == ["null"] or schema.get("enum") == [None]


def is_nullable(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    return schema.get("nullable") is True or (isinstance(declared, list) and "null" in declared)


def skipped(schema: dict[str, Any], direction: Direction) -> bool:
    """readOnly properties are never sent, writeOnly ones never returned."""
    return schema.get("readOnly" if direction == "input" else "writeOnly") is True


def value_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return None


def fits(value: Any, kind: str | list[str]) -> bool:
    if isinstance(kind, list):  # a union
        return any(fits(value, member) for member in kind)
    actual = value_kind(value)
    if kind == "float":
        return actual in ("integer", "float")
    if kind == "list":
        return isinstance(value, list)
    if kind == "dictionary":
        return isinstance(value, dict)
    return actual == kind


INVALID: Final = object()


def fitting_default(value: Any, spec: dict[str, Any]) -> Any:
    if value is None or not fits(value, spec["type"]):
        return INVALID
    if "enum" in spec and enum_key(value) not in {enum_key(item) for item in spec["enum"]}:
        return INVALID
    return value


def bounds(spec: dict[str, Any], schema: dict[str, Any], kind: str, note: Any) -> None:
    for key, exclusive_key, step in (
        ("minimum", "exclusiveMinimum", 1),
        ("maximum", "exclusiveMaximum", -1),
    ):
        bound = schema.get(key)
        exclusive = schema.get(exclusive_key)
        if isinstance(exclusive, int | float) and not isinstance(exclusive, bool):
            bound, exclusive = exclusive, True  # 3.1: the exclusive bound is the number
        if not isinstance(bound, int | float) or isinstance(bound, bool):
            continue
        # An int is whole however large (float() of one past 1e308 overflows).
        whole = isinstance(bound, int) or bound.is_integer()
        if exclusive is True:
            if kind == "integer" and whole:
                bound = int(bound) + step
            else:
                note(f"exclusive {key} {bound} written as inclusive")
        spec[key] = int(bound) if kind == "integer" and whole else bound
