"""A call waiting for its user's answer: it holds no ``--max-calls`` slot, has a cap
(``--max-waiting``) and a deadline (``--answer-timeout``) of its own, is admitted again
when the answer comes, and ends when its client leaves. Real servers over streamable
HTTP (the SDK's clients, and raw httpx2 for a client that leaves) and stdio; and
``CallLimits`` alone."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import httpx2
import mcp_types as types
from mcp import Client

from agentkit.mcp.admission import (
    MAX_WAITING,
    Busy,
    CallInterrupted,
    CallLimits,
    client_left,
    watching,
)
from agentkit.toolerrors import ElicitationError, SemanticError
from tests.support.serve_tools import WIPE
from tests.support.serving import (
    Served,
    run_stdio,
    serving,
    session,
    stdio_process,
    stdio_session,
    tools_folder,
)

WAIT_SECONDS = 60
KEY = "agentkit/question"
ACCEPT: dict[str, Any] = {KEY: types.ElicitResult(action="accept")}
T = TypeVar("T")

folder = tools_folder(
    {
        "wipe.yaml": WIPE,
        "doze.yaml": """\
name: doze
version: 1.0.0
description: Sleep in a thread (does not ask).
input_schema: {parameters: [{name: seconds, type: float}]}
output_schema: {parameters: [{name: slept, type: float}]}
backend: {python: "tests.support.serve_tools:doze"}
""",
        "ask_later.yaml": """\
name: ask_later
version: 1.0.0
description: Asks its user once the test says.
input_schema: {parameters: [{name: marker, type: string}]}
output_schema: {parameters: [{name: action, type: string}, {name: name, type: string}]}
backend: {python: "tests.support.serve_tools:ask_later"}
""",
        "ask_briefly.yaml": """\
name: ask_briefly
version: 1.0.0
description: Asks its user with a short timeout of its own, then goes on.
input_schema: {parameters: [{name: marker, type: string}]}
output_schema: {parameters: [{name: action, type: string}, {name: name, type: string}]}
backend: {python: "tests.support.serve_tools:ask_briefly"}
""",
        "hold.yaml": """\
name: hold
version: 1.0.0
description: Run until the test says.
input_schema: {parameters: [{name: marker, type: string}]}
output_schema: {parameters: [{name: held, type: boolean}]}
backend: {python: "tests.support.serve_tools:hold"}
""",
    },
    scope="module",
)


def _bounded(scenario: Callable[..., Awaitable[T]], *args: Any) -> T:
    async def run() -> T:
        with anyio.fail_after(WAIT_SECONDS):
            return await scenario(*args)

    return anyio.run(run)


async def _asked(client: Any, seconds: float = 0) -> types.InputRequiredResult:
    """The first round of ``wipe`` on a 2026-07-28 client: its question, not answered."""
    first = await client.session.call_tool("wipe", {"seconds": seconds}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    return first


async def _accept(context: Any, params: Any) -> types.ElicitResult:
    """A user who allows (declares the elicitation capability; rounds are answered by hand)."""
    return types.ElicitResult(action="accept")


def _text(result: Any) -> str:
    return str(result.content[0].text)


# -- R3: the question holds no slot --------------------------------------------------------------


@pytest.mark.parametrize("stateless", [True, False], ids=["stateless", "stateful"])
def test_2026_calls_waiting_for_their_answers_leave_the_slots_to_other_calls(
    folder: Path, stateless: bool
) -> None:
    """Two first rounds never answered, on a server of two slots and a queue of one:
    two more calls both run (before: one busy, one queued for 600 s)."""

    async def scenario(url: str) -> list[Any]:
        async with Client(url, elicitation_callback=_accept) as client:
            await _asked(client)
            await _asked(client)
            results: list[Any] = []

            async def doze() -> None:
                results.append(await client.call_tool("doze", {"seconds": 0}))

            async with anyio.create_task_group() as group:
                group.start_soon(doze)
                group.start_soon(doze)
            return results

    args = ["--tools", str(folder), "--max-calls", "2", "--max-queued", "1"]
    with serving([*args, *(["--stateless"] if stateless else [])]) as served:
        results = _bounded(scenario, served.url)
    assert [result.is_error for result in results] == [False, False]
    assert [result.structured_content for result in results] == [{"slept": 0.0}] * 2


def test_sync_calls_waiting_for_their_users_keep_threads_but_others_still_get_one(
    folder: Path,
) -> None:
    """A sync tool's question holds its worker thread: the pool has one for each running
    call and each waiting one (before: the pool's default, os.cpu_count() + 4 threads at
    most, so a few unanswered questions left sync tools no thread)."""

    async def scenario(url: str) -> Any:
        async with Client(url, elicitation_callback=_accept) as client:
            for _ in range(40):
                await _asked(client)
            return await client.call_tool("doze", {"seconds": 0})

    with serving(["--tools", str(folder), "--max-calls", "1", "--stateless"]) as served:
        result = _bounded(scenario, served.url)
    assert result.structured_content == {"slept": 0.0}


INITIALIZE_ASKABLE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _raw_session(client: httpx2.Client, url: str) -> dict[str, str]:
    answer = client.post(url, headers=HEADERS, json=INITIALIZE_ASKABLE)
    headers = {
        **HEADERS,
        "mcp-session-id": answer.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    client.post(url, headers=headers, json=initialized)
    return headers


def _ask_and_leave(url: str, headers: dict[str, str], request_id: int) -> None:
    """Call ``wipe``, read until its question arrives, and close the connection."""
    with (
        httpx2.Client(timeout=WAIT_SECONDS) as client,
        client.stream(
            "POST", url, headers=headers, json=_call(request_id, "wipe", {"seconds": 0})
        ) as response,
    ):
        for line in response.iter_lines():
            if line.startswith("data: ") and '"elicitation/create"' in line:
                return
    raise AssertionError("the call never asked")


@pytest.mark.parametrize("path", ["fast path", "sdk"])
def test_2025_a_call_whose_client_left_while_it_asked_ends_and_frees_its_slot(
    folder: Path, path: str
) -> None:
    """The client reads the question and leaves (its stream closed): the call ends, says
    so, and its slot serves the next calls (before: held for 600 s, on both paths)."""
    args = ["--tools", str(folder), "--max-calls", "2", "--max-queued", "1"]
    with (
        serving([*args, *(["--no-fast-path"] if path == "sdk" else [])]) as served,
        httpx2.Client(timeout=WAIT_SECONDS) as client,
    ):
        headers = _raw_session(client, served.url)
        _ask_and_leave(served.url, headers, 1)
        _ask_and_leave(served.url, headers, 2)
        left = "a call of tool 'wipe' ended: its client left while it waited for its user's"
        served.wait_for_output(left, after=served.wait_for_output(left))
        answers = [
            client.post(served.url, headers=headers, json=_call(9, "doze", {"seconds": 0}))
            for _ in range(3)
        ]
    for answer in answers:
        assert answer.status_code == 200
        assert '"structuredContent":{"slept":0.0}' in answer.text, answer.text
    assert "Traceback" not in served.stderr


@pytest.mark.parametrize("path", ["fast path", "sdk"])
def test_2025_a_call_that_asks_after_its_client_left_ends_at_its_question(
    folder: Path, tmp_path: Path, path: str
) -> None:
    marker = str(tmp_path / "later")
    args = ["--tools", str(folder), *(["--no-fast-path"] if path == "sdk" else [])]
    with serving(args) as served, httpx2.Client(timeout=WAIT_SECONDS) as client:
        headers = _raw_session(client, served.url)
        call = _call(1, "ask_later", {"marker": marker})
        with (
            httpx2.Client(timeout=WAIT_SECONDS) as leaving,
            leaving.stream("POST", served.url, headers=headers, json=call),
        ):
            deadline = time.monotonic() + WAIT_SECONDS
            while not Path(marker + ".started").exists():
                assert time.monotonic() < deadline, "the call never started"
                time.sleep(0.02)
        # The client has gone (its connection closed); now the call asks.
        Path(marker + ".release").write_text("go")
        served.wait_for_output("a call of tool 'ask_later' ended: its client left")
    assert "Traceback" not in served.stderr


# -- its own cap, its own deadline ---------------------------------------------------------------


def test_past_max_waiting_a_call_that_would_ask_is_refused_at_once(folder: Path) -> None:
    async def scenario(url: str) -> tuple[Any, Any]:
        async with Client(url, elicitation_callback=_accept) as client:
            await _asked(client)
            refused = await client.session.call_tool(
                "wipe", {"seconds": 0}, allow_input_required=True
            )
            # The cap counts calls waiting, not slots: a call that does not ask runs.
            ran = await client.call_tool("doze", {"seconds": 0})
            return refused, ran

    with serving(["--tools", str(folder), "--max-waiting", "1", "--max-calls", "1"]) as served:
        refused, ran = _bounded(scenario, served.url)
    assert isinstance(refused, types.CallToolResult)
    assert refused.is_error is True
    assert "too many calls wait for their users' answers already (at most 1, the server's " \
        "--max-waiting); the user was not asked and nothing was done" in _text(refused)  # fmt: skip
    assert ran.structured_content == {"slept": 0.0}


@pytest.mark.parametrize("queued", [0, 1], ids=["queue full", "queued"])
def test_a_question_its_tool_stopped_waiting_for_is_admitted_again_like_an_answer(
    folder: Path, tmp_path: Path, queued: int
) -> None:
    """A tool asks with its own short ``timeout=`` (nobody answers) and then goes on: it
    goes on only once admitted again, as after an answer. One slot, taken meanwhile by
    another call: with no queue the call is "busy" and its tool never went on; with a
    place in the queue it goes on after the other call (review s17 R3: it took the slot
    back room or not, and worked beside the other call, over --max-calls)."""
    marker = str(tmp_path / "hold")
    asker = str(tmp_path / "asker")

    async def never(context: Any, params: Any) -> types.ElicitResult:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def scenario(url: str) -> list[tuple[str, Any]]:
        finished: list[tuple[str, Any]] = []
        async with session(url, elicitation=never) as client:

            async def call(name: str, marker: str) -> None:
                finished.append((name, await client.call_tool(name, {"marker": marker})))

            async with anyio.create_task_group() as group:
                group.start_soon(call, "ask_briefly", asker)
                await anyio.sleep(0.05)  # not a timing: either order of admission will do
                group.start_soon(call, "hold", marker)
                while not Path(marker + ".started").exists():
                    await anyio.sleep(0.02)
                if queued:
                    await anyio.sleep(1.0)  # past the question's 0.3 s: it waits for the slot
                else:
                    while not finished:
                        await anyio.sleep(0.02)
                Path(marker + ".release").write_text("go")
        return finished

    args = ["--tools", str(folder), "--max-calls", "1", "--max-queued", str(queued)]
    with serving(args) as served:
        finished = _bounded(scenario, served.url)
    results = dict(finished)
    assert results["hold"].structured_content == {"held": True}
    if queued:
        assert [name for name, _ in finished] == ["hold", "ask_briefly"]
        assert results["ask_briefly"].structured_content == {"action": "default", "name": ""}
    else:
        assert results["ask_briefly"].is_error is True
        assert "busy, retry later: 1 calls are running" in _text(results["ask_briefly"])
        assert not Path(asker + ".went-on").exists()


def test_a_question_unanswered_past_the_answer_timeout_ends_its_call(folder: Path) -> None:
    """2025-11-25 (the SDK's client never answers) and 2026-07-28 (the round never comes):
    each call ends after --answer-timeout, says so, and a late round finds nothing."""

    async def never(context: Any, params: Any) -> types.ElicitResult:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def handshake_era(url: str) -> Any:
        async with session(url, elicitation=never) as client:
            return await client.call_tool("wipe", {"seconds": 0})

    async def rounds(url: str, served: Served) -> Any:
        async with Client(url, elicitation_callback=_accept) as client:
            first = await _asked(client)
            said = "did not answer within 1 s (--answer-timeout)"
            served.wait_for_output(said, after=served.wait_for_output(said))  # the second time
            return await client.session.call_tool(
                "wipe", {"seconds": 0}, input_responses=ACCEPT, request_state=first.request_state
            )

    with serving(["--tools", str(folder), "--answer-timeout", "1"]) as served:
        ended = _bounded(handshake_era, served.url)
        late = _bounded(rounds, served.url, served)
    assert ended.is_error is True
    assert "the user did not answer within 1 s (the server's --answer-timeout)" in _text(ended)
    assert late.is_error is True
    assert "no call waits for this answer" in _text(late)


# -- admitted again when the answer comes --------------------------------------------------------


@pytest.mark.parametrize("queued", [0, 1], ids=["queue full", "queued"])
def test_an_answer_that_finds_the_server_full_queues_or_is_busy(
    folder: Path, tmp_path: Path, queued: int
) -> None:
    """One slot: a call asks, another takes the slot, the answer comes. With no queue it
    is "busy" and nothing past the question ran; with a place in the queue it waits
    there and runs once the slot is free."""
    marker = str(tmp_path / "hold")

    async def scenario(url: str) -> Any:
        async with Client(url, elicitation_callback=_accept) as client:
            first = await _asked(client, 0.0)
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "hold", {"marker": marker})
                while not Path(marker + ".started").exists():
                    await anyio.sleep(0.02)
                answering = client.session.call_tool(
                    "wipe",
                    {"seconds": 0.0},
                    input_responses=ACCEPT,
                    request_state=first.request_state,
                )
                if queued:
                    answered: list[Any] = []

                    async def answer() -> None:
                        answered.append(await answering)

                    group.start_soon(answer)
                    await anyio.sleep(0.2)  # not a timing: the answer may queue or not yet
                    Path(marker + ".release").write_text("go")
                    return answered
                result = await answering
                Path(marker + ".release").write_text("go")
                return [result]

    args = ["--tools", str(folder), "--max-calls", "1", "--max-queued", str(queued)]
    with serving(args) as served:
        [result] = _bounded(scenario, served.url)
    if queued:
        assert result.structured_content == {"slept": 0.0}
    else:
        assert result.is_error is True
        assert "busy, retry later: 1 calls are running, the server's limit" in _text(result)
        assert "nothing was done past the question" in _text(result)


@pytest.mark.parametrize("path", ["fast path", "sdk"])
def test_sigterm_ends_a_call_waiting_for_its_user_at_once(folder: Path, path: str) -> None:
    """A draining server takes no answer in (a POST gets 503), so a question still
    waiting is withdrawn when SIGTERM comes and the server exits (before: it waited out
    --drain-seconds), as a 2026-07-28 call waiting for its round does. The fast path
    answers the call on its stream that nothing was done; the SDK's transport may have
    ended that stream at SIGTERM already (the call then ends as one whose client left):
    either way the server exits at once, not after 600 s."""
    args = ["--tools", str(folder), "--drain-seconds", "600"]
    with (
        serving([*args, *(["--no-fast-path"] if path == "sdk" else [])]) as served,
        httpx2.Client(timeout=WAIT_SECONDS) as client,
    ):
        headers = _raw_session(client, served.url)
        call = _call(1, "wipe", {"seconds": 0})
        with client.stream("POST", served.url, headers=headers, json=call) as response:
            events = []
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                events.append(json.loads(line[6:]))
                if events[-1].get("method") == "elicitation/create":
                    served.process.terminate()
        status = served.process.wait(timeout=WAIT_SECONDS)
    assert status == 0
    assert "Traceback" not in served.stderr
    assert events[0]["method"] == "elicitation/create"
    if path == "fast path":
        answer = events[-1]["result"]
        assert answer["isError"] is True
        text = answer["content"][0]["text"]
        assert "Tool 'wipe' was not run: the server is shutting down" in text


# -- stdio: stdin ends ---------------------------------------------------------------------------


def test_stdio_a_question_waiting_when_stdin_ends_is_withdrawn_and_the_server_exits(
    folder: Path,
) -> None:
    """The drain rules let running calls finish; a question can get no answer once stdin
    is closed, so its call ends at once (before: it waited out --drain-seconds)."""
    process = stdio_process(["--tools", str(folder), "--drain-seconds", "600"])
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        for message in [
            INITIALIZE_ASKABLE,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            _call(2, "wipe", {"seconds": 0}),
        ]:
            process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        seen = []
        for line in process.stdout:
            seen.append(json.loads(line))
            if seen[-1].get("method") == "elicitation/create":
                break
        process.stdin.close()
        process.wait(timeout=WAIT_SECONDS)  # what it writes is small: no pipe fills up
        out = process.stdout.read()
        err = process.stderr.read() if process.stderr is not None else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
    answers = {answer.get("id"): answer for answer in map(json.loads, out.splitlines())}
    assert process.returncode == 0, err
    assert answers[2]["result"]["isError"] is True
    assert "the client left before the user answered" in answers[2]["result"]["content"][0]["text"]
    assert "a call of tool 'wipe' ended: its client left while it waited" in err


def test_stdio_takes_the_waiting_options_too(folder: Path) -> None:
    async def never(context: Any, params: Any) -> types.ElicitResult:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def scenario() -> Any:
        args = ["--tools", str(folder), "--answer-timeout", "1", "--max-waiting", "1"]
        async with stdio_session(args, elicitation=never) as client:
            return await client.call_tool("wipe", {"seconds": 0})

    result = _bounded(scenario)
    assert result.is_error is True
    assert "the user did not answer within 1 s (the server's --answer-timeout)" in _text(result)


# -- CallLimits alone ----------------------------------------------------------------------------


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await anyio.sleep(0)


def test_asking_gives_the_slot_back_and_the_answer_queues_for_it() -> None:
    async def scenario() -> list[str]:
        limits = CallLimits(max_in_flight=1, max_queued=1)
        order: list[str] = []
        answered = anyio.Event()
        other_done = anyio.Event()

        async def asker() -> None:
            async with limits.admitted("wipe") as admission:
                async with admission.asking():
                    order.append("asks")
                    await answered.wait()
                order.append("runs again")

        async def other() -> None:
            async with limits.admitted("doze"):
                order.append("other runs")
                await other_done.wait()

        async with anyio.create_task_group() as group:
            group.start_soon(asker)
            await _until(lambda: limits.asking == 1)
            assert (limits.running, limits.in_flight) == (0, 1)
            group.start_soon(other)
            await _until(lambda: limits.running == 1)
            answered.set()
            await _until(lambda: limits.waiting == 1)  # the answered call, queued
            other_done.set()
        assert (limits.running, limits.asking, limits.in_flight) == (0, 0, 0)
        return order

    assert _bounded(scenario) == ["asks", "other runs", "runs again"]


def test_asking_gives_the_tools_own_slot_back_too() -> None:
    async def scenario() -> None:
        limits = CallLimits(max_in_flight=None)
        async with (
            limits.admitted("wipe", 1) as admission,
            admission.asking(),
            limits.admitted("wipe", 1),  # the tool's one slot is free
        ):
            assert limits.running == 1

    _bounded(scenario)


def test_past_max_waiting_asking_is_refused_and_the_slot_kept() -> None:
    async def scenario() -> None:
        limits = CallLimits(max_in_flight=2, max_waiting=1)
        async with limits.admitted("a") as first, first.asking(), limits.admitted("b") as second:
            with pytest.raises(ElicitationError, match=r"at most 1, the server's --max-wait"):
                async with second.asking():
                    pass
            assert limits.running == 1

    _bounded(scenario)


def test_an_answer_with_no_room_and_no_queue_is_busy() -> None:
    async def scenario() -> None:
        limits = CallLimits(max_in_flight=1, max_queued=0)
        release = anyio.Event()

        async def other() -> None:
            async with limits.admitted("b"):
                await release.wait()

        async with anyio.create_task_group() as group, limits.admitted("a") as admission:
            asking = admission.asking()
            await asking.__aenter__()
            group.start_soon(other)
            await _until(lambda: limits.running == 1)
            with pytest.raises(Busy, match="1 calls are running"):
                await asking.__aexit__(None, None, None)
            release.set()
        assert (limits.running, limits.asking, limits.in_flight) == (0, 0, 0)

    _bounded(scenario)


def test_a_call_cancelled_while_asking_ends_and_gives_everything_back() -> None:
    async def scenario() -> None:
        limits = CallLimits(max_in_flight=1)
        with anyio.CancelScope() as scope:
            async with limits.admitted("a") as admission, admission.asking():
                scope.cancel()
                await anyio.sleep_forever()
        assert (limits.running, limits.asking, limits.in_flight) == (0, 0, 0)

    _bounded(scenario)


@pytest.mark.parametrize("max_in_flight", [1, 2])
def test_questions_asked_at_once_give_the_slot_back_once_and_take_it_once(
    max_in_flight: int,
) -> None:
    """An async tool may ask two questions at once (``gather`` of two ``aelicit``): the
    slot goes with the first and comes back with the last, once (review s17 R2: it came
    back twice, and with one slot the call waited for itself)."""

    async def scenario() -> list[tuple[int, int]]:
        limits = CallLimits(max_in_flight=max_in_flight, max_queued=0)
        seen: list[tuple[int, int]] = []
        first_answered = anyio.Event()

        async with limits.admitted("a") as admission:

            async def ask(first: bool) -> None:
                async with admission.asking():
                    if first:
                        await anyio.sleep(0)
                    else:
                        await first_answered.wait()
                if first:
                    seen.append((limits.running, limits.asking))  # the other still waits
                    first_answered.set()

            async with anyio.create_task_group() as group:
                group.start_soon(ask, False)
                group.start_soon(ask, True)
            seen.append((limits.running, limits.asking))
        seen.append((limits.running, limits.in_flight))
        async with limits.admitted("b"):  # every slot is free again
            seen.append((limits.running, limits.in_flight))
        return seen

    assert _bounded(scenario) == [(0, 1), (1, 0), (0, 0), (1, 1)]


def test_a_question_cancelled_alone_takes_the_slot_back_at_once_even_when_full() -> None:
    """A question cancelled from outside (its call withdrawn or cancelled) takes the slot
    back at once, room or not, for the little the call does before it ends (one over the
    cap, briefly). A tool's own ``timeout=`` does not cancel: the server ends such a
    question inside the block, and the call is admitted again like after an answer
    (``test_a_question_its_tool_stopped_waiting_for_is_admitted_again_like_an_answer``)."""

    async def scenario() -> tuple[int, tuple[int, int, int]]:
        limits = CallLimits(max_in_flight=1)
        release = anyio.Event()

        async def other() -> None:
            async with limits.admitted("b"):
                await release.wait()

        async with anyio.create_task_group() as group, limits.admitted("a") as admission:
            with anyio.CancelScope() as question:
                async with admission.asking():
                    group.start_soon(other)
                    await _until(lambda: limits.running == 1)
                    question.cancel()
                    await anyio.sleep_forever()
            running = limits.running
            release.set()
        return running, (limits.running, limits.asking, limits.in_flight)

    assert _bounded(scenario) == (2, (0, 0, 0))


def test_draining_waits_for_asking_calls_and_cut_ends_them() -> None:
    async def scenario() -> tuple[bool, list[str]]:
        limits = CallLimits()
        seen: list[str] = []

        async def asker() -> None:
            try:
                async with limits.admitted("a") as admission, admission.asking():
                    await anyio.sleep_forever()
            except CallInterrupted:
                seen.append("cut")

        async with anyio.create_task_group() as group:
            group.start_soon(asker)
            await _until(lambda: limits.asking == 1)
            await limits.close()
            drained = await limits.drained(0)
            limits.cut()
        return drained, seen

    assert _bounded(scenario) == (False, ["cut"])


def test_closing_withdraws_every_question_and_asks_no_more() -> None:
    async def scenario() -> list[str]:
        limits = CallLimits(max_in_flight=2)
        seen: list[str] = []

        async def asker() -> None:
            async with limits.admitted("a") as admission:
                with pytest.raises(ElicitationError, match="the server is shutting down"):
                    async with admission.asking():
                        await anyio.sleep_forever()
                seen.append(f"a goes on holding {limits.running} of the slots")

        async with anyio.create_task_group() as group, limits.admitted("b") as other:
            group.start_soon(asker)
            await _until(lambda: limits.asking == 1)
            await limits.close()
            await _until(lambda: bool(seen))
            with pytest.raises(ElicitationError, match="no answer can reach it any more"):
                async with other.asking():
                    pass
        return seen

    assert _bounded(scenario) == ["a goes on holding 2 of the slots"]


def test_an_answer_while_the_server_drains_lets_the_call_finish() -> None:
    async def scenario() -> list[str]:
        limits = CallLimits(max_in_flight=1, max_queued=0)
        done: list[str] = []
        async with limits.admitted("a") as admission:
            async with admission.asking():
                await limits.close()
            done.append("finished")
        return done

    assert _bounded(scenario) == ["finished"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_waiting": 0}, "max_waiting must be a whole number from 1 to 1024, got 0"),
        ({"max_waiting": MAX_WAITING + 1}, "from 1 to 1024, got 1025"),
        ({"max_waiting": True}, "got True"),
        ({"answer_timeout": 0}, "answer_timeout must be more than 0 and at most 600"),
        ({"answer_timeout": 601}, "at most 600 seconds, got 601"),
        ({"answer_timeout": float("nan")}, "got nan"),
    ],
    ids=["no waiting", "past the ceiling", "a boolean", "no time", "past the ceiling", "nan"],
)
def test_call_limits_refuse_bad_waiting_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(SemanticError, match=message):
        CallLimits(**options)


def test_watching_notes_the_clients_leaving_in_the_scope() -> None:
    async def scenario() -> tuple[bool, bool]:
        messages = iter([{"type": "http.request", "body": b""}, {"type": "http.disconnect"}])

        async def receive() -> Any:
            return next(messages)

        scope: dict[str, Any] = {"type": "http"}
        watched = watching(scope, receive)
        left = client_left(scope)
        assert left is not None
        await watched()
        before = left.left
        async with anyio.create_task_group() as group:
            group.start_soon(left.wait)  # ends once the client has left
            await watched()
        return before, left.left

    assert _bounded(scenario) == (False, True)
    assert client_left({"type": "http"}) is None
    assert client_left(None) is None


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--max-waiting", "0", "--max-waiting takes a whole number from 1 to 1024, got 0"),
        ("--max-waiting", "2000", "--max-waiting takes a whole number from 1 to 1024, got 2000"),
        ("--answer-timeout", "0", "--answer-timeout takes a number of seconds more than 0"),
        ("--answer-timeout", "900", "and at most 600, got 900"),
    ],
)
def test_serve_refuses_bad_waiting_options(
    folder: Path, option: str, value: str, message: str
) -> None:
    process = run_stdio(["--tools", str(folder), option, value], stdin=subprocess.DEVNULL)
    assert process.returncode == 2, process.stderr
    assert message in process.stderr
    assert "Traceback" not in process.stderr
