"""The stdio server's first answers, given before the MCP SDK is imported
(``agentkit.mcp_wire``, ``agentkit.mcp_front``), are the SDK's byte for byte: every
session below is served twice, by the SDK alone and through the front and its
handover, and the bytes must agree -- for every protocol version, varied tools and
lines the front must leave to the SDK."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS

from agentkit import binary
from agentkit.declarative import load_tools
from agentkit.mcp_front import _Replaying, _WithoutReplayedAnswer, answer_first
from agentkit.mcp_pipes import PipeLines
from agentkit.mcp_server import serve_stdio
from agentkit.mcp_stdio import LineReader
from agentkit.mcp_wire import HANDSHAKE_VERSIONS, Front, wire_json
from agentkit.tool import Tool
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry
from tests.mcp_serving import stdio_process

ROOT = Path(__file__).resolve().parent.parent
WAIT_SECONDS = 60

VARIED = {
    "annotated.yaml": """\
name: annotated
version: 1.0.0
description: "Zürich 🚀 \\"quoted\\" back\\\\slash, tab\\t, line\\u2028sep, nul-ish \\x01"
deprecated: use annotated_v2
annotations: {title: "Ännotated ✓", read_only: true, destructive: false, idempotent: true,
              open_world: false}
input_schema:
  parameters:
    - {name: ratio, type: float, required: false, minimum: 0.0000001, maximum: 1.0e+21, default: 0.000025}
    - {name: small, type: float, required: false, minimum: -0.00001, maximum: -0.0}
    - {name: choice, type: string, required: false, enum: ["ä", "😀", "\\t", "</script>"]}
    - name: nested
      type: dictionary
      required: false
      parameters:
        - {name: depth, type: integer, required: false, minimum: -9007199254740993,
           default: 12345678901234567890}
        - {name: tags, type: list, items: {type: string, pattern: "[a-z]+"}}
output_schema:
  parameters:
    - {name: value, type: float, description: "1e-7 is not 1e-07"}
backend:
  http: {method: POST, url: "http://127.0.0.1:9/annotated", json: {ratio: "{{ inputs.ratio }}"}}
""",
    "free.yaml": """\
name: free
version: 2.0.0
input_schema: {parameters: [{name: data, type: dictionary}]}
backend:
  http: {method: PUT, url: "http://127.0.0.1:9/free", json: "{{ inputs.data }}"}
""",
    "get_thing.yaml": """\
name: get-thing
version: 1.0.0
description: A GET, so read-only and idempotent by default.
backend:
  http: {url: "http://127.0.0.1:9/thing"}
""",
    "twin_a.yaml": """\
name: twin-a
version: 1.0.0
input_schema: {parameters: [{name: city, type: string}, {name: days, type: integer, required: false}]}
backend:
  http: {url: "http://127.0.0.1:9/a"}
""",
    "twin_b.yaml": """\
name: twin-b
version: 1.0.0
input_schema: {parameters: [{name: city, type: string}, {name: days, type: integer, required: false}]}
backend:
  http: {url: "http://127.0.0.1:9/b"}
""",
    "picture.yaml": """\
name: picture
version: 1.0.0
description: A binary reply, so no output schema.
backend:
  http: {url: "http://127.0.0.1:9/picture.png", binary: true}
""",
}


class Echo(Tool):
    """A hand-written tool whose text UTF-8 cannot encode (a lone surrogate)."""

    TOOL_NAME = "echo"
    TOOL_DESCRIPTION = "Says it back: report-\udcff.txt"
    INPUT_SCHEMA = {"parameters": [{"name": "text", "type": "string"}]}
    OUTPUT_SCHEMA = {"parameters": [{"name": "text", "type": "string"}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"text": inputs["text"]}


class Media(Tool):
    TOOL_NAME = "media"
    OUTPUT_SCHEMA = binary.OUTPUT_SCHEMA

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return binary.encode(b"\x89PNG", "image/png")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> ToolRegistry:
    folder = tmp_path_factory.mktemp("varied")
    for name, text in VARIED.items():
        (folder / name).write_text(text, encoding="utf-8")
    tools = ToolRegistry([Echo(), Media()])
    load_tools(str(folder), registry=tools)
    return tools


def _line(message: Any) -> str:
    return json.dumps(message) + "\n"


def _initialize(version: Any = "2025-06-18", request_id: Any = 1, **params: Any) -> str:
    given = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
        **params,
    }
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": given})


INITIALIZED = _line({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _request(request_id: Any, method: str, params: Any = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return _line(message)


class _Written:
    def __init__(self) -> None:
        self.lines: list[str] = []

    async def write(self, text: str) -> None:
        self.lines.append(text)

    async def flush(self) -> None:
        pass


def _sdk_alone(registry: ToolRegistry, lines: list[str]) -> list[str]:
    """The session served by the SDK alone, reading ``lines`` as the event loop's
    reader splits them."""
    written = _Written()
    given = LineReader("".join(lines).encode())
    given.eof_received()

    async def run() -> None:
        with anyio.fail_after(WAIT_SECONDS), ToolExecutor() as executor:
            await serve_stdio(registry, executor, given, written)

    anyio.run(run)
    return written.lines


def _through_the_front(registry: ToolRegistry, lines: list[str]) -> tuple[list[str], Front]:
    """The session as ``agentkit serve`` has it: the front reads ``lines`` from a pipe
    with blocking reads, and the SDK reads on, through the event loop's reader, from
    the bytes the front read and did not take."""
    answers: list[str] = []
    front = Front.for_tools(registry)
    assert front is not None
    read, write = os.pipe()
    feeder = threading.Thread(target=_feed, args=(write, "".join(lines).encode()))
    feeder.start()
    try:
        given = PipeLines(read)
        replay = answer_first(front, given, answers.append)
        unread = given.rest()
        feeder.join(WAIT_SECONDS)
        rest = LineReader(unread)
        while data := os.read(read, 65536):
            rest.data_received(data)
        rest.eof_received()
    finally:
        feeder.join(WAIT_SECONDS)
        os.close(read)
    written = _Written()
    written.lines = answers

    async def run() -> None:
        with anyio.fail_after(WAIT_SECONDS), ToolExecutor() as executor:
            wire_out = _WithoutReplayedAnswer(written, front.expected)
            await serve_stdio(registry, executor, _Replaying(replay, rest), wire_out)

    anyio.run(run)
    return written.lines, front


def _feed(fd: int, data: bytes) -> None:
    """Writes ``data`` to the pipe ``fd`` and closes it: the client's lines, then its end."""
    try:
        os.write(fd, data)  # a blocking write: whole, as the reader takes it
    finally:
        os.close(fd)


def _same_session(registry: ToolRegistry, lines: list[str], capsys: Any) -> Front:
    """Both ways give the same bytes (in the order the answers' ids make; requests
    the SDK serves concurrently may finish in either order)."""
    alone = _sdk_alone(registry, lines)
    fronted, front = _through_the_front(registry, lines)
    assert sorted(fronted) == sorted(alone)
    assert "warning" not in capsys.readouterr().err  # the replayed answer was the front's
    return front


def test_the_front_negotiates_the_versions_the_sdk_does() -> None:
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


VERSIONS = [*KNOWN_PROTOCOL_VERSIONS, "1999-01-01", "", "2025-11-25x"]


@pytest.mark.parametrize("version", VERSIONS)
def test_initialize_ping_and_tools_list_are_the_sdks_for_every_version(
    registry: ToolRegistry, version: str, capsys: Any
) -> None:
    lines = [
        _initialize(version),
        INITIALIZED,
        _request(2, "ping"),
        _request("three", "tools/list"),
    ]
    alone = _sdk_alone(registry, lines)
    front = Front.for_tools(registry)
    assert front is not None
    answers = [front.answer(line) for line in lines]
    assert None not in answers  # the front answered each one itself
    assert [answer for answer in answers if answer] == alone
    assert front.listed
    # and a session through the front and the SDK after it is the SDK's own
    _same_session(registry, [*lines, _request(4, "tools/call", _echo("ß"))], capsys)


def _echo(text: str) -> dict[str, Any]:
    return {"name": "echo", "arguments": {"text": text}}


CALL = _request(9, "tools/call", _echo("after the handover"))

#: Sessions in which the front must leave a line (or all) to the SDK.
SESSIONS = {
    "a call first": [_initialize(), INITIALIZED, CALL, _request(10, "tools/list")],
    "tools/list before initialize": [_request(1, "tools/list"), _initialize(request_id=2)],
    "ping before initialize": [_request(1, "ping"), _initialize(request_id=2)],
    "bad JSON": [_initialize(), "{not json\n", _request(2, "tools/list")],
    "a blank line": [_initialize(), "\n", _request(2, "tools/list")],
    "a line nested too deeply": [
        _initialize(),
        INITIALIZED,
        '{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"a": '
        + "[" * 100_000
        + "]" * 100_000
        + "}}\n",
        _request(3, "tools/list"),
    ],
    "a lone surrogate escape": [
        _initialize(),
        '{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "\\ud800"}}\n',
        _request(3, "tools/list"),
    ],
    "a lone surrogate in initialize": [
        _initialize(clientInfo={"name": "\\ud800", "version": "0"}).replace("\\\\", "\\"),
        _request(2, "tools/list"),
    ],
    "a batch": ["[" + _initialize().strip() + "]\n", _request(2, "tools/list")],
    "a float id": [_initialize(request_id=1.5), _request(2, "tools/list")],
    "a boolean id": [_initialize(request_id=True), _request(2, "tools/list")],
    "a null id": [_initialize(request_id=None), _request(2, "tools/list")],
    "a huge id": [_initialize(request_id=2**70), _request(2, "tools/list")],
    "no jsonrpc": [_initialize(), '{"id": 2, "method": "ping"}\n', _request(3, "tools/list")],
    "an unknown method": [_initialize(), _request(2, "resources/list"), _request(3, "tools/list")],
    "a cursor": [_initialize(), _request(2, "tools/list", {"cursor": "x"}), CALL],
    "params null": [_initialize(), _request(2, "tools/list", None) + _request(3, "ping")],
    "a progress token": [_initialize(), _request(2, "ping", {"_meta": {"progressToken": 1}})],
    "the 2026-07-28 envelope": [
        _request(
            1,
            "tools/list",
            {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        ),
        CALL,
    ],
    "the envelope after initialize": [
        _initialize(),
        _request(2, "ping", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    ],
    "initialize twice": [_initialize(), _initialize(request_id=2), _request(3, "tools/list")],
    "initialized before initialize": [INITIALIZED, _initialize(), _request(2, "tools/list")],
    "initialized twice": [_initialize(), INITIALIZED, INITIALIZED, _request(2, "tools/list")],
    "a cancellation": [
        _initialize(),
        _line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}),
        _request(2, "tools/list"),
    ],
    "a response": [_initialize(), _line({"jsonrpc": "2.0", "id": 7, "result": {}})],
    "initialize's params missing": [_request(1, "initialize"), _request(2, "tools/list")],
    "a version that is a number": [_initialize(20250618), _request(2, "tools/list")],
    "capabilities": [
        _initialize(
            capabilities={
                "roots": {"listChanged": True},
                "sampling": {"context": {}, "tools": {}},
                "elicitation": {"form": {}},
                "experimental": {"x": {"y": 1}},
            }
        ),
        _request(2, "tools/list"),
        CALL,
    ],
    "an unknown capability": [_initialize(capabilities={"telepathy": {}}), _request(2, "ping")],
    "a capability of the wrong shape": [
        _initialize(capabilities={"roots": {"listChanged": "yes"}}),
        _request(2, "ping"),
    ],
    "client info with a title": [
        _initialize(clientInfo={"name": "c", "version": "1", "title": "Client ✓"}),
        _request(2, "tools/list"),
    ],
    "client info with icons": [
        _initialize(clientInfo={"name": "c", "version": "1", "icons": [{"src": "x.png"}]}),
        _request(2, "tools/list"),
    ],
    "client info without a version": [
        _initialize(clientInfo={"name": "c"}),
        _request(2, "tools/list"),
    ],
    "the end after initialize": [_initialize()],
    "nothing": [],
}


@pytest.mark.parametrize("lines", SESSIONS.values(), ids=SESSIONS.keys())
def test_what_the_front_leaves_to_the_sdk_is_answered_as_the_sdk_alone_would(
    registry: ToolRegistry, lines: list[str], capsys: Any
) -> None:
    _same_session(registry, lines, capsys)


def test_the_front_declines_what_it_cannot_be_sure_of(registry: ToolRegistry) -> None:
    front = Front.for_tools(registry)
    assert front is not None
    assert front.answer(_request(1, "tools/list")) is None  # before initialize
    assert front.answer(_initialize()) is not None
    for line in (
        "{not json\n",
        _request(2, "tools/list", {"cursor": "x"}),
        _request(2, "tools/call", _echo("x")),
        _request(2.5, "ping"),
        _request(2, "ping", {"a": "DEEP"}).replace('"DEEP"', "[" * 100_000 + "]" * 100_000),
        _initialize(request_id=3),
    ):
        assert front.answer(line) is None, line
    assert front.replay[0].startswith('{"jsonrpc": "2.0", "id": "agentkit/front/initialize"')


class _Waits:
    """Lines given one by one, recording how long ``answer_first`` let each wait be."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.timeouts: list[float | None] = []

    def next_line(self, timeout: float | None = None) -> str | None:
        self.timeouts.append(timeout)
        return self.lines.pop(0) if self.lines else None


def test_the_front_waits_for_initialize_without_a_bound_then_idles_at_most_idle_seconds(
    registry: ToolRegistry,
) -> None:
    front = Front.for_tools(registry)
    assert front is not None
    given = _Waits([_initialize(), INITIALIZED, _request(2, "ping")])
    replay = answer_first(front, given, lambda answer: None, idle_seconds=0.25)
    # Before initialize: no bound (the client starts when it will); after it, each
    # wait for a line is bounded, and the end of the lines hands over.
    assert given.timeouts == [None, 0.25, 0.25, 0.25]
    assert [json.loads(line)["method"] for line in replay] == [
        "initialize",
        "notifications/initialized",
    ]
    assert not front.listed


def test_a_client_that_no_longer_reads_ends_the_front(registry: ToolRegistry) -> None:
    front = Front.for_tools(registry)
    assert front is not None
    given = _Waits([_initialize(), _request(2, "tools/list")])

    def gone(answer: str) -> None:
        raise BrokenPipeError("the client closed its end")

    replay = answer_first(front, given, gone)
    assert len(replay) == 1  # initialize, for the SDK, which meets the closed pipe itself
    assert given.lines == [_request(2, "tools/list")]  # not read: the SDK's


@pytest.mark.parametrize(
    "exported",
    [
        {"inputSchema": {"type": "object", "properties": {"x": {"enum": {1, 2}}}}},
        {"inputSchema": {"type": "object", "properties": {1: {}}, "required": []}},
        {"inputSchema": {"type": "array"}},
        {"outputSchema": {"type": "string"}},
        {"annotations": {"title": "t", "readOnlyHint": "yes"}},
        {"description": 7},
    ],
    ids=[
        "a set",
        "a number as a key",
        "not an object",
        "output not an object",
        "a hint",
        "a number",
    ],
)
def test_a_listing_the_front_cannot_write_as_the_sdk_would_leaves_serving_to_the_sdk(
    monkeypatch: pytest.MonkeyPatch, exported: dict[str, Any]
) -> None:
    from agentkit import mcp_wire

    plain = {
        "name": "odd",
        "title": "odd",
        "description": "",
        "inputSchema": {"type": "object"},
        "annotations": {"title": "odd"},
    }

    def exporting(given: dict[str, Any]) -> Any:
        """``mcp_tool`` giving ``given``, its schemas written by the front's writer."""

        def mcp_tool(tool: Tool, *, schema: Any) -> dict[str, Any]:
            written = dict(given)
            for key in ("inputSchema", "outputSchema"):
                if key in written:
                    written[key] = schema(_JsonSchema(written[key]))
            return written

        return mcp_tool

    monkeypatch.setattr(mcp_wire, "mcp_tool", exporting({**plain, **exported}))
    assert Front.for_tools([Echo()]) is None
    monkeypatch.setattr(mcp_wire, "mcp_tool", exporting(plain))
    assert Front.for_tools([Echo()]) is not None


class _JsonSchema:
    """Stands for a ``ToolSchema`` whose JSON Schema is ``given``."""

    def __init__(self, given: dict[str, Any]) -> None:
        self.given = given

    def to_json_schema(self) -> dict[str, Any]:
        return self.given


def test_tools_sharing_a_schema_are_listed_each_with_it(registry: ToolRegistry) -> None:
    front = Front.for_tools(registry)
    assert front is not None
    front.answer(_initialize())
    listed = json.loads(front.answer(_request(2, "tools/list")) or "")["result"]["tools"]
    twins = {tool["name"]: tool for tool in listed if tool["name"].startswith("twin")}
    assert registry["twin-a"].input_schema is registry["twin-b"].input_schema  # shared
    assert twins["twin-a"]["inputSchema"] == twins["twin-b"]["inputSchema"]
    assert twins["twin-a"]["inputSchema"]["properties"]["city"] == {"type": "string"}


@pytest.mark.parametrize(
    "value",
    [
        1e-7,
        2.5e-5,
        -1e-5,
        1e-4,
        1e16,
        1e21,
        1.5e300,
        5e-324,
        -0.0,
        float("nan"),
        float("inf"),
        {"é\u2028\x00\x1f\x7f</": ["\U0001f600", "\ud83d\ude00", "\udcff", 2**70, True, None]},
    ],
    ids=repr,
)
def test_wire_json_writes_what_pydantic_writes(value: Any) -> None:
    from mcp_types import JSONRPCResponse

    from agentkit.mcp_content import encodable

    # As the SDK path has it: made encodable (a middleware), then written by pydantic.
    written = JSONRPCResponse(jsonrpc="2.0", id=1, result={"v": encodable(value)})
    sdk = written.model_dump_json(by_alias=True, exclude_unset=True)
    assert sdk == f'{{"jsonrpc":"2.0","id":1,"result":{wire_json({"v": value})}}}'


# -- the real command ----------------------------------------------------------------------------

#: Runs the CLI, printing which of the SDK's modules, of the event loop's and of what
#: only a call needs are imported when the front has answered the first tools/list.
PROBE = """\
import sys
from agentkit import mcp_wire
answer = mcp_wire.Front.answer
def probe(self, line):
    given = answer(self, line)
    if self.listed and not getattr(self, "probed", False):
        self.probed = True
        heavy = ("mcp", "mcp_types", "pydantic", "pydantic_core", "agentkit.mcp_server",
                 "agentkit.mcp_reload", "agentkit.mcp_content", "agentkit.mcp_stdio",
                 "asyncio", "anyio", "ssl", "concurrent.futures", "agentkit.toolexecutor",
                 "email.utils", "hashlib")
        print("imported at the first listing:", [m for m in heavy if m in sys.modules],
              file=sys.stderr, flush=True)
    return given
mcp_wire.Front.answer = probe
from agentkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _started(folder: Path, *args: str) -> subprocess.Popen[str]:
    return stdio_process(
        ["--tools", str(folder), *args], command=(sys.executable, "-c", PROBE, "serve")
    )


def _read_answer(process: subprocess.Popen[str]) -> dict[str, Any]:
    """The next answer on stdout, past notifications (``_killer`` bounds the wait)."""
    assert process.stdout is not None
    for line in process.stdout:
        message: dict[str, Any] = json.loads(line)
        if "id" in message:
            return message
    raise AssertionError("the server closed stdout")


def _killer(process: subprocess.Popen[str]) -> threading.Timer:
    timer = threading.Timer(WAIT_SECONDS, process.kill)
    timer.start()
    return timer


def _finished(process: subprocess.Popen[str], timer: threading.Timer) -> str:
    """Ends ``process`` (killed if it still runs); what it wrote on stderr."""
    timer.cancel()
    process.kill()
    process.wait(timeout=WAIT_SECONDS)
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    for stream in (process.stdin, process.stdout):
        stream.close()
    stderr = process.stderr.read()
    process.stderr.close()
    return stderr


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "echo.yaml").write_text(
        "name: echo\nversion: 1.0.0\n"
        "input_schema: {parameters: [{name: text, type: string}]}\n"
        "output_schema: {parameters: [{name: text, type: string}]}\n"
        'backend: {python: "benchmarks.serve_peer:echo"}\n'
    )
    return tmp_path


def test_agentkit_serve_lists_before_it_imports_the_sdk_or_an_event_loop_then_serves_with_them(
    folder: Path,
) -> None:
    process = _started(folder)
    timer = _killer(process)
    try:
        assert process.stdin is not None
        process.stdin.write(_initialize() + INITIALIZED + _request(2, "tools/list"))
        process.stdin.flush()
        assert _read_answer(process)["result"]["protocolVersion"] == "2025-06-18"
        assert [tool["name"] for tool in _read_answer(process)["result"]["tools"]] == ["echo"]
        process.stdin.write(_request(3, "tools/call", _echo("Zürich")))
        process.stdin.flush()
        assert _read_answer(process)["result"]["structuredContent"] == {"text": "Zürich"}
    finally:
        stderr = _finished(process, timer)
    assert "imported at the first listing: []" in stderr
    assert "warning" not in stderr


def test_a_sighup_while_the_front_answers_reloads_once_the_sdk_serves(folder: Path) -> None:
    process = _started(folder)
    timer = _killer(process)
    try:
        assert process.stdin is not None
        assert process.stderr is not None
        process.stdin.write(_initialize())
        process.stdin.flush()
        assert _read_answer(process)["id"] == 1
        process.send_signal(signal.SIGHUP)  # before any tools/list: the front still waits
        deadline = time.monotonic() + WAIT_SECONDS
        seen = ""
        while "reloaded (SIGHUP)" not in seen and time.monotonic() < deadline:
            seen += process.stderr.readline()
        assert "reloaded (SIGHUP)" in seen
        process.stdin.write(_request(2, "tools/list"))
        process.stdin.flush()
        assert [tool["name"] for tool in _read_answer(process)["result"]["tools"]] == ["echo"]
    finally:
        _finished(process, timer)
