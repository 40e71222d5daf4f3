"""Limits of a serving agentkit: admission, deadlines, cancellation, draining on SIGTERM and EOF."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from agentkit.mcp.admission import Busy, CallInterrupted, CallLimits
from tests.support.serving import (
    INITIALIZE,
    Served,
    open_session,
    post,
    run_stdio,
    server_fixture,
    session,
    start,
    tools_folder,
)

SLOW_TOOLS = """\
name: nap
version: 1.0.0
description: Sleep on the event loop.
concurrency: 1
input_schema:
  parameters:
    - {name: seconds, type: float}
    - {name: marker, type: string, required: false}
output_schema: {parameters: [{name: slept, type: float}]}
backend: {python: "tests.support.serve_tools:nap"}
---
name: doze
version: 1.0.0
description: Sleep in a thread.
input_schema:
  parameters:
    - {name: seconds, type: float}
    - {name: marker, type: string, required: false}
output_schema: {parameters: [{name: slept, type: float}]}
backend: {python: "tests.support.serve_tools:doze"}
"""
WAIT_SECONDS = 60
T = TypeVar("T")


def _wait_for(path: Path) -> None:
    """Until ``path`` exists, for at most WAIT_SECONDS (a bounded wait, not a timing)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


async def _await_file(path: Path) -> None:
    with anyio.fail_after(WAIT_SECONDS):
        while not path.exists():
            await anyio.sleep(0.02)


def _only_broken_streams(exc: BaseException) -> bool:
    """Whether ``exc`` is, or is a group holding only, ``anyio.BrokenResourceError``."""
    inner = getattr(exc, "exceptions", None)
    if inner is None:
        return isinstance(exc, anyio.BrokenResourceError)
    return all(_only_broken_streams(each) for each in inner)


def _bounded(scenario: Callable[[], Awaitable[T]]) -> T:
    """``anyio.run(scenario)``, failing after WAIT_SECONDS."""

    async def run() -> T:
        with anyio.fail_after(WAIT_SECONDS):
            return await scenario()

    return anyio.run(run)


folder = tools_folder({"slow.yaml": SLOW_TOOLS}, scope="module")
server = server_fixture("--max-calls", "2", "--max-queued", "0", "--call-timeout", "4")


# -- admission -----------------------------------------------------------------------------------


def test_calls_past_the_limits_are_refused_at_once_and_others_still_run(
    server: Served, tmp_path: Path
) -> None:
    marker = str(tmp_path / "first")

    async def scenario() -> tuple[Any, Any, Any]:
        async with session(server.url) as client:
            first: list[Any] = []

            async def run_first() -> None:
                first.append(await client.call_tool("nap", {"seconds": 30, "marker": marker}))

            async with anyio.create_task_group() as group:
                group.start_soon(run_first)
                await _await_file(Path(marker + ".started"))
                # nap allows one call at a time and the queue holds none: refused at once.
                second = await client.call_tool("nap", {"seconds": 0})
                # The server's cap is 2: another tool still has room.
                other = await client.call_tool("doze", {"seconds": 0})
            return first[0], second, other

    first, second, other = _bounded(scenario)
    assert second.is_error is True
    assert second.content[0].text == (
        "Error: Tool 'nap' was not run: busy, retry later: tool 'nap' runs at most 1 calls "
        "at once (its concurrency), and 0 are waiting, the most the queue holds"
    )
    assert other.is_error is False
    # The first call met the 4 s deadline: an async tool is cancelled.
    assert first.is_error is True
    assert "did not finish within 4.0 s" in first.content[0].text
    _wait_for(Path(marker + ".cancelled"))


def test_a_sync_tool_past_its_deadline_is_abandoned_with_a_clear_error(server: Served) -> None:
    async def scenario() -> Any:
        async with session(server.url) as client:
            return await client.call_tool("doze", {"seconds": 6})

    result = _bounded(scenario)
    assert result.is_error is True
    assert "did not finish within 4.0 s" in result.content[0].text
    assert "the deadline this server sets for every call (--call-timeout 4)" in (
        result.content[0].text
    )
    assert (
        "its thread cannot be stopped and runs on, its result will be discarded"
        in result.content[0].text
    )


def test_a_cancelled_request_stops_the_async_tool(server: Served, tmp_path: Path) -> None:
    marker = str(tmp_path / "cancelled")

    async def scenario() -> None:
        try:
            async with session(server.url) as client:
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "nap", {"seconds": 30, "marker": marker})
                    await _await_file(Path(marker + ".started"))
                    group.cancel_scope.cancel()  # the SDK sends notifications/cancelled
                await _await_file(Path(marker + ".cancelled"))
        except Exception as exc:
            # The server answers the cancelled request (-32800, as the SDK's own server does
            # for a handshake-era client); when that answer reaches the SDK's client after
            # its session has closed, the client's transport raises BrokenResourceError as
            # it shuts down. That is the client's teardown, not the server under test.
            if not _only_broken_streams(exc):
                raise

    _bounded(scenario)
    assert not Path(marker + ".finished").exists()


# -- draining ------------------------------------------------------------------------------------


def _call_in_a_thread(
    url: str, headers: dict[str, str], arguments: dict[str, Any]
) -> Callable[[], str]:
    """POST a nap call on a thread of its own; the returned function joins it and gives the body."""
    found: list[str] = []
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "nap", "arguments": arguments},
    }
    thread = threading.Thread(target=lambda: found.append(post(url, call, headers)[2]), daemon=True)
    thread.start()

    def result() -> str:
        thread.join(WAIT_SECONDS)
        return found[0] if found else ""

    return result


def test_sigterm_lets_the_call_in_flight_finish_and_exits_0(folder: Path, tmp_path: Path) -> None:
    marker = str(tmp_path / "drained")
    served = start(["--tools", str(folder), "--drain-seconds", "30"])
    try:
        headers = open_session(served.url)
        result = _call_in_a_thread(served.url, headers, {"seconds": 2, "marker": marker})
        _wait_for(Path(marker + ".started"))
        served.process.terminate()
        body = result()
        status = served.process.wait(timeout=WAIT_SECONDS)
    finally:
        served.stop()
    assert '"structuredContent":{"slept":2.0}' in body
    assert status == 0
    assert "draining 1 calls in flight" in served.stderr
    assert "Traceback" not in served.stderr


def test_sigterm_past_the_grace_period_cancels_the_call_and_still_exits_0(
    folder: Path, tmp_path: Path
) -> None:
    marker = str(tmp_path / "cut")
    served = start(["--tools", str(folder), "--drain-seconds", "1", "--stateless"])
    try:
        result = _call_in_a_thread(served.url, {}, {"seconds": 60, "marker": marker})
        _wait_for(Path(marker + ".started"))
        served.process.terminate()
        status = served.process.wait(timeout=WAIT_SECONDS)
        body = result()
    finally:
        served.stop()
    assert status == 0
    assert Path(marker + ".cancelled").exists()
    assert "1 calls still running after 1.0 s; cancelling them" in served.stderr
    # The cut call is answered before its stream closes, not left without a response.
    assert '"isError":true' in body
    assert "Tool 'nap' did not finish: the server shut down before the call finished" in body


def test_stdio_a_call_in_flight_when_stdin_closes_still_gets_its_answer(folder: Path) -> None:
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 1}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "doze", "arguments": {"seconds": 1}},
        },
    ]
    process = run_stdio(
        ["--tools", str(folder)], "".join(json.dumps(message) + "\n" for message in messages)
    )
    answers = {answer["id"]: answer for answer in map(json.loads, process.stdout.splitlines())}
    assert process.returncode == 0, process.stderr
    assert answers[2]["result"]["structuredContent"] == {"slept": 1.0}
    assert answers[3]["result"]["structuredContent"] == {"slept": 1.0}


# -- CallLimits ----------------------------------------------------------------------------------


def test_call_limits_queue_then_refuse() -> None:
    async def scenario() -> list[str]:
        limits = CallLimits(max_in_flight=1, max_queued=1)
        order: list[str] = []
        release = anyio.Event()

        async def hold(name: str) -> None:
            async with limits.admitted(name):
                order.append(f"{name} runs")
                await release.wait()

        async with anyio.create_task_group() as group:
            group.start_soon(hold, "a")
            while limits.in_flight < 1:
                await anyio.sleep(0)
            group.start_soon(hold, "b")  # waits in the queue
            while limits.waiting < 1:
                await anyio.sleep(0)
            with pytest.raises(
                Busy, match="1 calls are running, the server's limit, and 1 are waiting"
            ):
                async with limits.admitted("c"):
                    pass
            release.set()
        return order

    assert anyio.run(scenario) == ["a runs", "b runs"]


def test_call_limits_refuse_everything_once_closed_and_report_drained() -> None:
    async def scenario() -> bool:
        limits = CallLimits()
        await limits.close()
        with pytest.raises(Busy, match="shutting down"):
            async with limits.admitted("a"):
                pass
        return await limits.drained(1)

    assert anyio.run(scenario) is True


def test_call_limits_cut_ends_running_calls_with_call_cut_and_nothing_else() -> None:
    async def scenario() -> list[str]:
        limits = CallLimits()
        seen: list[str] = []

        async def hold(name: str) -> None:
            try:
                async with limits.admitted(name):
                    await anyio.sleep_forever()
            except CallInterrupted as exc:
                seen.append(f"{name}: {exc}")

        async with anyio.create_task_group() as group:
            group.start_soon(hold, "a")
            group.start_soon(hold, "b")
            while limits.in_flight < 2:
                await anyio.sleep(0)
            assert limits.cut() == 2
        assert await limits.drained(1)
        # A call cancelled from outside (its client) is not taken for a cut one.
        with anyio.CancelScope() as outside:
            async with limits.admitted("c"):
                outside.cancel()
                await anyio.sleep_forever()
        return sorted(seen)

    assert anyio.run(scenario) == [
        "a: the server shut down before the call finished",
        "b: the server shut down before the call finished",
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"max_in_flight": 0}, "max_in_flight must be a positive integer", id="zero"),
        pytest.param(
            {"max_in_flight": True}, "max_in_flight must be a positive integer", id="bool"
        ),
        pytest.param({"max_queued": -1}, "max_queued must be 0 or a positive", id="negative-queue"),
    ],
)
def test_call_limits_refuse_nonsense(kwargs: dict[str, Any], message: str) -> None:
    from agentkit.toolerrors import SemanticError

    with pytest.raises(SemanticError, match=message):
        CallLimits(**kwargs)
