"""A tool's ``max_output`` over MCP, end to end: ``agentkit serve`` over stdio and streamable
HTTP, the SDK's own clients. A long answer comes as pages, each ``structuredContent``
valid against the listed output schema, with a text note (and ``_meta``) naming the
continuation; following it to the end gives the whole answer, and runs the tool once. A
continuation is the session's that was given it."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import jsonschema
import mcp_types as types
from mcp import Client

from agentkit.mcp.content import PAGE_META
from agentkit.paging import CONTINUATION, size_of
from tests.support.paged import REPORT_DEFINITION, report_rows
from tests.support.serving import (
    Served,
    server_fixture,
    serving,
    session,
    stdio_parameters,
    stdio_session,
    tools_folder,
)

WAIT_SECONDS = 60
BUDGET = 2000
REPORT = REPORT_DEFINITION.format(budget=f"{{bytes: {BUDGET}}}")

folder = tools_folder({"report.yaml": REPORT}, scope="module")
server = server_fixture()

_ARGUMENTS = re.compile(r"with the arguments (\{\"continuation\": \"[^\"]+\"\})")

Call = Callable[[dict[str, Any]], Awaitable[types.CallToolResult]]


def _bounded(work: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            return await work()

    return anyio.run(bounded)


async def _follow(call: Call, rows: int, marker: str) -> list[types.CallToolResult]:
    """The first result and every next page, as a model would follow the notes."""
    results = [await call({"rows": rows, "marker": marker})]
    for _ in range(200):
        note = results[-1].content[-1]
        assert isinstance(note, types.TextContent)
        found = _ARGUMENTS.search(note.text)
        if found is None:
            assert "This is the last page." in note.text
            return results
        results.append(await call(json.loads(found.group(1))))
    raise AssertionError("more than 200 pages")


def _check_pages(results: list[types.CallToolResult], schema: dict[str, Any], rows: int) -> None:
    assert len(results) > 2
    whole: list[Any] = []
    for number, result in enumerate(results, start=1):
        assert not result.is_error
        page = result.structured_content
        assert page is not None
        jsonschema.validate(page, schema)
        assert size_of(page) <= BUDGET
        assert result.meta is not None
        described = result.meta[PAGE_META]
        assert described["page"] == number
        assert described["pages"] == len(results)
        first = result.content[0]
        assert isinstance(first, types.TextContent)
        assert json.loads(first.text) == page  # the page as JSON text too
        whole += page["rows"]
    assert whole == report_rows(rows)["rows"]


def _runs(marker: str) -> int:
    return len(Path(f"{marker}.runs").read_text().splitlines())


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_pages_over_stdio_with_the_sdk_client(folder: Path, tmp_path: Path, era: str) -> None:
    marker = str(tmp_path / "stdio")

    async def work() -> tuple[list[types.CallToolResult], Any]:
        if era == "2025-11-25":
            async with stdio_session(["--tools", str(folder)]) as client:
                listed = await client.list_tools()
                return await _follow(
                    lambda given: client.call_tool("report", given), 120, marker
                ), listed.tools[0].output_schema
        async with Client(stdio_parameters(["--tools", str(folder)])) as modern:
            listed = await modern.list_tools()
            return await _follow(
                lambda given: modern.call_tool("report", given), 120, marker
            ), listed.tools[0].output_schema

    results, schema = _bounded(work)
    _check_pages(results, schema, 120)
    assert _runs(marker) == 1


def test_pages_over_http_with_the_sdk_client(server: Served, tmp_path: Path) -> None:
    marker = str(tmp_path / "http")

    async def work() -> tuple[list[types.CallToolResult], Any]:
        async with session(server.url) as client:
            listed = await client.list_tools()
            tool = listed.tools[0]
            results = await _follow(lambda given: client.call_tool("report", given), 150, marker)
            return results, tool

    results, tool = _bounded(work)
    assert tool.input_schema["properties"][CONTINUATION]["type"] == "string"
    assert CONTINUATION not in tool.input_schema["required"]
    _check_pages(results, tool.output_schema, 150)
    assert _runs(marker) == 1


def test_a_continuation_is_unknown_to_another_session(server: Served, tmp_path: Path) -> None:
    async def work() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with session(server.url) as owner, session(server.url) as other:
            first = await owner.call_tool("report", {"rows": 150})
            assert first.meta is not None
            continuation = first.meta[PAGE_META]["continuation"]
            stolen = await other.call_tool("report", {CONTINUATION: continuation})
            mine = await owner.call_tool("report", {CONTINUATION: continuation})
            return stolen, mine

    stolen, mine = _bounded(work)
    assert stolen.is_error
    text = stolen.content[0]
    assert isinstance(text, types.TextContent)
    assert "unknown or has expired" in text.text
    assert "call 'report' again with its original arguments" in text.text
    assert not mine.is_error


def test_an_unknown_continuation_is_an_error_result(server: Served) -> None:
    async def work() -> types.CallToolResult:
        async with session(server.url) as client:
            result: types.CallToolResult = await client.call_tool(
                "report", {CONTINUATION: "not-one-of-ours.2"}
            )
            return result

    result = _bounded(work)
    assert result.is_error
    assert "Parameter 'continuation'" in str(result.content[0])


def test_an_answer_under_the_budget_has_no_page(server: Served) -> None:
    async def work() -> types.CallToolResult:
        async with session(server.url) as client:
            result: types.CallToolResult = await client.call_tool("report", {"rows": 3})
            return result

    result = _bounded(work)
    assert result.structured_content == report_rows(3)
    assert result.meta is None or PAGE_META not in result.meta
    assert len(result.content) == 1


TOKENS = ("paging-token-alice-0123456789abcdef", "paging-token-bob-0123456789abcdef")


@pytest.fixture(scope="module")
def stateless(folder: Path) -> Iterator[Served]:
    args = ["--tools", str(folder), "--stateless", "--auth-token-env", "PAGING_TOKENS"]
    with serving(args, env={"PAGING_TOKENS": ",".join(TOKENS)}) as served:
        yield served


def test_stateless_clients_that_authenticate_apart_do_not_share_pages(
    stateless: Served,
) -> None:
    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    async def work() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with session(stateless.url, bearer(TOKENS[0])) as alice:
            first = await alice.call_tool("report", {"rows": 150})
        assert first.meta is not None
        continuation = first.meta[PAGE_META]["continuation"]
        async with session(stateless.url, bearer(TOKENS[1])) as bob:
            stolen = await bob.call_tool("report", {CONTINUATION: continuation})
        async with session(stateless.url, bearer(TOKENS[0])) as alice_again:
            mine = await alice_again.call_tool("report", {CONTINUATION: continuation})
        return stolen, mine

    stolen, mine = _bounded(work)
    assert stolen.is_error
    assert "unknown or has expired" in str(stolen.content[0])
    assert not mine.is_error
    assert mine.meta is not None
    assert mine.meta[PAGE_META]["page"] == 2


def test_a_continuation_from_another_replica_is_unknown_there(server: Served, folder: Path) -> None:
    """Two servers of the same tools, as behind a load balancer without sticky sessions."""

    async def work(replica: Served) -> types.CallToolResult:
        async with session(server.url) as client:
            first = await client.call_tool("report", {"rows": 150})
        assert first.meta is not None
        continuation = first.meta[PAGE_META]["continuation"]
        async with session(replica.url) as elsewhere:
            result: types.CallToolResult = await elsewhere.call_tool(
                "report", {CONTINUATION: continuation}
            )
            return result

    with serving(["--tools", str(folder)]) as replica:
        result = _bounded(lambda: work(replica))
    assert result.is_error
    message = str(result.content[0])
    assert "unknown or has expired" in message
    assert "by the server process that gave it" in message


def test_stateless_clients_with_their_own_credential_headers_do_not_share_pages(
    folder: Path,
) -> None:
    # No bearer tokens: each user sends their own credential in a header. A page of one
    # user's answer is not another's to read, even with the continuation in hand.
    args = ["--tools", str(folder), "--stateless", "--credential-header", "X-Api-Key=report-key"]

    async def work() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with session(served.url, {"X-Api-Key": "alice-key-0123456789"}) as alice:
            first = await alice.call_tool("report", {"rows": 150})
        assert first.meta is not None
        continuation = first.meta[PAGE_META]["continuation"]
        async with session(served.url, {"X-Api-Key": "bob-key-0123456789ab"}) as bob:
            stolen = await bob.call_tool("report", {CONTINUATION: continuation})
        async with session(served.url, {"X-Api-Key": "alice-key-0123456789"}) as alice_again:
            mine = await alice_again.call_tool("report", {CONTINUATION: continuation})
        return stolen, mine

    with serving(args) as served:
        stolen, mine = _bounded(work)
    assert stolen.is_error
    assert "unknown or has expired" in str(stolen.content[0])
    assert not mine.is_error
