"""What observability and credentials add to a call, each against its own baseline.

Three ratios from one interleaved run (issue #8): one listener against the
default executor, ``OTelTracer`` against a bare SDK span around a direct call,
and a tool with one named credential against the same tool without.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from agentkit import ToolExecutor
from agentkit.observability import OTelTracer, ToolEvent
from benchmarks.bench_executor import INPUTS, FiveByFive
from benchmarks.timing import Case, best_per_call, target_line

NUMBER = 5_000
ROUNDS = 7


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
    best = best_per_call(cases, number=NUMBER, rounds=ROUNDS)
    base = best["default executor"]
    lines = [f"overhead: per call, 5-in/5-out tool (best of {ROUNDS} interleaved rounds)"]
    for label, seconds in best.items():
        lines.append(f"  {label:<40} {seconds * 1e6:7.2f} us  {seconds / base:5.2f}x default")
    lines += [
        target_line("one listener / default", best["executor with one listener"] / base, 2.0),
        target_line(
            "OTelTracer / SDK span around a direct call",
            best["ToolExecutor with OTelTracer"] / best["SDK span around a direct call"],
            1.15,
        ),
        target_line(
            "one named credential / none", best["tool with one named credential"] / base, 2.0
        ),
    ]
    return lines
