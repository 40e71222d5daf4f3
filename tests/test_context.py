"""agentkit.context: what a tool reaches of the call it serves, without a change to execute()."""

from __future__ import annotations

import asyncio
import threading
import time
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
    shortened,
    visible,
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


def test_the_logger_name_is_redacted_like_the_message() -> None:
    class NamesItsKey(Tool):
        TOOL_NAME = "names_its_key"
        CREDENTIAL_NAMES = ("api-key",)
        OUTPUT_SCHEMA = None

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            log("warning", "plain message", logger_name=f"svc/{credentials['api-key']}")
            return {}

    heard = Recorded()
    executor = ToolExecutor(credentials={"api-key": SECRET})
    with serving(heard), executor:
        assert executor.execute(NamesItsKey(), {}).succeeded
    assert heard.logged[0][:3] == ("warning", "plain message", "svc/***")
    assert SECRET not in repr(heard.logged)


@pytest.mark.parametrize("name", [5, b"svc", ["svc"]], ids=["int", "bytes", "list"])
def test_a_logger_name_that_is_not_a_string_is_a_clear_error(name: Any) -> None:
    heard = Recorded()
    with (
        serving(heard),
        pytest.raises(TypeError, match=r"log\(logger_name=...\) must be a string .* got "),
    ):
        log("info", "x", logger_name=name)
    assert heard.logged == []


class LateAnswers(Answers):
    """Accepts, but the call's deadline passes while the answer is on its way."""

    async def aelicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        self.asked.append((message, schema))
        self.deadline = time.monotonic() - 1
        return Elicited(action="accept")


class Acts(Tool):
    """Asks to act, then acts: ``acted`` tells whether it did."""

    TOOL_NAME = "acts"
    OUTPUT_SCHEMA = None

    def __init__(self) -> None:
        super().__init__()
        self.acted = False

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        confirm("act")
        self.acted = True
        return {}


def test_an_answer_that_comes_after_the_deadline_lets_nothing_happen() -> None:
    tool = Acts()
    executor = ToolExecutor()

    async def main() -> Any:
        answers = LateAnswers(asyncio.get_running_loop())
        answers.confirming = "acts"
        with serving(answers):
            return await executor.aexecute(tool, {})

    with executor, pytest.raises(Exception, match=r"the call ended .* before the user answered"):
        asyncio.run(main())
    assert tool.acted is False


def test_an_ended_call_asks_nothing_more() -> None:
    async def main() -> None:
        answers = Answers(asyncio.get_running_loop())
        answers.end()
        with serving(answers):
            await aelicit("Name?", {})

    with pytest.raises(ElicitationError, match=r"the call ended .* question was withdrawn"):
        asyncio.run(main())


def test_shortened_keeps_every_field_and_says_how_much_it_cut() -> None:
    value = {"memo": "x" * 1000, "k" * 400: [1, None, True, "short"], "n": 2.5}
    assert shortened(value, limit=10) == {
        "memo": "xxxxxxxxxx\u2026 [990 more characters]",
        "kkkkkkkkkk\u2026 [390 more characters]": [1, None, True, "short"],
        "n": 2.5,
    }


def test_shortened_redacts_a_value_before_it_cuts_it() -> None:
    heard = Recorded()
    executor = ToolExecutor(credentials={"api-key": SECRET})

    class Shows(Tool):
        TOOL_NAME = "shows"
        CREDENTIAL_NAMES = ("api-key",)
        OUTPUT_SCHEMA = None

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            # The secret straddles the cut: cut first, its first half would show.
            return {"shown": shortened("p" * 5 + credentials["api-key"], limit=10)}

    with serving(heard), executor:
        result = executor.execute(Shows(), {})
    assert result.output == {"shown": "ppppp***"}


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("plain text\nand a line", "plain text\nand a line", id="kept"),
        pytest.param("café 中文 ÿ", "café 中文 ÿ", id="letters-kept"),
        pytest.param("pay\u202eNABI", "pay\\u202eNABI", id="bidi-override"),
        pytest.param("a\u2066b\u2069", "a\\u2066b\\u2069", id="bidi-isolates"),
        pytest.param("to\u200bkey", "to\\u200bkey", id="zero-width"),
        pytest.param("a\u2028b\u2029c", "a\\u2028b\\u2029c", id="separators"),
        pytest.param("\x1b[2Jx\r\t", "\\u001b[2Jx\\u000d\\u0009", id="controls"),
        pytest.param("x\x85y\x7f", "x\\u0085y\\u007f", id="c1-and-delete"),
        pytest.param("t\U000e0041", "t\\U000e0041", id="tag-character"),
    ],
)
def test_visible_spells_out_what_could_hide_the_rest(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_shortened_bounds_lists_and_nested_mappings_but_keeps_every_field() -> None:
    from agentkit.context import MAX_ENTRIES, arguments_shown

    value: dict[str, Any] = {f"f{n}": n for n in range(30)}
    value["items"] = [""] * 3000
    value["nested"] = {f"k{n}": n for n in range(100)}
    shown = shortened(value)
    assert list(shown) == list(value)  # every field of the top level
    assert shown["items"] == [""] * MAX_ENTRIES + [f"\u2026 [{3000 - MAX_ENTRIES:,} more items]"]
    assert len(shown["nested"]) == MAX_ENTRIES + 1
    assert shown["nested"]["\u2026"] == f"[{100 - MAX_ENTRIES:,} more entries]"
    asked = arguments_shown({"items": [""] * 3000, "to": "attacker@example.com"})
    assert asked.count("\n") < 40
    assert '"to": "attacker@example.com"' in asked
