"""Names for tools and parameters: snake_case, valid for every provider, unique."""

from __future__ import annotations

import re
from typing import Final

#: The longest tool name every LLM provider accepts.
MAX_NAME: Final = 64

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")


def snake_case(text: str) -> str:
    """``listPetsByID`` -> ``list_pets_by_id``; ``x-request-id`` -> ``x_request_id``."""
    words = _NOT_WORD.sub("_", _WORD_BOUNDARY.sub("_", text))
    return "_".join(word for word in words.lower().split("_") if word)


def shorten(name: str, limit: int = MAX_NAME) -> str:
    """``name`` within ``limit`` characters, in whole words, readable and the same each run.

    Words that repeat an earlier one go first (``get_github_actions_..._actions_...``),
    then words before the last, from the end, so the name keeps its start and its last
    word. Two names cut alike are told apart where names are handed out (``NameTable``:
    ``_2``), and the import reports it.
    """
    if len(name) <= limit:
        return name
    unique = list(dict.fromkeys(word for word in name.split("_") if word))
    if len("_".join(unique)) <= limit:
        return "_".join(unique)
    *leading, last = unique
    kept: list[str] = []
    for word in leading:
        if len("_".join([*kept, word, last])) > limit:
            break
        kept.append(word)
    if not kept:  # one long word: cut where the limit falls
        return "_".join(unique)[:limit].rstrip("_")
    return "_".join([*kept, last])


def identifier(text: str, *, fallback: str, prefix: str) -> str:
    """A name of letters, digits and ``_`` starting with a letter, from ``text``."""
    name = snake_case(text) or fallback
    if not name[0].isalpha():
        name = f"{prefix}_{name}"
    return shorten(name)


def operation_name(operation_id: str | None, method: str, path: str) -> str:
    """The tool name for an operation: its ``operationId``, else method and path."""
    if operation_id and snake_case(operation_id):
        return identifier(operation_id, fallback="operation", prefix="op")
    return identifier(f"{method} {path}", fallback=method.lower(), prefix="op")


def name_key(name: str) -> str:
    """What the loader compares names by: case, ``-`` and ``_`` ignored."""
    return name.lower().replace("_", "").replace("-", "")


class NameTable:
    """Hands out unique names: a taken one gets ``_2``, ``_3``... (cut to fit)."""

    def __init__(self, taken: tuple[str, ...] = ()) -> None:
        self._keys = {name_key(name) for name in taken}

    def claim(self, wanted: str, limit: int = MAX_NAME) -> str:
        name, number = wanted, 1
        while name_key(name) in self._keys:
            number += 1
            suffix = f"_{number}"
            name = wanted[: limit - len(suffix)].rstrip("_") + suffix
        self._keys.add(name_key(name))
        return name

    def has(self, name: str) -> bool:
        return name_key(name) in self._keys
