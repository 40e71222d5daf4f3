"""``paginate:``: cursor, page, offset and Link pagination against a loopback server,
bounded by pages, records, bytes and the call's one deadline."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from agentkit import (
    DefinitionError,
    Progress,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    load_tools,
    reporting_progress,
)
from agentkit.declarative.backends.http.pagination import next_link
from tests.declarative.conftest import WriteFile
from tests.support import loopback

SECRET = "page-k3y/with+odd=chars"
RECORDS = [{"id": number} for number in range(1, 24)]  # 23: pages of 10 are 10, 10, 3

TOOL = """\
name: list_records
version: 1.0.0
credentials: [api-key]
input_schema:
  parameters:
    - {{name: cursor, type: string, required: false}}
output_schema:
  parameters:
    - {{name: records, type: list}}
    - {{name: truncated, type: boolean}}
    - {{name: next_cursor, type: string, required: false}}
    - {{name: note, type: string, required: false}}
backend:
  http:
    url: {origin}/{path}
    auth: {{api_key: {{credential: api-key, in: query, name: key}}}}
    timeout: {{total: {total}}}
    paginate:
{paginate}
"""


def query(handler: loopback.Handler) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(handler.path).query))


def sent(handler: loopback.Handler, seen: list[dict[str, str]]) -> dict[str, str]:
    arguments = query(handler)
    seen.append(arguments)
    return arguments


def by_page(seen: list[dict[str, str]]) -> loopback.Behaviour:
    def behave(handler: loopback.Handler) -> None:
        arguments = sent(handler, seen)
        page, size = int(arguments.get("page", "1")), int(arguments.get("per_page", "10"))
        handler.reply(200, {"data": RECORDS[(page - 1) * size : page * size]})

    return behave


def by_offset(seen: list[dict[str, str]]) -> loopback.Behaviour:
    def behave(handler: loopback.Handler) -> None:
        arguments = sent(handler, seen)
        offset, limit = int(arguments.get("offset", "0")), int(arguments.get("limit", "10"))
        handler.reply(200, RECORDS[offset : offset + limit])

    return behave


def by_cursor(seen: list[dict[str, str]]) -> loopback.Behaviour:
    def behave(handler: loopback.Handler) -> None:
        arguments = sent(handler, seen)
        start = int(arguments.get("after", "0"))
        page = RECORDS[start : start + 10]
        more = start + 10 < len(RECORDS)
        reply: dict[str, Any] = {"items": page, "next": str(start + 10) if more else None}
        if handler.path.startswith("/terse") and not more:
            del reply["next"]  # the last page leaves the key out
        handler.reply(200, reply)

    return behave


def by_link(seen: list[dict[str, str]], elsewhere: str | None = None) -> loopback.Behaviour:
    def behave(handler: loopback.Handler) -> None:
        arguments = sent(handler, seen)
        page = int(arguments.get("p", "1"))
        headers = {}
        if page * 10 < len(RECORDS):
            target = elsewhere or "/linked"
            headers["Link"] = f'<{target}?p={page + 1}>; rel="next", </linked?p=3>; rel="last"'
        handler.reply(200, RECORDS[(page - 1) * 10 : page * 10], headers)

    return behave


@pytest.fixture
def seen() -> list[dict[str, str]]:
    return []


@pytest.fixture
def server(seen: list[dict[str, str]]) -> Iterator[str]:
    behaviours = {
        "/paged": by_page(seen),
        "/offset": by_offset(seen),
        "/cursor": by_cursor(seen),
        "/terse": by_cursor(seen),
        "/linked": by_link(seen),
        "/away": by_link(seen, elsewhere="http://other.invalid/linked"),
        "/slow": loopback.slow(0.2, RECORDS[:10]),
    }
    with loopback.serve(behaviours) as origin:
        yield origin


def tool_from(
    write: WriteFile, origin: str, path: str, paginate: str, *, total: float = 10, tool: str = TOOL
) -> Any:
    registry = ToolRegistry()
    text = tool.format(origin=origin, path=path, paginate=paginate, total=total)
    load_tools(write(text), registry=registry)
    (loaded,) = list(registry)
    return loaded


def run(tool: Any, arguments: dict[str, Any] | None = None) -> Any:
    executor = ToolExecutor(credentials={"api-key": SECRET})
    return executor.execute(tool, arguments or {}, raise_on_failure=False)


def ids(result: Any) -> list[int]:
    return [record["id"] for record in result.output["records"]]


PAGE = """\
      page: {param: page, size_param: per_page, size: 10}
      items: "{{ response.json.data }}"
      max_items: 1000"""
OFFSET = """\
      offset: {param: offset, size_param: limit, size: 10}
      max_items: 1000"""
CURSOR = """\
      cursor: {param: after, next: "{{ response.json.next }}"}
      items: "{{ response.json['items'] }}"
      max_items: 1000"""
LINK = """\
      link: {}
      max_items: 1000"""


@pytest.mark.parametrize(
    ("path", "paginate", "moves"),
    [
        pytest.param("paged", PAGE, ["1", "2", "3"], id="page"),
        pytest.param("offset", OFFSET, ["0", "10", "20"], id="offset"),
        pytest.param("cursor", CURSOR, [None, "10", "20"], id="cursor"),
        pytest.param("linked", LINK, [None, "2", "3"], id="link"),
    ],
)
def test_every_kind_gathers_all_pages_into_one_list(
    write: WriteFile, server: str, seen: list[dict[str, str]], path: str, paginate: str, moves: Any
) -> None:
    result = run(tool_from(write, server, path, paginate + "\n      output: records"))
    # next_cursor and note are null, which leaves them out.
    assert result.output == {"records": RECORDS, "truncated": False}
    param = {"paged": "page", "offset": "offset", "cursor": "after", "linked": "p"}[path]
    assert [arguments.get(param) for arguments in seen] == moves
    # The API key goes with every page, also one the Link header named.
    assert all(arguments["key"] == SECRET for arguments in seen)


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        pytest.param("max_pages: 2", (list(range(1, 21)), "3", 2), id="max-pages"),
        pytest.param("max_items: 15", (list(range(1, 16)), "2", 2), id="max-items-cuts-a-page"),
        pytest.param("max_items: 10", (list(range(1, 11)), "2", 1), id="max-items-at-a-page-end"),
    ],
)
def test_a_bound_stops_the_pages_and_says_where_to_go_on(
    write: WriteFile, server: str, seen: list[dict[str, str]], limit: str, expected: Any
) -> None:
    paginate = PAGE.replace("      max_items: 1000", f"      {limit}") + "\n      output: records"
    result = run(tool_from(write, server, "paged", paginate))
    records, cursor, requests = expected
    assert ids(result) == records
    assert result.output["truncated"] is True
    # A cut page is fetched again from its start: records may repeat, none is lost.
    assert result.output.get("next_cursor") == cursor
    assert len(seen) == requests


def test_a_cursor_key_left_out_ends_the_pages_with_default_none(
    write: WriteFile, server: str
) -> None:
    strict = run(tool_from(write, server, "terse", CURSOR + "\n      output: records"))
    assert "response.json has no key 'next'" in str(strict.error)
    lenient = CURSOR.replace("{{ response.json.next }}", "{{ response.json.next | default(none) }}")
    result = run(tool_from(write, server, "terse", lenient + "\n      output: records"))
    assert ids(result) == [record["id"] for record in RECORDS]


def test_the_cursor_kind_goes_on_from_the_cursor_the_model_gives(
    write: WriteFile, server: str, seen: list[dict[str, str]]
) -> None:
    paginate = CURSOR.replace("max_items: 1000", "max_pages: 1") + "\n      output: records"
    text = TOOL.replace("    auth:", '    query: {{after: "{{{{ inputs.cursor }}}}"}}\n    auth:')
    tool = tool_from(write, server, "cursor", paginate, tool=text)
    first = run(tool)
    assert (ids(first), first.output.get("next_cursor")) == (list(range(1, 11)), "10")
    second = run(tool, {"cursor": first.output.get("next_cursor")})
    assert (ids(second), second.output.get("next_cursor")) == (list(range(11, 21)), "20")
    assert seen[-1]["after"] == "10"


def test_a_link_to_another_origin_is_not_followed(
    write: WriteFile, server: str, seen: list[dict[str, str]]
) -> None:
    result = run(tool_from(write, server, "away", LINK + "\n      output: records"))
    assert ids(result) == list(range(1, 11))
    assert result.output["truncated"] is True
    assert result.output.get("note") == "the next page's link goes to another origin; not followed"
    assert len(seen) == 1


def test_max_bytes_keeps_the_pages_read_before_it(
    write: WriteFile, server: str, seen: list[dict[str, str]]
) -> None:
    # A page of ten records is about 120 bytes: the second page passes 200 in all.
    paginate = OFFSET + "\n      max_bytes: 200\n      output: records"
    result = run(tool_from(write, server, "offset", paginate))
    assert ids(result) == list(range(1, 11))
    assert result.output["truncated"] is True
    assert result.output.get("next_cursor") == "10"
    assert result.output.get("note") == "page 2 would pass max_bytes"


def test_timeout_total_covers_all_pages(write: WriteFile, server: str) -> None:
    paginate = "      offset: {param: offset}\n      max_pages: 50\n      output: records"
    # Each page takes 0.2 s; a generous total leaves the first page time under load.
    result = run(tool_from(write, server, "slow", paginate, total=1.5))
    assert isinstance(result.error, ToolExecutionError)
    message = str(result.error)
    assert "timed out after 1.5 s (timeout.total)" in message
    later = re.search(r"HttpCallError: page (\d+): GET ", message)
    assert later is not None, message
    assert int(later.group(1)) > 1  # the deadline ran across pages, not per page
    assert SECRET not in message
    assert "***" in message  # the API key in the URL, redacted


def test_each_page_is_reported_to_the_progress_reporter(
    write: WriteFile, server: str, seen: list[dict[str, str]]
) -> None:
    heard: list[Progress] = []
    with reporting_progress(heard.append):
        result = run(tool_from(write, server, "paged", PAGE + "\n      output: records"))
    assert result.succeeded
    assert [(step.done, step.total) for step in heard] == [(1, 5), (2, 5), (3, 5)]
    assert heard[0].message == "page 1 fetched (10 records, 10 in all)"
    assert heard[-1].message == "page 3 fetched (3 records, 23 in all)"


def test_a_failing_progress_reporter_does_not_break_the_call(
    write: WriteFile, server: str, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[Progress] = []

    def broken(progress: Progress) -> None:
        calls.append(progress)
        raise RuntimeError("listener down")

    with reporting_progress(broken):
        result = run(tool_from(write, server, "paged", PAGE + "\n      output: records"))
    assert ids(result) == [record["id"] for record in RECORDS]
    assert len(calls) == 1  # dropped after it failed
    assert "progress reporter failed" in caplog.text


def test_records_that_are_not_a_list_fail_the_call(write: WriteFile, server: str) -> None:
    paginate = (
        '      page: {param: page}\n      items: "{{ response.json }}"\n      output: records'
    )
    result = run(tool_from(write, server, "paged", paginate))
    assert "paginate.items: page 1 gave dict, not a list ({{ response.json }})" in str(result.error)


def test_a_failed_later_page_names_the_page(write: WriteFile, seen: list[dict[str, str]]) -> None:
    def second_fails(handler: loopback.Handler) -> None:
        page = int(query(handler).get("page", "1"))
        if page == 1:
            handler.reply(200, RECORDS[:10])
        else:
            handler.reply(500, {"error": f"broken; key was {SECRET}"})

    with loopback.serve({"/p": second_fails}) as origin:
        tool = tool_from(write, origin, "p", "      page: {param: page}\n      output: records")
        result = run(tool)
    message = str(result.error)
    assert message.startswith(
        "Tool 'list_records' failed: HttpCallError: page 2: GET http://127.0.0.1:"
    ), message
    assert "returned 500" in message
    assert SECRET not in message


# -- load time -----------------------------------------------------------------------------------


def load_problems(write: WriteFile, paginate: str, outputs: str | None = None) -> list[str]:
    text = TOOL.format(origin="https://api.example.com", path="x", paginate=paginate, total=5)
    if outputs is not None:
        start = text.index("output_schema:")
        end = text.index("backend:")
        text = text[:start] + outputs + text[end:]
    path: Path = write(text)
    with pytest.raises(DefinitionError) as info:
        load_tools(path)
    return [str(problem).split(": ", 1)[1] for problem in info.value.problems]


@pytest.mark.parametrize(
    ("paginate", "expected"),
    [
        pytest.param(
            "      output: records",
            "backend.http.paginate: give one of 'cursor', 'page', 'offset', 'link'",
            id="no-kind",
        ),
        pytest.param(
            "      page: {param: p}\n      link: {}\n      output: records",
            "backend.http.paginate: give one of 'cursor', 'page', 'offset', 'link', not 2",
            id="two-kinds",
        ),
        pytest.param(
            "      cursor: {param: after}\n      output: records",
            "backend.http.paginate.cursor: 'cursor' needs 'next', such as cursor: {param: after",
            id="cursor-without-next",
        ),
        pytest.param(
            "      page: {param: p, sise: 3}\n      output: records",
            "backend.http.paginate.page.sise: unknown key 'sise' (did you mean 'size'?)",
            id="unknown-kind-key",
        ),
        pytest.param(
            "      page: {param: p, size_param: n}\n      output: records",
            "backend.http.paginate.page.size_param: 'size_param' goes with 'size'",
            id="size-param-without-size",
        ),
        pytest.param(
            "      page: {param: p, size: 0}\n      output: records",
            "backend.http.paginate.page.size: expected a whole number of records above 0",
            id="size-zero",
        ),
        pytest.param(
            "      page: {param: p}\n      max_pages: 0\n      output: records",
            "backend.http.paginate.max_pages: expected a whole number from 1 to 1,000",
            id="max-pages",
        ),
        pytest.param(
            "      link: {}\n      output: recrods",
            "backend.http.paginate.output: 'recrods' is not an output parameter "
            "(did you mean 'records'?)",
            id="unknown-output",
        ),
        pytest.param(
            "      link: {}\n      output: truncated",
            "backend.http.paginate.output: output 'truncated' must be of type 'list'",
            id="output-not-a-list",
        ),
        pytest.param(
            "      link: {}",
            "backend.http.paginate.output: name the list output that receives the records, "
            "such as output: records",
            id="no-output",
        ),
        pytest.param(
            '      link: {}\n      items: "{{ response.jsn }}"\n      output: records',
            "backend.http.paginate.items: 'response.jsn' does not exist",
            id="items-reference",
        ),
        pytest.param(
            "      cursor: {param: a, next: \"{{ credentials['api-key'] }}\"}\n"
            "      output: records",
            "backend.http.paginate.cursor.next: unknown variable 'credentials'",
            id="no-credentials-in-page-templates",
        ),
        pytest.param(
            '      page: {param: a, start: "{{ response.status }}"}\n      output: records',
            "backend.http.paginate.page.start: unknown variable 'response'",
            id="start-sees-only-inputs",
        ),
    ],
)
def test_paginate_problems_are_located(write: WriteFile, paginate: str, expected: str) -> None:
    found = load_problems(write, paginate)
    assert any(problem.startswith(expected) for problem in found), found


def test_paginate_and_output_do_not_mix(write: WriteFile) -> None:
    paginate = "      link: {}\n      output: records\n    output: {records: '{{ response.json }}'}"
    (found,) = load_problems(write, paginate)
    assert found.startswith("backend.http.paginate: give 'paginate' or 'output', not both")


def test_the_model_must_be_told_when_records_are_cut_short(write: WriteFile) -> None:
    outputs = "output_schema:\n  parameters:\n    - {name: records, type: list}\n"
    (found,) = load_problems(write, "      link: {}\n      output: records", outputs)
    assert found.startswith(
        "backend.http.paginate: declare 'truncated' (boolean) or 'next_cursor' (string, "
        "required: false) in output_schema"
    )


def test_reports_are_checked_against_their_types(write: WriteFile) -> None:
    outputs = (
        "output_schema:\n  parameters:\n    - {name: records, type: list}\n"
        "    - {name: truncated, type: string}\n    - {name: next_cursor, type: string}\n"
    )
    found = load_problems(write, "      link: {}\n      output: records", outputs)
    assert "backend.http.paginate: output 'truncated' must be of type 'boolean'" in found
    assert (
        "backend.http.paginate: output 'next_cursor' must be 'required: false': it may be null"
        in found
    )


# -- the Link header ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "target"),
    [
        pytest.param('<https://a/x?p=2>; rel="next"', "https://a/x?p=2", id="plain"),
        pytest.param(
            '<https://a/1>; rel="prev", <https://a/3>; rel="next"', "https://a/3", id="2nd"
        ),
        pytest.param("<https://a/2>; rel=next", "https://a/2", id="unquoted"),
        pytest.param('<https://a/2>; title="x"; REL="Next Last"', "https://a/2", id="several-rels"),
        pytest.param('<https://a/1>; rel="prev"', None, id="no-next"),
        pytest.param('<https://a/2>; rel="nextpage"', None, id="not-next"),
        pytest.param("", None, id="empty"),
        pytest.param(None, None, id="absent"),
    ],
)
def test_next_link(value: str | None, target: str | None) -> None:
    assert next_link(value) == target


def test_a_hostile_link_header_is_read_in_one_pass() -> None:
    # Unclosed '<' by the ten thousand: a pattern that backtracked would take minutes.
    assert next_link("<" * 50_000 + ';rel="next' * 50_000) is None


def test_the_mcp_server_sends_each_page_as_a_progress_notification(
    write: WriteFile, server: str
) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from agentkit.mcp.server import build_server

    registry = ToolRegistry([tool_from(write, server, "paged", PAGE + "\n      output: records")])
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    async def main() -> Any:
        executor = ToolExecutor(credentials={"api-key": SECRET})
        async with Client(build_server(registry, executor)) as client:
            with_token = await client.call_tool("list_records", {}, progress_callback=on_progress)
            without = await client.call_tool("list_records", {})
            return with_token, without

    with_token, without = anyio.run(main)
    assert not with_token.is_error
    assert not without.is_error
    assert len(with_token.structured_content["records"]) == len(RECORDS)
    assert heard == [
        (1, 5, "page 1 fetched (10 records, 10 in all)"),
        (2, 5, "page 2 fetched (10 records, 20 in all)"),
        (3, 5, "page 3 fetched (3 records, 23 in all)"),
    ]
