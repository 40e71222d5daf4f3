"""Events, metrics and traces of tool calls.

- **Events.** The executor sends ``tool.execution.started``, ``.completed`` and
  ``.failed`` ``ToolEvent``s to its listeners (any callable taking one event). A
  listener that raises is logged and skipped; it never breaks a call. They are
  ``agentkit.toolevents``'s, exported here too.
- **Metrics.** Every call's wall-clock duration goes to the histogram
  ``agent.tool.execution.duration`` (seconds): ``InMemoryHistogram`` by default,
  ``OTelMetrics`` for an OpenTelemetry meter.
- **Traces.** With a tracer, each call is one span named ``execute_tool {tool}``
  carrying the OpenTelemetry GenAI semantic-convention attributes. ``OTelTracer``
  adapts an OpenTelemetry tracer; without one, no span work is done at all.

OpenTelemetry is imported only by the adapters, and only when one is made
(``pip install agentkit[otel]``).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, final

from agentkit.callers import current_caller
from agentkit.toolevents import (
    EVENT_COMPLETED,
    EVENT_FAILED,
    EVENT_STARTED,
    Listener,
    ToolEvent,
)

__all__ = [
    "DEFAULT_BUCKETS",
    "DURATION_METRIC",
    "EVENT_COMPLETED",
    "EVENT_FAILED",
    "EVENT_STARTED",
    "HistogramSnapshot",
    "InMemoryHistogram",
    "Listener",
    "Metrics",
    "OTelMetrics",
    "OTelTracer",
    "Span",
    "ToolEvent",
    "Tracer",
]

DURATION_METRIC: Final = "agent.tool.execution.duration"
#: Bucket upper bounds in seconds: from in-process tools (100 µs) to slow APIs (60 s).
DEFAULT_BUCKETS: Final = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)


class Metrics(Protocol):
    """Where the executor records call durations."""

    def record_duration(self, tool_name: str, duration: float, error_type: str | None) -> None:
        """Record one call of ``tool_name`` that took ``duration`` seconds."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HistogramSnapshot:
    """One tool's durations so far.

    ``buckets`` pairs each upper bound with the number of calls at or below it
    and above the previous bound; the last pair has the bound ``inf``.
    """

    count: int
    sum: float
    failures: int
    buckets: tuple[tuple[float, int], ...]

    @property
    def mean(self) -> float:
        return self.sum / self.count if self.count else 0.0


class InMemoryHistogram:
    """The duration histogram, kept in memory, per tool: count, sum, failures and buckets.

    Thread-safe. A successful call of a tool seen before is recorded by one
    append to that tool's list of durations, with no lock; the durations are
    counted in batches (``_FOLD_AT`` at a time, and whenever the histogram is
    read), sorted and bucketed in C. A failure, or a tool's first call, is
    counted at once, under the lock.
    """

    name: Final = DURATION_METRIC
    unit: Final = "s"

    def __init__(self, boundaries: Iterable[float] = DEFAULT_BUCKETS) -> None:
        self.boundaries = tuple(sorted(boundaries))
        self._lock = threading.Lock()
        # tool name -> [count, sum, failures, per-bucket counts]
        self._series: dict[str, list[Any]] = {}
        # tool name -> durations of successful calls not yet counted. Appending is
        # one atomic step; a fold takes the first n (a slice, then a del of the
        # same slice), so a duration appended meanwhile stays for the next.
        self._pending: dict[str, list[float]] = {}

    def record_duration(self, tool_name: str, duration: float, error_type: str | None) -> None:
        durations = self._pending.get(tool_name)
        if durations is None or error_type is not None:
            with self._lock:
                self._count(tool_name, (duration,), error_type is not None)
                self._pending.setdefault(tool_name, [])
            return
        durations.append(duration)
        if len(durations) >= _FOLD_AT:
            with self._lock:
                self._fold(tool_name, durations)

    def _fold(self, tool_name: str, durations: list[float]) -> None:
        """Count the durations pending for ``tool_name`` (the caller holds the lock)."""
        taken = len(durations)
        if taken:
            batch = durations[:taken]
            del durations[:taken]
            self._count(tool_name, batch, False)

    def _fold_all(self) -> None:
        for tool_name, durations in list(self._pending.items()):
            self._fold(tool_name, durations)

    def _count(self, tool_name: str, durations: Sequence[float], failed: bool) -> None:
        """Count calls of ``tool_name`` that took ``durations`` (the caller holds the lock)."""
        bounds = self.boundaries
        series = self._series.get(tool_name)
        if series is None:
            series = self._series[tool_name] = [0, 0.0, 0, [0] * (len(bounds) + 1)]
        series[0] += len(durations)
        series[1] = total = sum(durations, series[1])
        if failed:
            series[2] += len(durations)
        # Bucket i holds the durations d with bounds[i-1] < d <= bounds[i]; a NaN
        # (never a measured duration: the sum says whether one came) goes to the
        # first, as bisect_left puts it, and is kept out of the sort.
        if total == total:
            ordered = sorted(durations)
        else:
            ordered = sorted(itertools.filterfalse(math.isnan, durations))
        counts = series[3]
        counts[0] += len(durations) - len(ordered)
        below = 0
        for index, bound in enumerate(bounds):
            upto = bisect.bisect_right(ordered, bound)
            counts[index] += upto - below
            below = upto
        counts[-1] += len(ordered) - below

    def tool_names(self) -> list[str]:
        with self._lock:
            self._fold_all()
            return sorted(self._series)

    def snapshot(self, tool_name: str) -> HistogramSnapshot | None:
        """The durations recorded for ``tool_name``, or ``None`` when it was never called."""
        with self._lock:
            durations = self._pending.get(tool_name)
            if durations is not None:
                self._fold(tool_name, durations)
            series = self._series.get(tool_name)
            if series is None:
                return None
            count, total, failures, counts = series[0], series[1], series[2], list(series[3])
        bounds = (*self.boundaries, float("inf"))
        return HistogramSnapshot(
            count=count,
            sum=total,
            failures=failures,
            buckets=tuple(zip(bounds, counts, strict=True)),
        )

    def reset(self) -> None:
        with self._lock:
            self._series.clear()
            self._pending.clear()


#: How many successful calls of a tool the in-memory histogram lists before it counts them.
_FOLD_AT: Final = 256


class OTelMetrics:
    """Durations recorded on an OpenTelemetry histogram ``agent.tool.execution.duration``.

    ``meter`` defaults to the global meter provider's ``agentkit`` meter.
    """

    def __init__(self, meter: Any = None) -> None:
        if meter is None:
            from opentelemetry import metrics

            meter = metrics.get_meter("agentkit")
        self._histogram = meter.create_histogram(
            DURATION_METRIC, unit="s", description="Duration of agent tool executions."
        )

    def record_duration(self, tool_name: str, duration: float, error_type: str | None) -> None:
        self._histogram.record(duration, attributes=_metric_attributes(tool_name, error_type))


# The SDK only reads a measurement's attributes, so one dict per tool and
# outcome serves every call (none is made per call).
@functools.lru_cache(maxsize=4096)
def _metric_attributes(tool_name: str, error_type: str | None) -> dict[str, str]:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool_name}
    if error_type is not None:
        attributes["error.type"] = error_type
    return attributes


# -- traces --------------------------------------------------------------------------------------


class Span(Protocol):
    """An open span of one tool call."""

    def end(self, error_type: str | None, message: str | None) -> None:
        """Close the span, marking it failed when ``error_type`` is set."""


class Tracer(Protocol):
    """Opens one span per tool call."""

    def start_span(self, tool_name: str, call_id: str, description: str) -> Span:
        """Open the span of a call of ``tool_name``; it becomes the current span."""


class OTelTracer:
    """An OpenTelemetry tracer, naming and describing spans by the GenAI conventions.

    ``tracer_provider`` defaults to the global one. The span is current while the
    tool runs, so spans the tool makes (HTTP client spans, say) are its children.
    """

    #: How many tools' span names and shared attributes are kept (then made afresh).
    _KEPT_TOOLS: Final = 4096

    def __init__(self, tracer_provider: Any = None) -> None:
        from opentelemetry import context, trace

        # Bound once: each attribute lookup on these modules cost the hot path.
        self._start = trace.get_tracer("agentkit", tracer_provider=tracer_provider).start_span
        self._internal = trace.SpanKind.INTERNAL
        self._in_context = trace.set_span_in_context
        self._current = context.get_current
        self._attach = context.attach
        self._detach = context.detach
        self._trace = trace
        # tool name -> (description, span name, the attributes every call shares)
        self._tools: dict[str, tuple[str, str, dict[str, str]]] = {}

    def start_span(self, tool_name: str, call_id: str, description: str) -> Span:
        known = self._tools.get(tool_name)
        if known is None or known[0] != description:
            known = self._remember(tool_name, description)
        _, span_name, shared = known
        # The one dict a call makes: the SDK copies it into the span's own attributes.
        attributes = {
            **shared,
            "gen_ai.tool.call.id": call_id,
            "agentkit.caller": current_caller().name,
        }
        # The current context read once, for the parent and for the child context.
        parent = self._current()
        span = self._start(span_name, context=parent, kind=self._internal, attributes=attributes)
        return _OTelSpan(self, span, self._attach(self._in_context(span, parent)))

    def _remember(self, tool_name: str, description: str) -> tuple[str, str, dict[str, str]]:
        shared = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool_name,
            "gen_ai.tool.type": "function",
        }
        if description:
            shared["gen_ai.tool.description"] = description
        if len(self._tools) >= self._KEPT_TOOLS:
            self._tools.clear()  # tools made on the fly must not grow this without end
        known = self._tools[tool_name] = (description, f"execute_tool {tool_name}", shared)
        return known


class _OTelSpan:
    __slots__ = ("_span", "_token", "_tracer")

    def __init__(self, tracer: OTelTracer, span: Any, token: Any) -> None:
        self._tracer = tracer
        self._span = span
        self._token = token

    def end(self, error_type: str | None, message: str | None) -> None:
        try:
            if error_type is not None:
                trace = self._tracer._trace
                self._span.set_attribute("error.type", error_type)
                self._span.set_status(trace.Status(trace.StatusCode.ERROR, message))
            self._span.end()
        finally:
            self._tracer._detach(self._token)
