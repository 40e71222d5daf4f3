"""The vocabulary of schemas: the six parameter types and how a value is told apart.

What every other schema module shares, and nothing else: the type names and
their tests, the JSON Schema and Python types they stand for, ``ABSENT``, and
how an error message quotes a value. ``toolschema`` builds the values on this,
``schema.parse`` reads definitions with it, ``schema.code`` compiles checks from it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from agentkit.redaction import excerpt
from agentkit.toolerrors import Problem

__all__ = [
    "ABSENT",
    "EXACT_TYPES",
    "FALSE_WORDS",
    "JSON_TYPES",
    "PARAMETER_TYPES",
    "SCALAR_TYPES",
    "TRUE_WORDS",
    "TYPE_ALIASES",
    "TYPE_TESTS",
    "UNION_TYPES",
    "Check",
    "TypeSpec",
    "characters",
    "enum_key",
    "from_text",
    "is_integer",
    "is_number",
    "length_words",
    "show",
    "type_label",
    "type_members",
    "type_name",
    "type_test",
    "written",
]

#: The six parameter types, in the order error messages list them.
PARAMETER_TYPES: Final = ("string", "integer", "float", "boolean", "list", "dictionary")

#: The scalar types, which an ``enum`` of a union may hold values of.
SCALAR_TYPES: Final = ("string", "integer", "float", "boolean")

#: The types a union may join (``type: [string, integer]``, ``[string, list]``,
#: ``[string, dictionary]``): a value of any one passes. Each type is listed once,
#: so a union's ``items`` belong to its list and its ``parameters`` to its dictionary.
UNION_TYPES: Final = PARAMETER_TYPES

#: A parameter's declared type: one name, or a union of two or more ``UNION_TYPES``.
TypeSpec = str | tuple[str, ...]

JSON_TYPES: Final = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "boolean": "boolean",
    "list": "array",
    "dictionary": "object",
}
# Names people reach for from Python or JSON Schema, so "int" can say "did you mean 'integer'?".
TYPE_ALIASES: Final = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "number": "float",
    "double": "float",
    "bool": "boolean",
    "array": "list",
    "tuple": "list",
    "dict": "dictionary",
    "object": "dictionary",
    "map": "dictionary",
    "mapping": "dictionary",
}
_SHOWN_VALUE_LIMIT: Final = 60


class _Absent:
    """The type of ABSENT: no value at all, as distinct from ``None``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


# A check takes the value, its path for messages, and the problem list to append
# to; it returns the value to store (an int becomes a float, nested containers
# come back as checked copies).
Check = Callable[[Any, str, list[Problem]], Any]


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def is_integer(value: Any) -> bool:
    """An int that is not a bool (JSON and LLMs keep the two apart; Python does not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _is_dictionary(value: Any) -> bool:
    return isinstance(value, dict)


TYPE_TESTS: Final[dict[str, Callable[[Any], bool]]] = {
    "string": _is_string,
    "integer": is_integer,
    "float": is_number,
    "boolean": _is_boolean,
    "list": _is_list,
    "dictionary": _is_dictionary,
}
#: The Python type a value of each parameter type is stored as.
EXACT_TYPES: Final[dict[str, type]] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "list": list,
    "dictionary": dict,
}


def type_label(declared: TypeSpec) -> str:
    """A declared type as messages quote it: ``'string'``, ``'string' or 'integer'``."""
    if isinstance(declared, str):
        return f"'{declared}'"
    return " or ".join(f"'{name}'" for name in declared)


def type_members(declared: TypeSpec) -> tuple[str, ...]:
    """The types of ``declared``: the union's, or the one type alone."""
    return declared if isinstance(declared, tuple) else (declared,)


def enum_key(value: Any) -> tuple[str, Any]:
    """How an enum value is matched: by JSON's kind and its value.

    Python finds ``True == 1`` and ``1 == 1.0``; JSON keeps a boolean apart from
    a number (and ``1`` and ``1.0`` are one number), so a union's enum of ``1``
    does not take ``true``.
    """
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    return ("other", value)


def type_test(declared: TypeSpec) -> Callable[[Any], bool]:
    """The test a value of ``declared`` passes: its type's, or for a union any member's."""
    if isinstance(declared, str):
        return TYPE_TESTS[declared]
    tests = tuple(TYPE_TESTS[name] for name in declared)
    return lambda value: any(test(value) for test in tests)


#: The words ``from_text`` reads as a boolean.
TRUE_WORDS: Final = ("true", "yes", "1", "on")
FALSE_WORDS: Final = ("false", "no", "0", "off")


def from_text(text: str, types: Sequence[str]) -> Any:
    """``text`` (an argument, a ``${VAR}``) as the first of ``types`` it reads as.

    Integer, float and boolean are tried in that order, whatever the order of
    ``types``: ``5`` for ``[string, integer]`` is the integer 5. Text that reads
    as none of them comes back as it is, for the schema check to judge.

    When ``string`` is one of ``types``, only JSON's own spelling makes a number or
    a boolean (``-12``, ``0.5``, ``1e3`` finite; ``true``, ``false``): ``007``,
    ``1_000``, `` 7``, ``+5``, ``NO``, ``nan`` stay text, as written.
    """
    strict = "string" in types
    if "integer" in types and (not strict or _JSON_INTEGER.fullmatch(text)):
        try:
            return int(text)
        except ValueError:
            pass
    if "float" in types and (not strict or _JSON_NUMBER.fullmatch(text)):
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            if not strict or math.isfinite(number):
                return number
    if "boolean" in types:
        if strict and text in ("true", "false"):
            return text == "true"
        if not strict and text.lower() in (*TRUE_WORDS, *FALSE_WORDS):
            return text.lower() in TRUE_WORDS
    return text


#: JSON's spelling of an integer and of a number (ASCII digits only).
_JSON_INTEGER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)", re.ASCII)
_JSON_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", re.ASCII)


def characters(count: int) -> str:
    """``count`` characters in words: ``1 character``, ``1,000 characters``.

    Characters are code points, as ``len`` and JSON Schema's ``minLength`` count them.
    """
    return "1 character" if count == 1 else f"{count:,} characters"


def length_words(low: int | None, high: int | None) -> str:
    """A string's length bounds in words (``2 to 4 characters``, ``at most 1
    character``, ``exactly 3 characters``); empty for no bound (a low of 0 is none)."""
    if high is None:
        return f"at least {characters(low)}" if low else ""
    if low == high:
        return f"exactly {characters(high)}"
    return f"{low:,} to {characters(high)}" if low else f"at most {characters(high)}"


def show(value: Any) -> str:
    """A value as an error message quotes it: its repr, cut short.

    The running call's secrets are redacted before the cut, while each is whole.
    """
    return excerpt(repr(value), _SHOWN_VALUE_LIMIT)


def type_name(value: Any) -> str:
    """The Python type of ``value`` as the chapter's messages name it (``'str'``); a
    loaded definition's located list or mapping is named for what it is (``list``,
    ``dict``), never for the loader's class."""
    kind = type(value)
    if kind.__module__ != "builtins":
        for base in (bool, int, float, str, list, tuple, dict):
            if isinstance(value, base):
                return base.__name__
    return kind.__name__


def written(value: Any) -> str:
    """``value`` as a definition wrote it, for a message: a scalar as YAML/JSON spells
    it (``null``, ``true``, ``5``, ``'integr'``), a list or a mapping by its kind."""
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value) if value is None or isinstance(value, bool) else repr(value)
    if isinstance(value, str):
        return show(value)
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type_name(value)
