"""The fast path of ``agentkit serve --http`` (``agentkit.mcp.fastpath``): which requests take
it, and that every guarantee of the SDK's path holds on it.

The server runs in this process (uvicorn on 127.0.0.1, in a thread of its own), so a
test can read how many requests the fast path answered; the clients are the SDK's
streamable HTTP client and raw HTTP.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import mcp_types as types
import uvicorn
from mcp_types.jsonrpc import PARSE_ERROR

from agentkit.credentials import CredentialsManager
from agentkit.declarative.loader import load_tools
from agentkit.mcp import HttpOptions, build_app
from agentkit.mcp.fastpath import FastPath
from agentkit.mcp.http_serving import _bind
from agentkit.mcp.user_credentials import HeaderCredentials
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry
from tests.support.serving import (
    INITIALIZE,
    PROTOCOL_VERSION,
    next_data,
    open_session,
    post,
    session,
    streaming_post,
)

WAIT_SECONDS = 60
TOKEN = "fast-path-token-0123456789abcdef"
OTHER = "fast-path-token-fedcba9876543210"
ECHO = {"text": "hello, Zürich"}

DEFINITION = """\
name: {name}
version: 1.0.0
description: A tool of the fast-path tests.
{extra}
input_schema: {{parameters: [{inputs}]}}
output_schema: {{parameters: [{outputs}]}}
backend: {{python: "{function}"}}
"""

TOOLS = {
    "echo": (
        "benchmarks.serve_peer:echo",
        "{name: text, type: string}",
        "{name: text, type: string}",
        "",
    ),
    "steps": (
        "tests.support.serve_tools:steps",
        "{name: count, type: integer}",
        "{name: steps, type: integer}",
        "",
    ),
    "chatty": (
        "tests.support.serve_tools:chatty",
        "{name: levels, type: list}",
        "{name: sent, type: integer}",
        "credentials: [api-token]",
    ),
    "ask": (
        "tests.support.serve_tools:ask_async",
        "{name: question, type: string}",
        "{name: action, type: string}, {name: name, type: string}",
        "",
    ),
    "nap": (
        "tests.support.serve_tools:nap",
        "{name: seconds, type: float}, {name: marker, type: string, required: false}",
        "{name: slept, type: float}",
        "",
    ),
    "wait_for": (
        "tests.support.serve_tools:wait_for",
        "{name: path, type: string}",
        "{name: waited, type: boolean}",
        "",
    ),
    "token_size": (
        "tests.support.serve_tools:token_size",
        "",
        "{name: size, type: integer}",
        "credentials: [api-token]",
    ),
}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> ToolRegistry:
    folder = tmp_path_factory.mktemp("fast")
    for name, (function, inputs, outputs, extra) in TOOLS.items():
        text = DEFINITION.format(
            name=name, function=function, inputs=inputs, outputs=outputs, extra=extra
        )
        (folder / f"{name}.yaml").write_text(text)
    tools = ToolRegistry()
    load_tools(folder, registry=tools)
    return tools


@contextlib.contextmanager
def running(registry: ToolRegistry, **options: Any) -> Iterator[tuple[str, FastPath]]:
    """``build_app`` under uvicorn on 127.0.0.1 in a thread: its URL and its fast path."""
    settings = HttpOptions(**options)
    credentials = CredentialsManager.from_env(None).with_provider(
        HeaderCredentials(settings.credential_headers), first=True
    )
    sock = _bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    with ToolExecutor(credentials=credentials) as executor, sock:
        app = build_app(registry, executor, settings)
        config = uvicorn.Config(app, log_level="warning", lifespan="on", ws="none")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + WAIT_SECONDS
        while not server.started:
            assert thread.is_alive(), "the server did not start"
            assert time.monotonic() < deadline, "the server did not start in time"
            time.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp", app.state.agentkit.fast
        finally:
            server.should_exit = True
            thread.join(timeout=WAIT_SECONDS)


@pytest.fixture(scope="module")
def served(registry: ToolRegistry) -> Iterator[tuple[str, FastPath]]:
    with running(registry) as both:
        yield both


def calls(fast: FastPath) -> int:
    """How many requests the fast path has answered, of every method."""
    return sum(fast.answered.values())


def tool_calls(fast: FastPath) -> int:
    return fast.answered["tools/call"]


def _run(coroutine: Any, *args: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            return await coroutine(*args)

    return anyio.run(bounded)


# -- which requests take it ----------------------------------------------------------------------


def test_calls_listings_and_pings_of_the_sdk_client_take_the_fast_path(
    served: tuple[str, FastPath],
) -> None:
    url, fast = served

    async def use() -> Any:
        async with session(url) as client:
            before = calls(fast)
            listed = await client.list_tools()
            result = await client.call_tool("echo", ECHO)
            await client.send_ping()
            return listed, result, calls(fast) - before

    listed, result, answered = _run(use)
    assert "echo" in [tool.name for tool in listed.tools]
    assert result.is_error is False
    assert result.structured_content == ECHO
    assert answered == 3


def test_a_call_that_says_nothing_else_is_answered_as_json_with_utf8_text(
    served: tuple[str, FastPath],
) -> None:
    url, _ = served
    headers = open_session(url)
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": ECHO},
    }
    status, answer, body = post(url, call, headers)
    assert status == 200
    assert answer["content-type"] == "application/json"
    assert answer["mcp-session-id"] == headers["Mcp-Session-Id"]
    message = json.loads(body)
    assert message["id"] == 7
    assert message["result"]["structuredContent"] == ECHO
    assert "Zürich" in message["result"]["content"][0]["text"]  # UTF-8, not \\u-escaped


def test_an_unknown_tool_is_the_same_protocol_error_as_the_sdk_gives(
    served: tuple[str, FastPath],
) -> None:
    url, fast = served
    headers = open_session(url)
    before = calls(fast)
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nope"}}
    status, _, body = post(url, call, headers)
    assert status == 200
    assert calls(fast) == before + 1
    error = json.loads(body)["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("Unknown tool: 'nope'. Available tools: ask, chatty")


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"jsonrpc": "2.0", "id": 4, "method": "resources/list"}, id="another-method"),
        pytest.param([{"jsonrpc": "2.0", "id": 5, "method": "ping"}], id="a-batch"),
        pytest.param(
            {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": [1]}, id="bad-params"
        ),
        pytest.param({"jsonrpc": "1.0", "id": 6, "method": "ping"}, id="not-json-rpc-2"),
        pytest.param({"jsonrpc": "2.0", "id": True, "method": "ping"}, id="a-boolean-id"),
    ],
)
def test_what_the_fast_path_does_not_answer_goes_to_the_sdk(
    served: tuple[str, FastPath], message: Any
) -> None:
    url, fast = served
    headers = open_session(url)
    before = calls(fast)
    post(url, message, headers)
    assert calls(fast) == before


# -- the SDK's refusals hold on it ------------------------------------------------------------


def _call(request_id: int = 9) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": ECHO},
    }


@pytest.mark.parametrize(
    ("change", "status"),
    [
        pytest.param({"Host": "evil.example.com"}, 421, id="dns-rebinding-host"),
        pytest.param({"Origin": "https://evil.example.com"}, 403, id="foreign-origin"),
        pytest.param({"Accept": "application/json"}, 406, id="no-event-stream-accepted"),
        pytest.param({"Accept": "text/event-stream"}, 406, id="no-json-accepted"),
        pytest.param({"Content-Type": "text/plain"}, 400, id="not-json"),
        pytest.param({"Content-Type": "application/jsonx"}, 415, id="json-lookalike"),
        pytest.param({"Mcp-Session-Id": "0123456789abcdef"}, 404, id="unknown-session"),
        pytest.param({"Mcp-Session-Id": ""}, 400, id="no-session"),
        pytest.param({"MCP-Protocol-Version": "1999-01-01"}, 400, id="unknown-protocol"),
    ],
)
def test_a_request_the_sdk_refuses_is_refused_the_same_way(
    served: tuple[str, FastPath], change: dict[str, str], status: int
) -> None:
    url, fast = served
    headers = {**open_session(url), **change}
    if not headers["Mcp-Session-Id"]:
        del headers["Mcp-Session-Id"]
    before = calls(fast)
    got, _, body = post(url, _call(), headers)
    assert got == status, body
    assert calls(fast) == before
    # The same request for a method the fast path never answers: the SDK's own refusal.
    assert post(url, {"jsonrpc": "2.0", "id": 9, "method": "resources/list"}, headers)[0] == status


def test_a_body_over_the_size_cap_is_refused(registry: ToolRegistry) -> None:
    with running(registry, max_request_bytes=2048) as (url, fast):
        headers = open_session(url)
        big = _call()
        big["params"]["arguments"] = {"text": "x" * 4096}
        status, _, _ = post(url, big, headers)
        assert status == 413
        assert calls(fast) == 0
        assert post(url, _call(), headers)[0] == 200
        assert calls(fast) == 1


def test_a_deleted_session_is_not_found(served: tuple[str, FastPath]) -> None:
    url, _ = served
    headers = open_session(url)
    request = urllib.request.Request(url, method="DELETE", headers=headers)
    with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as answer:
        assert answer.status == 200
    assert post(url, _call(), headers)[0] == 404


# -- auth and per-user credentials ----------------------------------------------------------------


def test_bearer_auth_and_a_session_kept_to_its_token(registry: ToolRegistry) -> None:
    with running(registry, tokens=(TOKEN, OTHER)) as (url, fast):
        status, answer, _ = post(url, _call(), {})
        assert status == 401
        assert answer["www-authenticate"].startswith("Bearer")
        headers = open_session(url, {"Authorization": f"Bearer {TOKEN}"})
        assert (
            post(url, _call(), {**headers, "Authorization": "Bearer wrong-token-0123456789"})[0]
            == 401
        )
        # Another valid token cannot use this session: the SDK's answer, as if it did not exist.
        assert post(url, _call(), {**headers, "Authorization": f"Bearer {OTHER}"})[0] == 404
        assert calls(fast) == 0
        assert post(url, _call(), headers)[0] == 200
        assert calls(fast) == 1


def test_each_caller_gets_the_credential_of_their_own_request_header(
    registry: ToolRegistry,
) -> None:
    with running(registry, credential_headers={"x-user-token": "api-token"}) as (url, fast):

        async def size(token: str) -> Any:
            async with session(url, {"X-User-Token": token}) as client:
                return (await client.call_tool("token_size", {})).structured_content

        assert _run(size, "a" * 20) == {"size": 20}
        assert _run(size, "b" * 31) == {"size": 31}
        assert tool_calls(fast) == 2


# -- what a call says on the way ---------------------------------------------------------------


def test_progress_turns_the_reply_into_a_stream(served: tuple[str, FastPath]) -> None:
    url, fast = served
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def use() -> Any:
        async with session(url) as client:
            before = tool_calls(fast)
            result = await client.call_tool("steps", {"count": 3}, progress_callback=progress)
            return result, tool_calls(fast) - before

    result, answered = _run(use)
    assert result.structured_content == {"steps": 3}
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert answered == 1


def test_log_messages_reach_the_client_at_the_level_it_set(
    registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API_TOKEN", "log-secret-0123456789")
    messages: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification):
            messages.append(message.params)

    with running(registry) as (url, fast):

        async def use() -> Any:
            async with session(url, on_message=on_message) as client:
                # The request itself: set_logging_level warns that the 2026-07-28
                # protocol dropped it, but this connection speaks 2025-11-25.
                request = types.SetLevelRequest(params=types.SetLevelRequestParams(level="warning"))
                await client.send_request(request, types.EmptyResult)
                return await client.call_tool("chatty", {"levels": ["info", "warning", "error"]})

        result = _run(use)
    assert result.structured_content == {"sent": 3}
    assert [(m.level, m.data) for m in messages] == [
        ("warning", "warning message, token ***"),
        ("error", "error message, token ***"),
    ]
    assert tool_calls(fast) == 1


@pytest.mark.parametrize("action", ["accept", "decline"])
def test_a_question_to_the_user_and_its_answer(served: tuple[str, FastPath], action: str) -> None:
    url, fast = served
    asked: list[str] = []

    async def user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        content = {"name": "Ada"} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    async def use() -> Any:
        async with session(url, elicitation=user) as client:
            before = tool_calls(fast)
            result = await client.call_tool("ask", {"question": "Who?"})
            return result, tool_calls(fast) - before

    result, answered = _run(use)
    assert asked == ["Who?"]
    assert result.structured_content == {
        "action": action,
        "name": "Ada" if action == "accept" else "",
    }
    assert answered == 1


def test_a_stateless_server_answers_on_the_fast_path_and_cannot_ask(
    registry: ToolRegistry,
) -> None:
    with running(registry, stateless=True) as (url, fast):

        async def use() -> Any:
            async with session(url, elicitation=lambda *_: None) as client:
                echoed = await client.call_tool("echo", ECHO)
                asked = await client.call_tool("ask", {"question": "Who?"})
                return echoed, asked

        echoed, asked = _run(use)
    assert echoed.structured_content == ECHO
    assert asked.is_error is True
    assert "the client cannot be asked" in asked.content[0].text
    assert tool_calls(fast) == 2


# -- cancellation, deadlines, busy -------------------------------------------------------------


def test_a_cancelled_call_stops_and_is_answered_request_cancelled(
    served: tuple[str, FastPath], tmp_path: Path
) -> None:
    url, fast = served
    headers = open_session(url)
    before = tool_calls(fast)
    marker = str(tmp_path / "nap")
    answers: list[tuple[int, dict[str, str], str]] = []
    call = {
        "jsonrpc": "2.0",
        "id": 11,
        "method": "tools/call",
        "params": {"name": "nap", "arguments": {"seconds": 50, "marker": marker}},
    }
    calling = threading.Thread(target=lambda: answers.append(post(url, call, headers)))
    calling.start()
    _wait_for(Path(marker + ".started"))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}}
    assert post(url, cancel, headers)[0] == 202
    calling.join(timeout=WAIT_SECONDS)
    _wait_for(Path(marker + ".cancelled"))
    [(status, _, body)] = answers
    assert status == 200
    assert json.loads(body)["error"] == {"code": -32800, "message": "Request cancelled"}
    assert tool_calls(fast) == before + 1


def test_a_call_past_the_limit_is_refused_busy_at_once(
    registry: ToolRegistry, tmp_path: Path
) -> None:
    marker = str(tmp_path / "nap")
    with running(registry, max_calls=1, max_queued=0) as (url, _):
        headers = open_session(url)
        nap = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 50, "marker": marker}},
        }
        answers: list[tuple[int, dict[str, str], str]] = []
        first = threading.Thread(target=lambda: answers.append(post(url, nap, headers)))
        first.start()
        _wait_for(Path(marker + ".started"))
        busy = json.loads(post(url, _call(2), headers)[2])["result"]
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        assert post(url, cancel, headers)[0] == 202
        first.join(timeout=WAIT_SECONDS)
    assert busy["isError"] is True
    assert "Tool 'echo' was not run: busy, retry later" in busy["content"][0]["text"]
    assert json.loads(answers[0][2])["error"]["code"] == -32800


def test_a_call_past_its_deadline_is_an_error(registry: ToolRegistry) -> None:
    with running(registry, call_timeout=0.2) as (url, fast):
        headers = open_session(url)
        nap = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 50}},
        }
        result = json.loads(post(url, nap, headers)[2])["result"]
    assert result["isError"] is True
    assert "0.2" in result["content"][0]["text"]
    assert calls(fast) == 1


def test_a_silent_call_gets_keepalives_on_a_stream(
    registry: ToolRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agentkit.mcp.fastpath.KEEPALIVE_SECONDS", 0.05)
    release = tmp_path / "release"
    with running(registry) as (url, _):
        headers = open_session(url)
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "wait_for", "arguments": {"path": str(release)}},
        }
        with streaming_post(url, call, headers) as answer:
            assert answer.headers["Content-Type"] == "text/event-stream"
            assert answer.readline() == b": ping\r\n"  # a keep-alive while the call runs
            release.write_text("go")
            rest = answer.read().decode()
    data = [line[len("data: ") :] for line in rest.splitlines() if line.startswith("data: ")]
    assert json.loads(data[-1])["result"]["structuredContent"] == {"waited": True}


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "sdk-path"])
def test_on_a_stateless_server_a_client_stops_a_call_by_leaving(
    registry: ToolRegistry, tmp_path: Path, fast_path: bool
) -> None:
    """A stateless server has no session to find a call by, so a handshake-era
    client's ``notifications/cancelled`` cannot reach it; closing the call's
    connection stops it, on either path alike."""
    with running(registry, stateless=True, fast_path=fast_path) as (url, _):
        address = urllib.parse.urlsplit(url)
        marker = str(tmp_path / "nap")
        call = {
            "jsonrpc": "2.0",
            "id": 12,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 50, "marker": marker}},
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        assert address.hostname is not None
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
        try:
            connection.request("POST", address.path, json.dumps(call), headers)
            _wait_for(Path(marker + ".started"))
        finally:
            connection.close()
        _wait_for(Path(marker + ".cancelled"))
        after = {**call, "params": {"name": "echo", "arguments": ECHO}}
        status, answer = _answer(*post(url, after, {"MCP-Protocol-Version": PROTOCOL_VERSION}))
        assert status == 200
        assert answer["result"]["structuredContent"] == ECHO
    assert not Path(marker + ".finished").exists()


def test_initialize_itself_stays_with_the_sdk(served: tuple[str, FastPath]) -> None:
    url, fast = served
    before = calls(fast)
    status, answer, _ = post(url, INITIALIZE, {"MCP-Protocol-Version": PROTOCOL_VERSION})
    assert status == 200
    assert answer["content-type"] == "text/event-stream"
    assert calls(fast) == before


# -- the SDK's insides it relies on --------------------------------------------------------------


def test_the_sdk_transport_keeps_the_idle_clock_the_fast_path_counts_on(
    served: tuple[str, FastPath],
) -> None:
    url, fast = served
    transport = fast._sessions[open_session(url)["Mcp-Session-Id"]].transport
    assert isinstance(transport.idle_scope, anyio.CancelScope)
    assert isinstance(transport._idle_timeout, (int, float))
    assert isinstance(transport._requests_in_flight, int)


# -- the same answers as the SDK's ---------------------------------------------------------------


@pytest.fixture(scope="module")
def sdk_only(registry: ToolRegistry) -> Iterator[str]:
    """A server started with ``--no-fast-path``: the SDK answers all."""
    with running(registry, fast_path=False) as (url, fast):
        yield url
        assert not fast.answered


def _answer(status: int, headers: dict[str, str], body: str) -> tuple[int, Any]:
    """The status and the JSON-RPC answer, whether sent as JSON or as an SSE stream."""
    if headers.get("content-type") == "text/event-stream":
        data = [line[len("data: ") :] for line in body.splitlines() if line.startswith("data: ")]
        return status, json.loads(data[-1]) if data else None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body


def _tool_call(params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(_tool_call({"name": "echo", "arguments": ECHO}), id="a-call"),
        pytest.param({**_tool_call({"name": "echo", "arguments": ECHO}), "x": 1}, id="extra-field"),
        pytest.param(
            {**_tool_call({"name": "echo", "arguments": ECHO}), "id": "s-1"}, id="string-id"
        ),
        pytest.param({**_tool_call({"name": "echo", "arguments": ECHO}), "id": 0}, id="id-0"),
        pytest.param({**_tool_call({"name": "echo", "arguments": ECHO}), "id": 1.5}, id="float-id"),
        pytest.param({**_tool_call({"name": "echo", "arguments": ECHO}), "id": None}, id="null-id"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, id="no-params"),
        pytest.param(_tool_call({"name": 123}), id="name-not-a-string"),
        pytest.param(_tool_call({"name": "echo", "arguments": [1]}), id="arguments-not-an-object"),
        pytest.param(
            _tool_call({"name": "echo", "arguments": {"text": 5}}), id="argument-of-wrong-type"
        ),
        pytest.param(_tool_call({"name": "echo"}), id="arguments-missing"),
        pytest.param(_tool_call({"name": "missing"}), id="unknown-tool"),
        pytest.param(
            _tool_call({"name": "echo", "arguments": ECHO, "_meta": {"progressToken": True}}),
            id="boolean-progress-token",
        ),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, id="list"),
        pytest.param(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "abc"}},
            id="list-with-a-cursor",
        ),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}, id="ping"),
        pytest.param({"id": 1, "method": "ping"}, id="no-jsonrpc-member"),
        pytest.param(
            {"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {}}, id="request-and-result"
        ),
        pytest.param({"jsonrpc": "2.0", "method": "ping"}, id="ping-as-a-notification"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "id": 2}', id="duplicate-id"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\\ud800"}}}',
            id="lone-surrogate-escape",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":NaN}}}',
            id="nan",
        ),
        pytest.param(
            b"\xef\xbb\xbf" + json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode(),
            id="bom",
        ),
        pytest.param(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode("utf-16"), id="utf-16"
        ),
    ],
)
def test_the_fast_path_answers_what_the_sdk_answers(
    served: tuple[str, FastPath], sdk_only: str, message: Any
) -> None:
    fast_url, _ = served
    answers = [_answer(*post(url, message, open_session(url))) for url in (fast_url, sdk_only)]
    assert answers[0] == answers[1]


# -- the same answers with tools deferred (progressive discovery) ---------------------------------

DEFERRED = frozenset({"echo", "n*"})


@pytest.fixture(scope="module")
def both_deferring(registry: ToolRegistry) -> Iterator[tuple[str, str]]:
    """Two servers deferring ``DEFERRED``: one on the fast path, one on the SDK's alone."""
    with (
        running(registry, deferred=DEFERRED) as (fast_url, fast),
        running(registry, deferred=DEFERRED, fast_path=False) as (sdk_url, _),
    ):
        yield fast_url, sdk_url
        assert fast.answered


_SEARCH = {"name": "search_tools", "arguments": {"query": "echo"}}


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], id="list"),
        pytest.param([_tool_call(_SEARCH)], id="search"),
        pytest.param(
            [_tool_call({"name": "search_tools", "arguments": {"query": "x", "limit": 0}})],
            id="search-with-a-bad-limit",
        ),
        pytest.param([_tool_call({"name": "echo", "arguments": ECHO})], id="deferred-call"),
        pytest.param(
            [_tool_call(_SEARCH), {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}],
            id="list-after-a-search",
        ),
    ],
)
def test_with_deferred_tools_the_fast_path_answers_what_the_sdk_answers(
    both_deferring: tuple[str, str], messages: list[dict[str, Any]]
) -> None:
    answers = []
    for url in both_deferring:
        headers = open_session(url)
        answers.append([_answer(*post(url, message, headers)) for message in messages])
    assert answers[0] == answers[1]
    last = answers[0][-1][1]["result"]
    if "tools" in last and messages[-1]["method"] == "tools/list":
        names = [tool["name"] for tool in last["tools"]]
        searched = len(messages) > 1
        assert ("echo" in names) is searched  # listed to the session that found it
        assert names[-1] == "search_tools"


# -- answers and cancellations belong to a session -----------------------------------------------


def _asking_session(url: str) -> dict[str, str]:
    """A session opened with raw HTTP by a client that can be asked (elicitation)."""
    initialize = json.loads(json.dumps(INITIALIZE))
    initialize["params"]["capabilities"] = {"elicitation": {}}
    answer = post(url, initialize, {})[1]
    return {"Mcp-Session-Id": answer["mcp-session-id"], "MCP-Protocol-Version": PROTOCOL_VERSION}


def test_only_the_session_asked_can_answer_or_cancel(served: tuple[str, FastPath]) -> None:
    url, _ = served
    asked, other = _asking_session(url), _asking_session(url)
    call = _tool_call({"name": "ask", "arguments": {"question": "Who?"}})
    with streaming_post(url, call, asked) as stream:
        assert stream.headers["Content-Type"] == "text/event-stream"
        question = next_data(stream)
        assert question["method"] == "elicitation/create"
        # Another session's answer and cancellation do not reach this call.
        forged = {"action": "accept", "content": {"name": "Mallory"}}
        post(url, {"jsonrpc": "2.0", "id": question["id"], "result": forged}, other)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        post(url, cancel, other)
        # The session asked answers: its answer is the one the call hears.
        answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}
        assert post(url, answer, asked)[0] == 202
        rest = stream.read().decode()
    data = [line[len("data: ") :] for line in rest.splitlines() if line.startswith("data: ")]
    result = json.loads(data[-1])["result"]
    assert result["structuredContent"] == {"action": "decline", "name": ""}


def test_without_the_fast_path_the_sdk_answers(registry: ToolRegistry) -> None:
    with running(registry, stateless=True, fast_path=False) as (url, fast):

        async def use() -> Any:
            async with session(url) as client:
                return await client.call_tool("echo", ECHO)

        echoed = _run(use)
    assert echoed.structured_content == ECHO
    assert tool_calls(fast) == 0


def test_a_lone_surrogate_escape_is_answered_on_either_path(
    served: tuple[str, FastPath], registry: ToolRegistry
) -> None:
    # The stdio server's gap (tests/mcp/test_stdio.py): over HTTP the POST itself is answered,
    # on the fast path and with --no-fast-path.
    line = (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
        b'"params":{"name":"echo","arguments":{"text":"\\ud800"}}}'
    )
    fast_url, _ = served
    with running(registry, fast_path=False) as (sdk_url, fast):
        for url in (fast_url, sdk_url):
            status, answer = _answer(*post(url, line, open_session(url)))
            assert status == 400
            assert answer["error"]["code"] == PARSE_ERROR
        assert tool_calls(fast) == 0
