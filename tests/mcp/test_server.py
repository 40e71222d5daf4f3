"""agentkit serve, end to end with the MCP SDK's own stdio client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from tests.support.serving import stdio_parameters

ROOT = Path(__file__).resolve().parents[2]


# A tool whose endpoint is a closed loopback port: it fails fast, and nothing leaves the machine.
UNREACHABLE = """\
name: unreachable
version: 1.0.0
credentials: [api-token]
input_schema: {parameters: [{name: data, type: dictionary, required: false}]}
output_schema: {parameters: [{name: ok, type: boolean}]}
backend:
  http:
    url: http://127.0.0.1:9/ping
    auth: {bearer: api-token}
    retry: {attempts: 1}
"""


async def _session_results(secrets: Path, extra: Path) -> dict[str, Any]:
    params = stdio_parameters(
        ["--tools", "tools.d", "--tools", str(extra), "--credentials-file", str(secrets)]
    )
    found: dict[str, Any] = {}
    with anyio.fail_after(60):
        await _talk(params, found)
    return found


# 150 levels: past agentkit's limit of 64, within what the SDK's own JSON-RPC
# layer passes on (it drops a request nested about 200 deep without answering).
def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"k": value}
    return value


async def _talk(params: StdioServerParameters, found: dict[str, Any]) -> None:
    async with stdio_client(params) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        found["list"] = await session.list_tools()
        found["ok"] = await session.call_tool("text_stats", {"text": "One fish. Two fish!"})
        found["invalid"] = await session.call_tool("text_stats", {"text": "x", "top": 99})
        found["failing"] = await session.call_tool("unreachable", {})
        found["deep"] = await session.call_tool("unreachable", {"data": _nested(150)})
        found["after"] = await session.call_tool("text_stats", {"text": "Still here."})
        try:
            await session.call_tool("text_stat", {})
        except MCPError as exc:
            found["unknown"] = exc


@pytest.fixture(scope="module")
def session_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("mcp")
    secrets = folder / ".env"
    secrets.write_text("API_TOKEN=tok_secret_for_the_test\n")
    extra = folder / "unreachable.yaml"
    extra.write_text(UNREACHABLE)
    return anyio.run(_session_results, secrets, extra)


def test_tools_list(session_results: dict[str, Any]) -> None:
    tools = {tool.name: tool for tool in session_results["list"].tools}
    assert set(tools) == {
        "fetch_weather",
        "forecast_daily",
        "search_github_issues",
        "list_github_issues",
        "get_github_issue",
        "create_github_issue",
        "comment_on_github_issue",
        "get_github_repo",
        "text_stats",
        "unreachable",
    }
    weather = tools["fetch_weather"].model_dump(by_alias=True, exclude_none=True)
    assert weather["inputSchema"]["required"] == ["city"]
    assert weather["outputSchema"]["properties"]["temperature"] == {
        "type": "number",
        "description": "Current temperature",
    }
    assert weather["annotations"]["readOnlyHint"] is True
    assert weather["annotations"]["idempotentHint"] is True
    assert tools["create_github_issue"].annotations.destructive_hint is False


def test_a_call_returns_structured_content_and_the_same_json(
    session_results: dict[str, Any],
) -> None:
    result = session_results["ok"]
    expected = {"words": 4, "sentences": 2, "characters": 19, "commonest": ["fish", "one", "two"]}
    assert result.is_error is False
    assert result.structured_content == expected
    assert json.loads(result.content[0].text) == expected


def test_a_validation_failure_is_an_error_result(session_results: dict[str, Any]) -> None:
    result = session_results["invalid"]
    assert result.is_error is True
    assert "Parameter 'top': expected a value of at most 20, got 99" in result.content[0].text


def test_an_execution_failure_is_an_error_result_without_secrets(
    session_results: dict[str, Any],
) -> None:
    result = session_results["failing"]
    assert result.is_error is True
    assert result.content[0].text.startswith(
        "Error: Tool 'unreachable' failed: HttpCallError: GET http://127.0.0.1:9/ping failed to connect"
    )
    assert "tok_secret_for_the_test" not in result.content[0].text


def test_an_unknown_tool_is_a_protocol_error(session_results: dict[str, Any]) -> None:
    error = session_results["unknown"]
    assert error.code == -32602
    assert "Unknown tool: 'text_stat' (did you mean 'text_stats'?)" in error.message
    assert error.message.endswith(
        "The tools may have changed since you listed them: call tools/list."
    )


def test_arguments_nested_too_deeply_are_an_error_result_and_the_server_goes_on(
    session_results: dict[str, Any],
) -> None:
    result = session_results["deep"]
    assert result.is_error is True
    assert result.content[0].text == (
        "Error: Tool 'unreachable' received invalid input:\n"
        "  - Parameter 'data': nested more than 64 levels deep; send a flatter value"
    )
    assert session_results["after"].is_error is False
