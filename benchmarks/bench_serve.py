"""Serving MCP: agentkit against FastMCP, same client, same tool, one run (issue #10).

- calls/s over streamable HTTP (``agentkit serve --http`` against FastMCP's
  ``transport="http"``) and over stdio: sequential ``tools/call`` of one echo tool
  (``benchmarks.serve_peer.echo``, the same function on both sides);
- start to the first ``tools/list`` answer with 1,000 generated YAML definitions in a
  temporary folder (FastMCP serves one function of the same name and inputs for each),
  timed twice: through the SDK's client (what an agent using the SDK waits), and over
  the bare wire (JSON lines on the pipe, the listing only parsed by ``json``), which is
  the server's own start without the client's validation of a 500 KB listing (0.1-0.3 s
  of pydantic on this machine, the same for both servers). The target compares the
  bare wire figure with the floor: one process that imports the SDK's server modules
  and runs ``load_tools`` on the same folder, started and timed to its exit the same
  way. What the server adds on top of the floor is what it owns.

The client is the official SDK's (``ClientSession`` over its stdio and streamable HTTP
clients) for both servers. Every server is a fresh subprocess on 127.0.0.1 or a pipe.

A sequential call is a ping-pong between two processes, so on a shared machine a
neighbour taking a core stretches it at random: each round times its calls in blocks
of ``BLOCK`` and keeps the best block (as ``benchmarks/timing.py`` keeps the best
round), every case runs once a round, interleaved, so a slow spell hits both sides
alike, and the figures are the medians of the rounds, each target's ratio with its
range over the rounds. Every wait is bounded (``SECONDS``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from benchmarks.bench_declarative import write_definitions
from benchmarks.serve_peer import ECHO_DEFINITION
from benchmarks.serving import (
    ROOT,
    SECONDS,
    agentkit_command,
    fastmcp_command,
    over_http,
    over_stdio,
    peer_missing,
    start_http,
)
from benchmarks.timing import median, ratio_line, ratios, span

ROUNDS = 5
CALLS = 400
#: Calls are timed in blocks; the best block is the figure (see the module's docstring).
BLOCK = 50
WARMUP = 50
STARTUP_TOOLS = 1_000
_ARGUMENTS = {"text": "hello, Zürich"}


async def _best_rate(send: Callable[[], Awaitable[object]]) -> float:
    """Sends per second: the best block of ``BLOCK`` sequential sends out of ``CALLS``."""
    best = float("inf")
    for _ in range(CALLS // BLOCK):
        started = time.perf_counter()
        for _ in range(BLOCK):
            await send()
        best = min(best, time.perf_counter() - started)
    return BLOCK / best


async def _rates(session: Any) -> tuple[float, float]:
    """Sequential ``tools/call`` of echo per second, then pings per second (the floor)."""

    async def call() -> None:
        result = await session.call_tool("echo", _ARGUMENTS)
        assert not result.is_error, result
        assert result.structured_content == _ARGUMENTS, result

    for _ in range(WARMUP):
        await call()
    return await _best_rate(call), await _best_rate(session.send_ping)


def _stdio_rates(command: list[str]) -> tuple[float, float]:
    async def main() -> tuple[float, float]:
        with anyio.fail_after(SECONDS):
            return await over_stdio(command, _rates)

    return anyio.run(main)


def _http_rates(command: list[str]) -> tuple[float, float]:
    with start_http(command) as server:

        async def main() -> tuple[float, float]:
            with anyio.fail_after(SECONDS):
                return await over_http(server.url, _rates)

        return anyio.run(main)


def _first_listing(command: list[str]) -> float:
    """Seconds from starting ``command`` (stdio) to the answer of its first ``tools/list``."""

    async def main() -> float:
        with anyio.fail_after(SECONDS):
            started = time.perf_counter()

            async def listing(session: Any) -> float:
                listed = await session.list_tools()
                elapsed = time.perf_counter() - started
                assert len(listed.tools) == STARTUP_TOOLS + 1, len(listed.tools)
                return elapsed

            return await over_stdio(command, listing)

    return anyio.run(main)


_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
_LIST = [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


#: The floor: what any server of these definitions on the SDK does before it can answer.
_FLOOR = (
    "import mcp.server.lowlevel, mcp.server.stdio, mcp_types; "
    "from agentkit import load_tools; import sys; load_tools(sys.argv[1])"
)
STARTUP_LIMIT = 1.15


def _floor(folder: Path) -> float:
    """Seconds from starting a process that imports the SDK's server and loads ``folder``
    with ``load_tools`` to its exit."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", _FLOOR, str(folder)],
        check=True,
        timeout=SECONDS,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def _first_listing_on_the_wire(command: list[str]) -> float:
    """Seconds from starting ``command`` (stdio) to the last byte of its first
    ``tools/list`` answer, the client writing and reading bare JSON lines."""

    async def main() -> float:
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=64 * 1024 * 1024,  # one line holds the whole listing
        )
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
            await asyncio.wait_for(process.stdout.readline(), SECONDS)
            process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in _LIST))
            line = await asyncio.wait_for(process.stdout.readline(), SECONDS)
            elapsed = time.perf_counter() - started
            listed = json.loads(line)["result"]["tools"]
            assert len(listed) == STARTUP_TOOLS + 1, len(listed)
            return elapsed
        finally:
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except asyncio.TimeoutError:
                process.kill()
                await asyncio.wait_for(process.wait(), 10)

    return asyncio.run(main())


# -- the run ---------------------------------------------------------------------------------


def run(rounds: int = ROUNDS) -> list[str]:
    if importlib.util.find_spec("fastmcp") is None:
        return peer_missing("serve: MCP serving")
    with tempfile.TemporaryDirectory() as folder:
        echo_folder = Path(folder, "echo")
        echo_folder.mkdir()
        (echo_folder / "echo.yaml").write_text(ECHO_DEFINITION)
        many = Path(folder, "many")
        many.mkdir()
        write_definitions(many, STARTUP_TOOLS)
        (many / "echo.yaml").write_text(ECHO_DEFINITION)
        echo = ("--tools", str(echo_folder))
        rates: dict[str, Callable[[], tuple[float, float]]] = {
            "stdio: agentkit": lambda: _stdio_rates(agentkit_command(*echo)),
            "stdio: FastMCP": lambda: _stdio_rates(fastmcp_command("stdio")),
            "http: agentkit": lambda: _http_rates(agentkit_command(*echo, "--http", "127.0.0.1:0")),
            "http: FastMCP": lambda: _http_rates(fastmcp_command("http")),
        }
        starts: dict[str, Callable[[], float]] = {
            "agentkit": lambda: _first_listing(agentkit_command("--tools", str(many))),
            "FastMCP": lambda: _first_listing(fastmcp_command("stdio", str(many))),
            "agentkit, bare wire": lambda: _first_listing_on_the_wire(
                agentkit_command("--tools", str(many))
            ),
            "FastMCP, bare wire": lambda: _first_listing_on_the_wire(
                fastmcp_command("stdio", str(many))
            ),
            "floor": lambda: _floor(many),
        }
        calls: dict[str, list[float]] = {label: [] for label in rates}
        pings: dict[str, list[float]] = {label: [] for label in rates}
        started: dict[str, list[float]] = {label: [] for label in starts}
        for _ in range(rounds):  # interleaved: a slow spell hits every case alike
            for label, measure in rates.items():
                call_rate, ping_rate = measure()
                calls[label].append(call_rate)
                pings[label].append(ping_rate)
            for label, first_listing in starts.items():
                started[label].append(first_listing())

    lines = [
        f"serve: MCP, the SDK's client, {CALLS} sequential calls of an echo tool "
        f"(medians of {rounds} interleaved rounds, range; pings/s: the transport's floor)"
    ]
    for label in rates:
        lines.append(
            f"  {label:<16} {median(calls[label]):7.1f} calls/s ({span(calls[label])})"
            f"  {median(pings[label]):7.1f} pings/s"
        )
    for transport in ("http", "stdio"):
        lines.append(
            ratio_line(
                f"{transport} calls/s agentkit vs FastMCP",
                ratios(calls[f"{transport}: agentkit"], calls[f"{transport}: FastMCP"]),
                1.5,
            )
        )
    lines.append(f"  start to the first tools/list answer, {STARTUP_TOOLS:,} YAML tools + echo")
    for label, figures in started.items():
        lines.append(f"    {label:<14} {median(figures):6.2f} s ({span(figures, '.2f')})")
    start = median(started["agentkit"])
    versus = median(ratios(started["agentkit"], started["FastMCP"]))
    lines.append(
        f"  through the SDK's client: {start:.2f} s ({versus:.2f}x FastMCP's; the client's "
        "validation of the listing included)"
    )
    bare = median(started["agentkit, bare wire"])
    over_floor = ratios(started["agentkit, bare wire"], started["floor"])
    lines.append(
        ratio_line(
            f"start to first tools/list with {STARTUP_TOOLS:,} tools (bare wire) over the "
            f"floor ({median(started['floor']):.2f} s) <= {STARTUP_LIMIT:g}x; {bare:.2f} s",
            over_floor,
            STARTUP_LIMIT,
            at_most=True,
        )
    )
    return lines


if __name__ == "__main__":  # python -m benchmarks.bench_serve [ROUNDS]
    print("\n".join(run(int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS)))
