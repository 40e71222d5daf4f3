"""Request ids the SDK cannot tell apart (``1`` and ``"1"``) in flight at once: the second is
refused at once, the first answered, and the id free again once it is; every request gets
exactly one answer, over stdio and HTTP alike."""

from __future__ import annotations

import json
import queue
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from tests.mcp.test_reload import _nap
from tests.support.serving import (
    INITIALIZE,
    PROTOCOL_VERSION,
    last_data,
    open_session,
    post,
    serving,
    stdio_process,
    tools_folder,
)

WAIT_SECONDS = 60
IN_USE = (
    'request id "1" is in use by a request in flight (ids 1 and "1" are the same to this '
    "server); use another id"
)

folder = tools_folder({"nap.yaml": _nap()})


def _call(request_id: int | str, seconds: float, marker: Path | None = None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"seconds": seconds}
    if marker is not None:
        arguments["marker"] = str(marker)
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "nap", "arguments": arguments}}  # fmt: skip


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def _check(answers: dict[Any, list[dict[str, Any]]]) -> None:
    """1 answered with its result, "1" refused with the error naming the collision."""
    [first], [second] = answers[1], answers["1"]
    assert first["result"]["structuredContent"] == {"slept": 1.0}
    assert second["error"] == {"code": -32600, "message": IN_USE}


# -- stdio -----------------------------------------------------------------------------------


def test_over_stdio_an_id_alike_to_one_in_flight_is_refused(folder: Path, tmp_path: Path) -> None:
    marker = tmp_path / "first"
    process = stdio_process(["--tools", str(folder)])
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    answers: dict[Any, list[dict[str, Any]]] = {}

    def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()

    def answered(*ids: Any) -> None:
        while not all(request_id in answers for request_id in ids):
            message = json.loads(lines.get(timeout=WAIT_SECONDS))
            answers.setdefault(message["id"], []).append(message)

    try:
        send({**INITIALIZE, "id": "init"})
        answered("init")
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(_call(1, 1, marker))
        _wait_for(Path(f"{marker}.started"))
        send(_call("1", 0))
        answered(1, "1")
        _check(answers)
        # Answered, 1 is free again: "1" is served now.
        send(_call("1", 0))
        while len(answers["1"]) < 2:
            message = json.loads(lines.get(timeout=WAIT_SECONDS))
            answers.setdefault(message["id"], []).append(message)
        assert answers["1"][1]["result"]["structuredContent"] == {"slept": 0.0}
    finally:
        with process:  # its pipes closed once it has exited
            assert process.stdin is not None
            process.stdin.close()
            process.wait(WAIT_SECONDS)
            reader.join(WAIT_SECONDS)
    while not lines.empty():  # nothing more came: one answer to each request
        message = json.loads(lines.get_nowait())
        answers.setdefault(message["id"], []).append(message)
    assert {key: len(value) for key, value in answers.items()} == {"init": 1, 1: 1, "1": 2}


# -- HTTP ------------------------------------------------------------------------------------


def _body(text: str) -> dict[str, Any]:
    """The JSON-RPC answer in a POST's body: JSON, or an SSE stream's last event."""
    answer: dict[str, Any] = json.loads(text) if text.startswith("{") else last_data(text)
    return answer


def _both_in_flight(url: str, headers: dict[str, str], marker: Path) -> dict[Any, Any]:
    """POST 1 (a call that waits), and "1" once 1 runs; each one's answers."""
    answers: dict[Any, list[dict[str, Any]]] = {1: [], "1": []}

    def call(request_id: int | str, seconds: float, marker: Path | None = None) -> None:
        status, _, text = post(url, _call(request_id, seconds, marker), headers)
        assert status == 200, text
        answers[request_id].append(_body(text))

    first = threading.Thread(target=call, args=(1, 1, marker), daemon=True)
    first.start()
    _wait_for(Path(f"{marker}.started"))
    call("1", 0)
    first.join(WAIT_SECONDS)
    assert not first.is_alive(), "1 was never answered"
    return answers


@pytest.mark.parametrize(
    "args", [pytest.param([], id="fast-path"), pytest.param(["--no-fast-path"], id="sdk")]
)
def test_on_an_http_session_an_id_alike_to_one_in_flight_is_refused(
    folder: Path, tmp_path: Path, args: list[str]
) -> None:
    with serving(["--tools", str(folder), *args]) as served:
        headers = open_session(served.url)
        answers = _both_in_flight(served.url, headers, tmp_path / "first")
        _check(answers)
        # Answered, 1 is free again: "1" is served now.
        answer = _body(post(served.url, _call("1", 0), headers)[2])
        assert answer["result"]["structuredContent"] == {"slept": 0.0}
        # The SDK's own requests (a listing) take the same rule as calls.
        listing = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        assert "result" in _body(post(served.url, listing, headers)[2])


@pytest.mark.parametrize(
    "args", [pytest.param([], id="fast-path"), pytest.param(["--no-fast-path"], id="sdk")]
)
def test_http_stateless_serves_both(folder: Path, tmp_path: Path, args: list[str]) -> None:
    # Each stateless request is a session of its own: no id is shared, both are served.
    with serving(["--tools", str(folder), "--stateless", *args]) as served:
        headers = {"MCP-Protocol-Version": PROTOCOL_VERSION}
        answers = _both_in_flight(served.url, headers, tmp_path / "first")
    [first], [second] = answers[1], answers["1"]
    assert first["result"]["structuredContent"] == {"slept": 1.0}
    assert second["result"]["structuredContent"] == {"slept": 0.0}


def test_sessions_do_not_share_ids(folder: Path, tmp_path: Path) -> None:
    with serving(["--tools", str(folder)]) as served:
        marker = tmp_path / "first"
        one, other = open_session(served.url), open_session(served.url)
        running = threading.Thread(
            target=post, args=(served.url, _call(1, 1, marker), one), daemon=True
        )
        running.start()
        _wait_for(Path(f"{marker}.started"))
        answer = _body(post(served.url, _call("1", 0), other)[2])
        running.join(WAIT_SECONDS)
    assert answer["result"]["structuredContent"] == {"slept": 0.0}


# -- the table -------------------------------------------------------------------------------


def test_an_id_is_held_from_its_arrival_to_its_answer() -> None:
    from agentkit.mcp.request_ids import InFlightIds

    ids = InFlightIds()
    assert ids.claim("a", 1) is None
    assert ids.claim("a", "1") == IN_USE
    assert ids.claim("a", 1) == "request id 1 is in use by a request in flight; use another id"
    assert ids.claim("b", "1") is None  # another connection
    with ids.held("a", 1):
        ids.release("a", "1")  # the refused one's answer frees nothing
        ids.release("a", 1)  # its client left: the handler still runs
        assert ids.claim("a", "1") is not None
    assert ids.claim("a", "1") is None  # the handler has ended: free before its answer goes
    ids.release("a", "1")  # no handler took it: its answer frees it
    ids.release("b", "1")
    assert len(ids) == 0
