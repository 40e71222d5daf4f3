"""MCP servers as the serving benchmarks run them, and the official SDK's client to them.

- ``agentkit_command`` and ``fastmcp_command``: the two servers' command lines (stdio,
  or HTTP with ``--http``);
- ``start_http`` starts one over HTTP on a free port of 127.0.0.1 and drains what it
  prints on stderr for as long as it runs (a server that logs, a warning a call, must
  never block on a full pipe);
- ``stdio_session`` and ``http_sessions`` open the SDK's ``ClientSession`` to a server
  (``over_stdio`` and ``over_http`` hand one to a coroutine);
- ``cpu_seconds`` and ``rss_bytes`` read what a server process has used from /proc,
  ``machine_busy_seconds`` what the whole machine has.

Every wait is bounded (``SECONDS``).
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar, final

__all__ = [
    "ROOT",
    "SECONDS",
    "HttpServer",
    "agentkit_command",
    "children",
    "cpu_seconds",
    "fastmcp_command",
    "http_sessions",
    "machine_busy_seconds",
    "over_http",
    "over_stdio",
    "peer_missing",
    "rss_bytes",
    "start_http",
    "stdio_session",
    "stop",
]

ROOT = Path(__file__).resolve().parent.parent
PEER = str(ROOT / "benchmarks" / "serve_peer.py")
#: The bound on every wait: a server's start, its stop, a session's opening.
SECONDS = 60.0
#: The lines of a server's stderr kept, to show when it misbehaves.
KEPT_LINES = 50
_LISTENING = re.compile(r"serving (?:\d+ tools )?on (http://\S+)")

T = TypeVar("T")


def peer_missing(what: str) -> list[str]:
    """A benchmark's report when FastMCP, the peer it measures against, is not installed."""
    return [
        f"{what} against FastMCP: not measured, fastmcp is not installed "
        "(`make bench` installs the bench extra: pip install -e '.[bench]')"
    ]


def agentkit_command(*args: str, gc_log: Path | None = None) -> list[str]:
    """``agentkit serve ARGS``, importing the benchmarks' Python backends from the checkout;
    with ``gc_log``, its garbage collector's pauses written there (``benchmarks.gc_trace``)."""
    command = ["-m", "agentkit"] if gc_log is None else ["-m", "benchmarks.gc_trace", str(gc_log)]
    return [sys.executable, *command, "serve", "--python-path", str(ROOT), *args]


def fastmcp_command(*args: str) -> list[str]:
    """The FastMCP peer (``benchmarks/serve_peer.py``) with ``ARGS``."""
    return [sys.executable, PEER, *args]


@final
class HttpServer:
    """A server process listening on 127.0.0.1 (``start_http``): its MCP endpoint's URL,
    and what it printed on stderr (the last ``KEPT_LINES`` lines, and how many in all),
    read by a thread for as long as it runs."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.url = ""
        self.lines: deque[str] = deque(maxlen=KEPT_LINES)
        self.line_count = 0
        self._listening: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:  # ends when the process closes stderr (exits)
            self.lines.append(line)
            self.line_count += 1
            if not self.url and (match := _LISTENING.search(line)):
                self._listening.put(match.group(1))
        self._listening.put(None)

    def wait_until_listening(self) -> None:
        """Until the server prints where it listens; ``RuntimeError`` (with what it
        printed) if it exits first or does not within ``SECONDS``."""
        try:
            url = self._listening.get(timeout=SECONDS)
        except queue.Empty:
            url = None
        if url is None:
            self.stop()
            raise RuntimeError(f"{self.process.args!r} did not start:\n{''.join(self.lines)}")
        self.url = url

    def stop(self) -> None:
        stop(self.process)
        self._reader.join(timeout=SECONDS)
        if self.process.stderr is not None:
            self.process.stderr.close()

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_http(command: list[str]) -> HttpServer:
    """Start ``command``, a server over HTTP on a free loopback port; return once it
    listens. Stop it with ``stop()``, or use it as a context manager."""
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = HttpServer(process)
    server.wait_until_listening()
    return server


def stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM, then SIGKILL if ``process`` has not exited within 10 seconds; its stdout
    closed if it was a pipe."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    if process.stdout is not None:
        process.stdout.close()


async def over_stdio(command: list[str], use: Callable[[Any], Awaitable[T]]) -> T:
    """Start ``command`` as a stdio server, open a ``ClientSession`` on it and return what
    ``use(session)`` returns; the server's stderr goes to the null device."""
    async with _stdio(command) as session:
        return await use(session)


@contextlib.asynccontextmanager
async def stdio_session(command: list[str]) -> AsyncIterator[tuple[Any, int]]:
    """``over_stdio``'s session, and the server's process id (the SDK starts the process;
    it is found in /proc as the child that was not there before)."""
    before = children()
    async with _stdio(command) as session:
        started = children() - before
        if len(started) != 1:
            raise RuntimeError(f"expected one new child process, found {sorted(started)}")
        yield session, started.pop()


@contextlib.asynccontextmanager
async def _stdio(command: list[str]) -> AsyncIterator[Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], cwd=ROOT)
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


async def over_http(url: str, use: Callable[[Any], Awaitable[T]]) -> T:
    """Open a ``ClientSession`` over streamable HTTP to ``url`` and return what
    ``use(session)`` returns."""
    async with http_sessions(url, 1) as sessions:
        return await use(sessions[0])


@contextlib.asynccontextmanager
async def http_sessions(url: str, count: int) -> AsyncIterator[list[Any]]:
    """``count`` initialized ``ClientSession`` s over streamable HTTP to ``url``, each with
    its own HTTP client (its own connections), as ``count`` agents would have."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with contextlib.AsyncExitStack() as stack:
        sessions = []
        for _ in range(count):
            read, write = await stack.enter_async_context(streamable_http_client(url))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions.append(session)
        yield sessions


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command's name (which may hold spaces): the
    process state is the first of them, field 3 of proc(5)."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def children() -> set[int]:
    """The process ids of this process's children, from /proc."""
    me = os.getpid()
    found = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            parent = int(_stat_fields(int(entry.name))[1])
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue
        if parent == me:
            found.add(int(entry.name))
    return found


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used, user and system (utime + stime)."""
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Process ``pid``'s resident set size now (VmRSS in /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/{pid}/status has no VmRSS line (a zombie process?)")


def machine_busy_seconds() -> float:
    """The CPU time every core of the machine has spent on anything but idling and
    waiting for I/O since boot (steal included), from /proc/stat."""
    fields = [int(field) for field in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle, iowait = fields[3], fields[4]
    # guest and guest_nice (fields 8 and 9) are already counted in user and nice.
    return (sum(fields[:8]) - idle - iowait) / os.sysconf("SC_CLK_TCK")
