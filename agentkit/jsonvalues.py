"""Values from the model: bounded nesting, finite numbers, strict JSON.

A model (or an upstream service) can send any JSON. Two kinds of value break
code that trusts it: one nested hundreds of levels deep, which makes every
recursive walk (copying, redacting, ``json.dumps``) raise ``RecursionError``;
and the floats ``NaN`` and ``Infinity``, which pass every ``minimum``/``maximum``
comparison and are not JSON at all. A Python caller or tool can add a third:
a value JSON has no form for (bytes, a set, a tuple, a datetime, an object of
its own, a key that is not a string), on which ``json.dumps`` raises when the
answer is printed or sent. Every free-form value a call takes or returns goes
through ``checked_copy``, and every JSON text from the model through ``loads``,
so none of them reaches a tool or a reply.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping
from types import NoneType
from typing import Any, Final

from agentkit.toolerrors import Problem

__all__ = [
    "MAX_DEPTH",
    "checked_copy",
    "checked_object",
    "containers_copied",
    "loads",
    "plain_copy",
    "plain_dict_copy",
    "plain_list_copy",
]

#: How deep a value may nest: a list or dictionary inside another counts one
#: level, up to 64. Real arguments nest a handful of levels; 64 leaves room for
#: any of them and keeps every recursive walk of a value far below Python's
#: recursion limit (about 1,000 frames), whichever thread it runs in.
MAX_DEPTH: Final = 64

#: What a value may be, as a message says it.
_JSON_VALUE: Final = "a JSON value (a string, number, boolean, null, list or dictionary)"

# Python values that are JSON as they are: ``str``, ``int`` and ``bool`` of any
# subclass (``json.dumps`` writes an ``IntEnum`` or a ``str`` subclass as its value).
_SCALARS: Final = (str, int, NoneType)


def checked_copy(value: Any, path: str, errors: list[Problem]) -> Any:
    """A copy of the JSON-like ``value``, checked: JSON values only, nesting within
    ``MAX_DEPTH``, floats finite.

    JSON values are strings, numbers, booleans, ``None``, lists and dictionaries
    with string keys (subclasses of these too; a ``dict`` or ``list`` subclass is
    copied as a plain one). Anything else -- bytes, a set, a tuple, a datetime, an
    object of the caller's, a key that is not a string -- is a problem, not copied.
    Problems are appended to ``errors`` in the schema's wording, ``path`` naming
    the parameter (``filters.tags[2]`` for a bad number inside it). The copy is
    fresh all the way down, so neither the caller nor a default is ever shared.
    """
    if type(value) is dict or type(value) is list:
        copied = plain_copy(value)
        if copied is not None:
            return copied
    parts: list[str | int] = []
    return _copy(value, 0, path, parts, errors)


def checked_object(value: dict[Any, Any], errors: list[Problem]) -> dict[str, Any]:
    """``checked_copy`` of a free-form object (a schema that declares no parameters):
    each of its values checked as a free-form value, named by its key, which must be
    a string."""
    if type(value) is dict:
        copied = plain_dict_copy(value, -1)  # its values are at the depth of parameters
        if copied is not None:
            return copied
    out: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(key, str):
            out[key] = checked_copy(item, key, errors)
        else:
            errors.append(_bad_key("", key))
        if len(errors) > _ERROR_LIMIT:
            break
    return out


def plain_copy(value: dict[Any, Any] | list[Any], depth: int = 0) -> Any:
    """``checked_copy`` of a dict or list of plain JSON values, without a path or messages.

    Plain: every container an exact ``dict`` or ``list`` nested within
    ``MAX_DEPTH`` (``value`` itself ``depth`` levels down), every key an exact
    ``str``, every other value an exact ``str``, ``int``, ``bool``, ``None`` or
    finite ``float``. Returns the
    fresh copy -- equal to what ``checked_copy`` makes -- or ``None`` when the
    value is not plain, for ``checked_copy`` to judge with its messages.
    """
    if depth >= MAX_DEPTH:
        return None
    if type(value) is dict:
        return plain_dict_copy(value, depth)
    if type(value) is list:
        return plain_list_copy(value, depth)
    return None


# The fast tier of every call's check (a free-form value, a tool's output), so
# written for CPython's speed: a walker for each kind of container, which the
# generated checks call straight (they have tested the kind), each type test an
# ``is``, the commonest leaves (strings, integers) first, and the depth tested
# only before a container is entered. Each container is copied whole in C; only
# the containers in it are written again.


def plain_dict_copy(value: dict[Any, Any], depth: int = 0) -> dict[Any, Any] | None:
    """``plain_copy`` of an exact ``dict`` ``depth`` levels down (less than ``MAX_DEPTH``)."""
    copied = value.copy()
    inner = depth + 1
    for key, item in value.items():
        if type(key) is not str:
            return None
        kind = type(item)
        if kind is str or kind is int:
            continue
        if kind is dict or kind is list:
            if inner >= MAX_DEPTH:
                return None
            item = plain_dict_copy(item, inner) if kind is dict else plain_list_copy(item, inner)
            if item is None:
                return None
            copied[key] = item
        elif kind is float:
            if item - item != 0.0:  # NaN and the infinities
                return None
        elif kind is not bool and item is not None:
            return None
    return copied


def plain_list_copy(value: list[Any], depth: int = 0) -> list[Any] | None:
    """``plain_copy`` of an exact ``list`` ``depth`` levels down (less than ``MAX_DEPTH``)."""
    # One pass to look: a list of leaves, the usual list, is then copied whole.
    for item in value:
        kind = type(item)
        if kind is str or kind is int:
            continue
        if kind is dict or kind is list:
            break
        if kind is float:
            if item - item != 0.0:
                return None
        elif kind is not bool and item is not None:
            return None
    else:
        return value.copy()
    inner = depth + 1
    if inner >= MAX_DEPTH:
        return None
    # A container in it: the list built afresh, each item looked at again.
    copied = []
    for item in value:
        kind = type(item)
        if kind is dict or kind is list:
            item = plain_dict_copy(item, inner) if kind is dict else plain_list_copy(item, inner)
            if item is None:
                return None
        elif kind is float:
            if item - item != 0.0:
                return None
        elif not (kind is str or kind is int or kind is bool or item is None):
            return None
        copied.append(item)
    return copied


def containers_copied(value: Mapping[Any, Any]) -> dict[Any, Any]:
    """``value`` as a new dict whose dicts and lists, at any depth within ``MAX_DEPTH``,
    are new too (a subclass of either copied as the plain one); every other value,
    and what lies deeper, is the same object. For what a tool without an input schema
    takes: any mapping, its values unchecked, and still none of the caller's lists or
    dictionaries, as the values of a schema's check share none."""
    return {key: _containers(item, 1) for key, item in value.items()}


def _containers(value: Any, depth: int) -> Any:
    if depth >= MAX_DEPTH or not isinstance(value, (dict, list)):
        return value
    inner = depth + 1
    if isinstance(value, dict):
        return {key: _containers(item, inner) for key, item in value.items()}
    return [_containers(item, inner) for item in value]


def _copy(value: Any, depth: int, path: str, parts: list[str | int], errors: list[Problem]) -> Any:
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            where = _join(path, parts)
            message = f"Parameter '{where}': expected a finite number, got {value}"
            errors.append(Problem(path=where, message=message))
        return value
    if not isinstance(value, (dict, list)):
        where = _join(path, parts)
        message = f"Parameter '{where}': expected {_JSON_VALUE}, got '{type(value).__name__}'"
        errors.append(Problem(path=where, message=message + _hint(value)))
        return value  # a problem: the call fails, nothing is given this value
    if depth >= MAX_DEPTH:
        message = (
            f"Parameter '{path}': nested more than {MAX_DEPTH} levels deep; send a flatter value"
        )
        errors.append(Problem(path=path, message=message))
        return None
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str):
                parts.append(key)
                out[key] = _copy(item, depth + 1, path, parts, errors)
                parts.pop()
            else:
                errors.append(_bad_key(_join(path, parts), key))
            if len(errors) > _ERROR_LIMIT:
                break
        return out
    items = []
    for index, item in enumerate(value):
        parts.append(index)
        items.append(_copy(item, depth + 1, path, parts, errors))
        parts.pop()
        if len(errors) > _ERROR_LIMIT:
            break
    return items


def _bad_key(where: str, key: Any) -> Problem:
    """A dictionary's key that is not a string, named by its type (its value may be
    anything, a secret included)."""
    at = f"Parameter '{where}': " if where else ""
    return Problem(
        path=where,
        message=f"{at}expected a dictionary with string keys, got a key of type "
        f"'{type(key).__name__}'; JSON keys are strings",
    )


def _hint(value: Any) -> str:
    """What to give instead of ``value``, where the usual fix is known."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "; decode bytes to a string (or base64-encode them)"
    if isinstance(value, (tuple, set, frozenset)):
        return "; give a list"
    if isinstance(value, Mapping):
        return "; give a dict"
    # A date or a time is of a module its caller has loaded: no import here.
    dates = sys.modules.get("datetime")
    if dates is not None and isinstance(value, (dates.date, dates.time)):
        return "; give its isoformat() string"
    return ""


# A million NaNs need not make a million messages: the first few say what to fix.
_ERROR_LIMIT: Final = 20


def _join(path: str, parts: list[str | int]) -> str:
    text = path
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else part
    return text


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a number JSON allows; send a finite number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text[:40]} is too large for a float; send a finite number")
    return number


def loads(text: str | bytes, *, parse_int: Callable[[str], Any] | None = None) -> Any:
    """Parse JSON text from outside, refusing what ``json.loads`` lets through.

    ``NaN``, ``Infinity`` and numbers that overflow to infinity are refused, and
    so is nesting deeper than ``MAX_DEPTH``. ``parse_int`` reads each integer's
    digits, as for ``json.loads`` (a caller that wants to bound them). Raises
    ``ValueError`` with a message that says what was wrong.
    """
    try:
        value = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
            parse_int=parse_int,
        )
    except RecursionError:
        raise ValueError(
            f"nested more than {MAX_DEPTH} levels deep; send a flatter value"
        ) from None
    errors: list[Problem] = []
    value = checked_copy(value, "", errors)
    if errors:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep; send a flatter value")
    return value
