"""Events, metrics and traces of tool calls.

- **Events.** The executor sends ``tool.execution.started``, ``.completed`` and
  ``.failed`` ``ToolEvent``s to its listeners (any callable taking one event). A
  listener that raises is logged and skipped; it never breaks a call.
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
import logging
import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, final

from agentkit.callers import current_caller
from agentkit.toolresult import describe_error

if TYPE_CHECKING:
    from agentkit.content import Block

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

logger = logging.getLogger("agentkit")

EVENT_STARTED: Final = "tool.execution.started"
EVENT_COMPLETED: Final = "tool.execution.completed"
EVENT_FAILED: Final = "tool.execution.failed"

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


_FIELDS: Final = (
    "name",
    "tool_name",
    "tool_version",
    "call_id",
    "timestamp",
    "duration",
    "status",
    "error_type",
    "error",
    "inputs",
    "output",
    "content",
    "caller",
    "cached",
)


@final
class ToolEvent:
    """One moment of a tool call, as listeners receive it (immutable).

    ``inputs`` are the caller's on ``started`` and the validated ones (defaults
    applied) afterwards; ``output`` is set on ``completed``, and ``content``
    (the call's ``agentkit.content`` blocks, if any) with it; ``error`` (the
    failure as data: type, message and the fields its type carries) on
    ``failed``. ``caller`` is the name of who the call was made for
    (``agentkit.callers``: the current caller when the event is made, unless given).
    Messages and output have credential values redacted; events never carry
    credentials.

    Built once per moment and shared by every listener. ``error`` may be given
    as the exception itself: it is then described (``describe_error``) when
    first read, so a call whose listeners never look pays nothing for it.
    """

    # Private slots behind read-only properties: plain stores are the cheapest way
    # to build an object (a frozen dataclass's object.__setattr__ per field cost
    # ~2 us an event), and the properties keep every field read-only.
    __slots__ = (
        "_cached",
        "_call_id",
        "_caller",
        "_content",
        "_duration",
        "_error",
        "_error_type",
        "_inputs",
        "_name",
        "_output",
        "_status",
        "_timestamp",
        "_tool_name",
        "_tool_version",
    )
    __match_args__ = _FIELDS

    def __init__(
        self,
        name: str,
        tool_name: str,
        tool_version: str,
        call_id: str,
        timestamp: float,
        duration: float | None = None,
        status: str | None = None,
        error_type: str | None = None,
        error: Mapping[str, Any] | BaseException | None = None,
        inputs: Mapping[str, Any] | None = None,
        output: Mapping[str, Any] | None = None,
        content: tuple[Block, ...] = (),
        caller: str | None = None,
        cached: bool = False,
    ) -> None:
        self._cached = cached
        self._name = name
        self._tool_name = tool_name
        self._tool_version = tool_version
        self._call_id = call_id
        self._timestamp = timestamp
        self._duration = duration
        self._status = status
        self._error_type = error_type
        self._error = error
        self._inputs = inputs
        self._output = output
        self._content = content
        self._caller = current_caller().name if caller is None else caller

    @property
    def name(self) -> str:
        """``tool.execution.started``, ``.completed`` or ``.failed``."""
        return self._name

    @property
    def tool_name(self) -> str:
        return self._tool_name

    @property
    def tool_version(self) -> str:
        return self._tool_version

    @property
    def call_id(self) -> str:
        return self._call_id

    @property
    def timestamp(self) -> float:
        """When it happened, as ``time.time()``."""
        return self._timestamp

    @property
    def duration(self) -> float | None:
        """The call's wall-clock seconds (``completed`` and ``failed``)."""
        return self._duration

    @property
    def status(self) -> str | None:
        return self._status

    @property
    def error_type(self) -> str | None:
        return self._error_type

    @property
    def error(self) -> Mapping[str, Any] | None:
        """The failure as data: type, message and the fields its type carries."""
        error = self._error
        if isinstance(error, BaseException):
            # Idempotent, so two threads reading at once store equal values.
            error = self._error = describe_error(error)
        return error

    @property
    def inputs(self) -> Mapping[str, Any] | None:
        return self._inputs

    @property
    def output(self) -> Mapping[str, Any] | None:
        return self._output

    @property
    def content(self) -> tuple[Block, ...]:
        """The content blocks of ``completed`` (see ``agentkit.content``); their repr
        names each media block's type and size, never its bytes."""
        return self._content

    @property
    def caller(self) -> str:
        """Who the call was made for: a caller's name, ``anonymous`` when not known."""
        return self._caller

    @property
    def cached(self) -> bool:
        """``completed`` from a kept answer (``cache:``): the tool did not run."""
        return self._cached

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field) for field in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not ToolEvent:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __reduce__(self) -> tuple[type[ToolEvent], tuple[Any, ...]]:
        # Pickled and copied as its fields, the error described: an event sent
        # to another process never needs the exception itself to pickle.
        return ToolEvent, self._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{field}={getattr(self, field)!r}" for field in _FIELDS)
        return f"ToolEvent({shown})"

    def to_dict(self) -> dict[str, Any]:
        error = self.error
        return {
            "event": self._name,
            "tool": self._tool_name,
            "version": self._tool_version,
            "call_id": self._call_id,
            "timestamp": self._timestamp,
            "duration": self._duration,
            "status": self._status,
            "error_type": self._error_type,
            "error": dict(error) if error is not None else None,
            "caller": self._caller,
            **({"cached": True} if self._cached else {}),
        }


Listener = Callable[[ToolEvent], object]


def emit(listeners: Sequence[Listener], event: ToolEvent) -> None:
    """Send ``event`` to each listener; one that raises is logged and the rest still run."""
    for listener in listeners:
        try:
            listener(event)
        except Exception as exc:
            logger.warning(
                "agentkit: listener %r failed on %s for tool '%s': %s: %s",
                listener,
                event.name,
                event.tool_name,
                type(exc).__name__,
                exc,
            )


# -- metrics -------------------------------------------------------------------------------------


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
