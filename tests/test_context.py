"""agentkit.context: what a tool reaches of the call it serves, without a change to execute()."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from agentkit import context
from agentkit.context import (
    LOG_LEVELS,
    CallContext,
    Elicited,
    LogLevel,
    aconfirm,
    aelicit,
    at_least,
    confirm,
    elicit,
    log,
    serving,
)
from agentkit.progress import report_progress
from agentkit.tool import Tool
from agentkit.toolerrors import ElicitationError
from agentkit.toolexecutor import ToolExecutor

SECRET = "ctx-secret-value-0123456789"


class Recorded(CallContext):
    def __init__(self) -> None:
        self.logged: list[tuple[str, str, str | None, str]] = []

    def log(self, level: LogLevel, message: str, logger: str | None) -> None:
        self.logged.append((level, message, logger, threading.current_thread().name))


class Logs(Tool):
    TOOL_NAME = "logs"
    CREDENTIAL_NAMES = ("api-key",)
    INPUT_SCHEMA = {"parameters": [{"name": "level", "type": "string"}]}
    OUTPUT_SCHEMA = None

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        log(inputs["level"], f"using {credentials['api-key']}", logger_name="logs")
        return {}


def test_the_levels_are_rfc_5424s_least_severe_first() -> None:
    assert LOG_LEVELS[0] == "debug"
    assert LOG_LEVELS[-1] == "emergency"
    assert at_least("error", "warning")
    assert not at_least("info", "warning")
    assert at_least("warning", "warning")


def test_outside_a_served_call_log_does_nothing() -> None:
    log("info", "nobody listens")  # no error, nowhere to go
    assert type(context.current()) is CallContext


def test_a_served_call_hears_its_tool_redacted_in_the_worker_thread_too() -> None:
    heard = Recorded()
    executor = ToolExecutor(credentials={"api-key": SECRET})
    with serving(heard), executor:
        result = executor.execute(Logs(), {"level": "warning"})
    assert result.succeeded
    assert heard.logged[0][:3] == ("warning", "using ***", "logs")
    assert SECRET not in repr(heard.logged)


def test_an_async_caller_hears_a_sync_tool_from_the_executors_pool() -> None:
    heard = Recorded()
    executor = ToolExecutor(credentials={"api-key": SECRET})

    async def main() -> None:
        with serving(heard):
            await executor.aexecute(Logs(), {"level": "error"})

    with executor:
        asyncio.run(main())
    [(level, message, _, thread)] = heard.logged
    assert (level, message) == ("error", "using ***")
    assert thread.startswith("agentkit-tool")


def test_concurrent_calls_each_hear_their_own() -> None:
    first, second = Recorded(), Recorded()
    barrier = threading.Barrier(2, timeout=30)

    def call(heard: Recorded, text: str) -> None:
        with serving(heard):
            barrier.wait()
            log("info", text)

    threads = [
        threading.Thread(target=call, args=(first, "one")),
        threading.Thread(target=call, args=(second, "two")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert [message for _, message, _, _ in first.logged] == ["one"]
    assert [message for _, message, _, _ in second.logged] == ["two"]


def test_an_unknown_level_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"log level 'loud' is not one of debug, info, notice"):
        log("loud", "x")  # type: ignore[arg-type]


def test_a_failing_listener_never_breaks_the_call(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(CallContext):
        def log(self, level: LogLevel, message: str, logger: str | None) -> None:
            raise RuntimeError("the client went away")

    with serving(Broken()):
        log("info", "still fine")
    assert "sending a log message to the client failed" in caplog.text


def test_report_progress_is_agentkit_progress_own() -> None:
    assert context.report_progress is report_progress


# -- asking the user ---------------------------------------------------------------------------


class Answers(CallContext):
    """Answers on the loop it was made on, after ``delay`` seconds."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delay: float = 0.0) -> None:
        self.loop = loop
        self.delay = delay
        self.asked: list[tuple[str, Mapping[str, Any]]] = []

    async def aelicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        self.asked.append((message, schema))
        await asyncio.sleep(self.delay)
        return Elicited(action="accept", content={"name": "Ada"})


class Asks(Tool):
    TOOL_NAME = "asks"
    CREDENTIAL_NAMES = ("api-key",)
    OUTPUT_SCHEMA = None

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        form = {"type": "object", "properties": {"key": {"default": credentials["api-key"]}}}
        answer = elicit(f"Use {credentials['api-key']}?", form)
        return {"action": answer.action, "name": answer.content["name"]}


def test_outside_a_served_call_there_is_nobody_to_ask() -> None:
    with pytest.raises(ElicitationError, match="there is nobody to ask: elicit"):
        elicit("Name?", {})
    with pytest.raises(ElicitationError, match="there is nobody to ask: elicit"):
        asyncio.run(aelicit("Name?", {}))


def test_a_sync_tool_asks_from_the_worker_thread_and_waits_redacted() -> None:
    executor = ToolExecutor(credentials={"api-key": SECRET})

    async def main() -> tuple[Any, Answers]:
        answers = Answers(asyncio.get_running_loop())
        with serving(answers):
            return await executor.aexecute(Asks(), {}), answers

    with executor:
        result, answers = asyncio.run(main())
    assert result.output == {"action": "accept", "name": "Ada"}
    [(message, schema)] = answers.asked
    assert message == "Use ***?"
    assert schema["properties"]["key"]["default"] == "***"


def test_an_async_tool_awaits_aelicit() -> None:
    async def main() -> Elicited:
        with serving(Answers(asyncio.get_running_loop())):
            return await aelicit("Name?", {"type": "object"})

    assert asyncio.run(main()).accepted


def test_no_answer_in_time_is_an_error_that_says_so() -> None:
    async def main() -> None:
        with serving(Answers(asyncio.get_running_loop(), delay=30)):
            await aelicit("Name?", {}, timeout=0.01)

    with pytest.raises(ElicitationError, match=r"did not answer within 0.01 s"):
        asyncio.run(main())


def test_the_sync_form_on_the_loop_itself_is_refused() -> None:
    async def main() -> None:
        with serving(Answers(asyncio.get_running_loop())):
            elicit("Name?", {})

    with pytest.raises(ElicitationError, match=r"use 'await aelicit\(...\)'"):
        asyncio.run(main())


# -- confirming ---------------------------------------------------------------------------------


def test_outside_a_confirm_call_confirm_asks_nothing_and_describes_nothing() -> None:
    def never() -> str:
        raise AssertionError("described without a question to ask")

    assert confirm(never) is False
    assert asyncio.run(aconfirm(never)) is False


def test_a_confirm_call_asks_once_then_goes_on() -> None:
    async def main() -> tuple[bool, bool, Answers]:
        answers = Answers(asyncio.get_running_loop())
        answers.confirming = "drop_table"
        with serving(answers):
            first = await aconfirm("drop table users")
            second = await aconfirm("drop table users, page 2")
        return first, second, answers

    first, second, answers = asyncio.run(main())
    assert (first, second) == (True, False)
    assert [message for message, _ in answers.asked] == [
        "Tool 'drop_table' wants to drop table users\n\nAllow it?"
    ]
    assert answers.asked[0][1] == {"type": "object", "properties": {}}


def test_log_sends_text_whatever_the_tool_passes() -> None:
    heard = Recorded()
    with serving(heard):
        log("info", {"pages": 3})  # type: ignore[arg-type]
    assert heard.logged[0][1] == "{'pages': 3}"


def test_a_form_that_is_not_a_mapping_is_a_clear_error() -> None:
    async def main() -> None:
        with serving(Answers(asyncio.get_running_loop())):
            await aelicit("Name?", ["name"])  # type: ignore[arg-type]

    with pytest.raises(ElicitationError, match=r"the form must be a JSON Schema object .*got list"):
        asyncio.run(main())
