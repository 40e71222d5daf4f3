"""`agentkit serve --http` in a real subprocess on 127.0.0.1, and the SDK's client to talk to it.

The test modules share their fixtures through the two factories here: a module
writes ``folder = tools_folder({...})`` and ``server = server_fixture(...)``, and
its tests take ``folder`` and ``server`` as usual.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_VERSION = "2025-06-18"
#: An initialize request, for tests that speak raw HTTP.
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
STARTUP_SECONDS = 60
_SERVING = re.compile(r"agentkit: serving \d+ tools on (http://\S+)")


@dataclass
class Served:
    """A running server: its process, its MCP endpoint's URL and what it printed on stderr."""

    process: subprocess.Popen[str]
    url: str
    _reader: threading.Thread
    _lines: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def origin(self) -> str:
        return self.url.rsplit("/", 1)[0]

    @property
    def stderr(self) -> str:
        with self._lock:
            return "".join(self._lines)

    def wait_for_output(self, text: str, *, after: int = 0) -> int:
        """Until stderr holds ``text`` past offset ``after`` (bounded); where it ends."""
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            found = self.stderr.find(text, after)
            if found >= 0:
                return found + len(text)
            assert self.process.poll() is None, f"the server exited:\n{self.stderr}"
            assert time.monotonic() < deadline, f"never printed {text!r}:\n{self.stderr}"
            time.sleep(0.02)

    def stop(self, timeout: float = 20) -> int:
        """SIGTERM, then SIGKILL if it has not exited after ``timeout`` seconds; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return self.process.returncode


def start(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], Any] | None = None,
    command: Sequence[str] | None = None,
) -> Served:
    """``agentkit serve --http 127.0.0.1:0 ARGS``; returns once it prints where it listens.

    ``preexec_fn`` runs in the child before the server starts (``subprocess.Popen``'s).
    ``command``: another command that serves and says so the same way (an application
    calling ``agentkit.mcp.serve``), run with ``args`` after it.
    """
    cli = [sys.executable, "-m", "agentkit", "serve", "--http", "127.0.0.1:0"]
    process = subprocess.Popen(
        [*(command if command is not None else cli), *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec_fn,
    )
    found: queue.Queue[str | None] = queue.Queue()
    lines: list[str] = []
    lock = threading.Lock()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            with lock:
                lines.append(line)
            if match := _SERVING.search(line):
                found.put(match.group(1))
        found.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        url = found.get(timeout=STARTUP_SECONDS)
    except queue.Empty:
        url = None
    served = Served(process, url or "", reader, lines, lock)
    if url is None:
        served.process.kill()
        served.stop()
        raise AssertionError("the server did not start:\n" + served.stderr)
    return served


@contextlib.contextmanager
def serving(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], Any] | None = None,
) -> Iterator[Served]:
    served = start(args, env=env, preexec_fn=preexec_fn)
    try:
        yield served
    finally:
        served.stop()


def tools_folder(
    files: Mapping[str, str], *, scope: Literal["function", "module"] = "function"
) -> Any:
    """A ``folder`` fixture for a test module: a new folder holding ``files`` (file
    name -> text), made afresh for each test, or once for the module (``scope``)."""

    @pytest.fixture(scope=scope, name="folder")
    def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
        made = tmp_path_factory.mktemp("tools")
        for name, text in files.items():
            (made / name).write_text(text)
        return made

    return folder


def server_fixture(
    *args: str,
    env: Mapping[str, str] | None = None,
    scope: Literal["function", "module"] = "module",
) -> Any:
    """A ``server`` fixture for a test module: ``agentkit serve --http --tools FOLDER
    ARGS`` on the module's ``folder`` fixture, with ``env`` added to the environment;
    started once for the module, or for each test (``scope``), and stopped after."""

    @pytest.fixture(scope=scope, name="server")
    def server(folder: Path) -> Iterator[Served]:
        with serving(["--tools", str(folder), *args], env=dict(env or {})) as served:
            yield served

    return server


def post(
    url: str, message: dict[str, Any] | bytes, headers: dict[str, str]
) -> tuple[int, dict[str, str], str]:
    """POST one JSON-RPC message (or raw bytes) with urllib: status, headers (lowercase), body."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    request = urllib.request.Request(url, data=body, method="POST")
    for name, value in {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **headers,
    }.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=STARTUP_SECONDS) as response:
            answer = {name.lower(): value for name, value in response.headers.items()}
            return response.status, answer, response.read().decode()
    except urllib.error.HTTPError as error:
        answer = {name.lower(): value for name, value in error.headers.items()}
        return error.code, answer, error.read().decode()


@contextlib.contextmanager
def streaming_post(url: str, message: dict[str, Any], headers: dict[str, str]) -> Iterator[Any]:
    """POST one JSON-RPC message with urllib and leave its answer open, to be read as it
    streams (an SSE stream's events as they come)."""
    request = urllib.request.Request(url, data=json.dumps(message).encode(), method="POST")
    for name, value in {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **headers,
    }.items():
        request.add_header(name, value)
    with urllib.request.urlopen(request, timeout=STARTUP_SECONDS) as answer:
        yield answer


def next_data(stream: Any) -> Any:
    """The next ``data:`` event of an SSE stream, as JSON (bounded by the stream's end)."""
    line = b""
    while not line.startswith(b"data: "):
        line = stream.readline()
        assert line, "the stream ended before the next event"
    return json.loads(line[len(b"data: ") :])


def last_data(text: str) -> Any:
    """The last ``data:`` event of an SSE stream's text, as JSON."""
    data = [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]
    return json.loads(data[-1])


def open_session(url: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    """A session opened with raw HTTP: the headers its later requests carry."""
    answer = post(url, INITIALIZE, headers or {})[1]
    return {
        **(headers or {}),
        "Mcp-Session-Id": answer["mcp-session-id"],
        "MCP-Protocol-Version": PROTOCOL_VERSION,
    }


@contextlib.asynccontextmanager
async def session(
    url: str,
    headers: dict[str, str] | None = None,
    *,
    on_message: Any = None,
    elicitation: Any = None,
) -> AsyncIterator[Any]:
    """An initialized ``ClientSession`` on ``url`` over the SDK's streamable HTTP client;
    ``on_message`` receives the server's notifications, ``elicitation`` (which declares
    the elicitation capability) answers its questions."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(
            read, write, message_handler=on_message, elicitation_callback=elicitation
        ) as client,
    ):
        await client.initialize()
        yield client


#: How ``agentkit serve`` is started: the running Python's ``-m agentkit serve``.
SERVE: tuple[str, ...] = (sys.executable, "-m", "agentkit", "serve")


def client_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment an MCP client starts ``agentkit serve`` in: the SDK's stdio
    client's (``get_default_environment()``: PATH, HOME and a few more; no
    PYTHONUNBUFFERED, nothing else of the test runner's), plus ``extra``, what a test
    needs (its credentials). Every test that starts a stdio server starts it in this."""
    from mcp.client.stdio import get_default_environment

    return {**get_default_environment(), **(extra or {})}


def stdio_parameters(
    args: Sequence[str], env: Mapping[str, str] | None = None, *, command: Sequence[str] = SERVE
) -> Any:
    """The SDK's ``StdioServerParameters`` for ``agentkit serve ARGS`` (``command``,
    then ``ARGS``), run from the checkout in ``client_environment(env)``."""
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=command[0],
        args=[*command[1:], *args],
        cwd=str(ROOT),
        env=client_environment(env),
    )


def stdio_process(
    args: Sequence[str],
    env: Mapping[str, str] | None = None,
    *,
    command: Sequence[str] = SERVE,
    stdin: Any = subprocess.PIPE,
) -> subprocess.Popen[str]:
    """``agentkit serve ARGS`` (``command``, then ``ARGS``) started as an MCP client
    starts it: from the checkout, in ``client_environment(env)``, stdout and stderr
    pipes (UTF-8 text), and stdin a pipe unless given."""
    return subprocess.Popen(
        [*command, *args],
        cwd=ROOT,
        env=client_environment(env),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def run_stdio(
    args: Sequence[str],
    text: str = "",
    env: Mapping[str, str] | None = None,
    *,
    command: Sequence[str] = SERVE,
    stdin: Any = None,
) -> subprocess.CompletedProcess[str]:
    """``agentkit serve ARGS`` (``command``, then ``ARGS``) as ``stdio_process`` starts
    it, fed ``text`` through a pipe (or reading ``stdin``, a file, when given) until it
    exits; what it wrote."""
    piped = subprocess.PIPE if stdin is None else stdin
    with stdio_process(args, env, command=command, stdin=piped) as process:
        try:
            out, err = process.communicate(None if stdin is not None else text, STARTUP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            raise AssertionError(f"agentkit serve did not exit:\n{err}") from None
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@contextlib.asynccontextmanager
async def stdio_session(
    args: Sequence[str],
    env: Mapping[str, str] | None = None,
    *,
    on_message: Any = None,
    elicitation: Any = None,
) -> AsyncIterator[Any]:
    """An initialized ``ClientSession`` over the SDK's stdio client, with ``agentkit serve
    ARGS`` as its server process (in ``client_environment(env)``); ``on_message`` and
    ``elicitation`` as for ``session``."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async with (
        stdio_client(stdio_parameters(args, env)) as (read, write),
        ClientSession(
            read, write, message_handler=on_message, elicitation_callback=elicitation
        ) as client,
    ):
        await client.initialize()
        yield client
