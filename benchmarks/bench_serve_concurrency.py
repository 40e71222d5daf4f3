"""Serving MCP under concurrency: agentkit against FastMCP, same client, same tools, one run.

Both servers serve the same tools (``benchmarks/serve_peer.py``): ``echo``, and
``fetch``, an HTTP tool (agentkit: a YAML definition with an HTTP backend; FastMCP: an
async function sending the same request with httpx2) whose upstream is a loopback
server, started here as its own process, that answers after 20 ms
(``benchmarks/upstream.py``). The client is the official SDK's ``ClientSession`` for
both, in this process:

- over streamable HTTP (``agentkit serve --http``, the default options, against
  FastMCP's ``transport="http"``), concurrency 1 is one session sending one call after
  another, concurrency 32 is 32 sessions (each with its own HTTP client, as 32 agents)
  each doing so;
- over stdio, a server process has one session: concurrency 32 is 32 calls in flight
  on it at all times.

Each case sends calls for ``SECONDS_PER_CASE`` after ``WARMUP_SECONDS`` on the same
sessions. A round starts each server afresh once per transport and runs its four
cases; the rounds are interleaved (a slow spell hits both servers alike). On a shared
machine a neighbour taking a core stretches a case at random, so each case's calls/s
is its best ``BLOCK_SECONDS`` span (as ``bench_serve`` keeps its best block of calls),
and each figure is the median of the rounds, each ratio with its range. The server's
CPU time per call is taken over the whole case, and latencies over every call of
every round. What ``fetch`` adds over the upstream's 20 ms is its latency less 20 ms,
at p50 and p99.

The client runs on the same machine, in one process: its own CPU time per call is
printed beside the server's (from /proc/PID/stat). It is about as much as a server's,
so where the client takes a whole core, the calls/s of both servers are the client's
and their ratio tends towards 1; the servers' CPU time per call still compares them.
At concurrency 1 ``fetch`` cannot pass 50 calls/s on either server (the upstream's
20 ms): its ratio is printed, judged by no target; its latency added is the figure.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from benchmarks import upstream
from benchmarks.load import Tally, best_rate, drive, percentile
from benchmarks.serve_peer import write_tools
from benchmarks.serving import (
    SECONDS,
    agentkit_command,
    cpu_seconds,
    fastmcp_command,
    http_sessions,
    peer_missing,
    start_http,
    stdio_session,
)
from benchmarks.timing import median, ratio_line, ratios, span

ROUNDS = 3
SECONDS_PER_CASE = 1.5
BLOCK_SECONDS = 0.5
WARMUP_SECONDS = 0.5
CONCURRENCY = (1, 32)
TOOLS = ("echo", "fetch")
SERVERS = ("agentkit", "FastMCP")
TRANSPORTS = ("http", "stdio")
TARGET = 1.5


@dataclass
class Case:
    """One transport, server, tool and concurrency: its figures over the rounds."""

    calls_per_second: list[float] = field(default_factory=list)
    cpu_per_call: list[float] = field(default_factory=list)
    client_cpu_per_call: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)


Cases = dict[tuple[str, str, str, int], Case]


def _commands(folder: Path, upstream_url: str) -> dict[tuple[str, str], list[str]]:
    tools = ("--tools", str(folder))
    peer = ("--upstream", upstream_url)
    return {
        ("http", "agentkit"): agentkit_command(*tools, "--http", "127.0.0.1:0"),
        ("http", "FastMCP"): fastmcp_command("http", *peer),
        ("stdio", "agentkit"): agentkit_command(*tools),
        ("stdio", "FastMCP"): fastmcp_command("stdio", *peer),
    }


async def _measure(
    sessions: list[Any], pid: int, transport: str, server: str, cases: Cases
) -> None:
    """The four cases of one server, on sessions opened once (one for stdio)."""
    for tool in TOOLS:
        for concurrency in CONCURRENCY:
            workers = sessions[:concurrency] if transport == "http" else sessions * concurrency
            await drive(workers, [tool], WARMUP_SECONDS)
            cpu_before, client_before = cpu_seconds(pid), time.process_time()
            tally = await drive(workers, [tool], SECONDS_PER_CASE)
            cpu = cpu_seconds(pid) - cpu_before
            client_cpu = time.process_time() - client_before
            _check(tally, f"{transport}: {server}, {tool} at concurrency {concurrency}")
            figures = tally.tool(tool)
            case = cases[transport, server, tool, concurrency]
            case.calls_per_second.append(best_rate(tally, BLOCK_SECONDS))
            case.cpu_per_call.append(cpu / figures.answered)
            case.client_cpu_per_call.append(client_cpu / figures.answered)
            case.latencies.extend(figures.latencies)


def _check(tally: Tally, what: str) -> None:
    if tally.errors or tally.unanswered or not tally.answered:
        raise RuntimeError(
            f"{what}: {tally.answered} calls answered, {tally.errors} errors, "
            f"{tally.unanswered} unanswered: {tally.problems}"
        )


async def _serve(transport: str, server: str, command: list[str], cases: Cases) -> None:
    """Start ``command`` and measure its four cases."""
    with anyio.fail_after(SECONDS * 4):
        if transport == "stdio":
            async with stdio_session(command) as (session, pid):
                await _measure([session], pid, transport, server, cases)
            return
        with start_http(command) as served:
            async with http_sessions(served.url, max(CONCURRENCY)) as sessions:
                await _measure(sessions, served.pid, transport, server, cases)


def _round(commands: dict[tuple[str, str], list[str]], cases: Cases) -> None:
    for transport in TRANSPORTS:
        for server in SERVERS:
            anyio.run(_serve, transport, server, commands[transport, server], cases)


def run(rounds: int = ROUNDS) -> list[str]:
    if importlib.util.find_spec("fastmcp") is None:
        return peer_missing("serve under concurrency")
    cases: Cases = {
        (transport, server, tool, concurrency): Case()
        for transport in TRANSPORTS
        for server in SERVERS
        for tool in TOOLS
        for concurrency in CONCURRENCY
    }
    with tempfile.TemporaryDirectory() as folder, upstream.running() as upstream_server:
        write_tools(Path(folder), upstream_server.url)
        commands = _commands(Path(folder), upstream_server.url)
        for _ in range(rounds):
            _round(commands, cases)
    return _report(cases, rounds)


def _report(cases: Cases, rounds: int) -> list[str]:
    lines = [
        f"serve under concurrency: the SDK's client, echo and fetch (an HTTP tool, upstream "
        f"answering after {upstream.DELAY * 1e3:.0f} ms); HTTP: N sessions, stdio: N calls in "
        f"flight on one session; the best {BLOCK_SECONDS:g} s of {SECONDS_PER_CASE:g} s a case "
        f"(medians of {rounds} interleaved rounds, range; the server's CPU time from /proc, "
        "the client's its own)"
    ]
    for transport in TRANSPORTS:
        for tool in TOOLS:
            for concurrency in CONCURRENCY:
                for server in SERVERS:
                    case = cases[transport, server, tool, concurrency]
                    label = f"{transport} {tool} x{concurrency}: {server}"
                    lines.append(
                        f"  {label:<28} {median(case.calls_per_second):7.1f} calls/s "
                        f"({span(case.calls_per_second)})  CPU ms/call: server "
                        f"{median(case.cpu_per_call) * 1e3:5.2f}, client "
                        f"{median(case.client_cpu_per_call) * 1e3:5.2f}"
                    )
    lines.append(f"  fetch: latency added over the upstream's {upstream.DELAY * 1e3:.0f} ms")
    for transport in TRANSPORTS:
        for concurrency in CONCURRENCY:
            for server in SERVERS:
                latencies = cases[transport, server, "fetch", concurrency].latencies
                added = [(percentile(latencies, q) - upstream.DELAY) * 1e3 for q in (0.5, 0.99)]
                label = f"{transport} x{concurrency}: {server}"
                lines.append(
                    f"    {label:<24} p50 +{added[0]:6.1f} ms  p99 +{added[1]:6.1f} ms  "
                    f"({len(latencies)} calls)"
                )
    for transport in TRANSPORTS:
        for tool in TOOLS:
            for concurrency in CONCURRENCY:
                per_round = ratios(
                    cases[transport, "agentkit", tool, concurrency].calls_per_second,
                    cases[transport, "FastMCP", tool, concurrency].calls_per_second,
                )
                what = f"{transport} {tool} x{concurrency} calls/s agentkit vs FastMCP"
                if tool == "fetch" and concurrency == 1:
                    lines.append(
                        f"  {what}: {median(per_round):.2f}x (rounds {span(per_round, '.2f')}; "
                        "no target: the upstream's 20 ms bounds both)"
                    )
                    continue
                lines.append(ratio_line(what, per_round, TARGET))
    return lines


if __name__ == "__main__":  # python -m benchmarks.bench_serve_concurrency [ROUNDS]
    print("\n".join(run(int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS)))
