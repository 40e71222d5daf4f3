"""``confirm: true``, end to end: before a destructive call acts, the server asks the user
(``elicitation/create``) what it would send; a real server over streamable HTTP and stdio,
the SDK's own clients answering, a loopback upstream counting what reached it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import mcp_types as types

from agentkit.tool import Tool
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry
from tests.support import loopback
from tests.support.serving import Served, server_fixture, serving, session, stdio_session

SECRET = "tok-confirm-secret-0123456789"
WAIT_SECONDS = 60

# The key goes in the query string and the body quotes it: the question shows both, masked.
CLOSE = """\
name: close_issue
version: 1.0.0
description: Close an issue, for good.
confirm: true
credentials: [api-token]
input_schema:
  parameters:
    - {name: number, type: integer}
    - {name: reason, type: string}
output_schema: {parameters: [{name: closed, type: boolean}]}
backend:
  http:
    method: POST
    url: {origin}/issues/close
    auth: {api_key: {credential: api-token, in: query, name: key}}
    json:
      number: "{{ inputs.number }}"
      reason: "{{ inputs.reason }}"
      signed: "by {{ credentials['api-token'] }}"
"""
WIPE = """\
name: wipe
version: 1.0.0
description: Wipe the scratch space (a Python tool).
confirm: true
input_schema: {parameters: [{name: seconds, type: float}]}
output_schema: {parameters: [{name: slept, type: float}]}
backend: {python: "tests.support.serve_tools:doze"}
"""


class Upstream:
    """The API the tool closes issues on: keeps each body it received."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []

    def __call__(self, handler: loopback.Handler) -> None:
        self.bodies.append(json.loads(handler.body))
        handler.reply(200, {"closed": True})


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[str, Upstream]]:
    recorder = Upstream()
    with loopback.serve({"/issues/close": recorder}) as origin:
        yield origin, recorder


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, upstream: tuple[str, Upstream]) -> Path:
    tools = tmp_path_factory.mktemp("confirm")
    (tools / "close.yaml").write_text(CLOSE.replace("{origin}", upstream[0]))
    (tools / "wipe.yaml").write_text(WIPE)
    return tools


server = server_fixture(env={"API_TOKEN": SECRET})


class User:
    """Answers every question with ``action``; keeps what it was asked."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action=self.action)  # type: ignore[arg-type]


CLOSE_ARGS = {"number": 7, "reason": "spam"}


async def _call(url: str, user: User | None, name: str, arguments: dict[str, Any]) -> Any:
    with anyio.fail_after(WAIT_SECONDS):
        async with session(url, elicitation=user) as client:
            return await client.call_tool(name, arguments)


def test_accepted_the_request_shown_is_the_request_sent(
    server: Served, upstream: tuple[str, Upstream]
) -> None:
    origin, recorder = upstream
    before = len(recorder.bodies)
    user = User("accept")
    result = anyio.run(_call, server.url, user, "close_issue", CLOSE_ARGS)
    assert result.is_error is False
    assert result.structured_content == {"closed": True}
    assert recorder.bodies[before:] == [{"number": 7, "reason": "spam", "signed": f"by {SECRET}"}]
    [asked] = user.asked
    # "by <secret>" is rendered from the credential: the call's redactor masks it whole.
    assert asked == (
        "Tool 'close_issue' wants to send this request:\n"
        f"POST {origin}/issues/close?key=***\n"
        "Content-Length: 77\n"
        "Content-Type: application/json\n\n"
        '{"number": 7, "reason": "spam", "signed": "***"}\n\n'
        "Allow it?"
    )


@pytest.mark.parametrize(
    ("action", "said"),
    [
        pytest.param("decline", "declined by the user; nothing was done", id="decline"),
        pytest.param(
            "cancel",
            "declined by the user (the question was answered 'cancel'); nothing was done",
            id="cancel",
        ),
    ],
)
def test_declined_nothing_is_sent(
    server: Served, upstream: tuple[str, Upstream], action: str, said: str
) -> None:
    recorder = upstream[1]
    before = len(recorder.bodies)
    user = User(action)
    result = anyio.run(_call, server.url, user, "close_issue", CLOSE_ARGS)
    assert result.is_error is True
    assert result.content[0].text == f"Error: Tool 'close_issue' was not run: {said}"
    assert len(recorder.bodies) == before
    assert len(user.asked) == 1


def test_a_client_that_cannot_be_asked_is_refused(
    server: Served, upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]
    before = len(recorder.bodies)
    result = anyio.run(_call, server.url, None, "close_issue", CLOSE_ARGS)
    assert result.is_error is True
    assert result.content[0].text == (
        "Error: Tool 'close_issue' was not run: it asks the user before it acts "
        "(confirm: true), and this client cannot be asked (it did not declare the "
        "elicitation capability, or the connection has no way back to it). Use a client "
        "that supports elicitation, or start the server with --allow-unconfirmed to run "
        "such tools without asking."
    )
    assert len(recorder.bodies) == before


def test_a_python_tool_shows_its_arguments(server: Served) -> None:
    user = User("accept")
    result = anyio.run(_call, server.url, user, "wipe", {"seconds": 0})
    assert result.structured_content == {"slept": 0.0}
    assert user.asked == [
        "Tool 'wipe' wants to run with these arguments:\n{\n  \"seconds\": 0.0\n}\n\nAllow it?"
    ]


def test_allow_unconfirmed_runs_without_asking_a_client_that_cannot_be_asked(
    folder: Path, upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]
    args = ["--tools", str(folder), "--allow-unconfirmed"]
    with serving(args, env={"API_TOKEN": SECRET}) as served:
        before = len(recorder.bodies)
        unasked = anyio.run(_call, served.url, None, "close_issue", CLOSE_ARGS)
        user = User("decline")
        asked = anyio.run(_call, served.url, user, "close_issue", CLOSE_ARGS)
    assert unasked.structured_content == {"closed": True}
    assert len(recorder.bodies) == before + 1
    assert asked.is_error is True  # a client that can be asked still is
    assert len(user.asked) == 1


def test_a_stateless_server_cannot_ask_so_it_refuses(
    folder: Path, upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]
    user = User("accept")
    with serving(["--tools", str(folder), "--stateless"], env={"API_TOKEN": SECRET}) as served:
        before = len(recorder.bodies)
        result = anyio.run(_call, served.url, user, "close_issue", CLOSE_ARGS)
    assert result.is_error is True
    assert "this client cannot be asked" in result.content[0].text
    assert "the connection has no way back to it" in result.content[0].text
    assert user.asked == []
    assert len(recorder.bodies) == before


def test_confirm_over_stdio(folder: Path, upstream: tuple[str, Upstream]) -> None:
    recorder = upstream[1]
    user = User("accept")
    env = {"API_TOKEN": SECRET}

    async def run() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            async with stdio_session(["--tools", str(folder)], env, elicitation=user) as client:
                return await client.call_tool("close_issue", CLOSE_ARGS)

    before = len(recorder.bodies)
    result = anyio.run(run)
    assert result.structured_content == {"closed": True}
    assert len(recorder.bodies) == before + 1
    assert "wants to send this request:\nPOST http://127.0.0.1:" in user.asked[0]
    assert SECRET not in repr(user.asked)


class Purge(Tool):
    """A hand-written destructive tool: it says nothing of what it sends."""

    TOOL_NAME = "purge"
    CONFIRM = True
    INPUT_SCHEMA = {"parameters": [{"name": "bucket", "type": "string"}]}
    OUTPUT_SCHEMA = None

    def __init__(self) -> None:
        super().__init__()
        self.ran: list[str] = []

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        self.ran.append(inputs["bucket"])
        return {"purged": inputs["bucket"]}


@pytest.mark.parametrize("action", ["accept", "decline"])
def test_a_hand_written_tool_is_asked_about_with_its_arguments_before_it_runs(
    action: str,
) -> None:
    from mcp import Client

    from agentkit.mcp.server import build_server

    tool = Purge()
    user = User(action)

    async def run() -> Any:
        server = build_server(ToolRegistry([tool]))
        with anyio.fail_after(WAIT_SECONDS):
            async with Client(server, mode="legacy", elicitation_callback=user) as client:
                return await client.call_tool("purge", {"bucket": "logs"})

    result = anyio.run(run)
    assert user.asked == [
        'Tool \'purge\' wants to run with these arguments:\n{\n  "bucket": "logs"\n}\n\nAllow it?'
    ]
    if action == "accept":
        assert result.structured_content == {"purged": "logs"}
        assert tool.ran == ["logs"]
    else:
        assert result.is_error is True
        assert tool.ran == []


# -- every field shown, however long one is -----------------------------------------------------

PADDED = "Routine refund. " * 200  # 3,200 characters before the fields that matter
TRANSFER = """\
name: transfer
version: 1.0.0
description: Move money.
confirm: true
credentials: [api-token]
input_schema:
  parameters:
    - {name: memo, type: string}
    - {name: to_account, type: string}
    - {name: amount, type: integer}
output_schema: {parameters: [{name: closed, type: boolean}]}
backend:
  http:
    method: POST
    url: {origin}/issues/close
BODY"""
BODIES = {
    "json": """    json:
      memo: "{{ inputs.memo }}"
      to_account: "{{ inputs.to_account }}"
      amount: "{{ inputs.amount }}"
      signed: "{{ inputs.memo[:290] }}{{ credentials['api-token'] }}"
""",
    "form": """    form:
      memo: "{{ inputs.memo }}"
      to_account: "{{ inputs.to_account }}"
      amount: "{{ inputs.amount }}"
""",
    "body": """    body: "{{ inputs.memo }}\\nto_account={{ inputs.to_account }}\\namount={{ inputs.amount }}"
""",
}


@pytest.mark.parametrize("kind", list(BODIES))
def test_a_padded_field_never_hides_the_others(
    tmp_path: Path, upstream: tuple[str, Upstream], kind: str
) -> None:
    from mcp import Client

    from agentkit.declarative.loader import load_tools
    from agentkit.mcp.server import build_server

    origin, recorder = upstream
    (tmp_path / "transfer.yaml").write_text(
        TRANSFER.replace("{origin}", origin).replace("BODY", BODIES[kind])
    )
    registry = ToolRegistry()
    load_tools(tmp_path, registry=registry)
    user = User("decline")
    arguments = {"memo": PADDED, "to_account": "ATTACKER-IBAN", "amount": 99999}

    async def run() -> Any:
        executor = ToolExecutor(credentials={"api-token": SECRET})
        with executor, anyio.fail_after(WAIT_SECONDS):
            async with Client(
                build_server(registry, executor), mode="legacy", elicitation_callback=user
            ) as client:
                return await client.call_tool("transfer", arguments)

    before = len(recorder.bodies)
    result = anyio.run(run)
    assert result.is_error is True
    [asked] = user.asked
    assert "ATTACKER-IBAN" in asked
    assert "99999" in asked
    assert "more characters]" in asked
    assert len(asked) < 2000
    assert SECRET[:6] not in asked  # not even the part before the cut
    assert len(recorder.bodies) == before


def test_a_hand_written_tools_padded_argument_never_hides_the_others() -> None:
    from mcp import Client

    from agentkit.mcp.server import build_server

    user = User("decline")
    arguments = {"bucket": PADDED + "logs"}

    async def run() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            async with Client(
                build_server(ToolRegistry([Purge()])), mode="legacy", elicitation_callback=user
            ) as client:
                return await client.call_tool("purge", arguments)

    assert anyio.run(run).is_error is True
    [asked] = user.asked
    assert '"bucket": "Routine refund. Routine' in asked
    assert f"[{len(PADDED) + 4 - 300:,} more characters]" in asked
