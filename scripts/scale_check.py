"""`make scale-check`: two stateless `agentkit serve --http` instances behind haproxy.

Starts both instances on free loopback ports (one token for both), haproxy in front of
them (from Debian: `apt-get install haproxy`) with `/readyz` health checks, and drives
tool calls through it with the MCP SDK's streamable HTTP client. Then it stops one
instance with SIGTERM and drives calls again: haproxy must route them all to the other.
Prints what it measured; exits 1 if any call failed or an instance served none.

Outside `make test`: it needs haproxy and takes a few seconds.
"""

from __future__ import annotations

import asyncio
import csv
import io
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.mcp_serving import Served, start  # noqa: E402 -- after the path is set

CLIENTS = 4
CALLS_PER_CLIENT = 50
WAIT_SECONDS = 30

HAPROXY_CONFIG = """\
global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    retries 2
    option redispatch
frontend mcp
    bind 127.0.0.1:{front}
    default_backend agentkit
backend agentkit
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 200ms fall 1 rise 1
    server a 127.0.0.1:{a} check
    server b 127.0.0.1:{b} check
listen stats
    bind 127.0.0.1:{stats}
    stats enable
    stats uri /stats
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_of(served: Served) -> int:
    return int(served.origin.rsplit(":", 1)[1])


def backend_stats(stats_port: int) -> dict[str, dict[str, str]]:
    """haproxy's CSV statistics of the backend's servers, by server name."""
    with urllib.request.urlopen(f"http://127.0.0.1:{stats_port}/stats;csv", timeout=5) as reply:
        text = reply.read().decode().lstrip("# ")
    return {
        row["svname"]: row
        for row in csv.DictReader(io.StringIO(text))
        if row["pxname"] == "agentkit" and row["svname"] in ("a", "b")
    }


def wait_until(check: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"scale-check: timed out waiting for {what}")
        time.sleep(0.1)


async def drive(url: str, token: str, clients: int, calls: int) -> tuple[int, int, float]:
    """``clients`` sessions making ``calls`` calls each: (succeeded, failed, seconds)."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    succeeded = failed = 0

    async def client(number: int) -> None:
        nonlocal succeeded, failed
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for call in range(calls):
                text = f"Client {number}, call {call}. Zürich is calm!"
                try:
                    result = await session.call_tool("text_stats", {"text": text})
                except Exception as exc:  # counted and shown, not raised: this is a survey
                    print(f"  call failed: {exc!r}", file=sys.stderr)
                    failed += 1
                    continue
                ok = not result.is_error and result.structured_content["words"] == 5
                succeeded += ok
                failed += not ok

    start_time = time.perf_counter()
    await asyncio.gather(*(client(number) for number in range(clients)))
    return succeeded, failed, time.perf_counter() - start_time


def main() -> int:
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        print("scale-check: haproxy not found (apt-get install haproxy)", file=sys.stderr)
        return 2
    token = secrets.token_urlsafe(32)
    env = {"SCALE_CHECK_TOKEN": token}
    args = ["--tools", "tools.d", "--stateless", "--auth-token-env", "SCALE_CHECK_TOKEN"]
    instances = [start(args, env=env), start(args, env=env)]
    front, stats = free_port(), free_port()
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "haproxy.cfg"
        config.write_text(
            HAPROXY_CONFIG.format(
                front=front, stats=stats, a=port_of(instances[0]), b=port_of(instances[1])
            )
        )
        proxy = subprocess.Popen(
            [haproxy, "-f", str(config), "-db"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            return check(f"http://127.0.0.1:{front}/mcp", token, stats, instances)
        finally:
            proxy.send_signal(signal.SIGTERM)
            try:
                proxy.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proxy.kill()
                proxy.wait(timeout=10)
            for served in instances:
                served.stop()


def check(url: str, token: str, stats: int, instances: list[Served]) -> int:
    def both_up() -> bool:
        try:
            servers = backend_stats(stats)
        except OSError:
            return False
        return all(servers.get(name, {}).get("status") == "UP" for name in ("a", "b"))

    wait_until(both_up, "haproxy to see both instances ready")
    total = CLIENTS * CALLS_PER_CLIENT
    succeeded, failed, seconds = asyncio.run(drive(url, token, CLIENTS, CALLS_PER_CLIENT))
    served = {name: int(row["stot"]) for name, row in backend_stats(stats).items()}
    print(
        f"scale-check: {succeeded}/{total} calls through haproxy in {seconds:.2f} s "
        f"({succeeded / seconds:.0f} calls/s, {CLIENTS} clients); "
        f"HTTP requests per instance: a {served['a']}, b {served['b']}"
    )
    problems = []
    if failed or succeeded != total:
        problems.append(f"{failed} calls failed")
    if not served["a"] or not served["b"]:
        problems.append("one instance served nothing: the load was not balanced")

    # One instance goes away (SIGTERM: it drains, then exits); the other takes all.
    status = instances[0].stop()
    wait_until(
        lambda: backend_stats(stats)["a"]["status"].startswith("DOWN"), "haproxy to see a down"
    )
    succeeded, failed, seconds = asyncio.run(drive(url, token, 2, 10))
    print(
        f"scale-check: instance a stopped (exit {status}); {succeeded}/20 calls through "
        f"haproxy to b alone"
    )
    if status != 0:
        problems.append(f"instance a exited {status} on SIGTERM, not 0")
    if failed or succeeded != 20:
        problems.append(f"{failed} calls failed with one instance down")
    for problem in problems:
        print(f"scale-check: FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
