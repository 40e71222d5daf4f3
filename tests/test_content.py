"""Content beyond JSON: the blocks, the executor, events, recordings, dispatch and MCP."""

from __future__ import annotations

import base64
import json
import logging
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import pytest

from agentkit import (
    AsyncTool,
    ExecutionRecorder,
    SecretInOutputError,
    SemanticError,
    Tool,
    ToolEvent,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    ToolValidationError,
    load_tools,
)
from agentkit.adapters.dispatch import dispatch_anthropic, dispatch_openai
from agentkit.content import Audio, Image, Output, Resource, Text, block_from_json
from tests.conformance.tools import RED_PIXEL
from tests.support.leaks import SECRETS, leaked

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE_TOOLS = ROOT / "tests" / "conformance" / "tools.d"
# Bytes that are not text in any encoding, so finding them in a log means the bytes leaked.
SOUND = bytes(range(256)) * 3
MIXED = (
    Text("Here is the chart:"),
    Image(data=RED_PIXEL, media_type="image/png"),
    Audio(data=SOUND, media_type="audio/wav"),
    Resource(uri="file:///report.csv", text="a,b\n1,2", media_type="text/csv"),
    Resource(uri="myapp://blobs/7", data=SOUND),
)


class Chart(Tool):
    """Every kind of block, beside a structured output its schema describes."""

    TOOL_NAME = "chart"
    TOOL_DESCRIPTION = "Draws a chart."
    OUTPUT_SCHEMA = {"parameters": [{"name": "points", "type": "integer"}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Output:
        return Output(*MIXED, structured={"points": 12})


class AsyncChart(AsyncTool):
    TOOL_NAME = "async_chart"
    TOOL_DESCRIPTION = "Draws a chart, asynchronously."

    async def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Output:
        return Output(Image(data=RED_PIXEL, media_type="image/png"))


class Leaky(Tool):
    """Puts its credential into every block it returns."""

    TOOL_NAME = "leaky"
    TOOL_DESCRIPTION = "Leaks its token."
    CREDENTIAL_NAMES = ("token",)
    OUTPUT_SCHEMA = {"parameters": [{"name": "echo", "type": "string"}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Output:
        token = credentials["token"]
        raw = b"\x89PNG" + token.encode() + b"\xff"
        return Output(
            Text(f"token={token}"),
            Image(data=raw, media_type="image/png"),
            Resource(uri=f"myapp://x?key={quote(token, safe='')}", text=f"key: {token}"),
            Resource(uri=f"myapp://y/{quote(token)}", data=raw),
            structured={"echo": token},
        )


class Wrong(Tool):
    """Returns a structured part its schema does not allow."""

    TOOL_NAME = "wrong"
    TOOL_DESCRIPTION = "Returns the wrong structured output."
    OUTPUT_SCHEMA = {"parameters": [{"name": "points", "type": "integer"}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Output:
        return Output(Text("hi"), structured={"points": "twelve"})


# -- the blocks ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            lambda: Text(b"x"),  # type: ignore[arg-type]  # refused at run time
            "Text: text must be a string, got 'bytes'",
            id="text",
        ),
        pytest.param(
            lambda: Image(data="iVBORw0=", media_type="image/png"),  # type: ignore[arg-type]
            r"Image: data must be bytes, got 'str' \(pass the raw bytes, not base64 text\)",
            id="image-base64",
        ),
        pytest.param(
            lambda: Image(data=b"x", media_type="audio/wav"),
            r"Image: media_type must be 'image/\.\.\.', got 'audio/wav'",
            id="image-not-image",
        ),
        pytest.param(
            lambda: Audio(data=b"x", media_type="Audio/WAV"),
            "Audio: media_type must be a lower-case 'type/subtype'",
            id="audio-upper-case",
        ),
        pytest.param(
            lambda: Image(data=b"x", media_type="image/png; q=1"),
            "without parameters",
            id="parameters",
        ),
        pytest.param(
            lambda: Resource(uri="report.csv", text="x"),
            "Resource: uri must be a URI with a scheme",
            id="uri-without-scheme",
        ),
        pytest.param(
            lambda: Resource(uri="file:///a", text="x", data=b"x"),
            "give exactly one of text= .* or data=",
            id="text-and-data",
        ),
        pytest.param(
            lambda: Resource(uri="file:///a"),
            "give exactly one of text= .* or data=",
            id="neither",
        ),
        pytest.param(
            lambda: Resource(uri="file:///a", data="abc"),  # type: ignore[arg-type]
            "Resource file:///a: data must be bytes, got 'str'",
            id="resource-str-data",
        ),
        pytest.param(
            lambda: Output({"points": 1}),  # type: ignore[arg-type]
            "Output: block 0 must be Text, Image, Audio or Resource .* got 'dict'",
            id="output-dict-block",
        ),
        pytest.param(
            lambda: Output(Text("x"), structured=[1]),  # type: ignore[arg-type]
            "Output: structured= must be a dictionary",
            id="output-structured-list",
        ),
    ],
)
def test_a_bad_block_is_refused_saying_what_is_wrong(make: Any, message: str) -> None:
    with pytest.raises(SemanticError, match=message):
        make()


def test_a_block_is_immutable_and_media_is_kept_as_bytes() -> None:
    # Any bytes-like value is taken, and kept as bytes.
    image = Image(data=bytearray(b"\x89PNG"), media_type="image/png")  # type: ignore[arg-type]
    assert image.data == b"\x89PNG"
    assert type(image.data) is bytes
    with pytest.raises(AttributeError):
        image.data = b""  # type: ignore[misc]  # frozen: refused at run time too
    with pytest.raises(AttributeError, match="Output is immutable"):
        Output().blocks = ()


def test_a_resource_has_a_default_media_type_for_text_and_for_bytes() -> None:
    assert Resource(uri="file:///a", text="x").media_type == "text/plain"
    assert Resource(uri="file:///a", data=b"x").media_type == "application/octet-stream"


@pytest.mark.parametrize("block", MIXED, ids=lambda block: type(block).__name__)
def test_a_block_round_trips_through_json(block: Any) -> None:
    assert block_from_json(json.loads(json.dumps(block.to_json()))) == block


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param([], "a content block must be an object", id="not-object"),
        pytest.param({"type": "video"}, "unknown content block type 'video'", id="unknown"),
        pytest.param({"type": "image", "media_type": "image/png"}, "needs 'data'", id="no-data"),
        pytest.param(
            {"type": "image", "media_type": "image/png", "data": "***"},
            "'data' is not base64",
            id="not-base64",
        ),
        pytest.param(
            {"type": "audio", "media_type": "image/png", "data": ""},
            "media_type must be 'audio/...'",
            id="wrong-kind",
        ),
    ],
)
def test_bad_json_for_a_block_is_a_value_error(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        block_from_json(data)


def test_no_bytes_in_a_blocks_repr_or_description() -> None:
    shown = repr(Output(*MIXED)) + json.dumps([block.describe() for block in MIXED])
    assert "Image(media_type='image/png', size=" in shown
    assert base64.b64encode(SOUND).decode()[:40] not in shown
    assert repr(SOUND)[2:40] not in shown


# -- the executor, events, recordings ------------------------------------------------------------


def test_the_executor_gives_the_blocks_and_checks_the_structured_output() -> None:
    result = ToolExecutor().execute(Chart(), {})
    assert result.output == {"points": 12}
    assert result.content == MIXED


def test_an_async_tool_returns_blocks_through_aexecute() -> None:
    async def call() -> Any:
        with ToolExecutor() as executor:
            return await executor.aexecute(AsyncChart(), {})

    result = anyio.run(call)
    assert result.output == {}
    assert result.content == (Image(data=RED_PIXEL, media_type="image/png"),)


def test_a_structured_part_that_breaks_the_schema_fails_the_call() -> None:
    result = ToolExecutor().execute(Wrong(), {}, raise_on_failure=False)
    assert isinstance(result.error, ToolValidationError)
    assert result.error.direction == "output"
    assert "Parameter 'points': expected type 'integer'" in str(result.error)
    assert result.content == ()


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_blocks_holding_a_credential_withhold_the_answer(secret: str) -> None:
    recorder = ExecutionRecorder()
    executor = ToolExecutor(credentials={"token": secret}, listeners=[recorder])
    result = executor.execute(Leaky(), {}, raise_on_failure=False)
    assert (result.output, result.content) == (None, ())
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert result.error.cause.where == "output.echo"  # the first place of many
    everything = json.dumps([recorder.calls[0].to_json(), result.to_dict()], ensure_ascii=False)
    everything += repr(result) + repr(recorder.calls)
    assert leaked(everything, [secret]) == []


def test_a_uri_that_is_all_secret_withholds_the_answer() -> None:
    class Named(Tool):
        TOOL_NAME = "named"
        CREDENTIAL_NAMES = ("token",)

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Output:
            return Output(Resource(uri=credentials["token"], text="x"))

    result = ToolExecutor(credentials={"token": "urn:secret-value-1"}).execute(
        Named(), {}, raise_on_failure=False
    )
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert result.error.cause.where == "content[0].uri"
    assert "secret-value" not in str(result.error)


def test_events_carry_the_blocks_and_logs_never_the_bytes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events: list[ToolEvent] = []
    log = logging.getLogger("test_content")

    def logging_listener(event: ToolEvent) -> None:
        events.append(event)
        log.warning("%r %s", event, json.dumps(event.to_dict()))

    result = ToolExecutor(listeners=[logging_listener]).execute(Chart(), {})
    completed = events[-1]
    assert completed.content == MIXED
    assert completed.output == {"points": 12}
    logged = caplog.text + repr(result) + json.dumps(result.to_dict())
    assert "Image(media_type='image/png', size=" in logged
    for data in (RED_PIXEL, SOUND):
        assert base64.b64encode(data).decode()[:24] not in logged
        assert repr(data)[2:30] not in logged


def test_to_dict_describes_the_blocks() -> None:
    described = ToolExecutor().execute(Chart(), {}).to_dict()
    assert described["content"][1] == {
        "type": "image",
        "media_type": "image/png",
        "size": len(RED_PIXEL),
    }
    assert "content" not in ToolExecutor().execute(Wrong(), {}, raise_on_failure=False).to_dict()


def test_a_recording_replays_the_blocks(tmp_path: Path) -> None:
    recorder = ExecutionRecorder()
    original = ToolExecutor(listeners=[recorder]).execute(Chart(), {})
    path = tmp_path / "calls.jsonl"
    recorder.save(path)
    replayed = ToolExecutor(replay=ExecutionRecorder.load(path)).execute(Chart(), {})
    assert replayed.content == original.content
    assert replayed.output == original.output


def test_a_recording_with_a_bad_block_names_its_line(tmp_path: Path) -> None:
    recorder = ExecutionRecorder()
    ToolExecutor(listeners=[recorder]).execute(Chart(), {})
    record = recorder.calls[0].to_json()
    record["content"][1]["data"] = "not base64!"
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(SemanticError, match=r"calls\.jsonl:1: not a recorded call: content\[1\]"):
        ExecutionRecorder.load(path)


def test_a_python_backend_returns_blocks(tmp_path: Path) -> None:
    path = tmp_path / "tool.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: pixel
            version: 1.0.0
            description: A red pixel.
            backend: {python: "tests.conformance.tools:image_content"}
            """
        )
    )
    registry = ToolRegistry()
    load_tools(path, registry=registry)
    result = ToolExecutor().execute(registry["pixel"], {})
    assert result.content == (Image(data=RED_PIXEL, media_type="image/png"),)


# -- dispatch to providers -----------------------------------------------------------------------


def test_openai_gets_the_texts_and_a_line_for_each_media_block() -> None:
    call = {"id": "c1", "function": {"name": "chart", "arguments": "{}"}}
    [reply] = dispatch_openai([call], ToolRegistry([Chart()]))
    assert reply["content"].splitlines() == [
        '{"points": 12}',
        "Here is the chart:",
        f"[image image/png, {len(RED_PIXEL)} bytes]",
        f"[audio audio/wav, {len(SOUND)} bytes]",
        "[resource file:///report.csv (text/csv)]",
        "a,b",
        "1,2",
        f"[resource myapp://blobs/7 (application/octet-stream), {len(SOUND)} bytes]",
    ]


def test_anthropic_gets_the_images_as_image_blocks() -> None:
    block = {"type": "tool_use", "id": "t1", "name": "chart", "input": {}}
    [reply] = dispatch_anthropic([block], ToolRegistry([Chart()]))
    text, image = reply["content"]
    assert text["type"] == "text"
    assert "Here is the chart:" in text["text"]
    assert "[image" not in text["text"]
    assert image == {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(RED_PIXEL).decode(),
        },
    }


# -- MCP, through the SDK's own clients ----------------------------------------------------------


def _check_conformance_payloads(results: dict[str, Any]) -> None:
    """What the conformance suite's content scenarios expect, checked field by field."""
    [image] = results["test_image_content"].content
    assert image.type == "image"
    assert base64.b64decode(image.data) == RED_PIXEL
    assert image.mime_type == "image/png"
    [audio] = results["test_audio_content"].content
    assert audio.type == "audio"
    assert audio.mime_type == "audio/wav"
    assert base64.b64decode(audio.data).startswith(b"RIFF")
    [resource] = results["test_embedded_resource"].content
    assert resource.type == "resource"
    assert str(resource.resource.uri) == "test://embedded-resource"
    assert resource.resource.mime_type == "text/plain"
    assert resource.resource.text == "This is an embedded resource content."
    mixed = results["test_multiple_content_types"]
    assert [block.type for block in mixed.content] == ["text", "image", "resource"]
    assert mixed.content[0].text == "Multiple content types test:"
    assert json.loads(mixed.content[2].resource.text) == {"test": "data", "value": 123}
    for result in results.values():
        assert not result.is_error
        assert result.structured_content == {}


async def _call_each(client: Any) -> dict[str, Any]:
    names = [
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
    ]
    return {name: await client.call_tool(name, {}) for name in names}


def test_mcp_over_stdio_gives_each_kind_of_block() -> None:
    pytest.importorskip("mcp")
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    from tests.support.serving import stdio_parameters

    params = stdio_parameters(["--tools", str(CONFORMANCE_TOOLS)])

    async def main() -> dict[str, Any]:
        with anyio.fail_after(60):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                return await _call_each(client)

    _check_conformance_payloads(anyio.run(main))


def test_mcp_over_streamable_http_gives_each_kind_of_block() -> None:
    pytest.importorskip("uvicorn")
    from tests.support.serving import serving, session

    async def main(url: str) -> dict[str, Any]:
        with anyio.fail_after(60):
            async with session(url) as client:
                return await _call_each(client)

    with serving(["--tools", str(CONFORMANCE_TOOLS)]) as served:
        _check_conformance_payloads(anyio.run(main, served.url))


def test_mcp_gives_the_structured_output_beside_the_blocks() -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from agentkit.mcp.server import build_server

    async def main() -> Any:
        with anyio.fail_after(30):
            async with Client(build_server(ToolRegistry([Chart()]))) as client:
                return await client.call_tool("chart", {})

    result = anyio.run(main)
    kinds = [block.type for block in result.content]
    assert kinds == ["text", "image", "audio", "resource", "resource", "text"]
    assert result.structured_content == {"points": 12}
    assert json.loads(result.content[-1].text) == {"points": 12}
    assert base64.b64decode(result.content[4].resource.blob) == SOUND
    assert result.content[4].resource.mime_type == "application/octet-stream"


def test_agentkit_call_prints_each_block_described_not_its_bytes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agentkit.cli import main

    code = main(["call", "test_multiple_content_types", "--tools", str(CONFORMANCE_TOOLS)])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed["content"] == [
        {"type": "text", "text": "Multiple content types test:"},
        {"type": "image", "media_type": "image/png", "size": len(RED_PIXEL)},
        {
            "type": "resource",
            "uri": "test://mixed-content-resource",
            "media_type": "application/json",
            "text": '{"test":"data","value":123}',
        },
    ]
