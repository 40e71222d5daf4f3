"""The upstream of the benchmarks' HTTP tool: a loopback HTTP server that answers after 20 ms.

``GET /echo?text=...`` answers ``{"text": ...}`` (200, JSON) ``DELAY`` seconds after the
request came; anything else answers 404 after the same delay, but ``GET /stats``, which
answers at once with how many requests were answered so far and over how many
connections (its own not counted; ``stats``). HTTP/1.1 with keep-alive, so a client that reuses its
connections pays for one connect per connection, not per call. One asyncio loop, no
thread per request: the wait costs no CPU, and answering costs little, so what a
benchmark measures past 20 ms is the MCP server's own.

It runs as its own process (``start``), so that neither the client's nor the server's
work delays it, and it theirs:

    python benchmarks/upstream.py [DELAY_MS]

prints ``serving on http://127.0.0.1:PORT`` on stdout once bound (a free port), and
serves until SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import select
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

DELAY = 0.020
#: The bound on a start, a request's head and body, and an idle keep-alive connection.
SECONDS = 60.0
MAX_HEAD = 16 * 1024
_LISTENING = re.compile(r"serving on (http://\S+)")


@dataclass
class Counts:
    """What the upstream has done since it started."""

    connections: int = 0
    requests: int = 0


def _answer(target: str) -> tuple[str, bytes]:
    """The status line's status and the JSON body for a request's target."""
    parts = urlsplit(target)
    if parts.path != "/echo":
        return "404 Not Found", b'{"error": "not found"}'
    text = parse_qs(parts.query).get("text", [""])[0]
    return "200 OK", json.dumps({"text": text}).encode()


async def _serve_connection(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float, counts: Counts
) -> None:
    counted = False  # a connection counts once it carries a request other than /stats
    try:
        while True:  # one request a turn, until the client closes or idles past SECONDS
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), SECONDS)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError):
                return
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            length = 0
            for line in header_lines:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if length:
                await asyncio.wait_for(reader.readexactly(length), SECONDS)
            target = request_line.split(" ")[1]
            if target == "/stats":
                status, body = "200 OK", json.dumps(asdict(counts)).encode()
            else:
                await asyncio.sleep(delay)
                status, body = _answer(target)
                counts.requests += 1
                if not counted:
                    counts.connections += 1
                    counted = True
            writer.write(
                f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError):
        return
    finally:
        writer.close()


async def _main(delay: float) -> None:
    counts = Counts()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _serve_connection(reader, writer, delay, counts)
        except asyncio.CancelledError:
            return  # the server is stopping: the connection closes with it, quietly

    server = await asyncio.start_server(serve, "127.0.0.1", 0, limit=MAX_HEAD, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(f"serving on http://127.0.0.1:{port}", flush=True)
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopped.set)
    async with server:
        await stopped.wait()


@dataclass(frozen=True)
class Running:
    """A running upstream: its URL (``http://127.0.0.1:PORT``) and process id."""

    url: str
    pid: int


@contextlib.contextmanager
def running(delay: float = DELAY) -> Iterator[Running]:
    """The upstream, started and stopped around the block."""
    from benchmarks.serving import stop

    process, url = start(delay)
    try:
        yield Running(url, process.pid)
    finally:
        stop(process)


def stats(url: str) -> Counts:
    """The requests the upstream at ``url`` has answered, and over how many connections."""
    with urllib.request.urlopen(f"{url}/stats", timeout=SECONDS) as response:
        return Counts(**json.load(response))


def start(delay: float = DELAY) -> tuple[subprocess.Popen[str], str]:
    """Start the upstream; its process and its URL (``http://127.0.0.1:PORT``).

    Stop it with ``benchmarks.serving.stop``.
    """
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__)), str(delay * 1e3)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    # One line, printed once bound: waited for at most SECONDS.
    ready, _, _ = select.select([process.stdout], [], [], SECONDS)
    line = process.stdout.readline() if ready else ""
    if match := _LISTENING.search(line):
        return process, match.group(1)
    process.kill()
    process.wait(timeout=SECONDS)
    raise RuntimeError(f"the upstream did not start: {line!r}")


if __name__ == "__main__":
    asyncio.run(_main(float(sys.argv[1]) / 1e3 if len(sys.argv) > 1 else DELAY))
