"""Asking the user (``elicitation/create``) from a tool, end to end: a real server over
streamable HTTP and stdio, with the SDK's own clients answering."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import mcp_types as types

from tests.support.serving import Served, server_fixture, session, stdio_session, tools_folder

SECRET = "tok-elicit-secret-0123456789"
WAIT_SECONDS = 60

ASKING = """\
name: {name}
version: 1.0.0
description: Asks the user for a name.
{credentials}
input_schema: {{parameters: [{{name: question, type: string}}]}}
output_schema: {{parameters: [{{name: action, type: string}}, {{name: name, type: string}}]}}
backend: {{python: "tests.support.serve_tools:{function}"}}
"""


def _asking(name: str, function: str, credentials: str = "") -> str:
    return ASKING.format(name=name, function=function, credentials=credentials)


folder = tools_folder(
    {
        "ask.yaml": _asking("ask", "ask", "credentials: [api-token]"),
        "ask_async.yaml": _asking("ask_async", "ask_async"),
        "ask_wrongly.yaml": _asking("ask_wrongly", "ask_wrongly"),
    },
    scope="module",
)
server = server_fixture(env={"API_TOKEN": SECRET})


class User:
    """Answers every question with ``action`` (and a name when accepting); keeps the questions."""

    def __init__(self, action: str = "accept") -> None:
        self.action = action
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        content = {"name": "Ada"} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


async def _calls(url: str, user: User | None, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    with anyio.fail_after(WAIT_SECONDS):
        async with session(url, elicitation=user) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]


def test_a_sync_tool_asks_and_the_user_accepts(server: Served) -> None:
    user = User("accept")
    [result] = anyio.run(_calls, server.url, user, ("ask", {"question": "Who are you?"}))
    assert result.is_error is False
    assert result.structured_content == {"action": "accept", "name": "Ada"}
    [asked] = user.asked
    assert isinstance(asked, types.ElicitRequestFormParams)
    assert asked.message == "Who are you? (token ***)"  # the call's secrets are redacted
    assert asked.requested_schema["properties"]["name"]["default"] == "***"
    assert SECRET not in repr(user.asked)


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_an_async_tool_asks_and_hears_a_decline_or_cancel(server: Served, action: str) -> None:
    user = User(action)
    [result] = anyio.run(_calls, server.url, user, ("ask_async", {"question": "Name?"}))
    assert result.structured_content == {"action": action, "name": ""}
    assert [asked.message for asked in user.asked] == ["Name?"]


def test_a_client_without_the_elicitation_capability_gets_a_clear_error(server: Served) -> None:
    [result] = anyio.run(_calls, server.url, None, ("ask_async", {"question": "Name?"}))
    assert result.is_error is True
    assert result.content[0].text == (
        "Error: Tool 'ask_async' failed: ElicitationError: the client cannot be asked: "
        "it did not declare the elicitation capability, or the connection has no way back "
        "to it (a stateless server's session)"
    )


def test_the_sync_form_in_an_async_tool_is_refused_not_a_deadlock(server: Served) -> None:
    user = User()
    [result] = anyio.run(_calls, server.url, user, ("ask_wrongly", {"question": "Name?"}))
    assert result.is_error is True
    assert "use 'await aelicit(...)'" in result.content[0].text
    assert user.asked == []


def test_asking_over_stdio(folder: Path) -> None:
    user = User("accept")
    env = {"API_TOKEN": SECRET}

    async def run() -> list[Any]:
        with anyio.fail_after(WAIT_SECONDS):
            async with stdio_session(["--tools", str(folder)], env, elicitation=user) as client:
                return [
                    await client.call_tool("ask", {"question": "Who?"}),
                    await client.call_tool("ask_async", {"question": "Name?"}),
                ]

    sync, asynchronous = anyio.run(run)
    assert sync.structured_content == {"action": "accept", "name": "Ada"}
    assert asynchronous.structured_content == {"action": "accept", "name": "Ada"}
    assert [asked.message for asked in user.asked] == ["Who? (token ***)", "Name?"]
