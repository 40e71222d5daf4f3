"""agentkit serve with toolsets: one set over stdio, each set at its own HTTP path, and
which bearer token reaches which set; a set never lists or runs a tool outside it."""

from __future__ import annotations

import json
import signal
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from mcp.shared.exceptions import MCPError

from agentkit.mcp.http_security import StaticTokens
from agentkit.mcp.options import BearerToken, read_tokens
from agentkit.toolerrors import SemanticError
from tests.support.serving import (
    INITIALIZE,
    PROTOCOL_VERSION,
    Served,
    post,
    run_stdio,
    serving,
    session,
    stdio_session,
)
from tests.support.toolsets import ALL_TOOLS, CATALOG, HOLDS, LISTED, TOOLSETS, write_catalog

ADMIN = "admin-token-0123456789abcdef"
TRIAGE = "triage-token-0123456789abcdef"
READER = "reader-token-0123456789abcdef"
TOKENS = f"""\
# the operator's tokens, and the sets each reaches
{ADMIN}
{TRIAGE}  toolsets=triage
{READER} toolsets=wiki,readers
"""


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def listed_and_called(
    url: str, headers: dict[str, str], calls: list[str]
) -> tuple[list[str], dict[str, Any]]:
    """The names ``tools/list`` gives on ``url``, and each call's result (or MCPError)."""
    answers: dict[str, Any] = {}
    with anyio.fail_after(60):
        async with session(url, headers) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            for name in calls:
                try:
                    answers[name] = (await client.call_tool(name, {})).structured_content
                except MCPError as exc:
                    answers[name] = exc
    return names, answers


# -- stdio ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = write_catalog(tmp_path_factory.mktemp("catalog"))
    (made.parent / "tokens.txt").write_text(TOKENS)
    return made


def test_stdio_serves_one_set_and_refuses_a_tool_outside_it(folder: Path) -> None:
    async def talk() -> tuple[list[str], Any, Any]:
        with anyio.fail_after(60):
            async with stdio_session(["--tools", str(folder), "--toolset", "triage"]) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                deferred = await client.call_tool("list_issues", {})
                with pytest.raises(MCPError) as refused:
                    await client.call_tool("issue_delete", {})
                return names, deferred, refused.value

    names, deferred, refused = anyio.run(talk)
    assert names == LISTED["triage"]  # the deferred members are found by search
    assert deferred.structured_content == {"ran": "list_issues"}
    assert refused.code == -32602
    assert refused.message.startswith("Unknown tool: 'issue_delete'")
    assert "edit_page" not in refused.message  # the available tools named are the set's


def test_stdio_with_an_unknown_set_exits_2_with_a_hint(folder: Path) -> None:
    done = run_stdio(["--tools", str(folder), "--toolset", "triag"])
    assert done.returncode == 2
    assert done.stdout == ""
    assert "error: --toolset 'triag': no such toolset (did you mean 'triage'?)" in done.stderr


# -- HTTP: a path for each set, a policy for each token -----------------------------------------


@pytest.fixture(scope="module", params=["fast-path", "sdk-path"])
def server(folder: Path, request: pytest.FixtureRequest) -> Iterator[Served]:
    args = ["--tools", str(folder), "--auth-token-file", str(folder.parent / "tokens.txt")]
    if request.param == "sdk-path":
        args.append("--no-fast-path")
    with serving(args) as served:
        yield served


def test_each_set_is_served_at_its_own_path(server: Served) -> None:
    for name, holds in HOLDS.items():
        server.wait_for_output(f"agentkit: serving {len(holds)} tools on {server.url}/{name}\n")
    names, _ = anyio.run(listed_and_called, server.url, bearer(ADMIN), [])
    assert names == ALL_TOOLS


@pytest.mark.parametrize("name", list(HOLDS))
def test_a_set_lists_and_runs_its_tools_and_no_other(server: Served, name: str) -> None:
    outside = [tool for tool in ALL_TOOLS if tool not in HOLDS[name]]
    names, answers = anyio.run(
        listed_and_called, f"{server.url}/{name}", bearer(ADMIN), [*HOLDS[name], *outside]
    )
    assert names == LISTED[name]
    for tool in HOLDS[name]:  # listed or deferred alike
        assert answers[tool] == {"ran": tool}
    for tool in outside:
        assert isinstance(answers[tool], MCPError), tool
        assert answers[tool].code == -32602
        assert answers[tool].message.startswith(f"Unknown tool: '{tool}'")


def test_a_sets_search_finds_its_deferred_members_and_nothing_outside(server: Served) -> None:
    async def search(url: str, query: str) -> list[str]:
        with anyio.fail_after(60):
            async with session(url, bearer(ADMIN)) as client:
                found = await client.call_tool("search_tools", {"query": query, "limit": 20})
                return [tool["name"] for tool in found.structured_content["tools"]]

    found = anyio.run(search, f"{server.url}/triage", "delete list issue pages")
    assert sorted(found) == ["list_issues", "list_pages"]
    names, answers = anyio.run(listed_and_called, server.url, bearer(ADMIN), ["search_tools"])
    assert "search_tools" not in names  # the whole registry defers nothing here
    assert isinstance(answers["search_tools"], MCPError)


def test_a_non_member_call_is_refused_on_a_raw_request_too(server: Served) -> None:
    # No session needed in the request's own terms: the endpoint answers what it serves.
    status, headers, _ = post(f"{server.url}/wiki", INITIALIZE, bearer(ADMIN))
    assert status == 200
    session_headers = {
        **bearer(ADMIN),
        "Mcp-Session-Id": headers["mcp-session-id"],
        "MCP-Protocol-Version": PROTOCOL_VERSION,
    }
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "issue_delete", "arguments": {}},
    }
    status, _, body = post(f"{server.url}/wiki", call, session_headers)
    assert status == 200
    text = body if body.startswith("{") else body.split("data: ", 1)[1]
    error = json.loads(text)["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("Unknown tool: 'issue_delete'")


@pytest.mark.parametrize(
    ("token", "path", "status"),
    [
        pytest.param(ADMIN, "", 200, id="admin-whole"),
        pytest.param(ADMIN, "/triage", 200, id="admin-triage"),
        pytest.param(TRIAGE, "/triage", 200, id="triage-triage"),
        pytest.param(TRIAGE, "", 403, id="triage-whole"),
        pytest.param(TRIAGE, "/wiki", 403, id="triage-wiki"),
        pytest.param(READER, "/wiki", 200, id="reader-wiki"),
        pytest.param(READER, "/readers", 200, id="reader-readers"),
        pytest.param(READER, "/triage", 403, id="reader-triage"),
        pytest.param(READER, "", 403, id="reader-whole"),
        pytest.param(None, "/triage", 401, id="no-token"),
        pytest.param("wrong-token-0123456789abcdef", "/wiki", 401, id="unknown-token"),
    ],
)
def test_each_token_reaches_the_sets_it_names(
    server: Served, token: str | None, path: str, status: int
) -> None:
    answer, headers, body = post(server.url + path, INITIALIZE, bearer(token) if token else {})
    assert answer == status
    if status == 403:
        assert json.loads(body)["error"] == "insufficient_scope"
        assert 'error="insufficient_scope"' in headers["www-authenticate"]
    if status == 401:
        assert json.loads(body)["error"] == "invalid_token"


def test_a_restricted_token_lists_its_set_with_the_sdk_client(server: Served) -> None:
    names, answers = anyio.run(
        listed_and_called, f"{server.url}/triage", bearer(TRIAGE), ["get_issue"]
    )
    assert names == LISTED["triage"]
    assert answers["get_issue"] == {"ran": "get_issue"}


def test_a_session_of_one_set_is_unknown_at_another(server: Served) -> None:
    status, headers, _ = post(f"{server.url}/readers", INITIALIZE, bearer(ADMIN))
    assert status == 200
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    other = {
        **bearer(ADMIN),
        "Mcp-Session-Id": headers["mcp-session-id"],
        "MCP-Protocol-Version": PROTOCOL_VERSION,
    }
    assert post(f"{server.url}/triage", listing, other)[0] == 404
    assert post(server.url, listing, other)[0] == 404


def test_no_whole_registry_serves_the_sets_alone(folder: Path) -> None:
    with serving(["--tools", str(folder), "--no-whole-registry"]) as served:
        assert served.url.endswith("/mcp/triage")
        base = served.url.rsplit("/", 1)[0]
        assert post(base, INITIALIZE, {})[0] == 404
        names, _ = anyio.run(listed_and_called, f"{base}/wiki", {}, [])
        assert names == HOLDS["wiki"]


def test_toolset_over_http_serves_only_the_sets_named(folder: Path) -> None:
    with serving(["--tools", str(folder), "--toolset", "wiki"]) as served:
        assert served.url.endswith("/mcp/wiki")
        served.wait_for_output("/mcp/wiki\n")
        assert served.stderr.count("agentkit: serving") == 1
        assert post(served.url.rsplit("/", 1)[0], INITIALIZE, {})[0] == 404


def test_readyz_counts_the_whole_registry(server: Served) -> None:
    with urllib.request.urlopen(server.origin + "/readyz", timeout=30) as got:
        assert json.loads(got.read())["tools"] == len(ALL_TOOLS)


# -- the token file ------------------------------------------------------------------------------


def test_a_token_line_names_the_sets_it_reaches(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(TOKENS)
    assert read_tokens(file=str(tokens)) == (
        ADMIN,
        BearerToken(token=TRIAGE, toolsets=frozenset({"triage"}), where=f"{tokens}:3"),
        BearerToken(token=READER, toolsets=frozenset({"wiki", "readers"}), where=f"{tokens}:4"),
    )
    assert TRIAGE not in repr(read_tokens(file=str(tokens))[1])


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(f"{TRIAGE} triage", id="no-key"),
        pytest.param(f"{TRIAGE} toolsets=", id="no-names"),
        pytest.param(f"{TRIAGE} sets=triage", id="other-key"),
        pytest.param(f"{TRIAGE} toolsets=triage extra", id="more-words"),
    ],
)
def test_a_bad_token_line_names_its_line_never_the_token(tmp_path: Path, line: str) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{ADMIN}\n{line}\n")
    with pytest.raises(SemanticError, match=rf"{tokens}:2: after the token") as info:
        read_tokens(file=str(tokens))
    assert TRIAGE not in str(info.value)


def test_a_token_for_an_undefined_set_stops_the_server(folder: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{TRIAGE} toolsets=triag\n")
    done = run_stdio(
        ["--http", "127.0.0.1:0", "--tools", str(folder), "--auth-token-file", str(tokens)]
    )
    assert done.returncode == 2, done.stderr
    assert (
        f"error: {tokens}:1: toolsets=triag: no such toolset (did you mean 'triage'?); "
        "defined: triage, wiki, readers"
    ) in done.stderr
    assert TRIAGE not in done.stderr


def test_static_tokens_give_each_token_its_scopes() -> None:
    verifier = StaticTokens(
        [ADMIN, BearerToken(token=TRIAGE, toolsets=frozenset({"triage"}))],
        toolsets=["triage", "wiki"],
    )
    admin = anyio.run(verifier.verify_token, ADMIN)
    triage = anyio.run(verifier.verify_token, TRIAGE)
    assert admin is not None
    assert triage is not None
    assert admin.scopes == ["tools:all", "toolset:triage", "toolset:wiki"]
    assert triage.scopes == ["toolset:triage"]
    assert anyio.run(verifier.verify_token, READER) is None


# -- reloading -----------------------------------------------------------------------------------


def test_a_reload_swaps_each_set_and_keeps_them_when_one_is_gone(tmp_path: Path) -> None:
    folder = write_catalog(tmp_path / "tools")
    with serving(["--tools", str(folder)]) as served:
        wiki = f"{served.url}/wiki"
        served.wait_for_output(f"on {wiki}\n")
        (folder / "sets.yaml").write_text(TOOLSETS.replace("tag:domain=wiki", "edit_*"))
        served.process.send_signal(signal.SIGHUP)
        after = served.wait_for_output("reloaded (SIGHUP)")
        assert anyio.run(listed_and_called, wiki, {}, [])[0] == ["edit_page"]
        (folder / "sets.yaml").write_text("toolset: triage\ntools: [get_issue]\n")
        served.process.send_signal(signal.SIGHUP)
        served.wait_for_output("reload (SIGHUP) failed", after=after)
        assert "toolset 'wiki' is served at a path of its own and no longer defined" in (
            served.stderr
        )
        assert anyio.run(listed_and_called, wiki, {}, [])[0] == ["edit_page"]
        assert anyio.run(listed_and_called, f"{served.url}/triage", {}, [])[0] == LISTED["triage"]


def test_a_token_for_a_set_not_served_here_is_a_warning(folder: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{ADMIN}\n{TRIAGE} toolsets=triage\n")
    args = ["--tools", str(folder), "--auth-token-file", str(tokens), "--toolset", "wiki"]
    with serving(args) as served:
        served.wait_for_output(
            f"warning: {tokens}:2: toolset 'triage' is not served here (served: wiki); "
            "the token reaches no endpoint for it"
        )
        assert post(served.url, INITIALIZE, bearer(TRIAGE))[0] == 403
        assert post(served.url, INITIALIZE, bearer(ADMIN))[0] == 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--no-whole-registry"],
            "error: --no-whole-registry leaves nothing to serve: no toolset is defined",
            id="no-whole-registry-without-sets",
        ),
        pytest.param(
            ["--toolset", "triage"],
            "error: --toolset 'triage': no such toolset; defined: none",
            id="toolset-without-sets",
        ),
        pytest.param(
            ["--toolset", "wiki", "--defer", "list_*"],
            "error: --defer applies to the whole registry, which --toolset and "
            "--no-whole-registry do not serve; a toolset defers tools in its document",
            id="defer-with-a-toolset",
        ),
    ],
)
def test_what_cannot_be_served_is_refused(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "tools.yaml").write_text(CATALOG)
    if "wiki" in args:
        (tmp_path / "sets.yaml").write_text(TOOLSETS)
    done = run_stdio(["--http", "127.0.0.1:0", "--tools", str(tmp_path), *args])
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
