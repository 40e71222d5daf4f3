"""A request the user allowed goes only where they were shown: after a confirmation, a
redirect that would send the method and body again (307, 308; 301 and 302 of any
method but POST) is not followed, and the call says so; one that turns the request
into a GET without a body (303; 301 and 302 after a POST; a GET's own) still is.

A real loopback API records every request that reaches it; the user is the MCP SDK's
client accepting each question, as in ``agentkit serve``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry
from tests.mcp.test_confirm import User
from tests.support.loopback import running

WAIT_SECONDS = 60
TARGET = "/admin/purge-everything?all=true"


class Api(ThreadingHTTPServer):
    """Answers ``/items`` with a redirect to ``TARGET`` (``status``), ``TARGET`` and the
    pages with 200; keeps each request's method, path and body."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.status = 307
        self.received: list[tuple[str, str, bytes]] = []

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Api
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.received.append((self.command, self.path, body))
        if not self.path.startswith("/items"):
            self._send(200, b'{"items": [], "done": true}')
        elif "p=1" in self.path:  # a paginated tool's first page is answered, the next not
            self._send(200, b'{"items": [1], "done": true}')
        else:
            self.send_response(self.server.status)
            self.send_header("Location", TARGET)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[Api]:
    with running(Api()) as server:
        yield server


def _tool(origin: str, method: str, *, confirm: bool = True, paginate: bool = False) -> str:
    body = "" if method in ("GET", "DELETE") else '    json: {title: "{{ inputs.title }}"}\n'
    outputs = "[{name: items, type: list}, {name: truncated, type: boolean}]"
    return (
        f"name: act\nversion: 1.0.0\ndescription: Act.\nconfirm: {str(confirm).lower()}\n"
        "input_schema: {parameters: [{name: title, type: string}]}\n"
        "output_schema: {parameters: "
        + (outputs if paginate else "[{name: done, type: boolean}]")
        + "}\n"
        f"backend:\n  http:\n    method: {method}\n    url: {origin}/items\n"
        + body
        + (
            '    paginate: {page: {param: p}, items: "{{ response.json.items }}", output: items, max_pages: 3}\n'
            if paginate
            else ""
        )
    )


def _run(tmp_path: Path, definition: str, *, allow_unconfirmed: bool = False) -> tuple[Any, User]:
    from mcp import Client

    from agentkit.declarative.loader import load_tools
    from agentkit.mcp.server import build_server

    (tmp_path / "act.yaml").write_text(definition)
    registry = ToolRegistry()
    load_tools(tmp_path, registry=registry)
    user = User("accept")

    async def run() -> Any:
        executor = ToolExecutor()
        with executor, anyio.fail_after(WAIT_SECONDS):
            server = build_server(registry, executor, allow_unconfirmed=allow_unconfirmed)
            async with Client(server, mode="legacy", elicitation_callback=user) as client:
                return await client.call_tool("act", {"title": "hello"})

    return anyio.run(run), user


@pytest.mark.parametrize(
    ("method", "status"),
    [
        pytest.param("POST", 307, id="POST-307"),
        pytest.param("POST", 308, id="POST-308"),
        pytest.param("PUT", 301, id="PUT-301"),
        pytest.param("PUT", 302, id="PUT-302"),
        pytest.param("PUT", 307, id="PUT-307"),
        pytest.param("PATCH", 308, id="PATCH-308"),
        pytest.param("DELETE", 307, id="DELETE-307"),
        pytest.param("DELETE", 301, id="DELETE-301"),
    ],
)
def test_an_allowed_request_is_not_sent_again_where_a_redirect_says(
    tmp_path: Path, api: Api, method: str, status: int
) -> None:
    api.status = status
    result, user = _run(tmp_path, _tool(api.origin, method))
    [asked] = user.asked
    assert f"{method} {api.origin}/items\n" in asked
    assert result.is_error is True
    text = result.content[0].text
    assert f"{method} {api.origin}/items answered {status}, redirecting to " in text
    assert f"{api.origin}{TARGET}" in text
    assert "the redirect was not followed and nothing was sent to it" in text
    assert [(sent, path) for sent, path, _ in api.received] == [(method, "/items")]


@pytest.mark.parametrize(
    ("method", "status"),
    [
        pytest.param("POST", 303, id="POST-303"),
        pytest.param("POST", 302, id="POST-302"),
        pytest.param("POST", 301, id="POST-301"),
        pytest.param("PUT", 303, id="PUT-303"),
        pytest.param("DELETE", 303, id="DELETE-303"),
        pytest.param("GET", 307, id="GET-307"),
        pytest.param("GET", 302, id="GET-302"),
    ],
)
def test_an_allowed_request_may_be_followed_by_a_get_without_its_body(
    tmp_path: Path, api: Api, method: str, status: int
) -> None:
    api.status = status
    result, _ = _run(tmp_path, _tool(api.origin, method))
    assert result.is_error is False, result.content[0].text
    first, then = api.received
    assert first[:2] == (method, "/items")
    assert then == ("GET", TARGET, b"")


def test_a_paginated_tools_later_pages_are_held_to_it_too(tmp_path: Path, api: Api) -> None:
    result, user = _run(tmp_path, _tool(api.origin, "POST", paginate=True))
    assert len(user.asked) == 1
    assert result.is_error is True
    assert "page 2: " in result.content[0].text
    assert "the redirect was not followed" in result.content[0].text
    assert [(method, path.split("?")[0]) for method, path, _ in api.received] == [
        ("POST", "/items"),
        ("POST", "/items"),
    ]


@pytest.mark.parametrize(
    ("confirm", "allow_unconfirmed"),
    [
        pytest.param(False, False, id="a-tool-that-does-not-ask"),
        pytest.param(True, True, id="run-unasked-by-allow-unconfirmed"),
    ],
)
def test_a_request_nobody_was_shown_follows_redirects_as_before(
    tmp_path: Path, api: Api, confirm: bool, allow_unconfirmed: bool
) -> None:
    from mcp import Client

    from agentkit.declarative.loader import load_tools
    from agentkit.mcp.server import build_server

    (tmp_path / "act.yaml").write_text(_tool(api.origin, "POST", confirm=confirm))
    registry = ToolRegistry()
    load_tools(tmp_path, registry=registry)

    async def run() -> Any:  # a client that cannot be asked
        executor = ToolExecutor()
        with executor, anyio.fail_after(WAIT_SECONDS):
            server = build_server(registry, executor, allow_unconfirmed=allow_unconfirmed)
            async with Client(server, mode="legacy") as client:
                return await client.call_tool("act", {"title": "hello"})

    result = anyio.run(run)
    assert result.is_error is False, result.content[0].text
    assert [(method, path) for method, path, _ in api.received] == [
        ("POST", "/items"),
        ("POST", TARGET),
    ]
    assert json.loads(api.received[1][2]) == {"title": "hello"}
