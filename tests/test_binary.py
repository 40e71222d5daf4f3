"""Binary outputs: the shape, YAML HTTP tools with ``binary: true``, and MCP content."""

from __future__ import annotations

import base64
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
import responses

from agentkit import (
    DefinitionError,
    SecretInOutputError,
    Tool,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    binary,
    load_tools,
)
from agentkit.adapters.export import export_tools
from tests.support.leaks import SECRETS, leaked

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
URL = "https://api.example.com/avatar"

AVATAR = """\
name: avatar
version: 1.0.0
description: A user's avatar.
backend:
  http:
    url: https://api.example.com/avatar
    binary: true
"""


def load(tmp_path: Path, text: str) -> Tool:
    path = tmp_path / "tool.yaml"
    path.write_text(textwrap.dedent(text))
    registry = ToolRegistry()
    [cls] = load_tools(path, registry=registry)
    return registry[cls.TOOL_NAME]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        pytest.param("image/png", "image/png", id="plain"),
        pytest.param("Image/PNG; charset=binary", "image/png", id="case-and-parameters"),
        pytest.param(" audio/ogg ;codecs=opus", "audio/ogg", id="spaces"),
        pytest.param(None, "application/octet-stream", id="absent"),
        pytest.param("", "application/octet-stream", id="empty"),
        pytest.param("png", "application/octet-stream", id="no-subtype"),
        pytest.param("image/png\r\nX: y", "application/octet-stream", id="line-break"),
        pytest.param("a b/c", "application/octet-stream", id="space-in-type"),
    ],
)
def test_the_media_type_is_the_essence_of_content_type(header: str | None, expected: str) -> None:
    assert binary.media_type(header) == expected


def test_encode_gives_base64_media_type_and_size() -> None:
    output = binary.encode(PNG, "image/png")
    assert output == {
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode("ascii"),
        "size": len(PNG),
    }
    assert binary.OUTPUT_SCHEMA.validate(dict(output)) == []


@responses.activate
def test_a_binary_http_tool_returns_base64_with_the_media_type(tmp_path: Path) -> None:
    responses.get(URL, body=PNG, content_type="image/png")
    tool = load(tmp_path, AVATAR)
    result = ToolExecutor().execute(tool, {})
    assert result.output is not None
    assert base64.b64decode(result.output["data"]) == PNG
    assert result.output["media_type"] == "image/png"
    assert result.output["size"] == len(PNG)
    assert tool.output_schema == binary.OUTPUT_SCHEMA
    assert binary.is_binary(tool)


@responses.activate
def test_an_empty_binary_reply_is_an_empty_output(tmp_path: Path) -> None:
    responses.get(URL, body=b"", status=200, content_type=None)
    result = ToolExecutor().execute(load(tmp_path, AVATAR), {})
    assert result.output == {"media_type": "application/octet-stream", "data": "", "size": 0}


@responses.activate
def test_the_size_cap_applies_to_a_binary_reply(tmp_path: Path) -> None:
    responses.get(URL, body=PNG, content_type="image/png")
    tool = load(
        tmp_path, AVATAR.replace("binary: true", "binary: true\n    max_response_bytes: 100")
    )
    result = ToolExecutor().execute(tool, {}, raise_on_failure=False)
    assert result.error is not None
    assert "over max_response_bytes (100 bytes)" in str(result.error)


@responses.activate
def test_a_failing_status_still_fails_a_binary_tool(tmp_path: Path) -> None:
    responses.get(URL, body=b"not here", status=404)
    result = ToolExecutor().execute(load(tmp_path, AVATAR), {}, raise_on_failure=False)
    assert result.error is not None
    assert "returned 404" in str(result.error)


@pytest.mark.parametrize("shift", [0, 1, 2], ids=["aligned", "shift-1", "shift-2"])
@pytest.mark.parametrize("secret", SECRETS[:4], ids=["symbols", "umlauts", "escapes", "alnum"])
@responses.activate
def test_a_credential_inside_binary_content_withholds_the_answer(
    tmp_path: Path, secret: str, shift: int
) -> None:
    # A server that echoes the token inside a file: its base64 (found at each byte
    # alignment) fails the call, and the output is not given.
    body = b"\x89PNG" + b"\x00" * shift + secret.encode() + b"\xff" * 7
    responses.get(URL, body=body, content_type="image/png")
    tool = load(
        tmp_path,
        AVATAR.replace("backend:", "credentials: [token]\nbackend:").replace(
            "binary: true",
            "binary: true\n    auth: {api_key: {credential: token, in: query, name: key}}",
        ),
    )
    result = ToolExecutor(credentials={"token": secret}).execute(tool, {}, raise_on_failure=False)
    assert result.output is None
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert result.error.cause.where == "output.data"
    assert leaked(repr(result) + str(result.error), [secret]) == []


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        pytest.param(
            '    output: {title: "{{ response.text }}"}\n',
            "backend.http.output: a binary tool's output is the reply itself",
            id="output",
        ),
        pytest.param(
            "    responses: {404: {}}\n",
            "backend.http.responses: a binary tool's output is the reply itself",
            id="responses",
        ),
        pytest.param(
            "    paginate: {page: {param: page}, output: x}\n",
            "backend.http.paginate: a binary tool's output is the reply itself",
            id="paginate",
        ),
        pytest.param(
            "output_schema: {parameters: [{name: x, type: string}]}\n",
            "output_schema: a binary tool's output is fixed ({media_type, data, size})",
            id="output-schema",
        ),
    ],
)
def test_a_binary_tool_declares_no_outputs_of_its_own(
    tmp_path: Path, extra: str, problem: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        load(tmp_path, AVATAR + extra)
    assert problem in str(caught.value)


def test_binary_must_be_true_or_false(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match=r"backend\.http\.binary: expected true or false"):
        load(tmp_path, AVATAR.replace("binary: true", "binary: 'yes'"))


def test_the_mcp_export_of_a_binary_tool_has_no_output_schema(tmp_path: Path) -> None:
    [exported] = export_tools([load(tmp_path, AVATAR)], "mcp").document
    assert "outputSchema" not in exported
    assert exported["inputSchema"]["type"] == "object"


# -- MCP content, through the SDK's own client --------------------------------------------------


class Media(Tool):
    """Returns the bytes and media type it is given, as a binary output."""

    TOOL_NAME = "media"
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "media_type", "type": "string"},
            {"name": "text", "type": "string"},
        ]
    }
    OUTPUT_SCHEMA = binary.OUTPUT_SCHEMA

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return binary.encode(inputs["text"].encode(), inputs["media_type"])


class Plain(Tool):
    TOOL_NAME = "plain"
    OUTPUT_SCHEMA = {"parameters": [{"name": "ok", "type": "boolean"}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"ok": True}


def _mcp(calls: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[Any]]:
    pytest.importorskip("mcp")
    from mcp import Client

    from agentkit.mcp.server import build_server

    registry = ToolRegistry([Media(), Plain()])

    async def main() -> tuple[Any, list[Any]]:
        with anyio.fail_after(30):
            async with Client(build_server(registry)) as client:
                listed = await client.list_tools()
                return listed, [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(main)


@pytest.mark.parametrize(
    ("media_type", "kind"),
    [
        pytest.param("image/png", "image", id="image"),
        pytest.param("audio/wav", "audio", id="audio"),
        pytest.param("application/pdf", "resource", id="file"),
        pytest.param("text/csv; charset=utf-8", "resource", id="text-file"),
    ],
)
def test_mcp_returns_a_binary_output_as_content_of_its_kind(media_type: str, kind: str) -> None:
    listed, [result] = _mcp([("media", {"media_type": media_type, "text": "a,b\n1,2"})])
    essence = binary.media_type(media_type)
    data = base64.b64encode(b"a,b\n1,2").decode()
    assert not result.is_error
    block, summary = result.content
    assert block.type == kind
    if kind == "resource":
        assert block.resource.blob == data
        assert block.resource.mime_type == essence
        assert str(block.resource.uri) == "agentkit://tools/media/output"
    else:
        assert block.data == data
        assert block.mime_type == essence
    assert summary.type == "text"
    assert summary.text == f'{{"media_type": "{essence}", "size": 7}}'
    assert result.structured_content is None
    tools = {tool.name: tool for tool in listed.tools}
    assert tools["media"].output_schema is None
    assert tools["plain"].output_schema is not None


def test_mcp_keeps_structured_content_for_other_tools() -> None:
    _, [result] = _mcp([("plain", {})])
    assert result.structured_content == {"ok": True}
