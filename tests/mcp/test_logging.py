"""The logging capability, end to end: ``logging/setLevel`` and ``notifications/message``
over streamable HTTP (a real server process) and stdio, with the SDK's own clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from tests.support import loopback
from tests.support.serving import Served, server_fixture, session, stdio_session

SECRET = "tok-logging-secret-0123456789"
WAIT_SECONDS = 60

CHATTY = """\
name: chatty
version: 1.0.0
description: Logs one message at each level it is given.
credentials: [api-token]
input_schema: {parameters: [{name: levels, type: list, items: string}]}
output_schema: {parameters: [{name: sent, type: integer}]}
backend: {python: "tests.support.serve_tools:chatty"}
"""
# The key travels in the query string: the retry's message names the URL, redacted.
FLAKY = """\
name: flaky
version: 1.0.0
description: An upstream that fails once, then answers.
credentials: [api-token]
output_schema: {parameters: [{name: ok, type: boolean}]}
backend:
  http:
    url: {origin}/flaky
    auth: {api_key: {credential: api-token, in: query, name: key}}
    retry: {attempts: 2, backoff: 0, on_status: [503]}
"""


class Flaky:
    """503 on every odd request, 200 on every even one."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, handler: loopback.Handler) -> None:
        self.count += 1
        if self.count % 2:
            handler.reply(503, {"error": "try again"})
        else:
            handler.reply(200, {"ok": True})


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tools = tmp_path_factory.mktemp("logging")
    with loopback.serve({"/flaky": Flaky()}) as origin:
        (tools / "chatty.yaml").write_text(CHATTY)
        (tools / "flaky.yaml").write_text(FLAKY.replace("{origin}", origin))
        (tools / "old.yaml").write_text(
            CHATTY.replace("name: chatty", "name: old_chatty\ndeprecated: use chatty")
        )
        yield tools


server = server_fixture(env={"API_TOKEN": SECRET})


class Messages:
    """The ``notifications/message`` a client received, as (level, logger, text)."""

    def __init__(self) -> None:
        self.received: list[tuple[str, str | None, str]] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification):
            params = message.params
            self.received.append((params.level, params.logger, str(params.data)))

    async def arrived(self, count: int) -> list[tuple[str, str | None, str]]:
        """What came, once ``count`` messages have (the client handles each in a task of
        its own, so the call's answer may overtake the last); then starts afresh. Sent in
        order, so once the last expected one is here, none sent before it is missing."""
        with anyio.fail_after(WAIT_SECONDS):
            while len(self.received) < count:
                await anyio.sleep(0.01)
        came, self.received = self.received, []
        return came

    async def levels(self, count: int) -> list[str]:
        return [level for level, _, _ in await self.arrived(count)]


async def _set_level(client: ClientSession, level: types.LoggingLevel) -> Any:
    # The request itself: ClientSession.set_logging_level warns that the 2026-07-28
    # protocol dropped it, but these connections speak 2025-11-25.
    request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=level))
    return await client.send_request(request, types.EmptyResult)


async def _scenario(client: ClientSession, messages: Messages) -> dict[str, Any]:
    assert client.initialize_result is not None
    seen: dict[str, Any] = {"capabilities": client.initialize_result.capabilities}
    await client.call_tool("chatty", {"levels": ["debug", "info"]})
    seen["default"] = await messages.levels(1)

    seen["set"] = await _set_level(client, "warning")
    seen["chatty"] = await client.call_tool("chatty", {"levels": ["debug", "info", "warning"]})
    seen["filtered"] = await messages.arrived(1)

    seen["flaky"] = await client.call_tool("flaky", {})
    seen["retry"] = await messages.arrived(1)

    await _set_level(client, "debug")
    await client.call_tool("chatty", {"levels": ["debug"]})
    seen["debug"] = await messages.levels(1)
    return seen


def _check(seen: dict[str, Any]) -> None:
    assert seen["capabilities"].logging is not None
    assert seen["default"] == ["info"]  # before logging/setLevel: info and above
    assert seen["set"] == types.EmptyResult()
    assert seen["chatty"].structured_content == {"sent": 3}
    assert seen["filtered"] == [("warning", None, "warning message, token ***")]
    assert seen["flaky"].structured_content == {"ok": True}
    [(level, logger, text)] = seen["retry"]
    assert (level, logger) == ("warning", "agentkit.http")
    assert "/flaky?key=*** returned 503; attempt 2 of 2 in 0.0 s" in text
    assert text.startswith("GET http://127.0.0.1:")
    assert seen["debug"] == ["debug"]
    assert SECRET not in repr(seen)


def test_log_levels_and_messages_over_http(server: Served) -> None:
    messages = Messages()

    async def run() -> dict[str, Any]:
        with anyio.fail_after(WAIT_SECONDS):
            async with session(server.url, on_message=messages) as client:
                return await _scenario(client, messages)

    _check(anyio.run(run))


def test_log_levels_and_messages_over_stdio(folder: Path) -> None:
    messages = Messages()
    env = {"API_TOKEN": SECRET}

    async def run() -> dict[str, Any]:
        with anyio.fail_after(WAIT_SECONDS):
            async with stdio_session(["--tools", str(folder)], env, on_message=messages) as client:
                return await _scenario(client, messages)

    _check(anyio.run(run))


def test_calling_a_deprecated_tool_warns_its_client(server: Served) -> None:
    messages = Messages()

    async def run() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            async with session(server.url, on_message=messages) as client:
                return await client.call_tool("old_chatty", {"levels": []}), await messages.arrived(
                    1
                )

    result, warned = anyio.run(run)
    assert result.structured_content == {"sent": 0}
    assert warned == [("warning", "agentkit", "Tool 'old_chatty' is deprecated: use chatty")]


def test_an_unknown_level_is_refused(server: Served) -> None:
    async def run() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            async with session(server.url) as client:
                raw = types.SetLevelRequest.model_construct(
                    params=types.SetLevelRequestParams.model_construct(level="loud")
                )
                with pytest.raises(MCPError) as caught:
                    await client.send_request(raw, types.EmptyResult)
                return caught.value

    assert anyio.run(run).error.code == INVALID_PARAMS  # the SDK checks the level
