"""Events, the duration histogram and spans; and no secret in any of them."""

from __future__ import annotations

import bisect
import copy
import logging
import os
import pickle
import sys
import threading
import warnings
from collections.abc import Mapping
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agentkit import (
    DURATION_METRIC,
    EVENT_COMPLETED,
    EVENT_FAILED,
    EVENT_STARTED,
    InMemoryHistogram,
    OTelMetrics,
    OTelTracer,
    ToolEvent,
    ToolExecutor,
)
from agentkit.callers import Caller, calling_as
from agentkit.toolresult import describe_error
from tests.support.helpers import SECRET, Adder, Scripted


def leaky(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
    raise ValueError(f"bad key {credentials['api-key']}")


def echo_secret(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
    return {"answer": credentials["api-key"]}


def test_events_for_a_successful_call() -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={}, listeners=[events.append])
    executor.execute(Adder(), {"a": 1})
    assert [e.name for e in events] == [EVENT_STARTED, EVENT_COMPLETED]
    started, completed = events
    assert started.tool_name == completed.tool_name == "add"
    assert started.tool_version == "1.0.0"
    assert started.call_id == completed.call_id
    assert started.call_id.startswith("call_")
    assert started.timestamp <= completed.timestamp
    assert started.inputs == {"a": 1}
    assert completed.inputs == {"a": 1.0, "b": 0}
    assert completed.output == {"sum": 1.0}
    assert completed.status == "success"
    assert completed.duration is not None
    assert completed.duration > 0
    assert completed.error_type is None


def test_events_for_a_failed_call() -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={}, listeners=[events.append])
    executor.execute(Adder(), {"a": "x"}, raise_on_failure=False)
    failed = events[-1]
    assert failed.name == EVENT_FAILED
    assert failed.status == "failure"
    assert failed.error_type == "ToolValidationError"
    assert failed.error is not None
    assert failed.error["direction"] == "input"


def test_a_given_call_id_is_used() -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={}, listeners=[events.append])
    executor.execute(Adder(), {"a": 1}, call_id="toolu_01")
    assert {e.call_id for e in events} == {"toolu_01"}


def test_a_failing_listener_never_breaks_a_call(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: ToolEvent) -> None:
        raise RuntimeError("listener bug")

    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={}, listeners=[broken, events.append])
    with caplog.at_level(logging.WARNING, logger="agentkit"):
        result = executor.execute(Adder(), {"a": 1})
    assert result.succeeded
    assert len(events) == 2
    assert "listener bug" in caplog.text


def test_subscribe_and_unsubscribe(executor: ToolExecutor) -> None:
    events: list[ToolEvent] = []
    executor.subscribe(events.append)
    executor.execute(Adder(), {"a": 1})
    executor.unsubscribe(events.append)
    executor.execute(Adder(), {"a": 1})
    assert len(events) == 2


def test_no_secret_in_any_event() -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])
    executor.execute(Scripted(leaky), {}, raise_on_failure=False)
    executor.execute(Scripted(echo_secret), {}, raise_on_failure=False)
    assert events
    assert SECRET not in repr(events)
    assert SECRET not in repr([e.to_dict() for e in events])


def test_an_event_is_read_only() -> None:
    events: list[ToolEvent] = []
    ToolExecutor(credentials={}, listeners=[events.append]).execute(Adder(), {"a": 1})
    for field in ("name", "tool_name", "call_id", "inputs", "output", "error"):
        with pytest.raises(AttributeError):
            setattr(events[0], field, "changed")


def test_an_event_built_by_hand_keeps_every_field() -> None:
    event = ToolEvent(
        name=EVENT_FAILED,
        tool_name="t",
        tool_version="2",
        call_id="c1",
        timestamp=1.5,
        duration=0.25,
        status="failure",
        error_type="ValueError",
        error={"type": "ValueError", "message": "bad"},
        inputs={"q": 1},
    )
    assert event == ToolEvent(
        EVENT_FAILED, "t", "2", "c1", 1.5, 0.25, "failure", "ValueError",
        {"type": "ValueError", "message": "bad"}, {"q": 1},
    )  # fmt: skip
    assert event.output is None
    assert event.to_dict()["error"] == {"type": "ValueError", "message": "bad"}
    assert "call_id='c1'" in repr(event)
    assert event != ToolEvent(EVENT_FAILED, "t", "2", "c2", 1.5)


def test_a_failed_event_describes_its_error_when_read() -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={}, listeners=[events.append])
    result = executor.execute(Adder(), {"a": "x"}, raise_on_failure=False)
    failed = events[-1]
    assert result.error is not None
    assert failed.error == describe_error(result.error)
    assert failed.error is failed.error  # described once, then kept
    assert failed.to_dict()["error"] == describe_error(result.error)


def test_events_pickle_and_copy_with_their_error_described() -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": SECRET}, listeners=[events.append])
    executor.execute(Adder(), {"a": "x"}, raise_on_failure=False)
    executor.execute(Scripted(leaky), {}, raise_on_failure=False)
    executor.execute(Adder(), {"a": 1})
    for event in events:
        for clone in (pickle.loads(pickle.dumps(event)), copy.copy(event), copy.deepcopy(event)):
            assert clone == event
            assert clone.to_dict() == event.to_dict()
    assert SECRET not in repr(pickle.loads(pickle.dumps(events)))


def test_call_ids_are_unique_across_threads() -> None:
    seen: list[str] = []
    executor = ToolExecutor(credentials={}, listeners=[lambda event: seen.append(event.call_id)])
    executor.execute_many([(Adder(), {"a": n}) for n in range(64)])
    assert len(seen) == 128
    assert len(set(seen)) == 64


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_hands_out_call_ids_of_its_own() -> None:
    ids: list[str] = []
    executor = ToolExecutor(credentials={}, listeners=[lambda event: ids.append(event.call_id)])
    executor.execute(Adder(), {"a": 1})
    reader, writer = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads about
        pid = os.fork()
    if pid == 0:  # the child: one call, its id to the parent, and out
        try:
            executor.execute(Adder(), {"a": 2})
            os.write(writer, ids[-1].encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        child_id = pipe.read()
    os.waitpid(pid, 0)
    executor.execute(Adder(), {"a": 3})
    assert child_id.startswith("call_")
    assert child_id not in ids
    assert child_id.rsplit("_", 1)[0] != ids[-1].rsplit("_", 1)[0]  # a prefix of its own


# -- histogram ---------------------------------------------------------------------------------


def test_histogram_per_tool_count_sum_and_buckets() -> None:
    histogram = InMemoryHistogram(boundaries=(0.001, 0.01))
    histogram.record_duration("a", 0.0005, None)
    histogram.record_duration("a", 0.005, "ToolExecutionError")
    histogram.record_duration("a", 5.0, None)
    histogram.record_duration("b", 0.001, None)
    snap = histogram.snapshot("a")
    assert snap is not None
    assert snap.count == 3
    assert snap.sum == pytest.approx(5.0055)
    assert snap.failures == 1
    assert snap.buckets == ((0.001, 1), (0.01, 1), (float("inf"), 1))
    assert snap.mean == pytest.approx(5.0055 / 3)
    b = histogram.snapshot("b")
    assert b is not None
    assert b.buckets[0] == (0.001, 1)
    assert histogram.snapshot("never") is None
    assert histogram.tool_names() == ["a", "b"]
    assert histogram.name == DURATION_METRIC


def test_executor_records_every_call(executor: ToolExecutor) -> None:
    executor.execute(Adder(), {"a": 1})
    executor.execute(Adder(), {"a": "x"}, raise_on_failure=False)
    assert isinstance(executor.metrics, InMemoryHistogram)
    snap = executor.metrics.snapshot("add")
    assert snap is not None
    assert snap.count == 2
    assert snap.failures == 1


def test_histogram_counts_are_exact_under_threads(executor: ToolExecutor) -> None:
    executor.execute_many([(Adder(), {"a": i}) for i in range(400)], max_workers=8)
    assert isinstance(executor.metrics, InMemoryHistogram)
    snap = executor.metrics.snapshot("add")
    assert snap is not None
    assert snap.count == 400
    assert sum(count for _, count in snap.buckets) == 400


def _reference(
    boundaries: tuple[float, ...], calls: list[tuple[str, float, str | None]]
) -> dict[str, tuple[int, float, int, tuple[tuple[float, int], ...]]]:
    """What a histogram must say after ``calls``: each counted on its own, in order."""
    series: dict[str, list[Any]] = {}
    for name, duration, error in calls:
        count, total, failures, buckets = series.setdefault(
            name, [0, 0.0, 0, [0] * (len(boundaries) + 1)]
        )
        buckets[bisect.bisect_left(boundaries, duration)] += 1
        series[name][:3] = [count + 1, total + duration, failures + (error is not None)]
    bounds = (*boundaries, float("inf"))
    return {
        name: (count, total, failures, tuple(zip(bounds, buckets, strict=True)))
        for name, (count, total, failures, buckets) in series.items()
    }


def _seen(histogram: InMemoryHistogram) -> dict[str, Any]:
    seen = {}
    for name in histogram.tool_names():
        snap = histogram.snapshot(name)
        assert snap is not None
        seen[name] = (snap.count, snap.sum, snap.failures, snap.buckets)
    return seen


@pytest.mark.parametrize("calls", [1, 255, 256, 257, 1000, 2049])
def test_histogram_counts_batches_as_one_call_at_a_time(calls: int) -> None:
    """Past the batch size, across tools, failures among successes, at and on the bounds."""
    boundaries = (0.001, 0.002, 0.01)
    durations = [0.0005, 0.001, 0.0015, 0.002, 0.005, 0.01, 0.5, 0.0]
    recorded = [
        (
            f"tool{i % 3}",
            durations[i % len(durations)],
            "ToolExecutionError" if i % 7 == 0 else None,
        )
        for i in range(calls)
    ]
    histogram = InMemoryHistogram(boundaries=boundaries)
    for name, duration, error in recorded:
        histogram.record_duration(name, duration, error)
    expected = _reference(boundaries, recorded)
    seen = _seen(histogram)
    assert seen.keys() == expected.keys()
    for name, (count, total, failures, buckets) in expected.items():
        assert seen[name][0] == count
        assert seen[name][1] == pytest.approx(total)
        assert seen[name][2:] == (failures, buckets)


@pytest.mark.parametrize(
    ("duration", "bucket"),
    [
        pytest.param(float("nan"), 0, id="nan-first-as-bisect-puts-it"),
        pytest.param(float("-inf"), 0, id="minus-infinity"),
        pytest.param(float("inf"), 2, id="infinity-last"),
        pytest.param(0.001, 0, id="on-a-bound-counts-below-it"),
    ],
)
def test_histogram_buckets_odd_durations_like_single_calls(duration: float, bucket: int) -> None:
    histogram = InMemoryHistogram(boundaries=(0.001, 0.01))
    for _ in range(300):  # the first call alone, then batches
        histogram.record_duration("t", 0.005, None)
        histogram.record_duration("t", duration, None)
    snap = histogram.snapshot("t")
    assert snap is not None
    counts = [count for _, count in snap.buckets]
    assert snap.count == 600
    assert counts[1] == 300 + (bucket == 1) * 300
    assert counts[bucket] == 300 + (bucket == 1) * 300


def test_histogram_loses_no_call_recorded_while_it_is_read() -> None:
    """Threads record while another reads (each read counts what is queued): none lost."""
    histogram = InMemoryHistogram(boundaries=(0.001,))
    threads, per_thread = 4, 3000
    done = threading.Event()

    def record(index: int) -> None:
        for call in range(per_thread):
            error = "ToolExecutionError" if call % 10 == 0 else None
            histogram.record_duration(f"t{index % 2}", 0.0005 * (call % 3), error)

    def read() -> None:
        while not done.is_set():
            histogram.snapshot("t0")
            histogram.tool_names()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between any two steps, not every 5 ms
    try:
        reader = threading.Thread(target=read)
        reader.start()
        writers = [threading.Thread(target=record, args=(i,)) for i in range(threads)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        done.set()
        reader.join()
    finally:
        sys.setswitchinterval(interval)
    for name in ("t0", "t1"):
        snap = histogram.snapshot(name)
        assert snap is not None
        assert snap.count == per_thread * threads // 2
        assert sum(count for _, count in snap.buckets) == snap.count
        assert snap.failures == per_thread // 10 * threads // 2


class _Racing(list[float]):
    """A tool's pending durations where a call is recorded the moment the batch is read."""

    def _raced(self) -> None:
        if not getattr(self, "raced", False):
            self.raced = True
            self.append(0.5)

    def __getitem__(self, index: Any) -> Any:
        taken = super().__getitem__(index)
        self._raced()
        return taken

    def copy(self) -> list[float]:
        taken = super().copy()
        self._raced()
        return taken


def test_histogram_keeps_a_call_recorded_while_a_batch_is_taken() -> None:
    histogram = InMemoryHistogram(boundaries=(0.001,))
    histogram.record_duration("t", 0.0005, None)  # the first call: counted at once
    histogram._pending["t"] = racing = _Racing()
    for _ in range(3):
        histogram.record_duration("t", 0.0005, None)
    first = histogram.snapshot("t")
    assert racing.raced
    assert first is not None
    assert first.count == 4
    later = histogram.snapshot("t")
    assert later is not None
    assert later.count == 5
    assert later.buckets == ((0.001, 4), (float("inf"), 1))


def test_histogram_reset_forgets_queued_calls() -> None:
    histogram = InMemoryHistogram()
    for _ in range(10):
        histogram.record_duration("t", 0.001, None)
    histogram.reset()
    assert histogram.snapshot("t") is None
    assert histogram.tool_names() == []
    histogram.record_duration("t", 0.001, None)
    histogram.record_duration("t", 0.002, None)
    snap = histogram.snapshot("t")
    assert snap is not None
    assert snap.count == 2


# -- OpenTelemetry -----------------------------------------------------------------------------


@pytest.fixture
def spans() -> tuple[OTelTracer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OTelTracer(provider), exporter


def test_one_span_per_call_with_genai_attributes(
    spans: tuple[OTelTracer, InMemorySpanExporter],
) -> None:
    tracer, exporter = spans
    ToolExecutor(credentials={}, tracer=tracer).execute(Adder(), {"a": 1}, call_id="call_1")
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool add"
    assert span.attributes is not None
    assert dict(span.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two numbers.",
        "agentkit.caller": "anonymous",
    }
    assert span.status.status_code is StatusCode.UNSET


def test_a_call_made_for_a_caller_carries_it_in_its_span_and_events(
    spans: tuple[OTelTracer, InMemorySpanExporter],
) -> None:
    tracer, exporter = spans
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={}, tracer=tracer)
    executor.subscribe(events.append)
    with calling_as(Caller(name="triage-bot", via="token")):
        executor.execute(Adder(), {"a": 1})
    executor.execute(Adder(), {"a": 2})  # after the block: nobody in particular
    first, second = exporter.get_finished_spans()
    assert first.attributes is not None
    assert second.attributes is not None
    assert first.attributes["agentkit.caller"] == "triage-bot"
    assert second.attributes["agentkit.caller"] == "anonymous"
    assert [event.caller for event in events] == ["triage-bot"] * 2 + ["anonymous"] * 2
    assert events[0].to_dict()["caller"] == "triage-bot"


def test_each_span_has_its_own_call_id_and_its_tools_description(
    spans: tuple[OTelTracer, InMemorySpanExporter],
) -> None:
    class Renamed(Adder):
        TOOL_DESCRIPTION = "Add, described anew."

    class Undescribed(Adder):
        TOOL_DESCRIPTION = ""

    tracer, exporter = spans
    executor = ToolExecutor(credentials={}, tracer=tracer)
    for number, tool in enumerate([Adder(), Renamed(), Adder(), Undescribed()]):
        executor.execute(tool, {"a": 1}, call_id=f"call_{number}")
    finished = exporter.get_finished_spans()
    assert [(span.attributes or {})["gen_ai.tool.call.id"] for span in finished] == [
        "call_0",
        "call_1",
        "call_2",
        "call_3",
    ]
    assert [(span.attributes or {}).get("gen_ai.tool.description") for span in finished] == [
        "Add two numbers.",
        "Add, described anew.",
        "Add two numbers.",
        None,
    ]
    assert {span.name for span in finished} == {"execute_tool add"}


def test_failed_span_has_error_type_and_no_secret(
    spans: tuple[OTelTracer, InMemorySpanExporter],
) -> None:
    tracer, exporter = spans
    executor = ToolExecutor(credentials={"api-key": SECRET}, tracer=tracer)
    executor.execute(Scripted(leaky), {}, raise_on_failure=False)
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["error.type"] == "ToolExecutionError"
    assert span.status.status_code is StatusCode.ERROR
    assert SECRET not in (span.status.description or "")
    assert SECRET not in repr(span.to_json())


def test_the_span_is_current_while_the_tool_runs(
    spans: tuple[OTelTracer, InMemorySpanExporter],
) -> None:
    from opentelemetry import trace

    tracer, exporter = spans
    seen: list[str] = []

    def look(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        seen.append(trace.get_current_span().get_span_context().span_id.to_bytes(8, "big").hex())
        return {"answer": "ok"}

    ToolExecutor(credentials={"api-key": "k-0123456789"}, tracer=tracer).execute(Scripted(look), {})
    (span,) = exporter.get_finished_spans()
    assert span.context is not None
    assert seen == [span.context.span_id.to_bytes(8, "big").hex()]
    assert not trace.get_current_span().get_span_context().is_valid


def test_otel_metrics_record_the_duration_histogram() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    executor = ToolExecutor(credentials={}, metrics=OTelMetrics(meter))
    executor.execute(Adder(), {"a": 1})
    executor.execute(Adder(), {"a": "x"}, raise_on_failure=False)
    data = reader.get_metrics_data()
    assert data is not None
    (metric,) = [m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    assert metric.name == DURATION_METRIC
    assert metric.unit == "s"
    points = {
        tuple(sorted((point.attributes or {}).items())): point.count  # type: ignore[union-attr]
        for point in metric.data.data_points
    }
    assert points == {
        (("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", "add")): 1,
        (
            ("error.type", "ToolValidationError"),
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", "add"),
        ): 1,
    }
