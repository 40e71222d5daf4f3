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

ROOT = Path(__file__).resolve().parent.parent
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
) -> Served:
    """``agentkit serve --http 127.0.0.1:0 ARGS``; returns once it prints where it listens.

    ``preexec_fn`` runs in the child before the server starts (``subprocess.Popen``'s).
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "serve", "--http", "127.0.0.1:0", *args],
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


@contextlib.asynccontextmanager
async def stdio_session(
    args: Sequence[str],
    env: dict[str, str],
    *,
    on_message: Any = None,
    elicitation: Any = None,
) -> AsyncIterator[Any]:
    """An initialized ``ClientSession`` over the SDK's stdio client, with ``agentkit serve
    ARGS`` as its server process (``env`` its whole environment); ``on_message`` and
    ``elicitation`` as for ``session``."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agentkit", "serve", *args], cwd=str(ROOT), env=env
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read, write, message_handler=on_message, elicitation_callback=elicitation
        ) as client,
    ):
        await client.initialize()
        yield client
