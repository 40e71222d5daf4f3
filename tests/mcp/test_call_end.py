"""A question outlives no call: when a served call ends (its deadline, or cancelled), what
it asked the user is withdrawn, the worker thread waiting for the answer is freed, and an
answer that comes later -- a confirmation accepted too late -- lets nothing happen.
In-process servers (``build_server``), the SDK's own client, a loopback upstream."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp_types as types

from agentkit.context import elicit
from agentkit.declarative.loader import load_tools
from agentkit.tool import Tool
from agentkit.toolerrors import ElicitationError
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry
from tests.support import loopback

WAIT_SECONDS = 60
CALL_TIMEOUT = 0.5

PAY = """\
name: pay
version: 1.0.0
description: Pay an amount (asks the user first).
confirm: true
input_schema: {parameters: [{name: amount, type: integer}]}
output_schema: {parameters: [{name: paid, type: boolean}]}
backend:
  http:
    method: POST
    url: {origin}/pay
    json: {amount: "{{ inputs.amount }}"}
"""


class Upstream:
    """The payment API: keeps each body it received."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []

    def __call__(self, handler: loopback.Handler) -> None:
        self.bodies.append(json.loads(handler.body))
        handler.reply(200, {"paid": True})


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[tuple[ToolRegistry, Upstream]]:
    recorder = Upstream()
    with loopback.serve({"/pay": recorder}) as origin:
        (tmp_path / "pay.yaml").write_text(PAY.replace("{origin}", origin))
        registry = ToolRegistry()
        load_tools(tmp_path, registry=registry)
        yield registry, recorder


class LateUser:
    """Answers ``accept``, but only once the call it was asked in has its answer."""

    def __init__(self) -> None:
        self.answered = anyio.Event()  # the call's result reached the client
        self.asked: list[str] = []
        self.withdrawn = False

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        try:
            with anyio.fail_after(WAIT_SECONDS):
                await self.answered.wait()
        except anyio.get_cancelled_exc_class():
            self.withdrawn = True  # the server withdrew the question (notifications/cancelled)
            raise
        return types.ElicitResult(action="accept")


def test_a_confirmation_accepted_after_the_deadline_sends_nothing(
    upstream: tuple[ToolRegistry, Upstream],
) -> None:
    from mcp import Client

    from agentkit.mcp.server import build_server

    registry, recorder = upstream
    registry.register(Echo())
    user = LateUser()
    # One worker: the echo runs once the abandoned call's thread is done, sending or not.
    executor = ToolExecutor(max_workers=1)

    async def run() -> tuple[Any, Any]:
        server = build_server(registry, executor, call_timeout=CALL_TIMEOUT)
        with anyio.fail_after(WAIT_SECONDS):
            async with Client(server, mode="legacy", elicitation_callback=user) as client:
                result = await client.call_tool("pay", {"amount": 100})
                user.answered.set()  # accept now, if the question is still there
                echoed = await client.call_tool("echo", {"text": "after"})
                return result, echoed

    with executor:
        result, echoed = anyio.run(run)
    assert result.is_error is True
    assert echoed.structured_content == {"text": "after"}
    assert user.withdrawn is True
    assert len(user.asked) == 1
    assert "POST http://127.0.0.1:" in user.asked[0]
    assert recorder.bodies == []


class AsksForever(Tool):
    """A sync tool asking a question nobody answers; says when its thread is free."""

    TOOL_NAME = "asks_forever"
    OUTPUT_SCHEMA = None

    def __init__(self) -> None:
        super().__init__()
        self.freed = threading.Event()
        self.said: list[str] = []

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        try:
            elicit("Never answered?", {"type": "object", "properties": {}})
        except ElicitationError as exc:
            self.said.append(str(exc))
            raise
        finally:
            self.freed.set()
        return {}


class Echo(Tool):
    TOOL_NAME = "echo"
    INPUT_SCHEMA = {"parameters": [{"name": "text", "type": "string"}]}
    OUTPUT_SCHEMA = None

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"text": inputs["text"]}


class NeverAnswers:
    """Keeps every question open until it is withdrawn (or the test's bound)."""

    def __init__(self) -> None:
        self.withdrawn = 0

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        try:
            await anyio.sleep(WAIT_SECONDS)
        except anyio.get_cancelled_exc_class():
            self.withdrawn += 1
            raise
        return types.ElicitResult(action="cancel")


def test_an_unanswered_question_frees_the_worker_at_the_deadline() -> None:
    from mcp import Client

    from agentkit.mcp.server import build_server

    asks = AsksForever()
    # One worker: had the unanswered question kept it, the echo after it could not run.
    executor = ToolExecutor(max_workers=1)
    user = NeverAnswers()

    async def run() -> tuple[Any, Any]:
        server = build_server(ToolRegistry([asks, Echo()]), executor, call_timeout=CALL_TIMEOUT)
        with anyio.fail_after(WAIT_SECONDS):
            async with Client(server, mode="legacy", elicitation_callback=user) as client:
                asked = await client.call_tool("asks_forever", {})
                echoed = await client.call_tool("echo", {"text": "still here"})
                return asked, echoed

    with executor:
        asked, echoed = anyio.run(run)
    assert asked.is_error is True
    assert echoed.structured_content == {"text": "still here"}
    assert asks.freed.wait(WAIT_SECONDS)
    assert user.withdrawn == 1  # the client heard notifications/cancelled for it
    assert asks.said == [
        "the call ended (its deadline passed, or it was cancelled) before the user "
        "answered: the question was withdrawn and nothing was done"
    ]
