"""An answer cut into pages: which lists and strings are cut, and where.

The largest lists and strings reached through objects (not inside list items) are
cut, largest first, until what stays whole takes at most half the budget; each page
is the answer with a piece of every cut field, filled in order to the budget. A list
is cut between items, a string at a code point and only where its schema lets a part
pass (no ``enum``, ``pattern``, ``format``...). ``agentkit.paging`` checks the pages
against the tool's own schema and keeps them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, final

__all__ = ["PagePart", "fits", "page_answer", "size_of"]

# One encoder for every measure: json.dumps with options builds a new one each call. A
# value JSON has no form for, which the executor's output check refuses before any
# answer is paged, is measured as its text if it comes here all the same.
_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def size_of(value: Any) -> int:
    """The bytes ``value`` takes as compact UTF-8 JSON: what a budget counts."""
    text = _compact(value)
    # A lone surrogate counts as the three bytes its replacement takes on the wire.
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def fits(value: Any, budget: int) -> bool:
    """Whether ``value`` takes at most ``budget`` bytes (``size_of``), told cheaply when it
    is well within: ``repr`` costs a fifth of encoding a small answer, and compact JSON
    takes at most twice its length (a quote escaped, ``\\x01`` written ``\\u0001``), four
    times when a character is not ASCII (UTF-8 takes up to four bytes for one)."""
    shown = repr(value)
    if len(shown) * (2 if shown.isascii() else 4) <= budget:
        return True
    return size_of(value) <= budget


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PagePart:
    """What one page holds of one cut field: ``count`` items (or characters, for a
    string) from ``offset``, of ``total``."""

    path: str
    unit: str  # "items" or "characters"
    offset: int
    count: int
    total: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "unit": self.unit,
            "offset": self.offset,
            "count": self.count,
            "total": self.total,
        }


class _Cut:
    """A list or string of an answer that pages hold in pieces."""

    __slots__ = ("path", "size", "value")

    def __init__(self, path: tuple[str, ...], value: list[Any] | str, size: int) -> None:
        self.path = path
        self.value = value
        self.size = size


def page_answer(
    output: dict[str, Any], schema: Mapping[str, Any], budget: int
) -> tuple[list[dict[str, Any]], list[tuple[PagePart, ...]], list[int]] | None:
    """``output`` (over ``budget`` bytes) as pages, each with its parts and size.

    ``schema`` is the output's JSON Schema: only the lists and strings it lets be cut
    are cut. None when nothing can be cut, or cutting gains nothing. The caller checks
    the pages against the tool's own schema before giving any.
    """
    whole = size_of(output)
    candidates = sorted(_cuttable(output, schema, ()), key=lambda cut: -cut.size)
    chosen: list[_Cut] = []
    kept = whole
    for cut in candidates:
        if kept <= budget // 2:
            break
        chosen.append(cut)
        kept -= cut.size - 2  # what stays: [] or ""
    if not chosen:
        return None
    chosen.sort(key=lambda cut: cut.path)  # document order: each field cut where it stands
    skeleton = output
    for cut in chosen:
        skeleton = _replaced(skeleton, cut.path, [] if isinstance(cut.value, list) else "")
    base = size_of(skeleton)
    pages: list[dict[str, Any]] = []
    parts: list[tuple[PagePart, ...]] = []
    sizes: list[int] = []
    for held, used in _poured(chosen, max(budget - base, 1)):
        page = skeleton
        page_parts = []
        for cut, (offset, piece) in zip(chosen, held, strict=True):
            page = _replaced(page, cut.path, piece)
            page_parts.append(
                PagePart(
                    path=".".join(cut.path),
                    unit="items" if isinstance(cut.value, list) else "characters",
                    offset=offset,
                    count=len(piece),
                    total=len(cut.value),
                )
            )
        pages.append(page)
        parts.append(tuple(page_parts))
        sizes.append(base + used)
    if len(pages) < 2:
        return None
    return pages, parts, sizes


_Held = list[tuple[int, "list[Any] | str"]]


def _poured(chosen: list[_Cut], room: int) -> Iterator[tuple[_Held, int]]:
    """The cut fields poured, in order, into pages of ``room`` bytes: each page as
    (offset, piece) per field, and the bytes its pieces take (``used``, never 0 on a
    page that holds something: an item or a character takes a byte at least)."""
    progress = [0] * len(chosen)  # where each field's next piece starts
    pieces: dict[int, tuple[int, list[Any] | str]] = {}
    used = 0

    def page() -> tuple[_Held, int]:
        held: _Held = [
            pieces.get(index, (progress[index], [] if isinstance(cut.value, list) else ""))
            for index, cut in enumerate(chosen)
        ]
        return held, used

    for index, cut in enumerate(chosen):
        value = cut.value
        if isinstance(value, list):
            start = 0
            for position, item in enumerate(value):
                cost = size_of(item) + 1  # and its comma
                if used and used + cost > room:
                    pieces[index] = (start, value[start:position])
                    yield page()
                    pieces, used, start = {}, 0, position
                used += cost
            pieces[index] = (start, value[start:])
        else:
            offset = 0
            while offset < len(value):
                fits = _prefix_within(value, offset, room - used)
                if not fits and used:  # no room left on this page: the next one
                    pieces[index] = (offset, "")
                    yield page()
                    pieces, used = {}, 0
                    continue
                piece = value[offset : offset + max(fits, 1)]
                pieces[index] = (offset, piece)
                used += size_of(piece) - 2
                offset += len(piece)
                if offset < len(value):
                    yield page()
                    pieces, used = {}, 0
        progress[index] = len(value)
    yield page()


def _prefix_within(text: str, offset: int, room: int) -> int:
    """The most characters of ``text`` from ``offset`` whose JSON takes at most ``room`` bytes."""
    if room <= 0:
        return 0
    window = text[offset : offset + room]  # a character takes a byte at least
    if size_of(window) - 2 <= room:
        return len(window)
    low, high = 0, len(window)
    while low < high:  # bounded: the window halves each round
        middle = (low + high + 1) // 2
        if size_of(window[:middle]) - 2 <= room:
            low = middle
        else:
            high = middle - 1
    return low


def _cuttable(value: Any, schema: Any, path: tuple[str, ...]) -> Iterator[_Cut]:
    """The lists and strings of ``value`` reached through objects that ``schema`` lets
    be cut: a list's items are not looked into, nor are the members of a union."""
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        child = _property_schema(schema, key)
        if child is None:
            continue
        where = (*path, key)
        if isinstance(item, dict):
            yield from _cuttable(item, child, where)
            continue
        kind = "array" if isinstance(item, list) else "string" if isinstance(item, str) else None
        if kind is not None and len(item) > 1 and _may_cut(child, kind):
            yield _Cut(where, item, size_of(item))


_UNSURE: Final = ("anyOf", "oneOf", "allOf", "$ref", "not", "if", "patternProperties")


def _property_schema(schema: Any, key: str) -> Mapping[str, Any] | None:
    """The schema of property ``key``; None when it cannot be told simply (a union)."""
    if schema is True:
        return {}
    if not isinstance(schema, Mapping) or any(word in schema for word in _UNSURE):
        return None
    properties = schema.get("properties") or {}
    if key in properties:
        child = properties[key]
        return child if isinstance(child, Mapping) else ({} if child is True else None)
    extra = schema.get("additionalProperties", True)
    if extra is True:
        return {}
    return extra if isinstance(extra, Mapping) else None


def _may_cut(schema: Mapping[str, Any], kind: str) -> bool:
    if any(word in schema for word in _UNSURE):
        return False
    declared = schema.get("type")
    if declared is not None and declared != kind:
        return False
    if kind == "array":
        return (
            not schema.get("minItems")
            and "contains" not in schema
            and ("prefixItems" not in schema and not isinstance(schema.get("items"), list))
        )
    # A part of a string must pass what the whole did.
    return not any(
        word in schema
        for word in (
            "enum",
            "const",
            "pattern",
            "format",
            "minLength",
            "contentEncoding",
            "contentMediaType",
        )
    )


def _replaced(value: dict[str, Any], path: tuple[str, ...], new: Any) -> dict[str, Any]:
    """A copy of ``value`` with ``path`` set to ``new``: the objects on the path copied,
    everything else shared."""
    copied = dict(value)
    if len(path) == 1:
        copied[path[0]] = new
    else:
        copied[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copied
