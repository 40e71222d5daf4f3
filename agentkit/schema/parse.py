"""The definition parser: a schema as written (a dictionary) read into schema values.

Every problem of a definition is found in one pass, each with the location of
the offending key (``("parameters", 1, "default")``), so a YAML loader can point
at its line. The parser imports no value class: ``toolschema`` hands it the
ones to build (``Builders``), which keeps the values above the parser and no
import running both ways. What each key of a parameter but its name, default and
nesting may hold is read by ``schema.constraints``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.problem import did_you_mean, format_location
from agentkit.schema.constraints import (
    Location,
    duplicates,
    parse_bound,
    parse_enum,
    parse_flag,
    parse_length,
    parse_pattern,
    parse_type,
    parse_union_enum,
)
from agentkit.schema.values import (
    show,
    type_label,
    written,
)
from agentkit.toolerrors import Problem

__all__ = [
    "PARAMETER_KEYS",
    "Builders",
    "Location",
    "duplicates",
    "parse_parameter_list",
    "parse_schema",
    "unchanging",
]

_ELEMENT_KEYS: Final = (
    "type",
    "description",
    "enum",
    "items",
    "parameters",
    "minimum",
    "maximum",
    "pattern",
    "min_length",
    "max_length",
)
PARAMETER_KEYS: Final = ("name", "required", "default", *_ELEMENT_KEYS, "sensitive")
_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
#: The most flat parameter definitions ``_parse_parameter`` remembers (then it starts over).
MAX_REMEMBERED: Final = 4096
# Values that key a flat definition as they are; a float is keyed by its repr
# (0.0 and -0.0 are equal, and would share a parameter whose default prints apart).
_KEYED_AS_IS: Final = frozenset({str, int, bool, type(None)})
_STR: Final = frozenset({str})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Builders:
    """The value classes the parser builds: ``parameter(**fields)`` and ``schema(params)``.

    A built parameter has ``name`` and ``check(value) -> (value, errors)``, which
    the parser uses to check a default.
    """

    parameter: type[Any]
    schema: Callable[[tuple[Any, ...]], Any]


def parse_schema(
    definition: Any, location: Location, problems: list[Problem], build: Builders
) -> Any:
    """A schema definition (``{"parameters": [...]}``) as a ``build.schema``; problems appended."""
    if not isinstance(definition, Mapping):
        problems.append(
            Problem(
                location=location,
                message=(f"expected a mapping with a 'parameters' list, got {written(definition)}"),
            )
        )
        return build.schema(())
    for key in definition:
        if key != "parameters":
            problems.append(
                Problem(
                    location=(*location, str(key)),
                    message=f"unknown key '{key}'{did_you_mean(str(key), ['parameters'])}; "
                    "a schema has only 'parameters'",
                )
            )
    raw = definition.get("parameters", [])
    return parse_parameter_list(raw, (*location, "parameters"), problems, build)


#: Built values by the identity of the raw definition they were built from, while
#: the definitions parsed are promised not to change (``unchanging``).
Built = dict[tuple[int, bool | None], tuple[Any, Any]]
_unchanging: ContextVar[Built | None] = ContextVar("unchanging", default=None)


@contextmanager
def unchanging(built: Built) -> Iterator[None]:
    """Parse definitions that will not change while ``built`` is in use.

    Inside, a nested parameter or parameter list met again (the same object: one
    document's schemas share them with another's) is the value built from it the
    first time, kept in ``built``, which keeps each raw definition with it so that no
    other takes its identity. Only what was built without a problem is kept: such a
    value depends on nothing but the definition, not on where it was met.
    """
    token = _unchanging.set(built)
    try:
        yield
    finally:
        _unchanging.reset(token)


def parse_parameter_list(
    raw: Any, location: Location, problems: list[Problem], build: Builders
) -> Any:
    """A list of parameter definitions (or built parameters) as a ``build.schema``."""
    built = _unchanging.get()
    if built is None:
        return _parse_parameter_list(raw, location, problems, build)
    found = built.get((id(raw), None))
    if found is not None and found[0] is raw:
        return found[1]
    start = len(problems)
    schema = _parse_parameter_list(raw, location, problems, build)
    if len(problems) == start:
        built[id(raw), None] = (raw, schema)
    return schema


def _parse_parameter_list(
    raw: Any, location: Location, problems: list[Problem], build: Builders
) -> Any:
    if raw is None:
        raw = []
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        problems.append(
            Problem(location=location, message=f"expected a list of parameters, got {written(raw)}")
        )
        return build.schema(())
    key = _flat_list_key(raw, build)
    if key is None:
        return _build_parameter_list(raw, location, problems, build)
    schema = _remembered.get(key)
    if schema is None:
        start = len(problems)
        schema = _build_parameter_list(raw, location, problems, build)
        if len(problems) == start:
            _remember(key, schema)
    return schema


def _build_parameter_list(
    raw: Sequence[Any], location: Location, problems: list[Problem], build: Builders
) -> Any:
    params: list[Any] = []
    first_seen: dict[str, int] = {}
    for index, item in enumerate(raw):
        here = (*location, index)
        if isinstance(item, build.parameter) and item.name:
            param: Any = item
        else:
            param = _parse_parameter(item, here, problems, build, named=True)
        if param is None:
            continue
        if param.name in first_seen:
            first = format_location((*location, first_seen[param.name]))
            problems.append(
                Problem(
                    location=(*here, "name"),
                    message=f"duplicate parameter name '{param.name}' (first defined at {first})",
                )
            )
            continue
        first_seen[param.name] = index
        params.append(param)
    return build.schema(tuple(params))


# Flat definitions, and lists of them, parsed without a problem, by what they
# say: the tools of a set repeat the same few ({name: id, type: string}), and
# a built parameter or schema is an immutable value that does not depend on
# where it was written.
_remembered: dict[tuple[Any, ...], Any] = {}


def _remember(key: tuple[Any, ...], value: Any) -> None:
    if len(_remembered) >= MAX_REMEMBERED:
        _remembered.clear()
    _remembered[key] = value


def _parse_parameter(
    raw: Any, location: Location, problems: list[Problem], build: Builders, *, named: bool
) -> Any:
    """Parse one parameter (``named``) or list element spec; ``None`` when it is unusable."""
    built = _unchanging.get()
    if built is None or type(raw) is not dict:
        return _parse_parameter_once(raw, location, problems, build, named=named)
    found = built.get((id(raw), named))
    if found is not None and found[0] is raw:
        return found[1]
    param = _parse_parameter_once(raw, location, problems, build, named=named)
    if param is not None:  # built, so without a problem
        built[id(raw), named] = (raw, param)
    return param


def _parse_parameter_once(
    raw: Any, location: Location, problems: list[Problem], build: Builders, *, named: bool
) -> Any:
    key = _flat_key(raw, build, named)
    if key is None:
        return _build_parameter(raw, location, problems, build, named=named)
    param = _remembered.get(key)
    if param is None:
        param = _build_parameter(raw, location, problems, build, named=named)
        if param is not None:  # built, so without a problem
            _remember(key, param)
    return param


def _flat_key(raw: Any, build: Builders, named: bool) -> tuple[Any, ...] | None:
    """What a definition of string keys and scalar values says, typed; else None.

    Types are part of the key: ``1``, ``1.0`` and ``true`` are equal in Python
    but different defaults and bounds.
    """
    if not isinstance(raw, dict):
        return None
    # The common case in C: names and values as they are, and the values' types.
    kinds = tuple(map(type, raw.values()))
    if _KEYED_AS_IS.issuperset(kinds):
        if not _STR.issuperset(map(type, raw)):
            return None
        return (build.parameter, named, tuple(raw.items()), kinds)
    if float not in kinds:
        return None
    key: list[Any] = [build.parameter, named]  # a class: hashed by identity, cheaply
    for name, value in raw.items():
        kind = type(value)
        if kind is float:
            value = repr(value)
        elif kind not in _KEYED_AS_IS or type(name) is not str:
            return None
        key.append((name, kind, value))
    return tuple(key)


def _flat_list_key(raw: Sequence[Any], build: Builders) -> tuple[Any, ...] | None:
    """The keys of a list of flat parameter definitions (``_flat_key``); else None."""
    key: list[Any] = [build.schema]
    for item in raw:
        item_key = _flat_key(item, build, True)
        if item_key is None:
            return None
        key.append(item_key)
    return tuple(key)


def _build_parameter(
    raw: Any, location: Location, problems: list[Problem], build: Builders, *, named: bool
) -> Any:
    allowed = PARAMETER_KEYS if named else _ELEMENT_KEYS
    if isinstance(raw, str) and not named:
        raw = {"type": raw}
    if not isinstance(raw, Mapping):
        expected = "a mapping with 'name' and 'type'" if named else "a type name or a mapping"
        problems.append(
            Problem(location=location, message=f"expected {expected}, got {written(raw)}")
        )
        return None
    start = len(problems)

    def problem(key: str, message: str) -> None:
        problems.append(Problem(location=(*location, key), message=message))

    for key in raw:
        if key not in allowed:
            text = str(key)
            hint = did_you_mean(text, allowed)
            if not named and text in ("name", "required", "default"):
                problem(text, f"'{text}' does not apply to list elements")
            else:
                problem(text, f"unknown key {show(text)}{hint}; allowed keys: {', '.join(allowed)}")

    name = ""
    if named:
        raw_name = raw.get("name")
        if raw_name is None:
            problems.append(Problem(location=location, message="missing 'name'"))
        elif not isinstance(raw_name, str):
            problem("name", f"expected a string, got {written(raw_name)}")
        elif not _NAME_RE.fullmatch(raw_name):
            problem(
                "name",
                f"invalid parameter name {show(raw_name)}: use letters, digits and underscores, "
                "starting with a letter or underscore, at most 64 characters",
            )
        else:
            name = raw_name

    declared = parse_type(raw.get("type"), location, problems)

    required = parse_flag(raw, "required", problem, default=True) if named else True
    # Sensitive: the audit trail masks the value (a personal detail, a free-text note).
    sensitive = parse_flag(raw, "sensitive", problem, default=False) if named else False

    description = raw.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        problem("description", f"expected a string, got {written(description)}")
        description = ""

    if declared is None:
        return None
    if isinstance(declared, tuple):
        constraints = _parse_union_constraints(raw, declared, location, problems, build, problem)
    else:
        constraints = _parse_constraints(raw, declared, location, problems, build, problem)

    if len(problems) > start:
        return None
    fields: dict[str, Any] = {
        "name": name,
        "type": declared,
        "required": required,
        "description": description,
        "enum": None,
        "items": None,
        "parameters": None,
        "minimum": None,
        "maximum": None,
        "pattern": None,
        "min_length": None,
        "max_length": None,
        **constraints,
    }
    if sensitive:
        fields["sensitive"] = True
    param = build.parameter(**fields)
    if "default" not in raw:
        return param
    default = raw["default"]
    if required:
        problem(
            "default",
            "a required parameter cannot have a default; "
            "set 'required: false' or remove the default",
        )
        return None
    if default is None:
        problem("default", "a default of null means no default; remove it")
        return None
    checked, errors = param.check(default)
    if errors:
        problem("default", "invalid default: " + "; ".join(errors))
        return None
    return build.parameter(**fields, default=checked)


def _parse_union_constraints(
    raw: Mapping[str, Any],
    declared: tuple[str, ...],
    location: Location,
    problems: list[Problem],
    build: Builders,
    problem: Callable[[str, str], None],
) -> dict[str, Any]:
    """What a union may say beyond its types: the ``enum`` of its scalar values, the
    ``items`` of its list member and the ``parameters`` of its dictionary member."""
    # A bound or a pattern belongs to one member and would have to say which; an
    # enum's values say their own type, so it applies to each scalar member.
    for key in ("minimum", "maximum", "pattern", "min_length", "max_length"):
        if key in raw:
            problem(
                key,
                f"'{key}' does not apply to a union of types ({type_label(declared)}); "
                "declare one type to constrain it",
            )
    constraints: dict[str, Any] = {"enum": parse_union_enum(raw, declared, problem)}
    if "items" in raw:
        if "list" not in declared:
            problem(
                "items",
                f"'items' applies to a union with 'list', not to {type_label(declared)}",
            )
        else:
            constraints["items"] = _parse_parameter(
                raw["items"], (*location, "items"), problems, build, named=False
            )
    if "parameters" in raw:
        if "dictionary" not in declared:
            problem(
                "parameters",
                f"'parameters' applies to a union with 'dictionary', not to {type_label(declared)}",
            )
        else:
            constraints["parameters"] = parse_parameter_list(
                raw["parameters"], (*location, "parameters"), problems, build
            )
    return constraints


def _parse_constraints(
    raw: Mapping[str, Any],
    declared: str,
    location: Location,
    problems: list[Problem],
    build: Builders,
    problem: Callable[[str, str], None],
) -> dict[str, Any]:
    """The constraints of a parameter of one type: enum, bounds, pattern, items, parameters."""
    minimum = parse_bound(raw, "minimum", declared, problem)
    maximum = parse_bound(raw, "maximum", declared, problem)
    if minimum is not None and maximum is not None and minimum > maximum:
        problem("maximum", f"maximum {maximum} is below minimum {minimum}")
    min_length = parse_length(raw, "min_length", declared, problem)
    max_length = parse_length(raw, "max_length", declared, problem)
    if min_length is not None and max_length is not None and min_length > max_length:
        problem("max_length", f"max_length {max_length} is below min_length {min_length}")
    constraints: dict[str, Any] = {
        "enum": parse_enum(raw, declared, problem),
        "minimum": minimum,
        "maximum": maximum,
        "pattern": parse_pattern(raw, declared, problem),
        "min_length": min_length,
        "max_length": max_length,
    }
    if "items" in raw:
        if declared != "list":
            problem("items", f"'items' applies only to type 'list', not '{declared}'")
        else:
            constraints["items"] = _parse_parameter(
                raw["items"], (*location, "items"), problems, build, named=False
            )
    if "parameters" in raw:
        if declared != "dictionary":
            problem(
                "parameters", f"'parameters' applies only to type 'dictionary', not '{declared}'"
            )
        else:
            constraints["parameters"] = parse_parameter_list(
                raw["parameters"], (*location, "parameters"), problems, build
            )
    return constraints
