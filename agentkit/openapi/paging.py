"""``paginate:`` for operations whose pages are plain to see, and a note for the rest.

Only a GET whose records are the whole answer or its one list, and whose way to the
next page the description spells out, is paginated:

- **link**: the records are the answer (a JSON array), the 2xx response declares a
  ``Link`` header and the query a ``page`` parameter (GitHub's ``per_page`` and
  ``page``). The first request is sent as the model asked; then ``rel="next"``.
- **page** / **offset**: the same without a ``Link`` header, by an integer query
  parameter ``page`` (from 1) or ``offset`` (from 0); where the model asked to start
  is ``start``.
- **cursor**: the answer is an object with one list and one string field naming the
  next cursor (``next_cursor``, ``next_page_token``...), and the query has one cursor
  parameter (``cursor``, ``page_token``...).

An operation with a query parameter of those names that fits none of them gets a
note saying so, and keeps its single-page reply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.openapi.naming import snake_case

#: Query parameters that say an operation is paged, by kind.
_PAGE: Final = frozenset({"page"})
_OFFSET: Final = frozenset({"offset"})
_CURSOR_PARAMETERS: Final = frozenset(
    {"cursor", "page_token", "next_token", "after", "starting_after", "continuation_token"}
)
#: Fields of an answer that give the next page's cursor.
_NEXT_FIELDS: Final = frozenset(
    {"next_cursor", "cursor", "next_page_token", "next_token", "continuation_token"}
)
#: The outputs a paginated tool reports besides its records.
_TRUNCATED: Final = {"name": "truncated", "type": "boolean"}
_NEXT: Final = {"name": "next_cursor", "type": "string", "required": False}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Paged:
    """A paginated tool's outputs, ``http`` keys and query, and what to note."""

    outputs: list[dict[str, Any]]
    replies: dict[str, Any]
    query: dict[str, Any]
    note: str


def paginate(
    method: str,
    query: dict[str, Any],
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    replies: dict[str, Any],
    link_header: bool,
) -> Paged | str | None:
    """The paginated form of a tool, a note when it looks paged but is not plain, or None.

    ``query`` maps each query name to its template, ``inputs`` and ``outputs`` are the
    tool's parameters, ``replies`` its ``output``/``responses`` keys, ``link_header``
    whether its 2xx response declares ``Link``.
    """
    paged = {name for name in query if snake_case(name) in _PAGE | _OFFSET | _CURSOR_PARAMETERS}
    if method != "GET" or not paged:
        return None
    found = _whole_answer(query, inputs, outputs, replies, link_header) or _cursor(
        query, outputs, replies
    )
    if found is not None:
        return found
    shown = ", ".join(sorted(paged))
    return (
        f"looks paged (query {shown}), but the way to the next page is not plain: one page "
        "a call; see paginate: in docs/tool-definitions.md"
    )


def _whole_answer(
    query: dict[str, Any],
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    replies: dict[str, Any],
    link_header: bool,
) -> Paged | None:
    """Link, page or offset paging of an answer that is one JSON array."""
    if replies.get("output") != {"items": "{{ response.json }}"}:
        return None
    records = [output for output in outputs if output["name"] == "items"]
    by_name = {snake_case(name): name for name in query}
    kinds = [name for name in ("page", "offset") if name in by_name]
    if len(kinds) != 1:
        return None
    (kind,) = kinds
    param = by_name[kind]
    given = _input_of(query[param], inputs)
    if given is None or given.get("type") != "integer":
        return None
    if link_header:
        return Paged(
            outputs=[*records, _TRUNCATED],
            replies={"paginate": {"link": {}, "output": "items"}},
            query=query,
            note=f'paginated: follows the Link header\'s rel="next" from the {param!r} asked for'
            + _dropped(replies),
        )
    rest = {name: value for name, value in query.items() if name != param}
    settings = {"param": param, "start": "{{ inputs." + given["name"] + " }}"}
    return Paged(
        outputs=[*records, _TRUNCATED, _NEXT],
        replies={"paginate": {kind: settings, "output": "items"}},
        query=rest,
        note=f"paginated: by the query parameter {param!r}, from the one asked for"
        + _dropped(replies),
    )


def _cursor(
    query: dict[str, Any], outputs: list[dict[str, Any]], replies: dict[str, Any]
) -> Paged | None:
    """Cursor paging of an object answer with one list and one next-cursor field."""
    if replies.get("output") is not None:
        return None
    params = [name for name in query if snake_case(name) in _CURSOR_PARAMETERS]
    lists = [output for output in outputs if output.get("type") == "list"]
    fields = [
        output
        for output in outputs
        if output["name"] in _NEXT_FIELDS and output.get("type") == "string"
    ]
    if len(params) != 1 or len(lists) != 1 or len(fields) != 1:
        return None
    records = lists[0]
    if records["name"] in ("truncated", "next_cursor"):
        return None
    (param,) = params
    next_cursor = "{{ response.json." + fields[0]["name"] + " | default(none) }}"
    paginate = {
        "cursor": {"param": param, "next": next_cursor},
        "items": "{{ response.json." + records["name"] + " }}",
        "output": records["name"],
    }
    return Paged(
        outputs=[records, _TRUNCATED, _NEXT],
        replies={"paginate": paginate},
        query=query,
        note=f"paginated: the {fields[0]['name']!r} of each answer is the {param!r} of the next"
        + _dropped(replies),
    )


def _input_of(template: Any, inputs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The input a query template sends as it is (``{{ inputs.page }}``), if any."""
    for given in inputs:
        if template == "{{ inputs." + given["name"] + " }}":
            return given
    return None


def _dropped(replies: dict[str, Any]) -> str:
    if "responses" not in replies:
        return ""
    return "; error replies are not mapped to outputs (a paginated call fails on one)"
