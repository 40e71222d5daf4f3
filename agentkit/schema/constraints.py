"""A parameter's type and constraints as written, read: what ``schema.parse`` checks of
each key but the name, the default and the nesting.

Each reader reports what is wrong (the chapter's wording, extended) to the problems
or the ``problem`` callback it is given, and returns the value read, or ``None`` when
it could not be read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentkit.problem import did_you_mean
from agentkit.schema.values import (
    ABSENT,
    PARAMETER_TYPES,
    SCALAR_TYPES,
    TYPE_ALIASES,
    TYPE_TESTS,
    UNION_TYPES,
    TypeSpec,
    enum_key,
    is_number,
    show,
    type_label,
    written,
)
from agentkit.toolerrors import Problem

__all__ = [
    "Location",
    "duplicates",
    "parse_bound",
    "parse_enum",
    "parse_flag",
    "parse_length",
    "parse_pattern",
    "parse_type",
    "parse_union",
    "parse_union_enum",
]

#: Where a key is in a definition: ``("parameters", 1, "default")``.
Location = tuple[str | int, ...]


def parse_type(raw: Any, location: Location, problems: list[Problem]) -> TypeSpec | None:
    """``type``: one of ``PARAMETER_TYPES`` (or an alias), or a list of them: a union."""
    choices = ", ".join(PARAMETER_TYPES)
    if isinstance(raw, list):
        return parse_union(raw, location, problems)
    if raw is None:
        problems.append(
            Problem(location=location, message=f"missing 'type'; expected one of: {choices}")
        )
        return None
    if not isinstance(raw, str) or raw not in TYPE_TESTS:
        alias = TYPE_ALIASES.get(raw.lower()) if isinstance(raw, str) else None
        hint = (
            f" (did you mean '{alias}'?)"
            if alias
            else did_you_mean(raw, PARAMETER_TYPES)
            if isinstance(raw, str)
            else ""
        )
        problems.append(
            Problem(
                location=(*location, "type"),
                message=f"unsupported type {written(raw)}{hint}; expected one of: {choices}",
            )
        )
        return None
    return raw


def parse_union_enum(
    raw: Mapping[str, Any], declared: tuple[str, ...], problem: Callable[[str, str], None]
) -> tuple[Any, ...] | None:
    """``enum: [1, auto]`` of ``type: [integer, string]``: each value of a scalar member,
    and each scalar member with a value (a list member's elements have ``items``)."""
    if "enum" not in raw:
        return None
    values = raw["enum"]
    if not isinstance(values, list) or not values:
        problem("enum", "expected a non-empty list of allowed values")
        return None
    scalars = [name for name in declared if name in SCALAR_TYPES]
    if not scalars:
        problem(
            "enum",
            f"'enum' applies to a union's scalar types, and {type_label(declared)} has none",
        )
        return None
    for value in values:
        if not any(TYPE_TESTS[name](value) for name in scalars):
            expected = type_label(tuple(scalars))
            problem("enum", f"every value must be of type {expected}; {written(value)} is not")
            return None
    if any(value != value for value in values):  # NaN: equal to nothing, so never allowed
        problem("enum", "NaN can never be matched; remove it")
        return None
    keys = [enum_key(value) for value in values]
    repeated = duplicates(keys)
    if repeated:
        shown = ", ".join(written(value) for _, value in repeated[:5])
        problem("enum", f"duplicate values: {shown}; list each value once")
        return None
    for name in scalars:
        if not any(TYPE_TESTS[name](value) for value in values):
            problem(
                "enum",
                f"no value is of type '{name}'; add one, or leave '{name}' out of the type",
            )
            return None
    return tuple(values)


def parse_union(
    raw: list[Any], location: Location, problems: list[Problem]
) -> tuple[str, ...] | None:
    """``type: [string, integer]``: two or more of the union types, each once."""
    joined = ", ".join(UNION_TYPES)
    start = len(problems)
    names: list[str] = []
    for index, item in enumerate(raw):
        where = (*location, "type", index)
        if not isinstance(item, str) or item not in UNION_TYPES:
            alias = TYPE_ALIASES.get(item.lower()) if isinstance(item, str) else None
            hint = (
                f" (did you mean '{alias}'?)"
                if alias in UNION_TYPES
                else did_you_mean(item, UNION_TYPES)
                if isinstance(item, str)
                else ""
            )
            problems.append(
                Problem(
                    location=where,
                    message=f"unsupported type: {written(item)}{hint}; a union joins: {joined}",
                )
            )
        elif item in names:
            problems.append(Problem(location=where, message=f"'{item}' is listed twice"))
        else:
            names.append(item)
    if len(problems) > start:
        return None
    if len(names) < 2:
        only = f"type: {names[0]}" if names else "one of: " + ", ".join(PARAMETER_TYPES)
        problems.append(
            Problem(
                location=(*location, "type"),
                message=f"a union lists two or more types; for one type write {only}",
            )
        )
        return None
    return tuple(names)


def parse_enum(
    raw: Mapping[str, Any], declared: str, problem: Callable[[str, str], None]
) -> tuple[Any, ...] | None:
    """``enum`` of a scalar parameter: distinct values of its type."""
    if "enum" not in raw:
        return None
    values = raw["enum"]
    if declared not in ("string", "integer", "float"):
        problem("enum", f"'enum' applies to string, integer and float parameters, not '{declared}'")
        return None
    if not isinstance(values, list) or not values:
        problem("enum", "expected a non-empty list of allowed values")
        return None
    type_test = TYPE_TESTS[declared]
    bad = next((value for value in values if not type_test(value)), ABSENT)
    if bad is not ABSENT:
        problem("enum", f"every value must be of type '{declared}'; {show(bad)} is not")
        return None
    if any(value != value for value in values):  # NaN: equal to nothing, so never allowed
        problem("enum", "NaN can never be matched; remove it")
        return None
    repeated = duplicates(values)
    if repeated:
        shown = ", ".join(show(value) for value in repeated[:5])
        more = f" and {len(repeated) - 5} more" if len(repeated) > 5 else ""
        problem("enum", f"duplicate values: {shown}{more}; list each value once")
        return None
    if declared != "float":
        return tuple(values)
    huge = next((value for value in values if not _fits_float(value)), ABSENT)
    if huge is not ABSENT:
        problem(
            "enum",
            f"every value must be of type 'float'; "
            f"{show(huge)} is an integer too large for a float",
        )
        return None
    return tuple(float(v) for v in values)


def _fits_float(value: int | float) -> bool:
    """Whether ``value`` converts to a float: an int past about 1.8e308 does not."""
    try:
        float(value)
    except OverflowError:
        return False
    return True


def duplicates(values: Sequence[Any]) -> list[Any]:
    """The values that occur more than once in ``values``, each once, in first-seen order.

    One pass over a hashed set (a value and its repeats compare equal, so 1 and
    1.0 are one value, as ``in`` sees them); a value that cannot be hashed is
    keyed by its canonical JSON, which keeps the pass linear for JSON-like data.
    """
    seen: set[Any] = set()
    reported: set[Any] = set()
    found: list[Any] = []
    for value in values:
        key = value
        try:
            hash(value)
        except TypeError:
            key = ("json", json.dumps(value, sort_keys=True, default=repr))
        if key in seen:
            if key not in reported:
                reported.add(key)
                found.append(value)
        else:
            seen.add(key)
    return found


def parse_bound(
    raw: Mapping[str, Any], key: str, declared: str, problem: Callable[[str, str], None]
) -> int | float | None:
    """``minimum`` / ``maximum`` of an integer or float parameter: a finite number."""
    if key not in raw:
        return None
    value = raw[key]
    if declared not in ("integer", "float"):
        problem(key, f"'{key}' applies to integer and float parameters, not '{declared}'")
        return None
    if not is_number(value):
        problem(key, f"expected a number, got {written(value)}")
        return None
    if isinstance(value, int) and declared == "float" and not _fits_float(value):
        problem(
            key, f"expected a finite number, got an integer too large for a float: {show(value)}"
        )
        return None
    if isinstance(value, float) and not math.isfinite(value):
        # A NaN bound compares false with everything: it would check nothing.
        problem(key, f"expected a finite number, got {value}")
        return None
    return value  # type: ignore[no-any-return]  # narrowed by is_number


def parse_length(
    raw: Mapping[str, Any], key: str, declared: str, problem: Callable[[str, str], None]
) -> int | None:
    """``min_length`` / ``max_length``: a count of characters (code points), 0 or more."""
    if key not in raw:
        return None
    value = raw[key]
    if declared != "string":
        problem(key, f"'{key}' applies to string parameters, not '{declared}'")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problem(key, f"expected a whole number of characters, 0 or more, got {written(value)}")
        return None
    return value


def parse_flag(
    raw: Mapping[str, Any], key: str, problem: Callable[[str, str], None], *, default: bool
) -> bool:
    """A true-or-false key of a parameter (``default`` when absent or not a boolean)."""
    value = raw.get(key, default)
    if isinstance(value, bool):
        return value
    problem(key, f"expected true or false, got {written(value)}")
    return default


def parse_pattern(
    raw: Mapping[str, Any], declared: str, problem: Callable[[str, str], None]
) -> str | None:
    """``pattern`` of a string parameter: a regular expression that compiles."""
    if "pattern" not in raw:
        return None
    value = raw["pattern"]
    if declared != "string":
        problem("pattern", f"'pattern' applies to string parameters, not '{declared}'")
        return None
    if not isinstance(value, str):
        problem("pattern", f"expected a regular expression string, got {written(value)}")
        return None
    try:
        re.compile(value)
    except re.error as exc:
        problem("pattern", f"invalid regular expression: {exc}")
        return None
    return value
