"""`make soak`: `agentkit serve --http` under steady load for minutes, then FastMCP the same.

    python -m benchmarks.soak [--minutes 8] [--agentkit-only] [--trace-gc]

Each server serves four tools (``benchmarks/serve_peer.py``): ``echo``; ``sleep_50ms``,
async, awaiting 50 ms; ``fail``, which always raises; and ``fetch``, an HTTP tool
whose upstream (``benchmarks/upstream.py``, its own process) answers after 20 ms.
agentkit is started as a user starts it, ``agentkit serve --tools FOLDER --http
127.0.0.1:0`` with the default options (and ``--python-path`` naming the checkout, where
the Python tools live); FastMCP is ``serve_peer.py http``. The client
is the official SDK's, in this process: ``CONCURRENCY`` sessions over streamable HTTP
(each with its own HTTP client, as that many agents), each sending one call after
another for ``--minutes``, cycling through the four tools.

Printed per server: the calls sent, answered as expected, answered otherwise (errors)
and unanswered (no answer within ``CALL_SECONDS``, or the connection failed); calls/s
over the run and in its first and last minute; each tool's p50 and p99 latency; the
server's resident memory (VmRSS of /proc/PID/status, sampled every ``SAMPLE_SECONDS``)
once the first minute is over and at the end, and the growth between; its CPU time
per call (utime + stime of /proc/PID/stat over the run, divided by the calls); and how
many connections ``fetch``'s requests took (the upstream counts them: reused
connections are few).

Why a tool's tail is long: the client notes its own garbage collections, and with
``--trace-gc`` agentkit is started through ``benchmarks.gc_trace``, which notes the
server's; each tool's line then says which share of its slowest 1% of calls, and of all
its calls, overlapped a collection of 5 ms or more on either side. The client freezes
its heap once its sessions are open (``gc.freeze``), as the server does once it is
ready (``agentkit.mcp.heap``), so that its own full collections do not stand in the
latencies it measures.

The targets, for each server: no call unanswered and none answered otherwise; each
tool's p99 at most ``P99_LIMIT`` times its p50; resident memory growing by at most
``RSS_GROWTH_LIMIT`` between the end of the first minute and the end (a run shorter
than two minutes compares with its middle instead). Exits 1 when a target is missed,
naming each miss. Everything listens on 127.0.0.1 only, and every wait is bounded.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import anyio

from benchmarks import upstream
from benchmarks.load import CALL_SECONDS, Tally, ToolTally, drive, percentile
from benchmarks.pauses import STALL_SECONDS, Pause, Pauses, read_log, waited_share
from benchmarks.serve_peer import write_tools
from benchmarks.serving import (
    SECONDS,
    agentkit_command,
    cpu_seconds,
    fastmcp_command,
    http_sessions,
    machine_busy_seconds,
    rss_bytes,
    start_http,
)
from benchmarks.timing import verdict

CONCURRENCY: Final = 32
MINUTES: Final = 8.0
TOOLS: Final = ("echo", "sleep_50ms", "fail", "fetch")
SAMPLE_SECONDS: Final = 5.0
#: How long the server may take to settle before its memory should stay flat.
SETTLE_SECONDS: Final = 60.0
P99_LIMIT: Final = 3.0
#: Growth of resident memory allowed from the end of the first minute to the end.
RSS_GROWTH_LIMIT: Final = 0.10
_MIB: Final = 1024 * 1024


@dataclass(frozen=True)
class Sample:
    """The server and the calls, ``seconds`` into the run."""

    seconds: float
    rss: int
    cpu: float
    #: Calls answered so far, as expected or otherwise.
    answers: int


@dataclass
class Run:
    """One server's run: the calls' tally and the samples taken meanwhile."""

    server: str
    tally: Tally = field(default_factory=Tally)
    samples: list[Sample] = field(default_factory=list)
    #: How the server ended, when it ended before it was stopped (exit status).
    exited: int | None = None
    #: The requests ``fetch`` made of the upstream, and the connections they took.
    upstream_requests: int = 0
    upstream_connections: int = 0
    #: CPU seconds spent during the load by this process (the client), the upstream, and
    #: the whole machine.
    client_cpu: float = 0.0
    upstream_cpu: float = 0.0
    machine_busy: float = 0.0
    #: The client's collections, and the server's when traced (``--trace-gc``).
    client_gc: Pauses = field(default_factory=Pauses)
    server_gc: list[Pause] | None = None


def _take_sample(pid: int, run: Run, started: float) -> Sample | None:
    """Sample the server now (``None`` if it is gone: the calls will say so)."""
    try:
        rss, cpu = rss_bytes(pid), cpu_seconds(pid)
    except (OSError, RuntimeError):
        return None
    answers = run.tally.answered + run.tally.errors
    sample = Sample(time.perf_counter() - started, rss, cpu, answers)
    run.samples.append(sample)
    return sample


async def _sample(pid: int, run: Run, started: float, seconds: float) -> None:
    """Sample the server every ``SAMPLE_SECONDS`` until ``seconds`` have passed; print
    where the run is once a minute."""
    minutes_shown = 0
    for _ in range(int(seconds / SAMPLE_SECONDS) + 2):
        sample = _take_sample(pid, run, started)
        if sample is None or sample.seconds >= seconds:
            return
        if sample.seconds >= (minutes_shown + 1) * 60:
            minutes_shown = int(sample.seconds // 60)
            tally = run.tally
            print(
                f"  {run.server}, {sample.seconds:4.0f} s: {tally.sent} sent, "
                f"{tally.unanswered} unanswered, {tally.errors} errors; "
                f"RSS {sample.rss / _MIB:.1f} MiB",
                flush=True,
            )
        await anyio.sleep(min(SAMPLE_SECONDS, seconds - sample.seconds))


def _usage(upstream_pid: int) -> tuple[float, float, float]:
    """CPU seconds so far: this process's, the upstream's, the machine's."""
    return time.process_time(), cpu_seconds(upstream_pid), machine_busy_seconds()


async def _load(url: str, pid: int, run: Run, seconds: float, upstream_pid: int) -> None:
    async with http_sessions(url, CONCURRENCY) as sessions:
        started = time.perf_counter()
        before = _usage(upstream_pid)
        # The client's sessions are made: its full collections walk only what the calls
        # make, as the server's do (agentkit.mcp.heap), so that a pause of the client's
        # own does not stand in the latencies it measures.
        gc.freeze()
        gc.callbacks.append(run.client_gc.observe)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_sample, pid, run, started, seconds)
                await drive(sessions, TOOLS, seconds, run.tally)
        finally:
            gc.callbacks.remove(run.client_gc.observe)
            gc.unfreeze()
        _take_sample(pid, run, started)  # the last, after the last answer
        after = _usage(upstream_pid)
    run.client_cpu, run.upstream_cpu, run.machine_busy = (
        end - start for start, end in zip(before, after, strict=True)
    )


def soak(
    server: str,
    command: list[str],
    seconds: float,
    upstream_at: upstream.Running,
    gc_log: Path | None = None,
) -> Run:
    """Start ``command`` and load it for ``seconds``: what happened. ``gc_log``: where
    the server writes its collections, when ``command`` traces them."""
    run = Run(server)
    with start_http(command) as served:

        async def main() -> None:
            with anyio.fail_after(seconds + CALL_SECONDS + 2 * SECONDS):
                await _load(served.url, served.pid, run, seconds, upstream_at.pid)

        before = upstream.stats(upstream_at.url)
        anyio.run(main)
        after = upstream.stats(upstream_at.url)
        run.exited = served.process.poll()
    run.upstream_requests = after.requests - before.requests
    run.upstream_connections = after.connections - before.connections
    if gc_log is not None:
        run.server_gc = read_log(gc_log)
    return run


# -- the report ------------------------------------------------------------------------------


def _at(samples: list[Sample], seconds: float) -> Sample:
    """The first sample taken at or after ``seconds`` (the last one if none is)."""
    return next((sample for sample in samples if sample.seconds >= seconds), samples[-1])


def _rate(start: Sample, end: Sample) -> float:
    return (end.answers - start.answers) / max(end.seconds - start.seconds, 1e-9)


def report(run: Run, seconds: float) -> tuple[list[str], list[str]]:
    """The lines to print for ``run``, and the targets it missed."""
    tally, samples = run.tally, run.samples
    missed = []
    if tally.unanswered or tally.errors:
        missed.append(
            f"{run.server}: {tally.unanswered} calls unanswered, {tally.errors} answered "
            "otherwise (expected 0 and 0)"
        )
    if run.exited is not None:
        missed.append(f"{run.server}: the server exited during the run (status {run.exited})")
    if len(samples) < 2:
        missed.append(f"{run.server}: the server was gone before it could be sampled twice")
        gone = f"{run.server}: no figures, the server was gone"
        return [gone, *(f"    {problem}" for problem in tally.problems)], missed
    first, last = samples[0], samples[-1]
    answers = tally.answered + tally.errors
    lines = [
        f"{run.server}: {CONCURRENCY} sessions for {last.seconds:.0f} s, tools {', '.join(TOOLS)}",
        f"  calls: {tally.sent} sent, {tally.answered} answered as expected, "
        f"{tally.errors} answered otherwise, {tally.unanswered} unanswered",
        *(f"    {problem}" for problem in tally.problems),
        f"  calls/s: {answers / tally.seconds:.1f} over the run; "
        f"first minute {_rate(first, _at(samples, 60.0)):.1f}, "
        f"last minute {_rate(_at(samples, last.seconds - 60.0), last):.1f}",
    ]
    for name in TOOLS:
        line, miss = _latencies(run.server, name, tally.tool(name).latencies)
        lines += [line, *_waited(run, tally.tool(name))]
        missed.extend(miss)
    line, miss = _memory(run.server, samples, seconds)
    lines.append(line)
    missed.extend(miss)
    cpu = last.cpu - first.cpu
    lines += [
        f"  server CPU: {cpu:.1f} s, {cpu / max(answers, 1) * 1e3:.2f} ms per call answered",
        _cores(run, cpu, last.seconds - first.seconds),
        *([_server_pauses(run.server_gc, _load_window(tally))] if run.server_gc else []),
        f"  upstream: {run.upstream_requests} requests over {run.upstream_connections} connections",
    ]
    return lines, missed


def _cores(run: Run, server_cpu: float, seconds: float) -> str:
    """Where the machine's cores went during the load, on average."""
    others = run.machine_busy - server_cpu - run.client_cpu - run.upstream_cpu
    pauses = run.client_gc
    return (
        f"  cores busy on average: server {server_cpu / seconds:.2f}, client "
        f"{run.client_cpu / seconds:.2f} ({pauses.full} full collections, longest "
        f"{pauses.longest_full * 1e3:.0f} ms), upstream {run.upstream_cpu / seconds:.2f}, "
        f"other processes {others / seconds:.2f}; the machine "
        f"{run.machine_busy / seconds:.2f} of {os.cpu_count()}"
    )


def _waited(run: Run, tool: ToolTally) -> list[str]:
    """Which share of ``tool``'s slowest 1% of calls, and of all its calls, overlapped a
    collection of the client's, and of the server's when traced, of at least
    ``STALL_SECONDS``: whether its tail is made of pauses."""
    if not tool.latencies:
        return []
    timed = list(zip(tool.sent_at, tool.latencies, strict=True))
    calls = [(at, at + took) for at, took in timed]
    p99 = percentile(tool.latencies, 0.99)
    slowest = [(at, at + took) for at, took in timed if took >= p99]
    sides = {"client": run.client_gc.noted}
    if run.server_gc is not None:
        sides["server"] = run.server_gc
    shares = ", ".join(
        f"{side}'s {waited_share(slowest, noted):.0%} (all calls {waited_share(calls, noted):.0%})"
        for side, noted in sides.items()
    )
    return [
        f"    slowest 1% ({len(slowest)} calls) during a collection of {STALL_SECONDS * 1e3:g} ms "
        f"or more: {shares}"
    ]


def _load_window(tally: Tally) -> tuple[float, float]:
    """From the first call sent to the last answer, on ``time.monotonic()``."""
    tools = [tool for tool in tally.tools.values() if tool.sent_at]
    if not tools:
        return 0.0, 0.0
    first = min(min(tool.sent_at) for tool in tools)  # kept as calls end, not as sent
    last = max(
        at + took for tool in tools for at, took in zip(tool.sent_at, tool.latencies, strict=True)
    )
    return first, last


def _server_pauses(pauses: list[Pause], window: tuple[float, float]) -> str:
    """The server's full collections while it was loaded (not those of its start and
    its end): how many, and how long they took."""
    begin, end = window
    during = [p for p in pauses if p.generation == 2 and begin <= p.start and p.end <= end]
    if not during:
        return "  server's full collections under load: none"
    full = sorted(pause.seconds for pause in during)
    cpu = sorted(pause.cpu for pause in during)
    longest = max(during, key=lambda pause: pause.seconds)
    return (
        f"  server's full collections under load: {len(full)}, "
        f"median {percentile(full, 0.5) * 1e3:.1f} ms (CPU {percentile(cpu, 0.5) * 1e3:.1f}), "
        f"longest {longest.seconds * 1e3:.1f} ms (its CPU {longest.cpu * 1e3:.1f})"
    )


def _latencies(server: str, tool: str, latencies: Sequence[float]) -> tuple[str, list[str]]:
    """The line on ``tool``'s p50 and p99, and the target missed if it is."""
    if not latencies:
        return f"  {tool:<11} no call answered as expected", [f"{server}: {tool} never answered"]
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    ratio = p99 / p50
    held = ratio <= P99_LIMIT
    line = (
        f"  {tool:<11} {len(latencies):7} calls  p50 {p50 * 1e3:7.1f} ms  "
        f"p99 {p99 * 1e3:7.1f} ms  p99/p50 {ratio:4.2f} (<= {P99_LIMIT:g}) -> {verdict(held)}"
    )
    if held:
        return line, []
    return line, [f"{server}: {tool} p99 is {ratio:.2f}x its p50 (at most {P99_LIMIT:g}x)"]


def _memory(server: str, samples: list[Sample], seconds: float) -> tuple[str, list[str]]:
    """The line on the server's resident memory, and the target missed if it is."""
    first, last = samples[0], samples[-1]
    settled = _at(samples, min(SETTLE_SECONDS, seconds / 2))
    growth = (last.rss - settled.rss) / settled.rss
    peak = max(sample.rss for sample in samples if sample.seconds >= settled.seconds)
    held = growth <= RSS_GROWTH_LIMIT
    line = (
        f"  RSS: {first.rss / _MIB:.1f} MiB at the start, {settled.rss / _MIB:.1f} MiB at "
        f"{settled.seconds:.0f} s, {last.rss / _MIB:.1f} MiB at the end (peak since "
        f"{peak / _MIB:.1f}); growth {(last.rss - settled.rss) / _MIB:+.1f} MiB "
        f"({growth:+.1%}, <= {RSS_GROWTH_LIMIT:+.0%}) -> {verdict(held)}"
    )
    if held:
        return line, []
    return line, [
        f"{server}: resident memory grew {growth:+.1%} after {settled.seconds:.0f} s "
        f"(at most {RSS_GROWTH_LIMIT:+.0%})"
    ]


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.soak",
        description="agentkit serve --http, then FastMCP, under steady load for minutes.",
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=MINUTES,
        help=f"how long each server is loaded ({MINUTES:g})",
    )
    parser.add_argument("--agentkit-only", action="store_true", help="leave FastMCP out")
    parser.add_argument(
        "--trace-gc",
        action="store_true",
        help="start agentkit through benchmarks.gc_trace, which notes its garbage "
        "collections, and say which share of each tool's slowest calls waited on one",
    )
    args = parser.parse_args(argv)
    if not args.agentkit_only and importlib.util.find_spec("fastmcp") is None:
        parser.error(
            "FastMCP is not installed: pip install -e '.[bench]' (make soak does), "
            "or leave it out with --agentkit-only"
        )
    if not 0 < args.minutes <= 24 * 60:
        parser.error(f"--minutes takes a number more than 0 and at most 1440, got {args.minutes:g}")
    return args


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    seconds = args.minutes * 60
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as folder, upstream.running() as upstream_at:
        write_tools(Path(folder), upstream_at.url)
        gc_log = Path(folder, "agentkit-gc.log") if args.trace_gc else None
        served = ("--tools", folder, "--http", "127.0.0.1:0")
        servers = {"agentkit": agentkit_command(*served, gc_log=gc_log)}
        if not args.agentkit_only:
            servers["FastMCP"] = fastmcp_command("http", "--upstream", upstream_at.url)
        print(
            f"soak: {', '.join(servers)}, {CONCURRENCY} sessions, {args.minutes:g} min each; "
            f"upstream answering after {upstream.DELAY * 1e3:.0f} ms",
            flush=True,
        )
        for server, command in servers.items():
            traced = gc_log if server == "agentkit" else None
            run = soak(server, command, seconds, upstream_at, traced)
            lines, server_missed = report(run, seconds)
            print("\n".join(lines), flush=True)
            missed.extend(server_missed)
    for miss in missed:
        print(f"missed: {miss}")
    if not missed:
        print("soak: every target met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
