"""Real third-party REST servers on 127.0.0.1, started once per test session.

- ``json_server``: json-server from npm (pinned in ``package-lock.json``,
  installed by ``make test``), serving a fresh copy of ``db.json``. Its tests
  skip only when npm itself is absent.
- ``prism``: Prism from npm (``@stoplight/prism-cli``, pinned the same way),
  mocking an OpenAPI description: it answers a request that is valid for the
  description with a reply built from it, and refuses any other. Its tests
  skip only when node itself is absent.
- ``httpbin``: httpbin from PyPI (the ``dev`` extra), served in-process by
  werkzeug's threaded WSGI server, counting the requests each path gets.

A definition cannot template its origin, so each test writes its definition
with the server's real port in the literal ``url:`` (``make_tool``).
"""

from __future__ import annotations

import collections
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from agentkit import Tool, ToolRegistry, load_tools
from tests.support import loopback

REPO = Path(__file__).resolve().parents[2]
JSON_SERVER = REPO / "node_modules" / ".bin" / "json-server"
PRISM = REPO / "node_modules" / ".bin" / "prism"
DB = Path(__file__).with_name("db.json")
#: Seconds json-server or Prism may take to answer its first request (they take one to three).
STARTUP = 30.0
#: Ports tried: another process may take a free port between choosing it and json-server binding it.
PORT_TRIES = 3

MakeTool = Callable[[str], Tool]


@pytest.fixture
def make_tool(tmp_path: Path) -> MakeTool:
    """Load one YAML definition (the text of a file) and return its registered tool."""

    def make(text: str) -> Tool:
        path = tmp_path / f"tool{len(list(tmp_path.iterdir()))}.yaml"
        path.write_text(text, encoding="utf-8")
        registry = ToolRegistry()
        [cls] = load_tools(path, registry=registry)
        return registry[cls.TOOL_NAME]

    return make


# -- json-server -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the server and anything it started (its own session), bounded."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        if process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def _wait_until_up(process: subprocess.Popen[bytes], probe: str, deadline: float) -> bool:
    """Whether ``probe`` (a URL) answers, with any status, before ``deadline``."""
    while time.monotonic() < deadline and process.poll() is None:
        try:
            requests.get(probe, timeout=1)
            return True
        except requests.RequestException:
            time.sleep(0.05)
    return False


def _serve(
    command: Callable[[str], list[str]], folder: Path, name: str, probe: str
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``command(port)`` in ``folder`` until ``probe`` (a path) answers on its port.

    Returns the process, in its own session so ``_stop`` ends what it starts, and
    its base URL; fails the test with the server's log if it never comes up.
    """
    log = folder / f"{name}.log"
    for _ in range(PORT_TRIES):
        url = f"http://127.0.0.1:{_free_port()}"
        with log.open("ab") as out:
            process = subprocess.Popen(
                command(url.rsplit(":", 1)[1]),
                cwd=folder,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        if _wait_until_up(process, url + probe, time.monotonic() + STARTUP):
            return process, url
        _stop(process)
    pytest.fail(f"{name} did not start within {STARTUP} s; its log:\n{log.read_text()}")


def _installed(program: Path, runtime: str, package: str) -> None:
    """Skip when ``runtime`` (npm, node) is absent; fail when the pinned package is missing."""
    if shutil.which(runtime) is None:
        pytest.skip(f"{runtime} is not installed: the {package} integration tests need it")
    if not program.exists():
        pytest.fail(
            f"{package} is not installed ({program} is missing): run `make test`, "
            "or `npm ci` in the repository root"
        )


@pytest.fixture(scope="session")
def json_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """json-server's base URL (``http://127.0.0.1:PORT``) over a fresh copy of ``db.json``."""
    _installed(JSON_SERVER, "npm", "json-server")
    folder = tmp_path_factory.mktemp("json-server")
    db = folder / "db.json"
    shutil.copyfile(DB, db)

    def command(port: str) -> list[str]:
        return [str(JSON_SERVER), "--host", "127.0.0.1", "--port", port, "--quiet", str(db)]

    process, url = _serve(command, folder, "json-server", "/db")
    try:
        yield url
    finally:
        _stop(process)


# -- Prism -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def prism(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[Path], str]]:
    """``prism(description)``: the base URL of a Prism mock serving that description.

    One server per description, started on first use and stopped at the end of
    the session. Prism refuses a request the description does not allow (422,
    400, 401...) and answers a valid one with a reply built from the operation's
    2xx schema (its examples when it has them).
    """
    _installed(PRISM, "node", "Prism (@stoplight/prism-cli)")
    folder = tmp_path_factory.mktemp("prism")
    running: dict[Path, tuple[subprocess.Popen[bytes], str]] = {}

    def mock(description: Path) -> str:
        if description not in running:

            def command(port: str) -> list[str]:
                return [str(PRISM), "mock", "--host", "127.0.0.1", "--port", port, str(description)]

            running[description] = _serve(command, folder, f"prism-{description.stem}", "/")
        return running[description][1]

    try:
        yield mock
    finally:
        for process, _ in running.values():
            _stop(process)


# -- httpbin -----------------------------------------------------------------------------------


@dataclass
class Httpbin:
    """A running httpbin: its base URL and how many requests each path got."""

    url: str
    _hits: collections.Counter[str] = field(default_factory=collections.Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def hits(self, path: str) -> int:
        with self._lock:
            return self._hits[path]

    def count(self, app: Any) -> Any:
        """``app`` wrapped to count each request by its path."""

        def counting(environ: dict[str, Any], start_response: Any) -> Any:
            with self._lock:
                self._hits[environ.get("PATH_INFO", "")] += 1
            return app(environ, start_response)

        return counting


@pytest.fixture(scope="session")
def httpbin() -> Iterator[Httpbin]:
    import httpbin as package
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args: Any, **kwargs: Any) -> None:
            pass

    served = Httpbin(url="")
    server = make_server(
        "127.0.0.1", 0, served.count(package.app), threaded=True, request_handler=Quiet
    )
    served.url = f"http://127.0.0.1:{server.server_port}"
    with loopback.running(server):
        yield served


@pytest.fixture(scope="session")
def httpbin_url(httpbin: Httpbin) -> str:
    """httpbin's base URL (``http://127.0.0.1:PORT``)."""
    return httpbin.url
