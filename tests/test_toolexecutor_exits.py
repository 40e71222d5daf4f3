"""A tool that exits: ``sys.exit()`` or another ``BaseException`` that is not an ``Exception``.

Each fails its own call as a ``ToolExecutionError`` naming the tool, what it did
and what to raise instead, redacted like every other failure, on every path a
call takes (sync and async tools; ``execute``, ``aexecute`` with and without a
timeout, the batches; the one stretch and the steps); and whatever runs calls
goes on running them. What is the process's propagates: the user's
``KeyboardInterrupt`` (raised in the main thread alone: one from a pool thread is
the tool's), a signal handler's ``SystemExit``, a cancellation of the caller. The
command and the server over each transport are in ``tests/mcp/test_tool_exits.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agentkit import (
    EVENT_FAILED,
    AsyncTool,
    Tool,
    ToolEvent,
    ToolExecutionError,
    ToolExecutor,
    ToolResult,
)
from tests.support.leaks import leaked_in_any_case

TOKEN = "A1b2C3d4e5F6g7H8"
INSTEAD = "a tool should raise an exception instead (that fails only its call)"


class Halt(BaseException):
    """A tool's own BaseException."""


def _raise(error: BaseException) -> Callable[[str], Any]:
    def stop(key: str) -> Any:
        raise error

    return stop


# How a tool stops: (what it does with its credential, the cause's type, what the message says).
STOPS: dict[str, tuple[Callable[[str], Any], type[BaseException], str]] = {
    "sys.exit(3)": (lambda key: sys.exit(3), SystemExit, "called sys.exit() with exit code 3"),
    "sys.exit()": (lambda key: sys.exit(), SystemExit, "called sys.exit() with exit code 0"),
    "sys.exit(0)": (lambda key: sys.exit(0), SystemExit, "called sys.exit() with exit code 0"),
    "sys.exit(text)": (
        lambda key: sys.exit(f"bad key {key}"),
        SystemExit,
        'called sys.exit() with exit code 1 and the message "bad key ***"',
    ),
    "raise SystemExit": (_raise(SystemExit(2)), SystemExit, "exit code 2"),
    "GeneratorExit": (
        _raise(GeneratorExit("closing")),
        GeneratorExit,
        "GeneratorExit: closing; the tool raised GeneratorExit, a BaseException that is not an "
        "Exception (such are meant to stop a process or a generator)",
    ),
    "its own BaseException": (
        lambda key: _raise(Halt(f"halted with {key.lower()}"))(key),
        Halt,
        "Halt: halted with ***; the tool raised Halt, a BaseException",
    ),
}


def stopping(stop: Callable[[str], Any], *, kind: str = "sync", key: bool = True) -> Tool:
    """A tool that does ``stop`` with its credential: sync or async, with the credential
    'api-key', or (``key=False``) with none and no listener, the executor's one stretch."""
    declared: dict[str, Any] = {
        "TOOL_NAME": "stops" if key else "plain",
        "CREDENTIAL_NAMES": ("api-key",) if key else (),
        "INPUT_SCHEMA": None,
        "OUTPUT_SCHEMA": None,
    }
    if kind == "sync":

        def execute(self: Tool, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
            return stop(credentials.get("api-key", ""))

        return type("Stops", (Tool,), {**declared, "execute": execute})()  # type: ignore[no-any-return]

    async def aexecute(self: Tool, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        await asyncio.sleep(0)
        return stop(credentials.get("api-key", ""))

    return type("StopsAsync", (AsyncTool,), {**declared, "execute": aexecute})()  # type: ignore[no-any-return]


def _call(path: str, tool: Tool, events: list[ToolEvent]) -> ToolResult:
    executor = ToolExecutor(credentials={"api-key": TOKEN}, listeners=[events.append])
    if path == "execute":
        return executor.execute(tool, {}, raise_on_failure=False)
    if path == "execute-in-a-loop":  # an async tool on a loop of its own, in a thread

        async def from_a_coroutine() -> ToolResult:
            return executor.execute(tool, {}, raise_on_failure=False)

        return asyncio.run(from_a_coroutine())
    if path == "execute_many":
        return executor.execute_many([(tool, {}), (tool, {})])[1]
    if path == "aexecute_many":
        return asyncio.run(executor.aexecute_many([(tool, {}), (tool, {})]))[1]
    timeout = 30 if path == "aexecute-timeout" else None

    async def run() -> ToolResult:
        with executor:
            result = await executor.aexecute(tool, {}, raise_on_failure=False, timeout=timeout)
            # The loop and the pool go on: the next call runs.
            after = await executor.aexecute(stopping(lambda key: {"ok": 1}, key=False), {})
            assert after.output == {"ok": 1}
            return result

    return asyncio.run(run())


PATHS = [
    "execute",
    "execute-in-a-loop",
    "aexecute",
    "aexecute-timeout",
    "execute_many",
    "aexecute_many",
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("stop", sorted(STOPS), ids=sorted(STOPS))
def test_a_tool_that_exits_fails_its_call_alone(path: str, kind: str, stop: str) -> None:
    does, cause, said = STOPS[stop]
    tool = stopping(does, kind=kind)
    events: list[ToolEvent] = []
    result = _call(path, tool, events)
    assert not result.succeeded
    error = result.error
    assert isinstance(error, ToolExecutionError)
    assert error.tool_name == "stops"
    assert type(error.cause) is cause
    assert str(error).startswith(f"Tool 'stops' failed: {cause.__name__}: ")
    assert said in str(error)
    assert str(error).endswith(INSTEAD)
    assert json.loads(json.dumps(result.to_dict()))["error"]["cause"] == cause.__name__
    shown = str(error) + repr(error.cause.args) + json.dumps(result.to_dict())
    shown += "".join(repr(event) + json.dumps(event.to_dict()) for event in events)
    assert leaked_in_any_case(shown, [TOKEN]) == []
    assert [event.name for event in events if event.tool_name == "stops"][-1] == EVENT_FAILED


@pytest.mark.parametrize("stop", sorted(STOPS), ids=sorted(STOPS))
def test_strict_mode_raises_the_failure_not_the_exit(stop: str) -> None:
    does, cause, _ = STOPS[stop]
    with pytest.raises(ToolExecutionError, match=r"^Tool 'plain' failed: ") as raised:
        ToolExecutor(credentials={}).execute(stopping(does, key=False), {})
    assert type(raised.value.cause) is cause


@pytest.mark.parametrize("stop", sorted(STOPS), ids=sorted(STOPS))
def test_the_one_stretch_reports_an_exit_as_the_steps_do(stop: str) -> None:
    does = STOPS[stop][0]
    plain = ToolExecutor(credentials={}).execute(
        stopping(does, key=False), {}, raise_on_failure=False
    )
    stepped = ToolExecutor(credentials={}, listeners=[lambda event: None]).execute(
        stopping(does, key=False), {}, raise_on_failure=False
    )
    assert str(plain.error) == str(stepped.error)
    assert str(plain.error).endswith(INSTEAD)


def _interrupt(key: str) -> Any:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    "tool",
    [
        stopping(_interrupt, key=False),
        stopping(_interrupt),
        stopping(_interrupt, kind="async"),
    ],
    ids=["one-stretch", "sync", "async"],
)
def test_ctrl_c_is_the_users_and_propagates_from_execute(tool: Tool) -> None:
    with pytest.raises(KeyboardInterrupt):
        ToolExecutor(credentials={"api-key": TOKEN}).execute(tool, {}, raise_on_failure=False)


@pytest.mark.parametrize("timeout", [None, 30], ids=["no-timeout", "timeout"])
def test_ctrl_c_is_the_users_and_propagates_from_aexecute(timeout: float | None) -> None:
    async def run() -> ToolResult:
        with ToolExecutor(credentials={"api-key": TOKEN}) as executor:
            tool = stopping(_interrupt, kind="async")
            return await executor.aexecute(tool, {}, raise_on_failure=False, timeout=timeout)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(run())


@pytest.mark.parametrize("timeout", [None, 30], ids=["no-timeout", "timeout"])
def test_a_keyboard_interrupt_from_a_pool_thread_is_the_tools(timeout: float | None) -> None:
    """Python raises Ctrl-C's KeyboardInterrupt in the main thread alone: one raised in
    the thread a sync tool runs in under aexecute is the tool's, and fails its call."""

    async def run() -> ToolResult:
        with ToolExecutor(credentials={"api-key": TOKEN}) as executor:
            return await executor.aexecute(
                stopping(_interrupt), {}, raise_on_failure=False, timeout=timeout
            )

    result = asyncio.run(run())
    assert isinstance(result.error, ToolExecutionError)
    assert type(result.error.cause) is KeyboardInterrupt
    assert str(result.error).endswith(INSTEAD)


def _cancelled_future(key: str) -> Any:
    import concurrent.futures

    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    future.cancel()
    return future.result()  # raises concurrent.futures.CancelledError


def _asyncio_cancelled(key: str) -> Any:
    raise asyncio.CancelledError


@pytest.mark.parametrize("timeout", [None, 30], ids=["no-timeout", "timeout"])
@pytest.mark.parametrize(
    "stop", [_cancelled_future, _asyncio_cancelled], ids=["concurrent", "asyncio"]
)
def test_a_cancelled_error_a_sync_tool_raises_fails_its_call(
    stop: Callable[[str], Any], timeout: float | None
) -> None:
    """asyncio takes a thread's CancelledError (either kind) for a cancellation of the
    caller; nobody cancelled this call: the tool failed, as under execute."""

    async def run() -> ToolResult:
        with ToolExecutor(credentials={"api-key": TOKEN}) as executor:
            return await executor.aexecute(
                stopping(stop), {}, raise_on_failure=False, timeout=timeout
            )

    result = asyncio.run(run())
    assert isinstance(result.error, ToolExecutionError)
    assert "CancelledError" in str(result.error)
    direct = ToolExecutor(credentials={"api-key": TOKEN}).execute(
        stopping(stop), {}, raise_on_failure=False
    )
    assert type(direct.error) is type(result.error)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Task.cancelling() is new in 3.11")
@pytest.mark.parametrize("timeout", [None, 30], ids=["no-timeout", "timeout"])
def test_a_cancelled_error_an_async_tool_raises_itself_fails_its_call(
    timeout: float | None,
) -> None:
    async def run() -> ToolResult:
        with ToolExecutor(credentials={"api-key": TOKEN}) as executor:
            tool = stopping(_asyncio_cancelled, kind="async")
            return await executor.aexecute(tool, {}, raise_on_failure=False, timeout=timeout)

    result = asyncio.run(run())
    assert isinstance(result.error, ToolExecutionError)
    assert type(result.error.cause) is asyncio.CancelledError


SIGNAL_HANDLER_EXIT = """
import os, signal, sys, threading, time
from agentkit import Tool, ToolExecutor

signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))

class Slow(Tool):
    TOOL_NAME = "slow"
    INPUT_SCHEMA = None
    OUTPUT_SCHEMA = None

    def execute(self, inputs, credentials):
        os.kill(os.getpid(), signal.SIGTERM)  # lands while the tool runs
        for _ in range(1000):
            time.sleep(0.01)
        return {"ok": 1}

result = ToolExecutor().execute(Slow(), {}, raise_on_failure=False)
print("the program went on:", result.status)
"""


def test_a_signal_handlers_exit_ends_the_program_not_the_call() -> None:
    """A program's SIGTERM handler that calls sys.exit() runs in whatever code is
    running when the signal comes, a tool's too: that exit is the program's."""
    import subprocess

    from tests.support.serving import ROOT

    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_HANDLER_EXIT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 143, done.stdout + done.stderr
    assert "went on" not in done.stdout


@pytest.mark.parametrize("timeout", [None, 30], ids=["no-timeout", "timeout"])
def test_a_cancellation_still_propagates(timeout: float | None) -> None:
    """What the tool raises is its call's failure; a cancellation of the caller is not."""
    started = asyncio.Event()

    class Waits(AsyncTool):
        TOOL_NAME = "waits"
        INPUT_SCHEMA = None
        OUTPUT_SCHEMA = None

        async def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
            started.set()
            await asyncio.sleep(60)

    async def run() -> None:
        executor = ToolExecutor(credentials={})
        task = asyncio.ensure_future(executor.aexecute(Waits(), {}, timeout=timeout))
        await asyncio.wait_for(started.wait(), 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
