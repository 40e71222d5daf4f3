"""What observability and credentials add to a call, each against its own baseline.

Three ratios from one interleaved run (issue #8): one listener against the
default executor, ``OTelTracer`` against a bare SDK span around a direct call,
and a tool with one named credential against the same tool without.

The clock is the thread's CPU time (every case runs in this one thread): on a
shared machine a neighbour taking the core stretches wall time by 2-4x at
random, and CPU time not at all. The measurement is repeated ``REPEATS``
times; each figure printed is the median of the repeats, with the range of
each target's ratio.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Mapping

from agentkit import ToolExecutor
from agentkit.observability import OTelTracer, ToolEvent
from benchmarks.bench_executor import INPUTS, FiveByFive
from benchmarks.timing import Case, best_per_call, target_line

NUMBER = 5_000
ROUNDS = 7
REPEATS = 5


class FiveByFiveWithKey(FiveByFive):
    TOOL_NAME = "five_by_five_with_key"
    CREDENTIAL_NAMES = ("bench-api-key",)


def _otel_cases(tool: FiveByFive) -> list[Case]:
    """``OTelTracer`` in the executor and its peer, both exporting to one in-memory exporter."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = ToolExecutor(credentials={}, tracer=OTelTracer(tracer_provider=provider))
    sdk_tracer = provider.get_tracer("bench")
    no_credentials: Mapping[str, str] = {}
    # The attributes OTelTracer sets, so both sides build spans of the same size.
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool.name,
        "gen_ai.tool.call.id": "call_0123456789abcdef01234567",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": tool.description,
    }
    span_name = f"execute_tool {tool.name}"
    internal = trace.SpanKind.INTERNAL

    def sdk_span_around_direct_call() -> object:
        with sdk_tracer.start_as_current_span(span_name, kind=internal, attributes=attributes):
            return tool.execute(dict(INPUTS), no_credentials)

    return [
        Case("SDK span around a direct call", sdk_span_around_direct_call, exporter.clear),
        Case("ToolExecutor with OTelTracer", lambda: traced.execute(tool, INPUTS), exporter.clear),
    ]


def run() -> list[str]:
    tool = FiveByFive()
    keyed = FiveByFiveWithKey()
    default = ToolExecutor(credentials={"bench-api-key": "not-a-real-secret-0123456789"})
    # A realistic listener that keeps what it hears, bounded so rounds don't pile up.
    heard: deque[ToolEvent] = deque(maxlen=1_000)
    listened = ToolExecutor(credentials={}, listeners=[heard.append])
    cases = [
        Case("default executor", lambda: default.execute(tool, INPUTS)),
        Case("executor with one listener", lambda: listened.execute(tool, INPUTS)),
        Case("tool with one named credential", lambda: default.execute(keyed, INPUTS)),
        *_otel_cases(tool),
    ]
    runs = [
        best_per_call(cases, number=NUMBER, rounds=ROUNDS, clock=time.thread_time)
        for _ in range(REPEATS)
    ]
    lines = [
        f"overhead: per call, 5-in/5-out tool, CPU time (median of {REPEATS} runs, "
        f"each the best of {ROUNDS} interleaved rounds)"
    ]
    base = statistics.median(run["default executor"] for run in runs)
    for case in cases:
        seconds = statistics.median(run[case.label] for run in runs)
        lines.append(f"  {case.label:<40} {seconds * 1e6:7.2f} us  {seconds / base:5.2f}x default")
    for what, label, baseline, limit in (
        ("one listener / default", "executor with one listener", "default executor", 2.0),
        (
            "OTelTracer / SDK span around a direct call",
            "ToolExecutor with OTelTracer",
            "SDK span around a direct call",
            1.15,
        ),
        ("one named credential / none", "tool with one named credential", "default executor", 2.0),
    ):
        ratios = sorted(run[label] / run[baseline] for run in runs)
        spread = f" (runs: {ratios[0]:.2f}-{ratios[-1]:.2f}x)"
        lines.append(target_line(what, statistics.median(ratios), limit) + spread)
    lines.append(target_line("default executor, us per call", base * 1e6, 5.0, unit=" us"))
    return lines
