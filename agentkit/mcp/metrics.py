"""Metrics for operators (``agentkit serve --http --metrics``): calls, failures, limited
and cached calls and their durations per tool, at ``GET /metrics`` in Prometheus' text
format, with ``prometheus-client`` (the ``serve`` extra).

Each server has a registry of its own (not the process's global one), fed by the same
records as the audit trail (``agentkit.audit``). The labels are bounded: the tool (one
of those served; a name no tool has counts as ``UNKNOWN_TOOL``), the outcome, the
failure kind. There is no caller label: a proxy's header may name any number of
callers, and a series per caller would grow without end; the audit trail has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import Response

from agentkit.observability import DEFAULT_BUCKETS

__all__ = ["UNKNOWN_TOOL", "CallMetrics"]

#: The tool label of a call of a tool the server does not have.
UNKNOWN_TOOL: Final = "(unknown)"


@final
class CallMetrics:
    """The counters and the histogram of one server's calls; ``observe`` takes a call's
    audit record, ``endpoint`` answers ``GET /metrics``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._calls = Counter(
            "agentkit_tool_calls",
            "Tool calls answered, by tool and outcome (success, failure, limited, declined).",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self._failures = Counter(
            "agentkit_tool_failures",
            "Failed tool calls, by tool and kind (validation, execution, timeout, ...).",
            ["tool", "kind"],
            registry=self.registry,
        )
        self._cached = Counter(
            "agentkit_tool_cache_hits",
            "Tool calls answered from a cache, by tool.",
            ["tool"],
            registry=self.registry,
        )
        self._durations = Histogram(
            "agentkit_tool_call_duration_seconds",
            "Seconds from a tool call's arrival to its answer, by tool.",
            ["tool"],
            buckets=DEFAULT_BUCKETS,
            registry=self.registry,
        )

    def observe(self, record: Mapping[str, Any]) -> None:
        tool = UNKNOWN_TOOL if record.get("failure") == "unknown_tool" else str(record["tool"])
        self._calls.labels(tool, str(record["outcome"])).inc()
        if record.get("failure"):
            self._failures.labels(tool, str(record["failure"])).inc()
        if record.get("cache_hit"):
            self._cached.labels(tool).inc()
        self._durations.labels(tool).observe(float(record["duration"]))

    async def endpoint(self, request: Request) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)
