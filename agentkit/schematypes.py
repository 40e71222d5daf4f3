"""The vocabulary of schemas: the six parameter types and how a value is told apart.

What every other schema module shares, and nothing else: the type names and
their tests, the JSON Schema and Python types they stand for, ``ABSENT``, and
how an error message quotes a value. ``toolschema`` builds the values on this,
``schemaparse`` reads definitions with it, ``schemacode`` compiles checks from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from agentkit.redaction import excerpt
from agentkit.toolerrors import Problem

__all__ = [
    "ABSENT",
    "EXACT_TYPES",
    "JSON_TYPES",
    "PARAMETER_TYPES",
    "TYPE_ALIASES",
    "TYPE_TESTS",
    "Check",
    "is_integer",
    "is_number",
    "show",
    "type_name",
]

#: The six parameter types, in the order error messages list them.
PARAMETER_TYPES: Final = ("string", "integer", "float", "boolean", "list", "dictionary")

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


def show(value: Any) -> str:
    """A value as an error message quotes it: its repr, cut short.

    The running call's secrets are redacted before the cut, while each is whole.
    """
    return excerpt(repr(value), _SHOWN_VALUE_LIMIT)


def type_name(value: Any) -> str:
    return type(value).__name__
