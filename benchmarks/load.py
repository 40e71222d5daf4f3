"""Concurrent ``tools/call`` through the official SDK's ``ClientSession``, tallied per tool.

``drive`` runs one worker per unit of concurrency, each sending its calls one after
the other for a given time: over HTTP each worker has its own session (32 workers, 32
sessions: 32 agents), over stdio all share the one session a process has (32 requests
in flight on it). Each worker cycles through the tools it is given, starting at its
own index, so a mix is spread evenly over time.

Every call is sent with the text ``TEXT`` and judged by what comes back:

- answered: the answer expected (``fail``: an error result; every other tool: a
  result giving ``TEXT`` back);
- errors: another answer (a JSON-RPC error, an error result from a tool that should
  succeed, a wrong text);
- unanswered: nothing within ``CALL_SECONDS``, or the connection failed.

Latencies (seconds, send to answer) are kept for answered calls, per tool.
"""

from __future__ import annotations

import math
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

__all__ = ["CALL_SECONDS", "TEXT", "Tally", "ToolTally", "best_rate", "drive", "percentile"]

TEXT: Final = "hello, Zürich"
#: How long one call may take before it counts as unanswered.
CALL_SECONDS: Final = 30.0
#: The bound on the calls one worker sends in one ``drive``, whatever the time allows.
MAX_CALLS_PER_WORKER: Final = 10_000_000
#: Problems kept word for word (the first ones); the rest are only counted.
KEPT_PROBLEMS: Final = 10
_EXPECTED = {"text": TEXT}
#: The SDK's client raises these itself when it has no answer: not an answer.
_NO_ANSWER_CODES: Final = frozenset({-32000, -32001})  # connection closed, request timeout


@dataclass
class ToolTally:
    """One tool's calls: how many were sent, and what became of them."""

    sent: int = 0
    answered: int = 0
    errors: int = 0
    unanswered: int = 0
    #: Seconds from sending to the answer, of the calls answered as expected.
    latencies: array[float] = field(default_factory=lambda: array("d"))
    #: When each of them was sent, on ``time.monotonic()`` (the clock other processes
    #: share: ``benchmarks.pauses`` lines the calls up with a server's pauses).
    sent_at: array[float] = field(default_factory=lambda: array("d"))


@dataclass
class Tally:
    """Every tool's ``ToolTally``, and the first problems word for word."""

    tools: dict[str, ToolTally] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: ``time.perf_counter()`` when ``drive`` began, and when each call answered as
    #: expected was answered, in order.
    started: float = 0.0
    answered_at: array[float] = field(default_factory=lambda: array("d"))
    #: From the first call sent to the last answer.
    seconds: float = 0.0

    def tool(self, name: str) -> ToolTally:
        return self.tools.setdefault(name, ToolTally())

    def problem(self, tool: str, what: str) -> None:
        if len(self.problems) < KEPT_PROBLEMS:
            self.problems.append(f"{tool}: {what}")

    @property
    def sent(self) -> int:
        return sum(tool.sent for tool in self.tools.values())

    @property
    def answered(self) -> int:
        return sum(tool.answered for tool in self.tools.values())

    @property
    def errors(self) -> int:
        return sum(tool.errors for tool in self.tools.values())

    @property
    def unanswered(self) -> int:
        return sum(tool.unanswered for tool in self.tools.values())


def _judge(tool: str, result: Any) -> str | None:
    """What is wrong with ``result`` as ``tool``'s answer; ``None`` when it is right."""
    if tool == "fail":
        return None if result.is_error else f"expected an error result, got {result}"
    if result.is_error:
        return f"an error result: {result.content}"
    if result.structured_content != _EXPECTED:
        return f"expected {_EXPECTED}, got {result.structured_content}"
    return None


async def _call(session: Any, tool: str, tally: Tally) -> None:
    from mcp.shared.exceptions import MCPError

    counts = tally.tool(tool)
    counts.sent += 1
    sent_at = time.monotonic()
    started = time.perf_counter()
    problem: str | None = None
    answered = False
    # The SDK's own timeout ends the request; the outer bound only backs it up.
    with anyio.move_on_after(CALL_SECONDS + 5):
        try:
            result = await session.call_tool(tool, {"text": TEXT}, CALL_SECONDS)
        except MCPError as exc:
            answered = exc.code not in _NO_ANSWER_CODES
            problem = f"JSON-RPC error {exc.code}: {exc.message}"
        except Exception as exc:  # the transport failed: the call has no answer
            problem = f"{type(exc).__name__}: {exc}"
        else:
            answered = True
            problem = _judge(tool, result)
    elapsed = time.perf_counter() - started
    if not answered:
        counts.unanswered += 1
        tally.problem(tool, problem or f"no answer within {CALL_SECONDS:g} s")
    elif problem is not None:
        counts.errors += 1
        tally.problem(tool, problem)
    else:
        counts.answered += 1
        counts.latencies.append(elapsed)
        counts.sent_at.append(sent_at)
        tally.answered_at.append(started + elapsed)


async def drive(
    workers: Sequence[Any], tools: Sequence[str], seconds: float, tally: Tally | None = None
) -> Tally:
    """Send calls through ``workers`` (a session each; the same session may be given
    several times) for ``seconds``, each worker one call at a time, cycling through
    ``tools``; what became of them, counted into ``tally`` as they come (a new one if
    not given). Calls in flight at the end are waited for."""
    tally = tally if tally is not None else Tally()
    tally.started = time.perf_counter()
    deadline = time.monotonic() + seconds

    async def work(index: int, session: Any) -> None:
        for number in range(MAX_CALLS_PER_WORKER):
            if time.monotonic() >= deadline:
                return
            await _call(session, tools[(index + number) % len(tools)], tally)

    async with anyio.create_task_group() as group:
        for index, session in enumerate(workers):
            group.start_soon(work, index, session)
    tally.seconds = time.perf_counter() - tally.started
    return tally


def best_rate(tally: Tally, block: float) -> float:
    """Calls answered as expected per second in the best of the consecutive ``block``-second
    spans of ``tally``'s drive: on a shared machine, the rate while no neighbour took
    the cores (as ``bench_serve`` keeps its best block of calls)."""
    blocks = max(int(tally.seconds / block), 1)
    counts = [0] * blocks
    for at in tally.answered_at:
        index = int((at - tally.started) / block)
        if index < blocks:
            counts[index] += 1
    return max(counts) / block


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (``fraction`` 0.5: the median; 0.99: p99)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = min(max(math.ceil(fraction * len(ordered)), 1), len(ordered))
    return ordered[rank - 1]
