"""A draining ``agentkit serve --http`` loses nothing behind a proxy: its refusals ran
nothing, and every answer it sends while draining closes its connection."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from tests.support.serving import Served, start, tools_folder

HOLD = """\
name: hold
version: 1.0.0
description: Run until the test lets the call end.
input_schema: {parameters: [{name: marker, type: string}]}
output_schema: {parameters: [{name: held, type: boolean}]}
backend: {python: "tests.support.serve_tools:hold"}
"""
WAIT_SECONDS = 60

folder = tools_folder({"hold.yaml": HOLD})


def _call(marker: Path) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "hold", "arguments": {"marker": str(marker)}},
        }
    ).encode()


def _send(
    connection: http.client.HTTPConnection, method: str, path: str, body: bytes = b""
) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    connection.request(method, path, body=body or None, headers=headers)


def _answer(connection: http.client.HTTPConnection) -> tuple[int, dict[str, str], str]:
    with connection.getresponse() as response:
        headers = {name.lower(): value for name, value in response.getheaders()}
        return response.status, headers, response.read().decode()


def _wait_for(path: Path) -> None:
    """Until ``path`` exists, for at most WAIT_SECONDS (a bounded wait, not a timing)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


@pytest.fixture
def server(folder: Path) -> Iterator[Served]:
    # Idle connections are kept long enough for the test to use them once draining.
    args = ["--tools", str(folder), "--stateless", "--drain-seconds", "60", "--idle-timeout", "600"]
    served = start(args)
    try:
        yield served
    finally:
        served.stop()


def test_while_draining_every_answer_closes_its_connection_and_a_refusal_ran_nothing(
    server: Served, tmp_path: Path
) -> None:
    port = int(server.origin.rsplit(":", 1)[1])
    path = "/" + server.url.rsplit("/", 1)[1]
    running, refused = tmp_path / "running", tmp_path / "refused"
    connections = [
        http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_SECONDS) for _ in "abc"
    ]
    in_flight, keep_alive, health = connections
    try:
        _send(in_flight, "POST", path, _call(running))
        _wait_for(Path(f"{running}.started"))
        # Two connections kept alive from before the drain, as a proxy keeps them.
        before: list[dict[str, Any]] = []
        for connection in (keep_alive, health):
            _send(connection, "GET", "/healthz")
            before.append(_answer(connection)[1])
        server.process.terminate()
        server.wait_for_output("draining 1 calls in flight")

        _send(keep_alive, "POST", path, _call(refused))
        status, refusal, body = _answer(keep_alive)
        _send(health, "GET", "/readyz")
        ready_status, ready = _answer(health)[:2]
        Path(f"{running}.release").write_text("")
        answer_status, answer, answer_body = _answer(in_flight)
        exit_status = server.process.wait(timeout=WAIT_SECONDS)
    finally:
        for connection in connections:
            connection.close()

    assert [headers.get("connection") for headers in before] == [None, None]
    assert (status, refusal["connection"], refusal["retry-after"]) == (503, "close", "1")
    assert json.loads(body) == {"error": "shutting down, retry on another instance"}
    assert (ready_status, ready["connection"]) == (503, "close")
    assert (answer_status, answer["connection"]) == (200, "close")
    assert json.loads(answer_body)["result"]["structuredContent"] == {"held": True}
    assert exit_status == 0
    # The server has exited: had the refused call run at all, it would have left its mark.
    assert not Path(f"{refused}.started").exists()
