"""`make scale-check`: two stateless `agentkit serve --http` instances behind haproxy,
restarted one after the other while clients call through it.

Starts both instances on free loopback ports (one token for both) and haproxy in front
of them (from Debian: `apt-get install haproxy`), configured as docs/serving.md's
recipe: `/readyz` health checks, and the retries a draining instance makes safe. Then
several MCP SDK clients (streamable HTTP, one session each) call a tool without pause
while each instance in turn gets SIGTERM, is waited for until it exits, is started
again on the same port and is waited for until haproxy sees it ready.

Prints the calls sent, answered and lost, and exits 1 if any call was lost, any
client's session ended, an instance exited other than 0 on SIGTERM or an instance
served nothing. `--without-retries` runs the recipe without its `retry-on` line, to
see what the retries are for (calls are then expected to be lost).

Outside `make test`: it needs haproxy and takes some seconds.
"""

from __future__ import annotations

import argparse
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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.serving import Served, start  # noqa: E402 -- after the path is set

CLIENTS = 4
#: Bounds: on every wait, on one call, and on the calls a client makes in all.
WAIT_SECONDS = 30
CALL_SECONDS = 30
MAX_CALLS_PER_CLIENT = 100_000
#: Calls each client makes before the first restart and after the last.
SETTLE_CALLS = 50
RETRY_ON = "    retry-on conn-failure empty-response 503\n"

HAPROXY_CONFIG = f"""\
global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    retries 3
    option redispatch 1
    option http-buffer-request
{RETRY_ON}\
frontend mcp
    bind 127.0.0.1:{{front}}
    default_backend agentkit
backend agentkit
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 200ms fall 1 rise 1
    server a 127.0.0.1:{{a}} check
    server b 127.0.0.1:{{b}} check
listen stats
    bind 127.0.0.1:{{stats}}
    stats enable
    stats uri /stats
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def backend_stats(stats_port: int) -> dict[str, dict[str, str]]:
    """haproxy's CSV statistics of the backend's servers, by server name."""
    with urllib.request.urlopen(f"http://127.0.0.1:{stats_port}/stats;csv", timeout=5) as reply:
        text = reply.read().decode().lstrip("# ")
    return {
        row["svname"]: row
        for row in csv.DictReader(io.StringIO(text))
        if row["pxname"] == "agentkit" and row["svname"] in ("a", "b")
    }


def server_status(stats_port: int, name: str) -> str:
    try:
        return backend_stats(stats_port).get(name, {}).get("status", "")
    except OSError:
        return ""


def wait_until(check: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"scale-check: timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class Tally:
    """What the clients saw: calls sent, answered, lost (by what went wrong)."""

    sent: int = 0
    answered: int = 0
    lost: Counter[str] = field(default_factory=Counter)
    sessions_ended: list[str] = field(default_factory=list)


@dataclass
class Instance:
    """One `agentkit serve --http` on a fixed port, restarted on that port."""

    name: str
    port: int
    args: list[str]
    env: dict[str, str]
    served: Served | None = None
    exits: list[int] = field(default_factory=list)

    def start(self) -> None:
        # start() listens on port 0; the later --http wins, so a restart gets the same port.
        self.served = start([*self.args, "--http", f"127.0.0.1:{self.port}"], env=self.env)

    def stop(self) -> None:
        """SIGTERM; wait (bounded) for the exit, noting its status."""
        if self.served is not None:
            self.exits.append(self.served.stop(timeout=WAIT_SECONDS))
            self.served = None


async def call_continuously(
    url: str, token: str, number: int, tally: Tally, stop: asyncio.Event
) -> int:
    """One client session calling until ``stop`` (at most MAX_CALLS_PER_CLIENT); its calls."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    calls = 0
    try:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), CALL_SECONDS)
            while not stop.is_set() and calls < MAX_CALLS_PER_CLIENT:
                calls += 1
                tally.sent += 1
                text = f"Client {number}, call {calls}. Zürich is calm!"
                try:
                    result = await asyncio.wait_for(
                        session.call_tool("text_stats", {"text": text}), CALL_SECONDS
                    )
                except Exception as exc:  # counted and shown, not raised: this is a survey
                    tally.lost[f"{type(exc).__name__}: {str(exc)[:120]}"] += 1
                    continue
                if result.is_error:
                    tally.lost[f"isError: {str(result.content)[:120]}"] += 1
                elif (result.structured_content or {}).get("words") != 5:
                    tally.lost[f"wrong answer: {result.structured_content}"] += 1
                else:
                    tally.answered += 1
    except BaseException as exc:  # the session itself ended: reported, the others go on
        if isinstance(exc, asyncio.CancelledError):
            raise
        tally.sessions_ended.append(f"client {number}: {exc!r}"[:300])
    return calls


async def rolling_restart(
    url: str, token: str, stats: int, instances: list[Instance], rounds: int
) -> tuple[Tally, float]:
    """Clients call without pause while every instance is restarted ``rounds`` times."""
    tally = Tally()
    stop = asyncio.Event()
    started = time.perf_counter()
    clients = [
        asyncio.create_task(call_continuously(url, token, number, tally, stop))
        for number in range(CLIENTS)
    ]

    async def calls_made(count: int) -> None:
        target = tally.sent + count
        deadline = time.monotonic() + WAIT_SECONDS
        while tally.sent < target and time.monotonic() < deadline:
            if all(client.done() for client in clients):
                return
            await asyncio.sleep(0.05)

    try:
        await calls_made(SETTLE_CALLS * CLIENTS)
        for round_number in range(1, rounds + 1):
            for instance in instances:
                await asyncio.to_thread(restart, instance, stats)
                print(
                    f"scale-check: round {round_number}: {instance.name} restarted "
                    f"(exit {instance.exits[-1]}); {tally.sent:,} calls sent so far",
                    flush=True,
                )
        await calls_made(SETTLE_CALLS * CLIENTS)
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*clients), WAIT_SECONDS + CALL_SECONDS)
    return tally, time.perf_counter() - started


def restart(instance: Instance, stats: int) -> None:
    """SIGTERM ``instance``, wait for its exit, start it on its port, wait until haproxy
    sends it calls again (every wait bounded)."""
    instance.stop()
    instance.start()
    wait_until(
        lambda: server_status(stats, instance.name) == "UP", f"haproxy to see {instance.name} up"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="restarts of each instance")
    parser.add_argument(
        "--without-retries", action="store_true", help="drop the recipe's retry-on line"
    )
    options = parser.parse_args()
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        print("scale-check: haproxy not found (apt-get install haproxy)", file=sys.stderr)
        return 2
    token = secrets.token_urlsafe(32)
    env = {"SCALE_CHECK_TOKEN": token}
    args = ["--tools", "tools.d", "--stateless", "--auth-token-env", "SCALE_CHECK_TOKEN"]
    instances = [Instance(name, free_port(), args, env) for name in ("a", "b")]
    front, stats = free_port(), free_port()
    config_text = HAPROXY_CONFIG.format(
        front=front, stats=stats, a=instances[0].port, b=instances[1].port
    )
    if options.without_retries:
        config_text = config_text.replace(RETRY_ON, "")
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "haproxy.cfg"
        config.write_text(config_text)
        proxy = None
        try:
            for instance in instances:
                instance.start()
            proxy = subprocess.Popen(
                [haproxy, "-f", str(config), "-db"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            return check(f"http://127.0.0.1:{front}/mcp", token, stats, instances, options)
        finally:
            if proxy is not None:
                proxy.send_signal(signal.SIGTERM)
                try:
                    proxy.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proxy.kill()
                    proxy.wait(timeout=10)
            for instance in instances:
                instance.stop()


def check(
    url: str, token: str, stats: int, instances: list[Instance], options: argparse.Namespace
) -> int:
    for instance in instances:
        wait_until(
            lambda name=instance.name: server_status(stats, name) == "UP",
            f"haproxy to see {instance.name} ready",
        )
    tally, seconds = asyncio.run(rolling_restart(url, token, stats, instances, options.rounds))
    served = {name: int(row["stot"]) for name, row in backend_stats(stats).items()}
    retries = "without retry-on" if options.without_retries else "with the recipe's retries"
    lost = sum(tally.lost.values())
    print(
        f"scale-check: {options.rounds} rolling restart(s) of 2 instances, {retries}: "
        f"{tally.answered:,}/{tally.sent:,} calls answered, {lost:,} lost, "
        f"{len(tally.sessions_ended)} client sessions ended "
        f"({CLIENTS} clients, {seconds:.1f} s, {tally.sent / seconds:.0f} calls/s); "
        f"HTTP requests per instance: a {served['a']:,}, b {served['b']:,}"
    )
    for what, count in tally.lost.most_common():
        print(f"  lost {count:,}: {what}")
    for ended in tally.sessions_ended:
        print(f"  session ended: {ended}")
    problems = []
    if tally.answered != tally.sent:
        problems.append(f"{tally.sent - tally.answered} of {tally.sent} calls not answered")
    if tally.sessions_ended:
        problems.append(f"{len(tally.sessions_ended)} client sessions ended")
    for instance in instances:
        if any(instance.exits):
            problems.append(f"instance {instance.name} exited {instance.exits} on SIGTERM, not 0")
    if not served["a"] or not served["b"]:
        problems.append("one instance served nothing: the load was not balanced")
    for problem in problems:
        print(f"scale-check: FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
