"""Nothing but the server's JSON-RPC messages reaches an MCP stdio client's stdout.

``agentkit serve`` is started here as an MCP client starts it: stdin and stdout
pipes, in the environment the SDK's stdio client gives (``client_environment``: no
PYTHONUNBUFFERED, so Python buffers stdout). Its tools write to stdout every way a
tool, a library, a child process or a C extension can, before the first
``tools/list`` and after many calls; a backend module prints as it is imported, and
Python holds output buffered from before serving began. Every line of stdout must
be one whole JSON-RPC message, and every stray text must be on stderr instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from tests.support.serving import INITIALIZE, SERVE, run_stdio, stdio_session

WAIT_SECONDS = 60
#: Each way a tool's code can write to the process's stdout.
KINDS = (
    "print",
    "print-without-newline",
    "sys.stdout.write",
    "sys.stdout.buffer",
    "sys.__stdout__",
    "os.write-fd-1",
    "child-process",
    "child-process-shell",
    "c-stdio",
)
STRAY_TOOL = """\
import ctypes
import os
import subprocess
import sys


def emit(kind, mark):
    if kind == "print":
        print(mark)
    elif kind == "print-without-newline":
        print(mark, end="|")
    elif kind == "sys.stdout.write":
        sys.stdout.write(mark + "\\n")
    elif kind == "sys.stdout.buffer":
        sys.stdout.buffer.write(mark.encode() + b"\\n")
    elif kind == "sys.__stdout__":
        sys.__stdout__.write(mark + "\\n")
    elif kind == "os.write-fd-1":
        os.write(1, mark.encode() + b"\\n")
    elif kind == "child-process":
        subprocess.run(["echo", mark], check=True)
    elif kind == "child-process-shell":
        subprocess.run(f"echo {mark}; echo {mark}-again >&1", shell=True, check=True)
    elif kind == "c-stdio":  # what a C extension's printf does: C's own stdout buffer
        ctypes.CDLL(None).printf(b"%s\\n", mark.encode())
    return {"kind": kind}


def child_reads_stdin():
    done = subprocess.run(["cat"], capture_output=True, check=True, timeout=30)
    return {"read": done.stdout.decode(), "python_read": sys.stdin.read()}
"""
STRAY_DEFINITION = """\
name: stray
version: 1.0.0
description: Writes MARK to stdout the way KIND says.
input_schema: {parameters: [{name: kind, type: string}, {name: mark, type: string}]}
output_schema: {parameters: [{name: kind, type: string}]}
backend: {python: "stray_tool:emit"}
"""
STDIN_DEFINITION = """\
name: read_stdin
version: 1.0.0
description: A child process and Python itself read stdin.
output_schema: {parameters: [{name: read, type: string}, {name: python_read, type: string}]}
backend: {python: "stray_tool:child_reads_stdin"}
"""
#: A backend module that writes to stdout as it is imported, while the tools load.
LOUD_IMPORT = """\
import os
import sys

print("printed-while-the-module-is-imported")
sys.stdout.write("partial-while-imported")
os.write(1, b"fd-1-while-the-module-is-imported\\n")


def hello():
    return {"said": "hello"}
"""
LOUD_IMPORT_DEFINITION = """\
name: hello
version: 1.0.0
output_schema: {parameters: [{name: said, type: string}]}
backend: {python: "loud_import:hello"}
"""
#: Runs as Python starts, before agentkit: output Python buffers before serving begins.
SITECUSTOMIZE = """\
print("buffered-by-python-before-serving")
"""
IMPORT_MARKS = (
    "printed-while-the-module-is-imported",
    "partial-while-imported",
    "fd-1-while-the-module-is-imported",
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tools that write to stdout, and read stdin, as they are called."""
    made = tmp_path_factory.mktemp("stray")
    (made / "stray_tool.py").write_text(STRAY_TOOL)
    (made / "stray.yaml").write_text(STRAY_DEFINITION)
    (made / "read_stdin.yaml").write_text(STDIN_DEFINITION)
    return made


@pytest.fixture(scope="module")
def loading(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tool whose module writes to stdout as it is imported, and a sitecustomize
    that prints as Python starts."""
    made = tmp_path_factory.mktemp("loading")
    (made / "loud_import.py").write_text(LOUD_IMPORT)
    (made / "hello.yaml").write_text(LOUD_IMPORT_DEFINITION)
    (made / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return made


def _request(request_id: int, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def _emit(request_id: int, kind: str, mark: str) -> str:
    arguments = {"kind": kind, "mark": mark}
    return _request(request_id, "tools/call", {"name": "stray", "arguments": arguments})


def _session(
    folder: Path, lines: list[str], env: dict[str, str] | None = None
) -> tuple[dict[Any, dict[str, Any]], str]:
    """``agentkit serve`` on ``folder`` as a client starts it (``env`` added to the
    client's environment), fed initialize then ``lines`` through a pipe until stdin
    ends; its answers by id (every line of stdout checked to be one whole JSON-RPC
    message), and its stderr."""
    handshake = [json.dumps(INITIALIZE), '{"jsonrpc":"2.0","method":"notifications/initialized"}']
    text = "".join(f"{line}\n" for line in [*handshake, *lines])
    args = ["--tools", str(folder), "--python-path", str(folder)]
    process = run_stdio(args, text, env)
    assert process.returncode == 0, process.stderr
    assert process.stdout.endswith("\n"), f"a message was cut short: {process.stdout[-200:]!r}"
    answers: dict[Any, dict[str, Any]] = {}
    for line in process.stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            raise AssertionError(f"not a JSON-RPC message on stdout: {line!r}") from None
        assert isinstance(message, dict), line
        assert message.get("jsonrpc") == "2.0", line
        answers[message.get("id")] = message
    return answers, process.stderr


def _assert_served(answers: dict[Any, dict[str, Any]], ids: list[int]) -> None:
    for request_id in ids:
        assert "result" in answers[request_id], answers[request_id]
        assert not answers[request_id]["result"].get("isError"), answers[request_id]


@pytest.mark.parametrize("kind", KINDS)
def test_stray_output_before_the_first_listing_goes_to_stderr(folder: Path, kind: str) -> None:
    # A call before any tools/list: the output comes while serving is handed over.
    mark = f"stray-before-listing-{kind}"
    answers, stderr = _session(
        folder, [_emit(2, kind, mark), _request(3, "tools/list"), _request(4, "ping")]
    )
    _assert_served(answers, [1, 2, 3, 4])
    assert answers[2]["result"]["structuredContent"] == {"kind": kind}
    assert {tool["name"] for tool in answers[3]["result"]["tools"]} == {"stray", "read_stdin"}
    expected = 2 if kind == "child-process-shell" else 1
    assert stderr.count(mark) == expected, stderr


@pytest.mark.parametrize("kind", KINDS)
def test_stray_output_after_many_calls_goes_to_stderr(folder: Path, kind: str) -> None:
    calls = 40
    lines = [_request(2, "tools/list")]
    lines += [_emit(number, kind, f"stray-{kind}-call-{number}") for number in range(3, 3 + calls)]
    lines.append(_request(3 + calls, "tools/list"))
    answers, stderr = _session(folder, lines)
    _assert_served(answers, list(range(1, 4 + calls)))
    for number in range(3, 3 + calls):
        mark = f"stray-{kind}-call-{number}"
        # Once each, whole: the end of the mark is the newline, or print's "|".
        assert stderr.count(f"{mark}\n") + stderr.count(f"{mark}|") == 1, f"{mark}:\n{stderr}"


def test_output_while_the_tools_load_and_before_serving_goes_to_stderr(loading: Path) -> None:
    call = _request(3, "tools/call", {"name": "hello", "arguments": {}})
    # PYTHONPATH: the folder's sitecustomize runs as Python starts.
    answers, stderr = _session(
        loading, [_request(2, "tools/list"), call], {"PYTHONPATH": str(loading)}
    )
    _assert_served(answers, [1, 2, 3])
    assert answers[3]["result"]["structuredContent"] == {"said": "hello"}
    for mark in (*IMPORT_MARKS, "buffered-by-python-before-serving"):
        assert stderr.count(mark) == 1, f"{mark} not on stderr:\n{stderr}"


def test_every_kind_at_once_interleaved_with_answers(folder: Path) -> None:
    lines = [_emit(2, kind, f"first-{kind}") for kind in KINDS]
    lines.append(_request(99, "tools/list"))
    lines += [_emit(100 + number, kind, f"then-{kind}") for number, kind in enumerate(KINDS)]
    answers, stderr = _session(folder, lines)
    _assert_served(answers, [1, 99, *range(100, 100 + len(KINDS))])
    for kind in KINDS:
        assert f"then-{kind}" in stderr


def test_a_child_process_or_python_reading_stdin_reads_nothing_of_the_clients(
    folder: Path,
) -> None:
    call = _request(2, "tools/call", {"name": "read_stdin", "arguments": {}})
    later = _request(3, "tools/list")
    answers, _ = _session(folder, [call, later, _request(4, "ping")])
    _assert_served(answers, [1, 2, 3, 4])
    assert answers[2]["result"]["structuredContent"] == {"read": "", "python_read": ""}


def test_the_sdks_stdio_client_reads_only_messages(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDK's own client, in its own environment: a parse error would reach its
    message handler as an exception, and its log."""
    errors: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            errors.append(message)

    async def scenario() -> list[Any]:
        args = ["--tools", str(folder), "--python-path", str(folder)]
        with anyio.fail_after(WAIT_SECONDS):
            async with stdio_session(args, on_message=on_message) as client:
                results = [
                    await client.call_tool("stray", {"kind": kind, "mark": f"sdk-{kind}"})
                    for kind in KINDS
                ]
                results.append(await client.list_tools())
                return results

    results = anyio.run(scenario)
    assert [result.is_error for result in results[:-1]] == [False] * len(KINDS)
    assert errors == []
    assert "Failed to parse" not in caplog.text


# -- claim_stdio in a process that goes on -------------------------------------------------------

EMBEDDED = """\
import ctypes, os, subprocess, sys
from agentkit.mcp.stdio_claim import claim_stdio

def where(fd):
    status = os.fstat(fd)
    return status.st_dev, status.st_ino

before = (where(0), where(1), sys.stdout)
print("buffered-before-the-claim")
with claim_stdio() as wire:
    assert (where(0), where(1)) != before[:2]
    assert sys.stdout is sys.stderr
    print("print-while-claimed")
    sys.__stdout__.write("dunder-while-claimed\\n")
    os.write(1, b"fd-1-while-claimed\\n")
    subprocess.run(["echo", "child-while-claimed"], check=True)
    ctypes.CDLL(None).printf(b"c-stdio-while-claimed\\n")
    assert os.read(0, 100) == b""  # the null device: the client's lines are the wire's
    os.write(wire.write_fd, os.read(wire.read_fd, 100))  # the wire: the client's line back
assert (where(0), where(1), sys.stdout) == before
print("print-after-the-claim", flush=True)
os.write(1, b"fd-1-after-the-claim\\n")
"""


def test_claim_stdio_in_a_process_that_goes_on_gives_stdin_and_stdout_back() -> None:
    line = '{"jsonrpc":"2.0","method":"x"}\n'
    done = run_stdio([], line, command=(sys.executable, "-c", EMBEDDED))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{line}print-after-the-claim\nfd-1-after-the-claim\n"
    for mark in (
        "buffered-before-the-claim",
        "print-while-claimed",
        "dunder-while-claimed",
        "fd-1-while-claimed",
        "child-while-claimed",
        "c-stdio-while-claimed",
    ):
        assert done.stderr.count(mark) == 1, f"{mark} not on stderr:\n{done.stderr}"


LIBRARY_SERVE = """\
import sys
from agentkit import Tool, ToolRegistry
from agentkit.mcp import serve

class Loud(Tool):
    TOOL_NAME = "loud"
    OUTPUT_SCHEMA = {"parameters": [{"name": "said", "type": "string"}]}

    def execute(self, inputs, credentials):
        print("printed-by-the-tool")
        return {"said": "yes"}

serve(ToolRegistry([Loud()]))
print("printed-after-serving", flush=True)
"""


def test_the_library_serve_gives_stdout_back_when_the_client_leaves() -> None:
    call = _request(2, "tools/call", {"name": "loud", "arguments": {}})
    handshake = [json.dumps(INITIALIZE), '{"jsonrpc":"2.0","method":"notifications/initialized"}']
    text = "".join(f"{line}\n" for line in [*handshake, call])
    done = run_stdio([], text, command=(sys.executable, "-c", LIBRARY_SERVE))
    assert done.returncode == 0, done.stderr
    *messages, after = done.stdout.splitlines()
    assert [json.loads(message)["id"] for message in messages] == [1, 2]
    assert json.loads(messages[1])["result"]["structuredContent"] == {"said": "yes"}
    assert after == "printed-after-serving"
    assert done.stderr.count("printed-by-the-tool") == 1


@pytest.mark.parametrize(
    ("redirect", "stream"),
    [
        pytest.param(">&-", "stdout (fd 1)", id="stdout"),
        pytest.param("<&-", "stdin (fd 0)", id="stdin"),
    ],
)
def test_serving_without_stdin_or_stdout_is_a_usage_error(
    folder: Path, redirect: str, stream: str
) -> None:
    # The shell closes the descriptor, then runs the server in its place.
    command = ("sh", "-c", f'exec "$@" {redirect}', "sh", *SERVE)
    done = run_stdio(["--tools", str(folder)], command=command)
    assert done.returncode == 2, done.stderr
    assert f"but {stream} is not open" in done.stderr
    assert "Traceback" not in done.stderr
