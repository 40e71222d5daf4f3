"""``executorsteps``: the executor's steps that need none of its state, each on its own.

How ``ToolExecutor`` runs them in a call is in ``test_toolexecutor.py`` and
``test_async.py``; here each step's contract: what it returns, what it raises and
what its message says.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from agentkit.callers import Caller, calling_as, current_caller
from agentkit.executorsteps import (
    TakenPage,
    bounded_inputs,
    check_timeout,
    checked_output,
    contained,
    contained_call,
    execution_error,
    pending_calls,
    raised_result,
    refused,
    run_to_completion,
    shallow_inputs,
    too_deep,
    within_timeout,
)
from agentkit.jsonvalues import MAX_DEPTH
from agentkit.redaction import Redactor
from agentkit.tool import Tool
from agentkit.toolerrors import (
    AgentKitError,
    SemanticError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolValidationError,
)
from agentkit.toolresult import STATUS_FAILURE
from agentkit.toolschema import ToolSchema
from tests.support.helpers import SECRET, Adder

OUTPUT = ToolSchema.from_dict(
    {
        "parameters": [
            {"name": "temp", "type": "float"},
            {"name": "unit", "type": "string", "required": False, "default": "C"},
        ]
    }
)


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, dict) and "n" in value:
        value = value["n"]
        depth += 1
    return depth


# -- inputs as a listener sees them ------------------------------------------------------------


def test_shallow_inputs_is_a_new_dict_of_a_mapping_and_empty_otherwise() -> None:
    given = {"city": "Oslo"}
    copied = shallow_inputs(given)
    assert copied == given
    assert copied is not given
    assert shallow_inputs(["city", "Oslo"]) == {}
    assert shallow_inputs(None) == {}
    assert shallow_inputs("city=Oslo") == {}


def test_bounded_inputs_cut_nesting_at_the_depth_limit() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(MAX_DEPTH + 50):
        node["n"] = {}
        node = node["n"]
    bounded = bounded_inputs(deep)
    assert _depth(bounded) == MAX_DEPTH


def test_bounded_inputs_of_a_mapping_holding_itself_end() -> None:
    looped: dict[str, Any] = {"city": "Oslo"}
    looped["n"] = looped
    bounded = bounded_inputs(looped)
    assert bounded["city"] == "Oslo"
    assert _depth(bounded) == MAX_DEPTH


def test_bounded_inputs_are_a_fresh_copy_all_the_way_down() -> None:
    given = {"filters": {"tags": ["a", "b"]}}
    bounded = bounded_inputs(given)
    assert bounded == given
    given["filters"]["tags"].append("c")
    assert bounded["filters"]["tags"] == ["a", "b"]


class _Unreadable(Mapping[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("cannot read")

    def __iter__(self) -> Iterator[str]:
        return iter(["city"])

    def __len__(self) -> int:
        return 1


@pytest.mark.parametrize(
    "inputs",
    [
        pytest.param(_Unreadable(), id="a-mapping-that-fails-to-be-read"),
        pytest.param("not a mapping", id="a-string"),
        pytest.param(None, id="none"),
    ],
)
def test_bounded_inputs_of_what_cannot_be_read_are_empty(inputs: object) -> None:
    assert bounded_inputs(inputs) == {}


# -- a batch's calls -----------------------------------------------------------------------------


def test_pending_calls_read_each_call_with_or_without_its_id() -> None:
    adder = Adder()
    calls: list[Any] = [
        (adder, {"a": 1}),
        [adder, {"a": 2}, "toolu_02"],
        (adder, {"a": 3}, "toolu_03"),
    ]
    assert pending_calls(iter(calls)) == [
        (adder, {"a": 1}, None),
        (adder, {"a": 2}, "toolu_02"),
        (adder, {"a": 3}, "toolu_03"),
    ]
    assert pending_calls([]) == []


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        pytest.param(Adder, "<class 'tests...elpers.Adder'>", id="a-class-alone-cut-short"),
        pytest.param(("only-one",), "('only-one',)", id="one-item"),
        pytest.param(("a", {}, "id", "extra"), "('a', {}, 'id', 'extra')", id="four-items"),
        pytest.param({"tool": "add"}, "{'tool': 'add'}", id="a-mapping"),
    ],
)
def test_a_malformed_call_stops_the_batch_naming_its_position(call: Any, shown: str) -> None:
    with pytest.raises(SemanticError) as info:
        pending_calls([(Adder(), {"a": 1}), call])
    assert str(info.value) == (
        f"calls[1]: each call is (tool, inputs) or (tool, inputs, call_id), got {shown}"
    )


def test_a_long_malformed_call_is_shown_cut_short() -> None:
    with pytest.raises(SemanticError) as info:
        pending_calls([tuple(range(1000))])  # type: ignore[list-item]
    message = str(info.value)
    assert message.startswith("calls[0]: each call is")
    assert "999" not in message
    assert len(message) < 200


# -- a batch's call that raised ------------------------------------------------------------------


def test_a_raised_call_is_a_failed_result_named_for_its_tool() -> None:
    cause = RuntimeError("listener bug")
    result = raised_result(Adder(), cause)
    assert result.status == STATUS_FAILURE
    assert result.tool_name == "add"
    assert result.output is None
    assert isinstance(result.error, ToolExecutionError)
    assert result.error.cause is cause
    assert str(result.error) == "Tool 'add' failed: RuntimeError: listener bug"


def test_a_raised_call_of_no_tool_is_named_for_its_type() -> None:
    result = raised_result("add", TypeError("not a tool"))
    assert result.tool_name == "str"
    assert str(result.error) == "Tool 'str' failed: TypeError: not a tool"


# -- refused -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("thing", "kind"),
    [
        pytest.param("add", "str", id="a-name"),
        pytest.param(Adder, "type", id="the-class"),
        pytest.param(None, "NoneType", id="none"),
    ],
)
def test_what_is_no_tool_instance_is_refused_naming_its_type(thing: object, kind: str) -> None:
    with pytest.raises(SemanticError) as info:
        refused(thing)
    assert str(info.value) == f"execute() takes a Tool instance, got {kind}"


# -- step 3's failures ---------------------------------------------------------------------------


def test_an_execution_error_without_credentials_keeps_the_cause_itself() -> None:
    cause = ValueError("no such city")
    error = execution_error("weather", cause, None)
    assert error.cause is cause
    assert error.detail == "no such city"
    assert str(error) == "Tool 'weather' failed: ValueError: no such city"
    assert execution_error("weather", cause, Redactor()).cause is cause  # nothing to redact


def test_an_execution_error_with_credentials_carries_no_secret() -> None:
    cause = ValueError(f"bad key {SECRET}")
    error = execution_error("weather", cause, Redactor([SECRET]))
    assert str(error) == "Tool 'weather' failed: ValueError: bad key ***"
    assert error.detail == "bad key ***"
    assert error.cause_type == "ValueError"
    assert error.cause is not cause
    assert SECRET not in str(error.cause)
    assert SECRET not in repr(error.__cause__)
    assert error.__context__ is None


class _Halt(BaseException):
    pass


@pytest.mark.parametrize(
    ("raised", "shown"),
    [
        pytest.param(
            SystemExit(3), "SystemExit: the tool called sys.exit() with exit code 3", id="code"
        ),
        pytest.param(
            SystemExit(None), "SystemExit: the tool called sys.exit() with exit code 0", id="none"
        ),
        pytest.param(
            SystemExit(f"bad key {SECRET}"),
            'SystemExit: the tool called sys.exit() with exit code 1 and the message "bad key ***"',
            id="message",
        ),
        pytest.param(
            GeneratorExit(),
            "GeneratorExit: the tool raised GeneratorExit, a BaseException that is not an Exception",
            id="generator-exit",
        ),
        pytest.param(
            _Halt(f"at {SECRET}"),
            "_Halt: at ***; the tool raised _Halt, a BaseException that is not an Exception",
            id="its-own",
        ),
    ],
)
@pytest.mark.parametrize("redactor", [None, Redactor([SECRET])], ids=["plain", "redacted"])
def test_an_exit_is_a_failure_saying_what_to_raise_instead(
    raised: BaseException, shown: str, redactor: Redactor | None
) -> None:
    error = execution_error("weather", raised, redactor)
    expected = shown if redactor else shown.replace("***", SECRET)
    assert str(error).startswith(f"Tool 'weather' failed: {expected}")
    assert str(error).endswith(
        "a tool should raise an exception instead (that fails only its call)"
    )
    assert type(error.cause) is type(raised)
    if redactor:
        assert SECRET not in str(error) + repr(error.cause.args)


def test_an_exit_from_a_task_or_a_thread_leaves_it_as_an_exception() -> None:
    """asyncio re-raises a task's SystemExit out of the loop, and throws a GeneratorExit it
    is handed into the coroutine awaiting it (closing it): each leaves as an Exception,
    which execution_error reports as the tool raised it."""

    def stop(error: BaseException) -> None:
        raise error

    async def stop_async(error: BaseException) -> None:
        raise error

    async def scenario() -> list[BaseException]:
        caught = []
        for error in (SystemExit(3), GeneratorExit(), _Halt()):
            for future in (
                asyncio.ensure_future(contained(stop_async(error))),
                asyncio.get_running_loop().run_in_executor(None, contained_call, stop, error),
            ):
                try:
                    await future
                except Exception as left:  # an Exception, whatever the tool raised
                    caught.append(execution_error("weather", left, None).cause)
        return caught

    assert [type(cause) for cause in asyncio.run(scenario())] == [
        SystemExit,
        SystemExit,
        GeneratorExit,
        GeneratorExit,
        _Halt,
        _Halt,
    ]


def test_an_exception_passes_through_as_it_is() -> None:
    def stop() -> None:
        raise ValueError("no")

    async def stop_async() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        contained_call(stop)
    with pytest.raises(ValueError, match="no"):
        asyncio.run(contained(stop_async()))


def test_ctrl_c_on_the_loop_is_the_processs() -> None:
    async def stop_async() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(contained(stop_async()))


@pytest.mark.parametrize(
    "raised",
    [KeyboardInterrupt(), asyncio.CancelledError(), concurrent.futures.CancelledError()],
    ids=["ctrl-c", "asyncio-cancelled", "concurrent-cancelled"],
)
def test_in_a_pool_thread_nothing_is_the_processs(raised: BaseException) -> None:
    """Signals are handled, and Ctrl-C raised, in the main thread alone; a thread's
    CancelledError would read as the caller's cancellation: each is carried."""

    def stop() -> None:
        raise raised

    with (
        concurrent.futures.ThreadPoolExecutor(1) as pool,
        pytest.raises(AgentKitError) as carried,
    ):
        pool.submit(contained_call, stop).result()
    assert execution_error("weather", carried.value, None).cause is raised


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Task.cancelling() is new in 3.11")
def test_a_cancelled_error_a_task_was_not_asked_for_is_carried() -> None:
    async def stop_async() -> None:
        raise asyncio.CancelledError

    async def scenario() -> BaseException:
        try:
            await asyncio.ensure_future(contained(stop_async()))
        except AgentKitError as carried:
            return execution_error("weather", carried, None).cause
        raise AssertionError("not carried")

    assert type(asyncio.run(scenario())) is asyncio.CancelledError


def test_a_value_nested_too_deeply_fails_naming_the_limit() -> None:
    cause = RecursionError("maximum recursion depth exceeded")
    error = too_deep("weather", cause)
    assert error.cause is cause
    assert str(error) == (
        f"Tool 'weather' failed: RecursionError: a value nested too deeply "
        f"(the limit is {MAX_DEPTH} levels)"
    )


# -- step 4: the answer checked ------------------------------------------------------------------


def test_an_answer_is_checked_with_its_defaults_applied() -> None:
    assert checked_output("weather", OUTPUT, {"temp": 21}, None) == {"temp": 21.0, "unit": "C"}


def test_a_dict_subclass_is_an_answer() -> None:
    class Answer(dict[str, Any]):
        pass

    assert checked_output("weather", OUTPUT, Answer(temp=1.5), None) == {"temp": 1.5, "unit": "C"}


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        pytest.param([{"temp": 1}], "list", id="a-list"),
        pytest.param(None, "NoneType", id="none"),
        pytest.param("21 C", "str", id="text"),
        pytest.param({"temp": 1}.items(), "dict_items", id="items"),
    ],
)
def test_an_answer_that_is_no_dictionary_names_its_type(raw: Any, kind: str) -> None:
    with pytest.raises(ToolValidationError) as info:
        checked_output("weather", OUTPUT, raw, None)
    assert info.value.direction == "output"
    assert [str(error) for error in info.value.errors] == [
        f"Expected the tool to return a dictionary, got '{kind}'"
    ]


def test_a_coroutine_answer_is_closed_and_says_how_to_have_it_awaited() -> None:
    ran: list[str] = []

    async def execute() -> dict[str, Any]:
        ran.append("body")
        return {"temp": 1}

    coroutine = execute()
    with pytest.raises(ToolValidationError) as info:
        checked_output("weather", OUTPUT, coroutine, None)
    [error] = info.value.errors
    assert str(error) == (
        "Expected the tool to return a dictionary, got 'coroutine': a coroutine, from an "
        "execute() that is not 'async def' on the class; declare it 'async def execute' "
        "(or subclass AsyncTool) to have it awaited"
    )
    assert (
        inspect.getcoroutinestate(coroutine) == "CORO_CLOSED"
    )  # closed: never run, and no "never awaited" warning
    assert ran == []


def test_every_problem_of_an_answer_is_reported_for_the_output() -> None:
    with pytest.raises(ToolValidationError) as info:
        checked_output("weather", OUTPUT, {"unit": 3}, None)
    assert info.value.tool_name == "weather"
    assert info.value.direction == "output"
    assert [str(error) for error in info.value.errors] == [
        "Missing required parameter: 'temp'",
        "Parameter 'unit': expected type 'string', got 'int'",
    ]


NOTE = ToolSchema.from_dict({"parameters": [{"name": "note", "type": "string", "enum": ["a"]}]})


@pytest.mark.parametrize(
    ("note", "quoted"),
    [
        pytest.param(f"key {SECRET}", "'key ***'", id="whole"),
        # Cut first, the secret's start would show: it is redacted while whole.
        pytest.param("x" * 50 + SECRET, "'" + "x" * 50 + "***'", id="straddling-the-cut"),
    ],
)
def test_an_answers_quoted_value_is_redacted_before_it_is_cut(note: str, quoted: str) -> None:
    with pytest.raises(ToolValidationError) as info:
        checked_output("weather", NOTE, {"note": note}, Redactor([SECRET]))
    assert info.value.errors == [f"Parameter 'note': expected one of ['a'], got {quoted}"]


def test_a_secret_in_an_answers_unknown_key_is_redacted_in_path_and_message() -> None:
    with pytest.raises(ToolValidationError) as info:
        checked_output("weather", OUTPUT, {"temp": 1, f"x{SECRET}": 1}, Redactor([SECRET]))
    [problem] = info.value.problems
    assert (problem.path, problem.message) == ("x***", "Unknown parameter: 'x***'")
    assert SECRET not in str(info.value)


# -- timeouts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [None, 1, 0.001, 1e9])
def test_a_positive_finite_timeout_or_none_is_taken(timeout: float | None) -> None:
    check_timeout(timeout)


@pytest.mark.parametrize(
    ("timeout", "shown"),
    [
        pytest.param("2", "'2'", id="text"),
        pytest.param(True, "True", id="bool"),
        pytest.param(0, "0", id="zero"),
        pytest.param(-0.5, "-0.5", id="negative"),
        pytest.param(float("inf"), "inf", id="inf"),
        pytest.param(float("nan"), "nan", id="nan"),
    ],
)
def test_a_wrong_timeout_is_refused_showing_what_was_given(timeout: Any, shown: str) -> None:
    with pytest.raises(SemanticError) as info:
        check_timeout(timeout)
    assert str(info.value) == (
        f"timeout= must be a positive number of seconds or None, got {shown}"
    )


def test_an_async_tool_runs_to_completion_from_sync_code() -> None:
    async def answer() -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"thread": threading.current_thread().name}

    assert run_to_completion(answer()) == {"thread": threading.current_thread().name}


def test_from_a_coroutine_an_async_tool_runs_in_a_thread_of_its_own_with_the_context() -> None:
    async def answer() -> dict[str, Any]:
        return {"thread": threading.current_thread().name, "caller": current_caller().name}

    async def caller() -> Any:
        with calling_as(Caller(name="triage-bot", via="token")):
            return run_to_completion(answer())

    got = asyncio.run(caller())
    assert got["thread"].startswith("agentkit-async-tool")
    assert got["caller"] == "triage-bot"


def test_run_to_completion_raises_what_the_tool_raised() -> None:
    async def broken() -> None:
        raise LookupError("no such city")

    with pytest.raises(LookupError, match="no such city"):
        run_to_completion(broken())


def test_within_timeout_gives_a_finished_tools_result() -> None:
    async def scenario() -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.set_result({"temp": 1})
        return await within_timeout(future, "weather", 5, abandoned=False)

    assert asyncio.run(scenario()) == {"temp": 1}


def test_a_timeout_the_tool_raises_itself_stays_the_tools_own() -> None:
    async def tool() -> None:
        raise TimeoutError("upstream took too long")

    async def scenario() -> None:
        await within_timeout(asyncio.ensure_future(tool()), "weather", 60, abandoned=False)

    with pytest.raises(TimeoutError) as info:
        asyncio.run(scenario())
    assert not isinstance(info.value, ToolTimeoutError)
    assert str(info.value) == "upstream took too long"


def test_a_tool_past_its_timeout_is_cancelled_and_its_cleanup_runs() -> None:
    cleaned: list[str] = []

    async def tool() -> None:
        try:
            await asyncio.Event().wait()  # never set: runs until cancelled
        finally:
            cleaned.append("finally")

    async def scenario() -> asyncio.Task[None]:
        task = asyncio.ensure_future(tool())
        with pytest.raises(ToolTimeoutError) as info:
            await within_timeout(task, "weather", 0.01, abandoned=False)
        error = info.value
        assert (error.tool_name, error.timeout, error.abandoned) == ("weather", 0.01, False)
        assert str(error) == (
            "did not finish within 0.01 s; it was cancelled. "
            "Pass a longer timeout= if the tool needs more time."
        )
        return task

    task = asyncio.run(scenario())
    assert task.cancelled()
    assert cleaned == ["finally"]  # ran before within_timeout raised


def test_an_abandoned_tool_is_not_waited_for() -> None:
    async def scenario() -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        with pytest.raises(ToolTimeoutError) as info:
            await within_timeout(future, "weather", 0.01, abandoned=True)
        assert info.value.abandoned is True
        assert "its thread cannot be stopped and runs on" in str(info.value)
        return future

    assert asyncio.run(scenario()).cancelled()


# -- a kept page ---------------------------------------------------------------------------------


def test_a_taken_page_holds_the_output_and_page_it_stands_for() -> None:
    output = {"rows": [1, 2]}
    page = object()
    taken = TakenPage(output, page)  # type: ignore[arg-type]
    assert taken.output is output
    assert taken.page is page
    with pytest.raises(AttributeError):
        taken.extra = 1  # type: ignore[attr-defined]


def test_a_tool_instance_is_not_refused_and_gives_its_spec() -> None:
    tool = Adder()
    assert isinstance(tool, Tool)
    assert refused(tool) is tool.spec
