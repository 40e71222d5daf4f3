"""A three-way merge of definition documents, key by key, for ``import openapi --update``.

``base`` is the document as the import generated it last time, ``ours`` the file as
the reviewer left it, ``theirs`` the document generated from the newer description.
Each key is merged on its own: a side that left it as in ``base`` takes the other
side's value; two sides that agree agree; two different changes are a clash, which
the reviewer's side wins (``Clash`` says what the description wanted instead).

Mappings are merged key by key at every depth; other values (strings, numbers,
lists such as ``enum`` or ``credentials``) whole. Parameter lists are merged item by
item, keyed by what the parameter *is* rather than by its name, so that a renamed
parameter is still the same one:

- an input is keyed by where the backend sends it: the first place under
  ``backend`` that mentions ``inputs.NAME`` (``http.query.id#0``; ``#n`` counts the
  inputs one string mentions, so two path parameters are ``http.path#0`` and
  ``http.path#1``); an input the backend never mentions, by its name;
- an output, and a nested parameter, by its name.

Inside ``backend``, ``inputs.NAME`` is compared by that key too, so a rename on one
side and a changed path or query on the other both survive.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, final

Location = tuple[str | int, ...]

_REFERENCE: Final = re.compile(r"\binputs\.([A-Za-z_][A-Za-z0-9_]*)")
_PLACEHOLDER: Final = re.compile("\x00([^\x00]*)\x00")
_BY_NAME: Final = "name:"


class _Missing:
    """A key one side does not have."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()


class _Keyed(dict[str, Any]):
    """A parameter list while it is merged: its items keyed by identity, in order."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Clash:
    """Both sides changed one key differently: the reviewer's value was kept.

    ``location`` is where the key is in the merged document (or would be, when the
    reviewer removed it); ``ours`` and ``theirs`` are ``MISSING`` for a removal.
    """

    location: Location
    ours: Any
    theirs: Any


def merge_documents(
    base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]
) -> tuple[dict[str, Any], list[Clash]]:
    """The merged document, and the keys both sides changed (the reviewer's side kept)."""
    # The common cases, without the canonical forms (a copy: the caller bumps the version)
    if ours in (base, theirs):
        return dict(theirs), []
    if theirs == base:
        return dict(ours), []
    sides = [_Canonical(document) for document in (base, ours, theirs)]
    clashes: list[tuple[tuple[str, ...], Any, Any]] = []
    base_value, ours_value, theirs_value = (side.value for side in sides)
    merged = _merge(base_value, ours_value, theirs_value, (), clashes)
    names: dict[str, str] = {}
    for side in reversed(sides):  # a key the merge dropped still needs a name: ours first
        names.update(side.names)
    for key, param in (merged.get("input_schema") or {}).get("parameters", {}).items():
        if isinstance(param, dict) and isinstance(param.get("name"), str):
            names[key] = param["name"]
    locations: dict[tuple[str, ...], Location] = {}
    document = _plain(merged, names, (), (), locations)
    return document, [
        Clash(
            location=_translate(path, locations, names),
            ours=_plain(ours, names, (), (), {}),
            theirs=_plain(theirs, names, (), (), {}),
        )
        for path, ours, theirs in clashes
    ]


def same_but_version(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """True when the documents differ in ``version`` at most (an update may bump it)."""

    def without(document: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in document.items() if key != "version"}

    return without(first) == without(second)


def signature(document: Any) -> tuple[str, ...] | None:
    """What an HTTP tool calls (source, method, path), input names left out; None otherwise.

    Two documents with one signature call the same operation: how a tool the
    reviewer renamed, and moved to another file, is found again.
    """
    backend = document.get("backend") if isinstance(document, dict) else None
    http = backend.get("http") if isinstance(backend, dict) else None
    if not isinstance(http, dict) or not isinstance(http.get("path"), str):
        return None
    path = _REFERENCE.sub("inputs", http["path"])
    return (str(http.get("source")), str(http.get("method", "GET")).upper(), path)


# -- the canonical form ----------------------------------------------------------------------


class _Canonical:
    """A document with parameter lists keyed by identity and input names replaced by it."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.ids = _input_ids(document.get("backend"))
        self.names = {key: name for name, key in self.ids.items()}
        value: dict[str, Any] = {}
        for key, item in document.items():
            if key == "input_schema":
                value[key] = _keyed(item, self.ids)
            elif key == "output_schema":
                value[key] = _keyed(item, {})
            elif key == "backend":
                value[key] = self._references(item)
            else:
                value[key] = item
        self.value = value

    def _references(self, value: Any) -> Any:
        if isinstance(value, str):
            return _REFERENCE.sub(self._placeholder, value)
        if isinstance(value, dict):
            return {key: self._references(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._references(item) for item in value]
        return value

    def _placeholder(self, match: re.Match[str]) -> str:
        key = self.ids.get(match.group(1))
        return match.group(0) if key is None else f"inputs.\x00{key}\x00"


def _input_ids(backend: Any) -> dict[str, str]:
    """Each input the backend mentions, by the first place it is mentioned."""
    ids: dict[str, str] = {}
    for where, text in _strings(backend, ""):
        names = list(dict.fromkeys(_REFERENCE.findall(text)))
        for number, name in enumerate(names):
            ids.setdefault(name, f"{where}#{number}")
    return ids


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def _keyed(value: Any, ids: dict[str, str]) -> Any:
    """``value`` with every named-parameter list under it keyed (by ``ids``, else name)."""
    if isinstance(value, dict):
        return {
            key: _parameters(item, ids) if key == "parameters" else _keyed(item, {})
            for key, item in value.items()
        }
    return value


def _parameters(value: Any, ids: dict[str, str]) -> Any:
    if not isinstance(value, list) or not all(
        isinstance(item, dict) and isinstance(item.get("name"), str) for item in value
    ):
        return _keyed(value, {})
    keyed = _Keyed()
    for item in value:
        key = ids.get(item["name"], _BY_NAME + item["name"])
        if key in keyed:  # a name given twice: the loader says so; keep both apart here
            key = f"{key}@{len(keyed)}"
        keyed[key] = _keyed(item, {})
    return keyed


# -- merging ---------------------------------------------------------------------------------


def _merge(
    base: Any,
    ours: Any,
    theirs: Any,
    path: tuple[str, ...],
    clashes: list[tuple[tuple[str, ...], Any, Any]],
) -> Any:
    if ours == theirs:
        return ours
    if base == ours:
        return theirs
    if base == theirs:
        return ours
    if isinstance(ours, dict) and isinstance(theirs, dict):
        before = base if isinstance(base, dict) else {}
        merged = _Keyed() if isinstance(ours, _Keyed) else {}
        for key in [*ours, *(key for key in theirs if key not in ours)]:
            value = _merge(
                before.get(key, MISSING),
                ours.get(key, MISSING),
                theirs.get(key, MISSING),
                (*path, key),
                clashes,
            )
            if value is not MISSING:
                merged[key] = value
        return merged
    clashes.append((path, ours, theirs))
    return ours


# -- back to a document ----------------------------------------------------------------------


def _plain(
    value: Any,
    names: dict[str, str],
    path: tuple[str, ...],
    location: Location,
    locations: dict[tuple[str, ...], Location],
) -> Any:
    """The canonical ``value`` as written in a definition, noting where keyed items went."""
    if isinstance(value, _Keyed):
        items = []
        for index, (key, item) in enumerate(value.items()):
            where: Location = (*location, index)
            keyed = (*path, key)
            locations[keyed] = where
            items.append(_plain(item, names, keyed, where, locations))
        return items
    if isinstance(value, dict):
        return {
            key: _plain(item, names, (*path, key), (*location, key), locations)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_plain(item, names, path, location, {}) for item in value]
    if isinstance(value, str) and "\x00" in value:
        return _PLACEHOLDER.sub(lambda match: names.get(match.group(1), match.group(1)), value)
    return value


def _translate(
    path: tuple[str, ...], locations: dict[tuple[str, ...], Location], names: dict[str, str]
) -> Location:
    """``path`` in the merged document; a parameter no longer there by its name."""
    location: list[str | int] = []
    for end in range(1, len(path) + 1):
        known = locations.get(path[:end])
        if known is not None:
            location = list(known)
        elif len(path) > 1 and path[end - 2 : end - 1] == ("parameters",):
            key = path[end - 1]
            location.append(names.get(key, key.removeprefix(_BY_NAME)))
        else:
            location.append(path[end - 1])
    return tuple(location)
