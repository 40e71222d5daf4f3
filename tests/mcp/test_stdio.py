"""stdio served on the event loop: lines in, messages out, the wire kept clean."""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

pytest.importorskip("mcp")

from agentkit.mcp.stdio import HIGH_WATER, LineReader, LineWriter, lost_answer, refusal
from tests.support.serving import INITIALIZE, run_stdio, stdio_process

WAIT_SECONDS = 60
T = TypeVar("T")

# A Python tool that echoes, and writes to stdout both ways a tool or a child might.
LOUD_TOOL = """\
import os


def echo(text):
    print("a stray print")
    os.write(1, b"a stray write to fd 1\\n")
    return {"text": text}
"""
LOUD_DEFINITION = """\
name: echo
version: 1.0.0
description: Echo, printing on the way.
input_schema: {parameters: [{name: text, type: string}]}
output_schema: {parameters: [{name: text, type: string}]}
backend: {python: "loud_tool:echo"}
"""


def _run(scenario: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        with anyio.fail_after(WAIT_SECONDS):
            return await scenario()

    return anyio.run(bounded)


class _Transport(asyncio.WriteTransport, asyncio.ReadTransport):
    """Records what a protocol asks of its transport."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.paused = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False


async def _lines(reader: LineReader) -> list[str]:
    return [line async for line in reader]


# -- LineReader ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunks", "lines"),
    [
        pytest.param([b'{"a": 1}\n{"b": 2}\n'], ['{"a": 1}\n', '{"b": 2}\n'], id="two-in-one"),
        pytest.param([b'{"a"', b": 1}", b"\n"], ['{"a": 1}\n'], id="one-in-three"),
        pytest.param([b"x\r\ny\n"], ["x\r\n", "y\n"], id="crlf"),
        pytest.param([b"x\n", b"last"], ["x\n", "last"], id="last-without-newline"),
        pytest.param([b"\n"], ["\n"], id="empty-line"),
        pytest.param(["Zürich\n".encode()[:2], "Zürich\n".encode()[2:]], ["Zürich\n"], id="utf8"),
        pytest.param([b"bad \xff byte\n"], ["bad \ufffd byte\n"], id="bad-utf8-replaced"),
    ],
)
def test_line_reader_gives_the_lines_a_text_file_would(
    chunks: list[bytes], lines: list[str]
) -> None:
    async def scenario() -> list[str]:
        reader = LineReader()
        reader.connection_made(_Transport())
        for chunk in chunks:
            reader.data_received(chunk)
        reader.eof_received()
        return await _lines(reader)

    assert _run(scenario) == lines


def test_line_reader_waits_for_a_line_then_ends_at_eof() -> None:
    async def scenario() -> list[str]:
        reader = LineReader()
        reader.connection_made(_Transport())
        loop = asyncio.get_running_loop()
        loop.call_soon(reader.data_received, b"late\n")
        loop.call_soon(reader.connection_lost, None)
        return await _lines(reader)

    assert _run(scenario) == ["late\n"]


def test_line_reader_pauses_a_flood_and_resumes_as_lines_are_taken() -> None:
    line = b"x" * 1023 + b"\n"

    async def scenario() -> tuple[bool, bool]:
        transport = _Transport()
        reader = LineReader()
        reader.connection_made(transport)
        for _ in range(HIGH_WATER // len(line) + 1):
            reader.data_received(line)
        paused = transport.paused
        async for _ in reader:
            if not transport.paused:
                break
        return paused, transport.paused

    assert _run(scenario) == (True, False)


# -- LineWriter ------------------------------------------------------------------------------


def test_line_writer_writes_utf8_and_flush_waits_while_the_pipe_is_full() -> None:
    async def scenario() -> tuple[bytes, bool]:
        transport = _Transport()
        writer = LineWriter()
        writer.connection_made(transport)
        await writer.write("Zürich\n")
        writer.pause_writing()
        flushed = asyncio.ensure_future(writer.flush())
        await asyncio.sleep(0)
        waited = not flushed.done()
        writer.resume_writing()
        await flushed
        return bytes(transport.written), waited

    assert _run(scenario) == ("Zürich\n".encode(), True)


def test_line_writer_refuses_to_write_once_the_pipe_is_closed() -> None:
    async def scenario() -> None:
        writer = LineWriter()
        writer.connection_made(_Transport())
        writer.connection_lost(None)
        await writer.closed()
        await writer.write("lost\n")

    with pytest.raises(BrokenPipeError, match="stdout was closed"):
        _run(scenario)


# -- serving -----------------------------------------------------------------------------------


def _messages(*texts: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for number, text in enumerate(texts, start=2):
        params = {"name": "echo", "arguments": {"text": text}}
        messages.append({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
    return messages


@pytest.fixture
def loud(tmp_path: Path) -> Path:
    (tmp_path / "loud_tool.py").write_text(LOUD_TOOL)
    (tmp_path / "echo.yaml").write_text(LOUD_DEFINITION)
    return tmp_path


def _served(
    folder: Path, lines: list[str], *, from_file: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``agentkit serve`` on ``folder``, fed ``lines`` through a pipe, or from a regular
    file when ``from_file`` is given; what it wrote, once it exited as it should."""
    text = "".join(f"{line}\n" for line in lines)
    args = ["--tools", str(folder), "--python-path", str(folder)]
    if from_file is None:
        process = run_stdio(args, text)
    else:
        from_file.write_text(text)
        with from_file.open() as stdin:
            process = run_stdio(args, stdin=stdin)
    assert process.returncode == 0, process.stderr
    return process


def _serve(folder: Path, requests: list[dict[str, Any]], *, from_file: Path | None = None) -> Any:
    """``_served`` with ``requests``; its answers by id, and the process."""
    process = _served(folder, [json.dumps(message) for message in requests], from_file=from_file)
    # Every line of stdout must be a JSON-RPC message.
    answers = {answer["id"]: answer for answer in map(json.loads, process.stdout.splitlines())}
    return answers, process


@pytest.mark.parametrize("stdin", ["pipe", "file"])
def test_a_tools_stray_output_goes_to_stderr_not_the_wire(
    loud: Path, tmp_path: Path, stdin: str
) -> None:
    from_file = tmp_path / "requests.jsonl" if stdin == "file" else None
    answers, process = _serve(loud, _messages("one", "two"), from_file=from_file)
    assert answers[2]["result"]["structuredContent"] == {"text": "one"}
    assert answers[3]["result"]["structuredContent"] == {"text": "two"}
    assert process.stderr.count("a stray print") == 2
    assert process.stderr.count("a stray write to fd 1") == 2


def test_a_line_far_over_64_kib_is_read_whole(loud: Path) -> None:
    text = "é" * 300_000
    answers, _ = _serve(loud, _messages(text))
    assert answers[2]["result"]["structuredContent"] == {"text": text}


def test_stdin_from_a_file_is_served_the_sdks_way(loud: Path, tmp_path: Path) -> None:
    answers, _ = _serve(loud, _messages("from a file"), from_file=tmp_path / "requests.jsonl")
    assert answers[2]["result"]["structuredContent"] == {"text": "from a file"}


# -- a line the SDK cannot read --------------------------------------------------------------

LIST = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
CALL = json.dumps(_messages("still serving")[2])  # id 2
_SURROGATE_ANSWER = "holds a lone surrogate escape"


def _request(params: str, *, request_id: str = "7", method: str = "tools/call") -> str:
    """A request line written by hand: ``params`` is raw JSON, escapes kept as written."""
    return f'{{"jsonrpc":"2.0","id":{request_id},"method":"{method}","params":{params}}}'


def _serve_lines(
    folder: Path, lines: list[str], *, from_file: Path | None = None
) -> list[dict[str, Any]]:
    """``_served`` with ``lines`` after initialize; every message it wrote, in order
    (each line of stdout must be one)."""
    handshake = [json.dumps(message) for message in _messages()]
    process = _served(folder, handshake + lines, from_file=from_file)
    return [json.loads(line) for line in process.stdout.splitlines()]


UNREADABLE = [
    pytest.param(
        _request('{"name":"echo","arguments":{"text":"\\ud800"}}'),
        7,
        -32700,
        f"the value of 'params.arguments.text' {_SURROGATE_ANSWER}",
        id="a-lone-high-surrogate-in-an-argument",
    ),
    pytest.param(
        _request('{"name":"echo","arguments":{"text":"a\\uDFFFb"}}'),
        7,
        -32700,
        _SURROGATE_ANSWER,
        id="a-lone-low-surrogate-upper-case",
    ),
    pytest.param(
        _request('{"name":"echo","arguments":{"text":"\\ude00\\ud83d"}}'),
        7,
        -32700,
        _SURROGATE_ANSWER,
        id="a-pair-the-wrong-way-round",
    ),
    pytest.param(
        _request('{"name":"echo","arguments":{"te\\udbffxt":"x"}}', request_id='"call-7"'),
        "call-7",
        -32700,
        f"a key in 'params.arguments' {_SURROGATE_ANSWER}",
        id="in-a-key-with-a-string-id",
    ),
    pytest.param(
        _request('{"name":"echo"}', method="tools/\\ud800"),
        7,
        -32700,
        f"the value of 'method' {_SURROGATE_ANSWER}",
        id="in-the-method",
    ),
    pytest.param(
        _request('{"name":"echo"}', request_id='"\\ud800"'),
        None,
        -32700,
        f"the value of 'id' {_SURROGATE_ANSWER}",
        id="in-the-id-which-cannot-be-read",
    ),
    pytest.param("{not json", None, -32700, "the line is not JSON", id="not-json"),
    pytest.param(
        '{"id":7,"method":"ping"}', 7, -32602, "'jsonrpc' must be \"2.0\"", id="no-jsonrpc"
    ),
    pytest.param(
        _request("[1]", method="ping"), 7, -32602, "'params' must be an object", id="params-a-list"
    ),
    pytest.param('{"jsonrpc":"2.0","id":7}', 7, -32602, "needs a 'method'", id="no-method"),
    pytest.param(f"[{LIST}]", None, -32602, "a batch is not read", id="a-batch"),
]


@pytest.mark.parametrize(("line", "request_id", "code", "message"), UNREADABLE)
@pytest.mark.parametrize("when", ["before-the-first-listing", "after-the-first-listing"])
def test_a_request_the_sdk_cannot_read_is_answered_and_serving_goes_on(
    loud: Path, line: str, request_id: Any, code: int, message: str, when: str
) -> None:
    lines = [line, LIST, CALL] if when == "before-the-first-listing" else [LIST, line, CALL]
    answers = _serve_lines(loud, lines)
    [refused] = [answer for answer in answers if "error" in answer]
    assert refused["id"] == request_id
    assert refused["error"]["code"] == code
    assert message in refused["error"]["message"]
    assert [answer["id"] for answer in answers if "result" in answer] == [1, 3, 2]
    assert answers[-1]["result"]["structuredContent"] == {"text": "still serving"}


@pytest.mark.parametrize(
    ("line", "request_id", "code", "message"), UNREADABLE[:2] + UNREADABLE[6:8]
)
def test_a_request_the_sdk_cannot_read_from_a_file_is_answered_too(
    loud: Path, tmp_path: Path, line: str, request_id: Any, code: int, message: str
) -> None:
    # With stdin a file the SDK reads it through agentkit's stream as well.
    answers = _serve_lines(loud, [line, LIST, CALL], from_file=tmp_path / "requests.jsonl")
    [refused] = [answer for answer in answers if "error" in answer]
    assert (refused["id"], refused["error"]["code"]) == (request_id, code)
    assert message in refused["error"]["message"]
    assert answers[-1]["result"]["structuredContent"] == {"text": "still serving"}


def test_no_answer_is_due_to_a_notification_a_response_or_a_blank_line(loud: Path) -> None:
    notification = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":"\\ud800"}}'
    response = '{"jsonrpc":"2.0","id":99,"result":{"content":{"name":"\\ud800"}}}'
    answers = _serve_lines(loud, [notification, response, "", "   ", CALL])
    assert [answer.get("id") for answer in answers] == [1, 2]
    assert "error" not in answers[-1]


def test_the_refusal_never_shows_a_value_of_the_line() -> None:
    secret = "tok-refusal-0123456789"
    for line in (
        _request(f'{{"name":"echo","arguments":{{"text":"{secret}\\ud800"}}}}'),
        _request(f'"{secret}"', method="ping"),
        f'{{"id":7,"method":"{secret}"}}',
    ):
        answer = refusal(line)
        assert answer is not None
        assert answer["id"] == 7
        assert secret not in json.dumps(answer)


def test_a_line_nested_too_deeply_is_refused_not_a_crash() -> None:
    answer = refusal("[" * 100_000 + "]" * 100_000)
    assert answer == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the JSON is nested too deeply to read"},
    }


ASKING = """\
name: ask
version: 1.0.0
description: Asks the user for a name.
input_schema: {parameters: [{name: question, type: string}]}
output_schema: {parameters: [{name: action, type: string}, {name: name, type: string}]}
backend: {python: "tests.support.serve_tools:ask_async"}
"""


def test_an_answer_the_sdk_cannot_read_ends_the_question_at_once(tmp_path: Path) -> None:
    # Without a stand-in the question would wait out its 600 s for an answer that was lost.
    (tmp_path / "ask.yaml").write_text(ASKING)
    initialize = json.loads(json.dumps(INITIALIZE))
    initialize["params"]["capabilities"] = {"elicitation": {}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    call["params"] = {"name": "ask", "arguments": {"question": "Name?"}}
    heard: queue.Queue[str] = queue.Queue()
    with stdio_process(["--tools", str(tmp_path)]) as process:
        stdin, stdout = process.stdin, process.stdout
        assert stdin is not None
        assert stdout is not None

        def read() -> None:
            for line in stdout:
                heard.put(line)

        def say(*messages: str) -> None:
            stdin.write("".join(f"{message}\n" for message in messages))
            stdin.flush()

        def next_message() -> Any:
            return json.loads(heard.get(timeout=WAIT_SECONDS))

        threading.Thread(target=read, daemon=True).start()
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        say(*(json.dumps(message) for message in (initialize, initialized, call)))
        assert next_message()["id"] == 1
        question = next_message()
        assert question["method"] == "elicitation/create"
        say(
            f'{{"jsonrpc":"2.0","id":{json.dumps(question["id"])},'
            '"result":{"action":"accept","content":{"name":"\\ud800"}}}'
        )
        answer = next_message()
        stdin.close()
        process.wait(timeout=WAIT_SECONDS)
    assert answer["id"] == 2
    assert answer["result"]["isError"] is True
    text = answer["result"]["content"][0]["text"]
    assert text.startswith("Error: Tool 'ask' failed: ElicitationError: ")
    assert "the value of 'result.content.name' holds a lone surrogate escape" in text


@pytest.mark.parametrize(
    ("line", "stand_in"),
    [
        pytest.param('{"jsonrpc":"2.0","id":4,"result":{"x":"\\udc00"}}', 4, id="a-response"),
        pytest.param('{"jsonrpc":"2.0","id":"q","error":{"message":"\\ud800"}}', "q", id="error"),
        pytest.param('{"jsonrpc":"2.0","id":true,"result":{"x":"\\ud800"}}', None, id="bool-id"),
        pytest.param(_request("{}", method="ping"), None, id="a-request-is-refused-instead"),
        pytest.param('{"jsonrpc":"2.0","method":"x","params":{"a":"\\ud800"}}', None, id="note"),
        pytest.param("{not json", None, id="not-json"),
    ],
)
def test_only_an_answer_to_the_server_gets_a_stand_in(line: str, stand_in: Any) -> None:
    error = lost_answer(line)
    assert (error and error["id"]) == stand_in
    if error:
        assert error["error"]["message"].startswith("its answer could not be read: ")
