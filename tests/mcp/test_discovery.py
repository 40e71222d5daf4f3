"""Progressive discovery over MCP, with the SDK's own clients: deferred tools are not
listed, ``search_tools`` finds them (names, one-line descriptions, schemas), a session
that found some has them listed from then on (told by ``notifications/tools/list_changed``),
and every tool is called by name whether or not it was listed.

Over stdio, stateful and stateless streamable HTTP, and for a 2026-07-28 client (which
gets ``ttlMs`` and ``cacheScope`` on its listing).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from mcp import Client  # after the skips: the SDK is an extra

from tests.mcp.test_reload import Notifications
from tests.support.serving import (
    ROOT,
    client_environment,
    open_session,
    post,
    serving,
    session,
    stdio_parameters,
    stdio_session,
)

WAIT_SECONDS = 60
TOOLS = str(ROOT / "tools.d")
DEFER = ["--tools", TOOLS, "--defer", "*github*", "--defer", "text_stats"]
#: What every client is listed up front, in the registry's order, the search tool last.
UP_FRONT = ["fetch_weather", "forecast_daily", "search_tools"]


def _run(scenario: Any, *args: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            return await scenario(*args)

    return anyio.run(bounded)


async def _discover(client: Any, notes: Notifications) -> dict[str, Any]:
    """List, search, list again, and call a deferred tool: what a session saw."""
    seen: dict[str, Any] = {"before": [tool.name for tool in (await client.list_tools()).tools]}
    found = await client.call_tool("search_tools", {"query": "comment on an issue", "limit": 2})
    seen["found"] = found.structured_content
    seen["error"] = found.is_error
    seen["after"] = [tool.name for tool in (await client.list_tools()).tools]
    seen["again"] = [tool.name for tool in (await client.list_tools()).tools]
    stats = await client.call_tool("text_stats", {"text": "One fish. Two fish."})
    seen["stats"] = stats.structured_content
    seen["told"] = notes.list_changed
    return seen


def _assert_found(seen: dict[str, Any]) -> None:
    assert seen["before"] == UP_FRONT
    assert seen["error"] is False
    matches = seen["found"]["tools"]
    assert [match["name"] for match in matches] == [
        "comment_on_github_issue",
        "create_github_issue",
    ]
    assert matches[0]["description"] == (
        "Add a comment to an issue or pull request of a GitHub repository."
    )
    assert matches[0]["input_schema"]["required"] == ["owner", "repo", "number", "body"]
    assert seen["found"]["more"] > 0
    # A deferred tool is called by name, listed or not.
    assert seen["stats"]["words"] == 4


def test_over_stdio_a_search_lists_what_it_found_from_then_on() -> None:
    notes = Notifications()

    async def scenario() -> dict[str, Any]:
        async with stdio_session(DEFER, on_message=notes) as client:
            return await _discover(client, notes)

    seen = _run(scenario)
    _assert_found(seen)
    # Told once, on the call's stream, before the answer; each found tool at its place.
    assert seen["told"] == 1
    assert seen["after"] == [
        "fetch_weather",
        "forecast_daily",
        "create_github_issue",
        "comment_on_github_issue",
        "search_tools",
    ]
    assert seen["again"] == seen["after"]  # the order is the same at each listing


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "no-fast-path"])
def test_a_stateful_http_session_has_what_it_found_listed(fast_path: bool) -> None:
    notes = Notifications()

    async def scenario(url: str) -> dict[str, Any]:
        async with session(url, on_message=notes) as client:
            seen = await _discover(client, notes)
        # Another session has found nothing: it is listed what every client is.
        async with session(url) as other:
            seen["other"] = [tool.name for tool in (await other.list_tools()).tools]
        return seen

    with serving([*DEFER, *([] if fast_path else ["--no-fast-path"])]) as served:
        seen = _run(scenario, served.url)
    _assert_found(seen)
    assert seen["told"] == 1
    assert "comment_on_github_issue" in seen["after"]
    assert seen["other"] == UP_FRONT


def test_a_stateless_server_answers_with_schemas_and_lists_the_same_to_everyone() -> None:
    notes = Notifications()

    async def scenario(url: str) -> dict[str, Any]:
        async with session(url, on_message=notes) as client:
            return await _discover(client, notes)

    with serving([*DEFER, "--stateless"]) as served:
        seen = _run(scenario, served.url)
    _assert_found(seen)
    # No session: nothing is kept between requests, and nobody is told.
    assert seen["after"] == UP_FRONT
    assert seen["told"] == 0


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
def test_a_2026_client_gets_ttl_and_cache_scope_and_schemas_in_the_answer(
    stateless: bool,
) -> None:
    async def scenario(url: str) -> dict[str, Any]:
        async with Client(url) as client:
            listing = await client.list_tools()
            found = await client.call_tool("search_tools", {"query": "weekly forecast"})
            again = await client.list_tools()
            stats = await client.call_tool("text_stats", {"text": "Red fish."})
            return {
                "version": client.protocol_version,
                "names": [tool.name for tool in listing.tools],
                "ttl": listing.ttl_ms,
                "scope": listing.cache_scope,
                "found": found.structured_content,
                "again": [tool.name for tool in again.tools],
                "stats": stats.structured_content,
            }

    with serving([*DEFER, *(["--stateless"] if stateless else [])]) as served:
        seen = _run(scenario, served.url)
    assert seen["version"] == "2026-07-28"
    assert seen["ttl"] == 60_000
    assert seen["scope"] == "private"
    assert seen["names"] == UP_FRONT
    # forecast_daily is listed, not deferred: the search finds only deferred tools.
    assert "forecast_daily" not in [match["name"] for match in seen["found"]["tools"]]
    assert seen["again"] == UP_FRONT  # no session to remember a search by
    assert seen["stats"]["words"] == 2


def test_a_handshake_era_listing_has_no_cache_fields() -> None:
    with serving(DEFER) as served:
        headers = open_session(served.url)
        request = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        answer = post(served.url, request, headers)[2]
    result = json.loads(answer)["result"]
    assert [tool["name"] for tool in result["tools"]] == UP_FRONT
    assert "ttlMs" not in result
    assert "cacheScope" not in result


def test_without_deferred_tools_there_is_no_search_tool() -> None:
    async def scenario() -> list[str]:
        async with stdio_session(["--tools", TOOLS]) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    names = _run(scenario)
    assert "search_tools" not in names
    assert "text_stats" in names


def _serve_and_fail(args: list[str]) -> subprocess.CompletedProcess[str]:
    params = stdio_parameters(args)
    return subprocess.run(
        [params.command, *params.args],
        cwd=ROOT,
        env=client_environment(),
        input="",
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )


def test_a_deferred_pattern_that_matches_nothing_stops_the_server_naming_it() -> None:
    done = _serve_and_fail(["--tools", TOOLS, "--defer", "text_stat"])
    assert done.returncode == 2
    assert (
        "deferred 'text_stat' names no served tool (did you mean 'text_stats'?); give a "
        "tool's name or a pattern such as 'jira_*'" in done.stderr
    )
    assert "Traceback" not in done.stderr


def test_a_tool_named_like_the_search_tool_stops_a_server_that_defers(tmp_path: Path) -> None:
    (tmp_path / "search.yaml").write_text(
        "name: search_tools\nversion: 1.0.0\ndescription: Mine.\n"
        "backend: {python: 'examples.textstats:text_stats'}\n"
        "input_schema: {parameters: [{name: text, type: string}]}\n"
    )
    (tmp_path / "other.yaml").write_text((ROOT / "tools.d" / "text_stats.yaml").read_text())
    done = _serve_and_fail(["--tools", str(tmp_path), "--defer", "text_stats"])
    assert done.returncode == 2, done.stderr
    assert "has the name of the search tool 'search_tools'" in done.stderr
    assert "rename the tool, or defer none" in done.stderr


def test_serving_from_python_takes_deferred_in_the_options() -> None:
    script = (
        "import sys\n"
        "from agentkit import ToolRegistry, load_tools\n"
        "from agentkit.mcp import ServeOptions, serve\n"
        "registry = ToolRegistry()\n"
        f"load_tools({TOOLS!r}, registry=registry)\n"
        "serve(registry, ServeOptions(deferred=frozenset({'*github*', 'text_stats'})))\n"
    )

    async def scenario() -> list[str]:
        params = stdio_parameters([], command=(sys.executable, "-c", script))
        async with Client(params) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert _run(scenario) == UP_FRONT


def test_search_answers_are_json_text_too() -> None:
    async def scenario() -> Any:
        async with stdio_session(DEFER) as client:
            return await client.call_tool("search_tools", {"query": "repository"})

    result = _run(scenario)
    assert json.loads(result.content[0].text) == result.structured_content
    assert result.structured_content["tools"][0]["name"] == "get_github_repo"


# -- the served set, without a server -----------------------------------------------------------


def _registry(*files: str) -> Any:
    from agentkit import ToolRegistry, load_tools

    registry = ToolRegistry()
    for file in files:
        load_tools(ROOT / "tools.d" / file, registry=registry)
    return registry


def _names(listing: Any) -> list[str]:
    return [tool.name for tool in listing]


def test_a_reload_defers_a_new_tool_its_pattern_matches() -> None:
    from agentkit.mcp.reload import ServedTools

    served = ServedTools(_registry("fetch_weather.yaml"), deferred=frozenset({"*stats*"}))
    assert _names(served.listed) == ["fetch_weather"]  # nothing deferred yet: no search tool
    served.replace(_registry("fetch_weather.yaml", "text_stats.yaml"))
    assert _names(served.listed) == ["fetch_weather", "search_tools"]
    assert served.deferred == {"text_stats"}
    assert served.lookup("text_stats") is not None  # callable by name
    assert served.lookup("search_tools") is not None


def test_a_reload_that_adds_a_tool_named_like_the_search_tool_keeps_the_last_set(
    tmp_path: Path,
) -> None:
    from agentkit import ToolRegistry, load_tools
    from agentkit.mcp.reload import Reloader

    (tmp_path / "stats.yaml").write_text((ROOT / "tools.d" / "text_stats.yaml").read_text())
    said: list[str] = []

    def load() -> Any:
        registry = ToolRegistry()
        load_tools(tmp_path, registry=registry)
        return registry

    reloader = Reloader(load, list, say=said.append)
    reloader.served.defer(frozenset({"text_stats"}))
    (tmp_path / "search.yaml").write_text(
        "name: search-tools\nversion: 1.0.0\ndescription: Mine.\n"
        "backend: {python: 'examples.textstats:text_stats'}\n"
        "input_schema: {parameters: [{name: text, type: string}]}\n"
    )
    assert anyio.run(reloader.reload, "SIGHUP") is None
    assert _names(reloader.served.listed) == ["search_tools"]
    assert "Tool 'search-tools'" in said[-1]
    assert "has the name of the search tool 'search_tools'" in said[-1]


class _Session:
    protocol_version = "2025-11-25"


def test_a_session_lists_at_most_so_many_found_tools_the_oldest_leaving_first() -> None:
    from agentkit import ToolRegistry
    from agentkit.mcp.listing import MAX_DISCOVERED
    from agentkit.mcp.reload import ServedTools
    from tests.support.helpers import generated_tool

    registry = ToolRegistry(
        generated_tool(f"tool_{number:03}", f"Tool number {number}.", "id") for number in range(100)
    )
    served = ServedTools(registry, deferred=frozenset({"tool_*"}))
    served.seen("s1", _Session())
    assert served.discover("s1", [f"tool_{number:03}" for number in range(70)]) is True
    assert served.discover("s1", ["tool_069"]) is False  # nothing new
    assert served.discover("s2", ["tool_001"]) is False  # a session never seen
    names = _names(served.listed_for("s1"))
    assert len(names) == MAX_DISCOVERED + 1
    assert names[0] == "tool_006"  # the six found first left again
    assert names[-1] == "search_tools"
    assert _names(served.listed_for("s2")) == ["search_tools"]
    assert _names(served.listed_for("")) == ["search_tools"]


def test_an_app_built_on_a_deferring_set_keeps_it_deferring() -> None:
    from agentkit import ToolExecutor
    from agentkit.mcp import HttpOptions, ServedTools, build_app

    served = ServedTools(_registry("text_stats.yaml"), deferred=frozenset({"text_stats"}))
    with ToolExecutor() as executor:
        build_app(served, executor, HttpOptions())
        assert served.deferred == {"text_stats"}
        build_app(served, executor, HttpOptions(deferred=frozenset({"text_*"})))
    assert served.deferring == {"text_*"}
    assert served.deferred == {"text_stats"}
