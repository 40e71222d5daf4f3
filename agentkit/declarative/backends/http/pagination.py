"""``paginate:``: one tool call that follows an API's pages, bounded, as one list.

Four kinds, one of them per definition:

- ``cursor: {param, next}``: ``next`` (a template over ``response``) gives the
  cursor, sent as the query parameter ``param`` of the next request; ``null``,
  ``""`` or a page without records ends it.
- ``page: {param, start, size_param, size}`` and ``offset: {...}``: the page
  number (from ``start``, +1 a page) or the offset (from ``start``, + the
  records received) goes in ``param``; an empty page, or one shorter than
  ``size``, is the last.
- ``link: {}``: the ``Link: <...>; rel="next"`` header (RFC 8288), followed
  only within the definition's origin; a link elsewhere stops with a note.

``items`` (a template over ``response``) says where a page's records are. The
pages stop at ``max_pages``, ``max_items`` or ``max_bytes`` (the bodies read in
all), and all of them within the call's ``timeout.total``. The result is the
records as one list output, plus the outputs the definition declares of
``truncated`` (more pages were left), ``next_cursor`` (where to go on) and
``note`` (why it stopped early). After each page the active progress reporter
(``agentkit.progress``) hears ``page N fetched``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, final
from urllib.parse import parse_qsl, urljoin, urlsplit

from agentkit.declarative.problems import Location, Problems, check_keys
from agentkit.declarative.templates import Template
from agentkit.progress import report_progress
from agentkit.toolerrors import PaginationError
from agentkit.toolschema import ToolSchema, is_integer

__all__ = [
    "KINDS",
    "KIND_KEYS",
    "PAGINATE_KEYS",
    "PageFetch",
    "Pagination",
    "PaginationError",
    "collect",
    "next_link",
    "parse_pagination",
]

Kind = Literal["cursor", "page", "offset", "link"]
KINDS: Final[tuple[Kind, ...]] = ("cursor", "page", "offset", "link")
PAGINATE_KEYS: Final = (*KINDS, "items", "output", "max_pages", "max_items", "max_bytes")
REPORTS: Final = {"truncated": "boolean", "next_cursor": "string", "note": "string"}
DEFAULT_ITEMS: Final = "{{ response.json }}"
DEFAULT_MAX_PAGES: Final = 5
DEFAULT_MAX_ITEMS: Final = 100
DEFAULT_MAX_BYTES: Final = 10 * 1024 * 1024
LIMITS: Final = {"max_pages": 1_000, "max_items": 100_000, "max_bytes": 1024**3}
KIND_KEYS: Final = {
    "cursor": (("param", "next"), ("param", "next")),
    "page": (("param", "start", "size_param", "size"), ("param",)),
    "offset": (("param", "start", "size_param", "size"), ("param",)),
    "link": ((), ()),
}
# No '<' inside a target: an unclosed '<' ends at the next one, so reading is linear.
_LINK: Final = re.compile(r"<([^<>]*)>([^<]*)")
_REL: Final = re.compile(r";\s*rel\s*=\s*(?:\"([^\"]*)\"|([^\s;,]+))", re.IGNORECASE)

# Compiles a template that may use the given roots, reporting its problems; None if broken.
Compile = Callable[[str, Location, Sequence[str]], "Template | None"]
PAGE_ROOTS: Final = ("inputs", "response")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Pagination:
    """A checked ``paginate:`` mapping."""

    kind: Kind
    param: str | None = None  # the query parameter that moves through the pages
    next: Template | None = None  # cursor: where the next cursor is
    start: int | Template | None = None  # page and offset: the first value (1 or 0)
    size_param: str | None = None  # page and offset: the parameter for the page size
    size: int | None = None  # page and offset: a page shorter than this is the last
    items: Template
    output: str
    reports: frozenset[str] = frozenset()  # which of REPORTS the output schema declares
    max_pages: int = DEFAULT_MAX_PAGES
    max_items: int = DEFAULT_MAX_ITEMS
    max_bytes: int = DEFAULT_MAX_BYTES


# -- load time ----------------------------------------------------------------------------------


def parse_pagination(
    raw: Any, location: Location, outputs: ToolSchema, compile_: Compile, problems: Problems
) -> Pagination | None:
    """Check ``paginate:`` against the output schema, its templates compiled with ``compile_``."""
    if not check_keys(raw, PAGINATE_KEYS, location, problems, "paginate"):
        return None
    start = len(problems)
    kinds = [kind for kind in KINDS if kind in raw]
    if len(kinds) != 1:
        problems.add(
            location,
            "give one of "
            + ", ".join(f"'{kind}'" for kind in KINDS)
            + (f", not {len(kinds)}" if kinds else ""),
        )
        return None
    (kind,) = kinds
    settings = raw[kind] if raw[kind] is not None else {}
    here = (*location, kind)
    allowed, required = KIND_KEYS[kind]
    if not check_keys(settings, allowed, here, problems, f"paginate.{kind}"):
        return None
    for key in required:
        if key not in settings:
            problems.add(here, f"'{kind}' needs '{key}'" + _KIND_HINTS[kind])
    values: dict[str, Any] = {}
    for key in ("param", "size_param"):
        if key in settings:
            if isinstance(settings[key], str) and settings[key]:
                values[key] = settings[key]
            else:
                problems.add((*here, key), "expected a query parameter name")
    if "next" in settings:
        values["next"] = _template(settings["next"], (*here, "next"), compile_, problems)
    if "start" in settings:
        values["start"] = _start(settings["start"], (*here, "start"), compile_, problems)
    if "size" in settings:
        size = settings["size"]
        if is_integer(size) and size >= 1:
            values["size"] = size
        else:
            problems.add((*here, "size"), "expected a whole number of records above 0")
    if "size_param" in settings and "size" not in settings:
        problems.add((*here, "size_param"), "'size_param' goes with 'size', the value it sends")
    items = _template(raw.get("items", DEFAULT_ITEMS), (*location, "items"), compile_, problems)
    output = _output(raw.get("output"), (*location, "output"), outputs, problems)
    reports = _reports(location, outputs, problems)
    for key, default in (
        ("max_pages", DEFAULT_MAX_PAGES),
        ("max_items", DEFAULT_MAX_ITEMS),
        ("max_bytes", DEFAULT_MAX_BYTES),
    ):
        value = raw.get(key, default)
        if not is_integer(value) or not 1 <= value <= LIMITS[key]:
            problems.add((*location, key), f"expected a whole number from 1 to {LIMITS[key]:,}")
        else:
            values[key] = value
    if len(problems) > start or items is None or output is None:
        return None
    return Pagination(kind=kind, items=items, output=output, reports=reports, **values)


_KIND_HINTS: Final = {
    "cursor": ', such as cursor: {param: after, next: "{{ response.json.next_cursor }}"}',
    "page": ", such as page: {param: page, start: 1, size_param: per_page, size: 50}",
    "offset": ", such as offset: {param: offset, size_param: limit, size: 50}",
    "link": "",
}


def _template(raw: Any, location: Location, compile_: Compile, problems: Problems) -> Any:
    if not isinstance(raw, str):
        problems.add(location, "expected a template such as '{{ response.json.items }}'")
        return None
    return compile_(raw, location, PAGE_ROOTS)


def _start(raw: Any, location: Location, compile_: Compile, problems: Problems) -> Any:
    if isinstance(raw, str):
        return compile_(raw, location, ("inputs",))
    if is_integer(raw) and raw >= 0:
        return raw
    problems.add(location, "expected a whole number, 0 or more, or a template giving one")
    return None


def _output(raw: Any, location: Location, outputs: ToolSchema, problems: Problems) -> str | None:
    if not isinstance(raw, str) or not raw:
        lists = [name for name in outputs.names if outputs[name].type == "list"]
        problems.add(
            location,
            "name the list output that receives the records"
            + (f", such as output: {lists[0]}" if lists else "; declare one in output_schema"),
        )
        return None
    if raw not in outputs:
        hint = problems.did_you_mean(raw, outputs.names)
        problems.add(location, f"'{raw}' is not an output parameter{hint}")
        return None
    if outputs[raw].type != "list":
        problems.add(location, f"output '{raw}' must be of type 'list' to hold the records")
        return None
    return raw


def _reports(location: Location, outputs: ToolSchema, problems: Problems) -> frozenset[str]:
    """The declared outputs among REPORTS; at least one says the list may be cut short."""
    declared = frozenset(name for name in REPORTS if name in outputs)
    for name in declared:
        parameter = outputs[name]
        if parameter.type != REPORTS[name]:
            problems.add(location, f"output '{name}' must be of type '{REPORTS[name]}'")
        elif name != "truncated" and parameter.required:
            problems.add(location, f"output '{name}' must be 'required: false': it may be null")
    if not declared & {"truncated", "next_cursor"}:
        problems.add(
            location,
            "declare 'truncated' (boolean) or 'next_cursor' (string, required: false) in "
            "output_schema, so the model knows when the records are cut short",
        )
    return declared


# -- call time ----------------------------------------------------------------------------------


class PageView(Protocol):
    """What collecting needs of a page: its headers and its body size."""

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def size(self) -> int: ...


class PageFetch(Protocol):
    """Fetch one page: the view, or None when it was over ``limit`` bytes (after the first)."""

    def __call__(
        self, url: str, params: list[tuple[str, str]], /, *, limit: int | None, page: int
    ) -> PageView | None: ...


@dataclass(slots=True)
class _Position:
    """Where the next request goes: a URL and its parameters, and how to say it to the model."""

    url: str
    params: list[tuple[str, str]]
    cursor: str | None


def collect(
    pagination: Pagination,
    *,
    inputs: Mapping[str, Any],
    url: str,
    params: Sequence[tuple[str, str]],
    keep: Sequence[tuple[str, str]],
    origin: str,
    fetch: PageFetch,
    deadline: float,
) -> dict[str, Any]:
    """Fetch the pages from ``url`` with ``params``; the records and the declared reports.

    ``keep`` are parameters every request carries, also one that follows a
    ``Link`` (an API key sent in the query).
    """
    records: list[Any] = []
    position = _first(pagination, inputs, url, list(params), deadline)
    used = 0
    pages = 0
    note: str | None = None
    truncated = False
    while True:
        limit = None if pages == 0 else pagination.max_bytes - used
        view = fetch(position.url, position.params, limit=limit, page=pages + 1)
        if view is None:
            truncated, note = True, f"page {pages + 1} would pass max_bytes"
            break
        pages += 1
        used += view.size
        context = {"inputs": inputs, "response": view}
        found = pagination.items.render(context, deadline=deadline)
        if not isinstance(found, list):
            raise PaginationError(
                f"paginate.items: page {pages} gave {type(found).__name__}, not a list "
                f"({pagination.items.source})"
            )
        room = pagination.max_items - len(records)
        if len(found) > room:
            # The page is cut: going on from this page again repeats records, never loses one.
            records.extend(found[:room])
            truncated, note = True, None
            break
        records.extend(found)
        report_progress(
            done=pages,
            total=pagination.max_pages,
            message=f"page {pages} fetched ({len(found)} records, {len(records)} in all)",
        )
        following = _next(pagination, position, view, found, context, keep, origin, deadline)
        if isinstance(following, str):
            truncated, note = True, following
            break
        if following is None:
            break
        position = following
        if pages >= pagination.max_pages or len(records) >= pagination.max_items:
            truncated = True
            break
        if used >= pagination.max_bytes:
            truncated, note = True, "max_bytes reached"
            break
    reports: dict[str, Any] = {
        "truncated": truncated,
        "next_cursor": position.cursor if truncated else None,
        "note": note,
    }
    result = {pagination.output: records}
    result.update((name, reports[name]) for name in pagination.reports)
    return result


def _first(
    pagination: Pagination,
    inputs: Mapping[str, Any],
    url: str,
    params: list[tuple[str, str]],
    deadline: float,
) -> _Position:
    if pagination.kind == "link":
        return _Position(url, params, None)
    if pagination.kind == "cursor":
        # A cursor the caller gave (from an input) is where these records start.
        given = [value for name, value in params if name == pagination.param]
        return _Position(url, params, given[-1] if given else None)
    start = pagination.start
    if isinstance(start, Template):
        start = start.render({"inputs": inputs}, deadline=deadline)
    if start is None:
        start = 1 if pagination.kind == "page" else 0
    if not is_integer(start) or start < 0:
        raise PaginationError(
            f"paginate.{pagination.kind}.start: expected a whole number, 0 or more, got {start!r}"
        )
    if pagination.size_param is not None and pagination.size is not None:
        params = _set(params, pagination.size_param, str(pagination.size))
    return _moved(pagination, url, params, int(start))


def _moved(pagination: Pagination, url: str, params: list[tuple[str, str]], at: int) -> _Position:
    assert pagination.param is not None
    return _Position(url, _set(params, pagination.param, str(at)), str(at))


def _set(params: list[tuple[str, str]], name: str, value: str) -> list[tuple[str, str]]:
    """``params`` with ``name`` sent once, as ``value``."""
    return [(key, item) for key, item in params if key != name] + [(name, value)]


def _next(
    pagination: Pagination,
    position: _Position,
    view: PageView,
    found: list[Any],
    context: Mapping[str, Any],
    keep: Sequence[tuple[str, str]],
    origin: str,
    deadline: float,
) -> _Position | str | None:
    """The next page's position; None after the last page; a note when it stops early."""
    if not found:
        return None
    kind = pagination.kind
    if kind == "cursor":
        assert pagination.next is not None
        assert pagination.param is not None
        cursor = pagination.next.render(context, deadline=deadline)
        if cursor is None or cursor == "":
            return None
        if isinstance(cursor, bool) or not isinstance(cursor, (str, int)):
            raise PaginationError(
                f"paginate.cursor.next: expected text or a number, got {type(cursor).__name__}"
            )
        cursor = str(cursor)
        return _Position(position.url, _set(position.params, pagination.param, cursor), cursor)
    if kind == "link":
        target = next_link(view.headers.get("Link"))
        if target is None:
            return None
        absolute = urljoin(position.url, target)
        parts = urlsplit(absolute)
        if f"{parts.scheme}://{parts.netloc}".lower() != origin.lower():
            return "the next page's link goes to another origin; not followed"
        sent = {name for name, _ in parse_qsl(parts.query, keep_blank_values=True)}
        return _Position(absolute, [pair for pair in keep if pair[0] not in sent], None)
    if pagination.size is not None and len(found) < pagination.size:
        return None
    assert position.cursor is not None
    step = 1 if kind == "page" else len(found)
    return _moved(pagination, position.url, position.params, int(position.cursor) + step)


def next_link(value: str | None) -> str | None:
    """The target of the first ``rel="next"`` link in a ``Link`` header (RFC 8288), or None."""
    if not value:
        return None
    for match in _LINK.finditer(value):
        for rel in _REL.finditer(match.group(2)):
            relations = (rel.group(1) or rel.group(2) or "").lower().split()
            if "next" in relations:
                return match.group(1).strip()
    return None
