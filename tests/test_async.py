"""The async path: aexecute, aexecute_many, AsyncTool, timeouts and cancellation.

The parity tests run the same assertions through ``execute`` and ``aexecute``
(the ``call`` fixture), for a sync and an async tool alike.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import pytest

from agentkit import (
    EVENT_COMPLETED,
    EVENT_FAILED,
    EVENT_STARTED,
    STATUS_FAILURE,
    AsyncTool,
    ExecutionRecorder,
    SecretInOutputError,
    SemanticError,
    Tool,
    ToolEvent,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    ToolResult,
    ToolTimeoutError,
    ToolValidationError,
)
from agentkit.jsonvalues import MAX_DEPTH
from agentkit.redaction import Redactor, active_redactor, redact_also
from tests.support.helpers import SECRET, Adder
from tests.support.leaks import chain_text, leaked, logged_exception
from tests.test_exception_chain import CASES as CHAIN_CASES
from tests.test_exception_chain import KEY as CHAIN_KEY

T = TypeVar("T")

# Every wait in these tests is bounded by this, so a regression fails instead of hanging.
BOUND = 10.0


def run(awaitable: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(awaitable, BOUND)

    return asyncio.run(bounded())


Body = Callable[[dict[str, Any], Mapping[str, str]], Any]


class SyncProbe(Tool):
    """A sync tool running ``body``; needs the credential 'api-key'."""

    TOOL_NAME = "probe"
    CREDENTIAL_NAMES = ("api-key",)
    INPUT_SCHEMA = {"parameters": [{"name": "q", "type": "string", "required": False}]}
    OUTPUT_SCHEMA = None  # free-form: the bodies return what the test looks at

    def __init__(self, body: Body) -> None:
        super().__init__()
        self.body = body

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return self.body(inputs, credentials)  # type: ignore[no-any-return]


class AsyncProbe(AsyncTool):
    """The async twin of SyncProbe: awaits ``body`` when it returns an awaitable."""

    TOOL_NAME = "probe"
    CREDENTIAL_NAMES = ("api-key",)
    INPUT_SCHEMA = SyncProbe.INPUT_SCHEMA
    OUTPUT_SCHEMA = None

    def __init__(self, body: Body) -> None:
        super().__init__()
        self.body = body

    async def execute(
        self, inputs: dict[str, Any], credentials: Mapping[str, str]
    ) -> dict[str, Any]:
        await asyncio.sleep(0)  # a real suspension point, as any async tool has
        answer = self.body(inputs, credentials)
        if asyncio.iscoroutine(answer):
            answer = await answer
        return answer  # type: ignore[no-any-return]


Probe = Callable[[Body], Tool]
KINDS: dict[str, Probe] = {"sync tool": SyncProbe, "async tool": AsyncProbe}


@pytest.fixture(params=list(KINDS), ids=list(KINDS))
def probe(request: pytest.FixtureRequest) -> Probe:
    return KINDS[request.param]


Call = Callable[..., ToolResult]


@pytest.fixture(params=["execute", "aexecute"])
def call(request: pytest.FixtureRequest) -> Call:
    """``call(executor, tool, inputs, ...)`` through the sync or the async path."""
    if request.param == "execute":
        return lambda executor, *args, **kwargs: executor.execute(*args, **kwargs)
    return lambda executor, *args, **kwargs: run(executor.aexecute(*args, **kwargs))


def answer(value: str) -> Body:
    return lambda inputs, credentials: {"answer": value}


def fail(message: str) -> Body:
    def body(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        raise RuntimeError(message)

    return body


# -- where each kind of tool runs --------------------------------------------------------------


def test_an_async_tool_runs_on_the_loop_without_a_thread(executor: ToolExecutor) -> None:
    def where(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"thread": threading.get_ident()}

    async def main() -> tuple[int, ToolResult]:
        return threading.get_ident(), await executor.aexecute(AsyncProbe(where), {})

    loop_thread, result = run(main())
    assert result.output == {"thread": loop_thread}
    assert executor._pool is None  # no pool was even made


def test_a_sync_tool_runs_in_the_bounded_pool() -> None:
    lock = threading.Lock()
    running = 0
    most = 0
    names: set[str] = set()
    four_at_once = threading.Barrier(4, timeout=BOUND)

    def busy(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            names.add(threading.current_thread().name)
        try:
            if inputs["q"] == "first":
                four_at_once.wait()  # proves four run at once; a fifth would never come
            time.sleep(0.01)
            return {"answer": "ok"}
        finally:
            with lock:
                running -= 1

    async def main(executor: ToolExecutor) -> list[ToolResult]:
        calls = [(SyncProbe(busy), {"q": "first" if i < 4 else "later"}) for i in range(16)]
        return await executor.aexecute_many(calls)

    with ToolExecutor(credentials={"api-key": SECRET}, max_workers=4) as executor:
        results = run(main(executor))
    assert [result.succeeded for result in results] == [True] * 16
    assert most == 4
    assert len(names) == 4
    assert all(name.startswith("agentkit-tool") for name in names)


def test_a_sync_tool_sees_the_callers_context_variables(executor: ToolExecutor) -> None:
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")

    async def main() -> ToolResult:
        request_id.set("req-7")
        return await executor.aexecute(
            SyncProbe(lambda inputs, credentials: {"seen": request_id.get("unset")}), {}
        )

    assert run(main()).output == {"seen": "req-7"}


# -- an async tool through the sync execute() --------------------------------------------------


def test_the_sync_execute_runs_an_async_tool_to_completion(executor: ToolExecutor) -> None:
    result = executor.execute(AsyncProbe(answer("done")), {"q": "x"})
    assert result.output == {"answer": "done"}


def test_the_sync_execute_works_inside_a_running_loop(executor: ToolExecutor) -> None:
    def where(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"thread": threading.current_thread().name}

    async def main() -> ToolResult:
        return executor.execute(AsyncProbe(where), {})  # blocks this loop; works

    output = run(main()).output
    assert output is not None
    assert output["thread"].startswith("agentkit-async-tool")


def test_execute_many_runs_async_tools_too(executor: ToolExecutor) -> None:
    results = executor.execute_many([(AsyncProbe(answer(str(i))), {}) for i in range(5)])
    assert [result.output for result in results] == [{"answer": str(i)} for i in range(5)]


def test_an_async_tool_class_without_execute_is_refused() -> None:
    class Unfinished(AsyncTool):
        TOOL_NAME = "unfinished"

    with pytest.raises(SemanticError, match=r"'unfinished' .* does not implement execute"):
        Unfinished()


# -- timeouts ----------------------------------------------------------------------------------


def test_a_timeout_cancels_an_async_tool_and_its_cleanup_runs(executor: ToolExecutor) -> None:
    cleaned_up = threading.Event()

    async def forever() -> dict[str, Any]:
        try:
            await asyncio.sleep(BOUND * 2)
        finally:
            cleaned_up.set()
        return {}

    tool = AsyncProbe(lambda inputs, credentials: forever())
    result = run(executor.aexecute(tool, {}, raise_on_failure=False, timeout=0.05))
    assert cleaned_up.is_set()  # before aexecute returned
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, ToolTimeoutError)
    assert isinstance(result.error.cause, TimeoutError)
    assert not result.error.cause.abandoned
    assert str(result.error) == (
        "Tool 'probe' failed: ToolTimeoutError: did not finish within 0.05 s; it was "
        "cancelled. Pass a longer timeout= if the tool needs more time."
    )


def test_a_timeout_abandons_a_sync_tool_with_a_clear_error() -> None:
    release = threading.Event()
    finished = threading.Event()
    events: list[ToolEvent] = []

    def stuck(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        release.wait(BOUND)
        finished.set()
        return {"answer": "too late"}

    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])
    with pytest.raises(ToolExecutionError, match=r"within 0\.05 s; its thread cannot be stopped"):
        run(executor.aexecute(SyncProbe(stuck), {}, timeout=0.05))
    release.set()
    assert finished.wait(BOUND)
    executor.close()
    # The late result went nowhere: one start, one failure, nothing after.
    assert [event.name for event in events] == [EVENT_STARTED, EVENT_FAILED]


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["no timeout", "with timeout"])
def test_a_timeout_error_the_tool_raises_is_its_own_failure(
    executor: ToolExecutor, probe: Probe, timeout: float | None
) -> None:
    def times_out(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        raise TimeoutError("upstream took too long")

    tool = probe(times_out)
    result = run(executor.aexecute(tool, {}, raise_on_failure=False, timeout=timeout))
    assert isinstance(result.error, ToolExecutionError)
    assert type(result.error.cause) is TimeoutError
    assert "upstream took too long" in str(result.error)


@pytest.mark.parametrize(
    "timeout",
    [0, -1, math.nan, math.inf, "2", True],
    ids=["zero", "negative", "nan", "inf", "string", "bool"],
)
def test_a_timeout_must_be_a_positive_number(executor: ToolExecutor, timeout: Any) -> None:
    with pytest.raises(SemanticError, match="timeout= must be a positive number of seconds"):
        run(executor.aexecute(Adder(), {"a": 1}, timeout=timeout))
    with pytest.raises(SemanticError, match="timeout= must be a positive number of seconds"):
        run(executor.aexecute_many([(Adder(), {"a": 1})], timeout=timeout))


def test_a_quick_tool_beats_its_timeout(executor: ToolExecutor, probe: Probe) -> None:
    tool = probe(answer("fast"))
    assert run(executor.aexecute(tool, {}, timeout=BOUND)).output == {"answer": "fast"}


# -- cancellation ------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [None, BOUND], ids=["no timeout", "with timeout"])
def test_cancelling_the_caller_cancels_an_async_tool(timeout: float | None) -> None:
    started = asyncio.Event()
    cleaned_up = threading.Event()
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])

    async def forever() -> dict[str, Any]:
        started.set()
        try:
            await asyncio.sleep(BOUND * 2)
        finally:
            cleaned_up.set()
        return {}

    async def main() -> None:
        tool = AsyncProbe(lambda inputs, credentials: forever())
        task = asyncio.ensure_future(executor.aexecute(tool, {}, timeout=timeout))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cleaned_up.is_set()  # before the cancelled caller resumed

    run(main())
    assert [event.name for event in events] == [EVENT_STARTED, EVENT_FAILED]
    assert events[-1].error is not None
    assert events[-1].error["cause"] == "CancelledError"
    snapshot = executor.metrics.snapshot("probe")  # type: ignore[attr-defined]
    assert (snapshot.count, snapshot.failures) == (1, 1)


@pytest.mark.parametrize("timeout", [None, BOUND], ids=["no timeout", "with timeout"])
def test_cancelling_the_caller_of_a_sync_tool_reports_and_propagates(
    timeout: float | None,
) -> None:
    started = threading.Event()
    release = threading.Event()
    events: list[ToolEvent] = []

    def stuck(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        started.set()
        release.wait(BOUND)
        return {}

    async def main(executor: ToolExecutor) -> None:
        task = asyncio.ensure_future(executor.aexecute(SyncProbe(stuck), {}, timeout=timeout))
        while not started.is_set():  # bounded by run()'s timeout
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append]) as executor:
        run(main(executor))
        release.set()
    assert [event.name for event in events] == [EVENT_STARTED, EVENT_FAILED]


# -- aexecute_many -----------------------------------------------------------------------------


def batch_of(executor: ToolExecutor, path: str) -> Callable[[Any], list[ToolResult]]:
    """The executor's sync or async batch call, as a plain function of the calls."""
    if path == "execute_many":
        return executor.execute_many
    return lambda calls: run(executor.aexecute_many(calls))


def batch() -> list[Any]:
    return [
        (AsyncProbe(answer("a")), {}),
        (SyncProbe(fail("boom")), {}),
        ("not a tool", {}),
        (SyncProbe(answer("b")), {}, "call_b"),
        (AsyncProbe(answer("c")), {"q": 5}),  # invalid input
        (AsyncProbe(fail("bang")), {}),
        (Adder(), {"a": 1}),
    ]


@pytest.mark.parametrize("path", ["execute_many", "aexecute_many"])
def test_a_batch_keeps_call_order_and_every_result(executor: ToolExecutor, path: str) -> None:
    results = batch_of(executor, path)(batch())
    assert [result.status for result in results] == [
        "success",
        STATUS_FAILURE,
        STATUS_FAILURE,
        "success",
        STATUS_FAILURE,
        STATUS_FAILURE,
        "success",
    ]
    assert [result.output for result in results if result.succeeded] == [
        {"answer": "a"},
        {"answer": "b"},
        {"sum": 1.0},
    ]
    misuse = results[2].error
    assert isinstance(misuse, ToolExecutionError)
    assert isinstance(misuse.cause, SemanticError)
    assert "execute() takes a Tool instance, got str" in str(misuse)
    assert isinstance(results[4].error, ToolValidationError)
    assert "bang" in str(results[5].error)


def test_a_metrics_backend_that_breaks_one_call_of_a_batch_loses_no_result() -> None:
    class Exploding:
        def record_duration(self, tool_name: str, duration: float, error: str | None) -> None:
            if tool_name == "add":
                raise RuntimeError("metrics backend down")

    executor = ToolExecutor(credentials={"api-key": SECRET}, metrics=Exploding())
    calls: list[Any] = [(Adder(), {"a": 1}), (AsyncProbe(answer("kept")), {})]
    results = run(executor.aexecute_many(calls))
    assert not results[0].succeeded
    assert "metrics backend down" in str(results[0].error)
    assert results[1].output == {"answer": "kept"}


def test_128_waiting_async_tools_overlap(executor: ToolExecutor) -> None:
    async def nap() -> dict[str, Any]:
        await asyncio.sleep(0.05)
        return {"answer": "rested"}

    tool = AsyncProbe(lambda inputs, credentials: nap())
    begun = time.perf_counter()
    results = run(executor.aexecute_many([(tool, {})] * 128))
    # A generous bound, not a speed test: one after another would take 6.4 s.
    assert time.perf_counter() - begun < 2.0
    assert all(result.output == {"answer": "rested"} for result in results)


@pytest.mark.parametrize("limit", [1, 3])
def test_max_concurrency_caps_the_calls_in_flight(executor: ToolExecutor, limit: int) -> None:
    running = 0
    most = 0

    async def counted() -> dict[str, Any]:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.005)
        running -= 1
        return {}

    tool = AsyncProbe(lambda inputs, credentials: counted())
    run(executor.aexecute_many([(tool, {})] * 12, max_concurrency=limit))
    assert most == limit


@pytest.mark.parametrize("limit", [0, -2, 1.5, "4", True], ids=["0", "-2", "1.5", "str", "bool"])
def test_max_concurrency_must_be_a_positive_integer(executor: ToolExecutor, limit: Any) -> None:
    with pytest.raises(SemanticError, match=r"max_concurrency=\.\.\.\) must be a positive"):
        run(executor.aexecute_many([(Adder(), {"a": 1})], max_concurrency=limit))


@pytest.mark.parametrize(
    "workers", [0, -1, 2.0, "8", False], ids=["0", "-1", "float", "str", "bool"]
)
def test_max_workers_must_be_a_positive_integer(workers: Any) -> None:
    with pytest.raises(SemanticError, match=r"ToolExecutor\(max_workers=\.\.\.\) must be"):
        ToolExecutor(credentials={}, max_workers=workers)


def test_close_releases_the_pool_and_the_executor_still_works() -> None:
    executor = ToolExecutor(credentials={"api-key": SECRET}, max_workers=2)
    tool = SyncProbe(answer("x"))
    assert run(executor.aexecute(tool, {})).succeeded
    first = executor._pool
    assert first is not None
    executor.close()
    executor.close()  # idempotent
    assert executor._pool is None
    assert run(executor.aexecute(tool, {})).succeeded  # a new pool, made on demand
    assert executor._pool is not first
    executor.close()


# -- parity: the same steps and reports through execute and aexecute -----------------------------


def leaky(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
    raise RuntimeError(f"upstream rejected {credentials['api-key']}")


def echoes_secret(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
    return {"answer": f"key={credentials['api-key']}"}


def test_parity_of_a_success(call: Call, probe: Probe) -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])
    result = call(executor, probe(answer("ok")), {"q": "x"}, call_id="call_1")
    assert result.output == {"answer": "ok"}
    assert [(event.name, event.call_id) for event in events] == [
        (EVENT_STARTED, "call_1"),
        (EVENT_COMPLETED, "call_1"),
    ]
    assert events[1].inputs == {"q": "x"}
    assert events[1].output == {"answer": "ok"}
    snapshot = executor.metrics.snapshot("probe")  # type: ignore[attr-defined]
    assert (snapshot.count, snapshot.failures) == (1, 0)


@pytest.mark.parametrize(
    ("inputs", "body", "error_type", "message"),
    [
        ({"q": 5}, answer("never"), "ToolValidationError", "Parameter 'q': expected type"),
        ({}, leaky, "ToolExecutionError", "upstream rejected \\*\\*\\*"),
        ({}, lambda inputs, credentials: ["not", "a", "dict"], "ToolValidationError",
         "Expected the tool to return a dictionary, got 'list'"),
    ],
    ids=["invalid input", "tool raises a secret", "invalid output"],
)  # fmt: skip
def test_parity_of_a_failure(
    call: Call, probe: Probe, inputs: dict[str, Any], body: Body, error_type: str, message: str
) -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])
    result = call(executor, probe(body), inputs, raise_on_failure=False)
    assert type(result.error).__name__ == error_type
    assert result.error is not None
    assert SECRET not in str(result.error)
    [failed] = [event for event in events if event.name == EVENT_FAILED]
    assert failed.error_type == error_type
    assert SECRET not in repr(failed)
    with pytest.raises(type(result.error), match=message):
        call(executor, probe(body), inputs)
    snapshot = executor.metrics.snapshot("probe")  # type: ignore[attr-defined]
    assert (snapshot.count, snapshot.failures) == (2, 2)


def test_parity_of_withholding_an_answer_that_holds_a_secret(call: Call, probe: Probe) -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])
    result = call(executor, probe(echoes_secret), {}, raise_on_failure=False)
    assert result.output is None
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert result.error.cause.where == "output.answer"
    assert all(SECRET not in repr(event) for event in events)


def test_parity_of_spans(call: Call, probe: Probe) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentkit import OTelTracer

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    executor = ToolExecutor(credentials={"api-key": SECRET}, tracer=OTelTracer(provider))
    seen: list[int] = []

    def look(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        seen.append(trace.get_current_span().get_span_context().span_id)
        return {}

    call(executor, probe(look), {}, call_id="call_9")
    call(executor, probe(leaky), {}, raise_on_failure=False)
    ok, failed = exporter.get_finished_spans()
    assert ok.name == "execute_tool probe"
    assert ok.attributes is not None
    assert ok.attributes["gen_ai.tool.call.id"] == "call_9"
    assert ok.context is not None
    assert seen == [ok.context.span_id]  # the tool ran inside its span, thread or loop
    assert failed.attributes is not None
    assert failed.attributes["error.type"] == "ToolExecutionError"
    assert SECRET not in repr(failed.to_json())


@pytest.mark.parametrize("recorded_with", ["execute", "aexecute"])
def test_parity_of_replay(call: Call, probe: Probe, recorded_with: str) -> None:
    live = ToolExecutor(credentials={"api-key": SECRET})
    recorder = ExecutionRecorder(live)
    tool = probe(answer("recorded"))
    if recorded_with == "execute":
        live.execute(tool, {"q": "x"})
    else:
        run(live.aexecute(tool, {"q": "x"}))
    replaying = ToolExecutor(credentials={}, replay=recorder)
    never = probe(fail("replay must not run the tool"))
    assert call(replaying, never, {"q": "x"}).output == {"answer": "recorded"}
    with pytest.raises(ToolExecutionError, match="No recorded call of tool 'probe'"):
        call(replaying, never, {"q": "other"})


def test_parity_of_a_timeout_in_the_reports() -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])

    async def slow() -> dict[str, Any]:
        await asyncio.sleep(BOUND)
        return {}

    tool = AsyncProbe(lambda inputs, credentials: slow())
    run(executor.aexecute(tool, {}, raise_on_failure=False, timeout=0.01))
    failed = events[-1]
    assert failed.name == EVENT_FAILED
    assert failed.error is not None
    assert failed.error["cause"] == "ToolTimeoutError"
    snapshot = executor.metrics.snapshot("probe")  # type: ignore[attr-defined]
    assert (snapshot.count, snapshot.failures) == (1, 1)


# -- main's safety holds on the async path: cleaned causes, derived forms, depth ----------------


@pytest.mark.parametrize("strict", [True, False], ids=["raised", "result"])
@pytest.mark.parametrize("case", sorted(CHAIN_CASES))
def test_the_async_path_cleans_the_exception_chain(probe: Probe, case: str, strict: bool) -> None:
    executor = ToolExecutor(credentials={"api-key": CHAIN_KEY})
    tool = probe(lambda inputs, credentials: CHAIN_CASES[case]())
    if strict:
        with pytest.raises(ToolExecutionError) as caught:
            run(executor.aexecute(tool, {}))
        error = caught.value
        assert error.__context__ is None  # the original is not smuggled in as the context
    else:
        result = run(executor.aexecute(tool, {}, raise_on_failure=False))
        assert isinstance(result.error, ToolExecutionError)
        assert leaked(repr(result) + repr(result.to_dict()), [CHAIN_KEY]) == []
        error = result.error
    assert leaked(chain_text(error), [CHAIN_KEY]) == []
    assert leaked(logged_exception(error), [CHAIN_KEY]) == []


def test_a_form_derived_from_a_secret_is_redacted_on_both_paths(call: Call, probe: Probe) -> None:
    derived = f"Basic {SECRET[::-1]}"

    def sends_derived(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        redact_also(derived)  # in the pool thread, or in the loop's task
        return {"answer": f"sent {derived}"}

    def fails_with_derived(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        redact_also(derived)
        raise RuntimeError(f"rejected {derived}")

    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])
    withheld = call(executor, probe(sends_derived), {}, raise_on_failure=False)
    assert isinstance(withheld.error, ToolExecutionError)
    assert isinstance(withheld.error.cause, SecretInOutputError)
    failed = call(executor, probe(fails_with_derived), {}, raise_on_failure=False)
    assert str(failed.error) == "Tool 'probe' failed: RuntimeError: rejected ***"
    assert all(derived not in repr(event) for event in events)
    assert active_redactor() is None  # nothing stays active after a call


def test_concurrent_async_calls_keep_their_own_redactors() -> None:
    # Each call's redactor is a context variable: calls interleaved on one loop
    # never see, extend or redact with another call's.
    seen: dict[str, Redactor | None] = {}

    def note(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        async def body() -> dict[str, Any]:
            redact_also(f"derived-form-{inputs['q']}")
            await asyncio.sleep(0.01)
            seen[inputs["q"]] = active_redactor()
            other = "b" if inputs["q"] == "a" else "a"
            return {"answer": f"derived-form-{other}"}  # the other call's: not a secret here

        return body()

    executor = ToolExecutor(credentials={"api-key": SECRET})
    results = run(
        executor.aexecute_many([(AsyncProbe(note), {"q": "a"}), (AsyncProbe(note), {"q": "b"})])
    )
    assert [result.output for result in results] == [
        {"answer": "derived-form-b"},
        {"answer": "derived-form-a"},
    ]
    assert seen["a"] is not seen["b"]


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000], ids=["just-past", "far-past"])
def test_deep_inputs_fail_cleanly_on_the_async_path(probe: Probe, depth: int) -> None:
    inputs: Any = "leaf"
    for _ in range(depth):
        inputs = {"q": inputs}
    executor = ToolExecutor(credentials={"api-key": SECRET})
    result = run(executor.aexecute(probe(answer("never")), inputs, raise_on_failure=False))
    assert not result.succeeded
    assert isinstance(result.error, (ToolValidationError, ToolExecutionError))


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000], ids=["just-past", "far-past"])
@pytest.mark.parametrize("declared", [True, False], ids=["declared", "free-form"])
def test_a_deep_output_ends_the_same_on_both_paths(
    probe: Probe, depth: int, declared: bool
) -> None:
    output: Any = "leaf"
    for _ in range(depth):
        output = [output]

    class Declared(SyncProbe if probe is SyncProbe else AsyncProbe):  # type: ignore[misc]
        OUTPUT_SCHEMA = {"parameters": [{"name": "answer", "type": "list"}]} if declared else None

    executor = ToolExecutor(credentials={"api-key": SECRET})
    tool = Declared(lambda inputs, credentials: {"answer": output})
    synced = executor.execute(tool, {}, raise_on_failure=False)
    awaited = run(executor.aexecute(tool, {}, raise_on_failure=False))
    assert (awaited.status, str(awaited.error)) == (synced.status, str(synced.error))
    if declared:
        assert f"{MAX_DEPTH} levels" in str(awaited.error)


# -- the async dispatch twins ----------------------------------------------------------------------

MIXED_CALLS = [
    ("c1", "probe", '{"q": "x"}'),
    ("c2", "add", '{"a": 1, "b": 2}'),
    ("c3", "ad", "{}"),  # unknown, with a hint
    ("c4", "add", "{not json"),
    ("c5", "add", '{"a": "x"}'),  # invalid input
    ("c6", "leak", "{}"),  # fails with the secret in its message
]


def _openai(calls: list[tuple[str, str, str]]) -> list[Any]:
    return [{"id": i, "function": {"name": n, "arguments": a}} for i, n, a in calls]


def _responses(calls: list[tuple[str, str, str]]) -> list[Any]:
    return [{"type": "function_call", "call_id": i, "name": n, "arguments": a} for i, n, a in calls]


def _anthropic(calls: list[tuple[str, str, str]]) -> list[Any]:
    import json

    blocks: list[Any] = []
    for call_id, name, arguments in calls:
        try:
            value = json.loads(arguments)
        except ValueError:
            value = arguments  # sent as a string: not an object
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": value})
    return blocks


@pytest.mark.parametrize(
    ("shape", "sync_name"),
    [(_openai, "dispatch_openai"), (_responses, "dispatch_openai_responses"),
     (_anthropic, "dispatch_anthropic")],
    ids=["openai", "responses", "anthropic"],
)  # fmt: skip
def test_each_async_dispatch_answers_as_its_sync_twin(
    shape: Callable[[list[tuple[str, str, str]]], list[Any]], sync_name: str
) -> None:
    import agentkit.adapters.dispatch as dispatch

    class Leak(SyncProbe):
        TOOL_NAME = "leak"

    registry = ToolRegistry([AsyncProbe(answer("async")), Adder(), Leak(leaky)])
    executor = ToolExecutor(credentials={"api-key": SECRET})
    calls = shape(MIXED_CALLS)
    expected = getattr(dispatch, sync_name)(calls, registry, executor)
    replies = run(getattr(dispatch, "a" + sync_name)(calls, registry, executor))
    assert replies == expected
    assert len(replies) == len(MIXED_CALLS)
    assert SECRET not in repr(replies)
    assert '"async"' in repr(replies[0])


# -- the MCP server ------------------------------------------------------------------------------


def test_the_mcp_server_awaits_async_tools_on_its_loop_and_pools_sync_ones() -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from agentkit.mcp.server import build_server

    class Where(AsyncProbe):
        TOOL_NAME = "where_async"

    class WhereSync(SyncProbe):
        TOOL_NAME = "where_sync"

    def where(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"thread": threading.current_thread().name}

    class Fails(AsyncProbe):
        TOOL_NAME = "fails"

    registry = ToolRegistry([Where(where), WhereSync(where), Fails(leaky)])
    executor = ToolExecutor(credentials={"api-key": SECRET}, max_workers=2)

    async def main() -> tuple[str, Any, Any, Any]:
        async with Client(build_server(registry, executor)) as client:
            on_loop = await client.call_tool("where_async", {})
            pooled = await client.call_tool("where_sync", {})
            failed = await client.call_tool("fails", {})
            return threading.current_thread().name, on_loop, pooled, failed

    with executor:
        loop_thread, on_loop, pooled, failed = run(main())
    assert on_loop.structured_content == {"thread": loop_thread}
    assert pooled.structured_content["thread"].startswith("agentkit-tool")
    assert failed.is_error
    assert SECRET not in repr(failed)


# -- mistakes made plain -----------------------------------------------------------------------


class Undeclared(Tool):
    """execute returns a coroutine without being ``async def``: the class cannot tell."""

    TOOL_NAME = "undeclared"
    OUTPUT_SCHEMA = None

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        async def work() -> dict[str, Any]:
            return {}

        return work()  # type: ignore[return-value]


def test_a_coroutine_from_an_undeclared_execute_is_a_clear_error(call: Call) -> None:
    result = call(ToolExecutor(credentials={}), Undeclared(), {}, raise_on_failure=False)
    assert isinstance(result.error, ToolValidationError)
    assert "got 'coroutine': a coroutine, from an execute() that is not 'async def'" in str(
        result.error
    )
    assert "subclass AsyncTool" in str(result.error)  # and no "never awaited" warning (error)


@pytest.mark.parametrize(
    "entry",
    [(Adder(),), (Adder(), {"a": 1}, "id", "extra"), Adder(), "add", None],
    ids=["one-item", "four-items", "a-bare-tool", "a-string", "none"],
)
@pytest.mark.parametrize("path", ["execute_many", "aexecute_many"])
def test_a_malformed_batch_entry_is_named_before_anything_runs(entry: Any, path: str) -> None:
    ran: list[str] = []
    executor = ToolExecutor(
        credentials={"api-key": SECRET}, listeners=[lambda e: ran.append(e.name)]
    )
    calls: list[Any] = [(Adder(), {"a": 1}), entry]
    with pytest.raises(SemanticError, match=r"calls\[1\]: each call is \(tool, inputs\)"):
        batch_of(executor, path)(calls)
    assert ran == []


@pytest.mark.parametrize("path", ["execute_many", "aexecute_many"])
def test_an_empty_batch_is_an_empty_list(executor: ToolExecutor, path: str) -> None:
    assert batch_of(executor, path)(iter([])) == []


def test_a_tool_letting_a_cancellation_out_fails_alone_in_a_batch(executor: ToolExecutor) -> None:
    def cancels(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        raise asyncio.CancelledError  # an inner task's cancellation, let out

    calls: list[Any] = [
        (AsyncProbe(answer("before")), {}),
        (AsyncProbe(cancels), {}),
        (SyncProbe(answer("after")), {}),
    ]
    results = run(executor.aexecute_many(calls))
    assert [result.output for result in results] == [
        {"answer": "before"},
        None,
        {"answer": "after"},
    ]
    assert isinstance(results[1].error, ToolExecutionError)
    assert results[1].error.cause_type == "CancelledError"


def test_an_async_dispatch_without_an_executor_makes_and_closes_its_own() -> None:
    from agentkit.adapters.dispatch import adispatch_openai

    replies = run(adispatch_openai(_openai([("c1", "add", '{"a": 2}')]), ToolRegistry([Adder()])))
    assert replies == [{"role": "tool", "tool_call_id": "c1", "content": '{"sum": 2.0}'}]


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 5000], ids=["past", "near-limit", "far"])
def test_deep_inputs_with_a_listener_fail_cleanly_on_both_paths(
    call: Call, probe: Probe, depth: int
) -> None:
    # The started event redacts the caller's inputs before validation: that walk
    # is bounded, so neither path raises RecursionError, and no secret shows.
    inputs: Any = f"key {SECRET}"
    for _ in range(depth):
        inputs = {"q": [inputs]}
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])
    result = call(executor, probe(answer("never")), {"q": inputs}, raise_on_failure=False)
    assert isinstance(result.error, ToolValidationError)
    assert [event.name for event in events] == [EVENT_STARTED, EVENT_FAILED]
    assert leaked(repr(events) + repr(events[-1].to_dict()), [SECRET]) == []
