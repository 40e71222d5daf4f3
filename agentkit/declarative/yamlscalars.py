"""YAML scalars as definitions read them: the tag a plain scalar resolves to, and its value.

``Loader`` is PyYAML's safe loader (its C parser where libyaml is present)
with PyYAML's tags, except that dates and YAML 1.1 base-60 numbers
(``2024-01-01``, ``1:30``) stay strings, as in YAML 1.2 and JSON. A scalar's
value is built by its tag's entry in ``BUILDERS``; a scalar that cannot be
its tag's value (a number longer than ``MAX_NUMBER_CHARS``, ``0b12``) makes
its builder raise a ``ValueError`` whose message says why and what to write instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import yaml

from agentkit.toolerrors import AgentKitError

__all__ = [
    "BUILDERS",
    "CORE_PREFIX",
    "IMPLICIT",
    "MAP_TAG",
    "MAX_NUMBER_CHARS",
    "MERGE_TAG",
    "SEQ_TAG",
    "STR_TAG",
    "WILDCARD",
    "Loader",
    "clip",
]

#: The longest a number may be written (Python's int() refuses past 4,300 digits).
MAX_NUMBER_CHARS: Final = 100
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Loader(_BaseLoader):  # type: ignore[misc]  # a dynamic base: CSafeLoader or SafeLoader
    """The safe loader's parser and resolver; ``yamlcomposer`` builds values from its events."""

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        # PyYAML's resolve, for a loader without path resolvers: the same tags,
        # from one lookup by first character (it runs once for every scalar),
        # except that dates and YAML 1.1 base-60 numbers (1:30) stay strings, as
        # in YAML 1.2 and JSON: a definition has no use for either, and a value
        # that silently became a datetime or 90 would fail far from its line.
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in IMPLICIT.get(value[:1], WILDCARD):
                    if regexp.match(value):
                        return STR_TAG if ":" in value and tag in _NUMBERS else str(tag)
            return STR_TAG
        return SEQ_TAG if kind is yaml.SequenceNode else MAP_TAG


class _ScalarError(AgentKitError, ValueError):
    """A scalar that cannot become a value; the message says why and what to write."""


def clip(value: Any, limit: int = 60) -> str:
    """``value`` as text to quote in a message, cut to about ``limit`` characters."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _integer(text: str) -> int:
    digits = _number_text(text, "an integer")
    sign = -1 if digits[:1] == "-" else 1
    digits = digits.lstrip("+-")
    try:
        if digits[:2] == "0b":
            return sign * int(digits[2:], 2)
        if digits[:2] == "0x":
            return sign * int(digits[2:], 16)
        if digits[:1] == "0" and digits != "0":
            return sign * int(digits, 8)  # YAML 1.1: a leading 0 means octal
        return sign * int(digits)
    except ValueError:
        raise _ScalarError(f"'{clip(text)}' is not an integer") from None


def _float(text: str) -> float:
    digits = _number_text(text, "a number").lower()
    if digits.lstrip("+-") in (".inf", ".nan"):
        return float(digits.replace(".", ""))
    try:
        return float(digits)
    except ValueError:
        raise _ScalarError(f"'{clip(text)}' is not a number") from None


def _number_text(text: str, what: str) -> str:
    """``text`` without underscores, after the checks every number gets."""
    if len(text) > MAX_NUMBER_CHARS:
        # Before any conversion: int() of a long decimal is slow and past 4,300
        # digits raises, and a huge value cannot be printed in a message anyway.
        raise _ScalarError(
            f"{what} of {len(text)} characters; numbers have at most {MAX_NUMBER_CHARS} "
            "(quote it to keep it as text)"
        )
    if ":" in text:
        raise _ScalarError(
            f"'{clip(text)}' is a YAML 1.1 base-60 number, which is not supported; "
            "write the number out, or quote it to keep it as text"
        )
    return text.replace("_", "")


def _boolean(text: str) -> bool:
    value = _BOOLEANS.get(text.lower())
    if value is None:
        raise _ScalarError(f"'{clip(text)}' is not true or false")
    return value


CORE_PREFIX: Final = "tag:yaml.org,2002:"
STR_TAG: Final = CORE_PREFIX + "str"
MAP_TAG: Final = CORE_PREFIX + "map"
SEQ_TAG: Final = CORE_PREFIX + "seq"
MERGE_TAG: Final = CORE_PREFIX + "merge"
_NUMBERS: Final = (CORE_PREFIX + "int", CORE_PREFIX + "float")
_BOOLEANS: Final = dict(yaml.SafeLoader.bool_values)
#: A scalar's value by its tag; each raises ``ValueError`` (its message says why and
#: what to write) for a text that cannot be the tag's value, and nothing else.
BUILDERS: Final[dict[str, Callable[[str], Any]]] = {
    STR_TAG: str,
    CORE_PREFIX + "null": lambda text: None,
    CORE_PREFIX + "bool": _boolean,
    CORE_PREFIX + "int": _integer,
    CORE_PREFIX + "float": _float,
}
WILDCARD: Final = tuple(_BaseLoader.yaml_implicit_resolvers.get(None, []))
IMPLICIT: Final = {
    first: tuple(
        (tag, regexp) for tag, regexp in (*resolvers, *WILDCARD) if tag != CORE_PREFIX + "timestamp"
    )
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    if first is not None
}
