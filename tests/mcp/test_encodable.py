"""A string UTF-8 cannot encode (a lone surrogate: ``os.fsdecode`` of a non-UTF-8 file
name) in anything a tool or a client makes the server send -- a text block, the output,
an error, a log message, a question -- goes out with U+FFFD in its place: the stdio
server lives on, an HTTP call gets its answer. The SDK's own clients, in process, over
stdio and over streamable HTTP."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import mcp_types as types
from mcp.shared.exceptions import MCPError

from agentkit.declarative.loader import load_tools
from agentkit.mcp.content import encodable
from agentkit.toolregistry import ToolRegistry
from tests.support.serving import Served, server_fixture, session, stdio_session, tools_folder

WAIT_SECONDS = 60
NAME = os.fsdecode(b"report-\xff.txt")  # "report-\udcff.txt"
SHOWN = "report-\ufffd.txt"

UNENCODABLE = """\
name: unencodable
version: 1.0.0
description: Puts a non-UTF-8 file name where it is told to.
input_schema: {parameters: [{name: kind, type: string}]}
output_schema: {parameters: [{name: file, type: string}]}
backend: {python: "tests.support.serve_tools:unencodable"}
"""


def test_encodable_replaces_every_surrogate_and_keeps_clean_values_as_they_are() -> None:
    clean = {"a": ["Zürich", 1, None], "b": ("x",)}
    assert encodable(clean) is clean
    dirty = {"k\ud800": [f"x {NAME}", {"n": "\udfff"}], "t": ("\ud83d\ude00",)}
    assert encodable(dirty) == {
        "k\ufffd": [f"x {SHOWN}", {"n": "\ufffd"}],
        "t": ("\ufffd\ufffd",),
    }
    block = types.TextContent(type="text", text=NAME)
    assert encodable(block).text == SHOWN
    assert block.text == NAME  # a copy: the tool's own value is left alone


folder = tools_folder({"unencodable.yaml": UNENCODABLE}, scope="module")


class Heard:
    """What the client heard besides the answers: log messages and questions."""

    def __init__(self) -> None:
        self.logged: list[tuple[str | None, str]] = []
        self.asked: list[str] = []

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification):
            self.logged.append((message.params.logger, str(message.params.data)))

    async def elicitation(self, context: Any, params: types.ElicitRequestParams) -> Any:
        self.asked.append(params.message)
        return types.ElicitResult(action="decline")


async def _every_kind(client: Any) -> dict[str, Any]:
    seen = {kind: await client.call_tool("unencodable", {"kind": kind}) for kind in KINDS}
    seen["after"] = await client.call_tool("unencodable", {"kind": "output"})
    return seen


KINDS = ("text", "output", "error", "log", "elicit")


def _check(seen: dict[str, Any], heard: Heard) -> None:
    assert seen["text"].content[0].text == f"listing: {SHOWN}"
    assert seen["output"].structured_content == {"file": SHOWN}
    assert seen["error"].is_error is True
    assert f"cannot read {SHOWN}" in seen["error"].content[0].text
    assert heard.logged == [(SHOWN, f"skipped {SHOWN}")]
    assert heard.asked == [f"Delete {SHOWN}?"]
    assert seen["elicit"].structured_content == {"file": "decline"}
    assert seen["after"].structured_content == {"file": SHOWN}  # the server lives on


def test_in_process(folder: Path) -> None:
    from mcp import Client

    from agentkit.mcp.server import build_server

    registry = ToolRegistry()
    load_tools(folder, registry=registry)
    heard = Heard()

    async def run() -> dict[str, Any]:
        with anyio.fail_after(WAIT_SECONDS):
            async with Client(
                build_server(registry),
                mode="legacy",
                message_handler=heard.on_message,
                elicitation_callback=heard.elicitation,
            ) as client:
                seen = await _every_kind(client)
                # A protocol error naming what a client sent (its transport may not mind).
                with pytest.raises(MCPError) as unknown:
                    await client.call_tool(f"no_such_{NAME}", {})
                seen["unknown"] = unknown.value.error.message
                return seen

    seen = anyio.run(run)
    _check(seen, heard)
    assert seen["unknown"].startswith(f"Unknown tool: 'no_such_{SHOWN}'")


def test_over_stdio(folder: Path) -> None:
    heard = Heard()

    async def run() -> dict[str, Any]:
        with anyio.fail_after(WAIT_SECONDS):
            async with stdio_session(
                ["--tools", str(folder)],
                {"PATH": ""},
                on_message=heard.on_message,
                elicitation=heard.elicitation,
            ) as client:
                return await _every_kind(client)

    _check(anyio.run(run), heard)


server = server_fixture()


def test_over_http(server: Served) -> None:
    heard = Heard()

    async def run() -> dict[str, Any]:
        with anyio.fail_after(WAIT_SECONDS):
            async with session(
                server.url, on_message=heard.on_message, elicitation=heard.elicitation
            ) as client:
                return await _every_kind(client)

    _check(anyio.run(run), heard)
    assert "PydanticSerializationError" not in server.stderr
