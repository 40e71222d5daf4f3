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

Both instances share one `redis-server` (from Debian, started by the check on a free
loopback port, nothing written to disk) as their `--limits-store`, and after the
restarts the check calls tools that declare limits and caches (answered by a loopback
upstream it starts, which counts its requests):

- a limit of N per minute in total, and one per caller (two callers, named in the token
  file), called more than N times through haproxy by clients of both callers at once:
  exactly N answered, the rest refused with the limit's `isError`, none lost;
- a shared cache and a per-caller cache: an answer made on one instance (called on its
  own port) is served by the other without reaching the upstream, and never to another
  caller with the per-caller cache;
- Redis stopped: with `--limits-store-unreachable refuse` calls with limits are refused,
  saying so, and tools without limits still answer; the instances restarted with
  `local` then allow the limit each, in their own process.

Outside `make test`: it needs haproxy and redis-server and takes under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.declarative import loopback  # noqa: E402 -- after the path is set
from tests.support.redis_server import RedisServer, redis_server  # noqa: E402
from tests.support.serving import Served, session, start  # noqa: E402

CLIENTS = 4
#: Bounds: on every wait, on one call, and on the calls a client makes in all.
WAIT_SECONDS = 30
CALL_SECONDS = 30
MAX_CALLS_PER_CLIENT = 100_000
#: Calls each client makes before the first restart and after the last.
SETTLE_CALLS = 50
RETRY_ON = "    retry-on conn-failure empty-response 503\n"
#: The shared limits: N calls a minute, and the calls made of each limited tool (M > N).
LIMIT = 20
LIMITED_CALLS = 60
#: Clients calling a limited tool at once, through haproxy, for each of the two callers.
LIMITED_CLIENTS = 3
CALLERS = ("alice", "bob")

#: Formatted with the upstream's origin and LIMIT.
TOOLS = """\
name: limited_total
version: 1.0.0
description: {limit} calls a minute for all callers together.
input_schema: {{parameters: [{{name: q, type: string}}]}}
output_schema: {{parameters: [{{name: n, type: integer}}]}}
limits:
  total: {{requests: {limit}, per: 1m}}
backend:
  http:
    url: "{origin}/limited"
    query: {{q: "{{{{ inputs.q }}}}"}}
---
name: limited_per_caller
version: 1.0.0
description: {limit} calls a minute for each caller.
input_schema: {{parameters: [{{name: q, type: string}}]}}
output_schema: {{parameters: [{{name: n, type: integer}}]}}
limits:
  per_caller: {{requests: {limit}, per: 1m}}
backend:
  http:
    url: "{origin}/limited"
    query: {{q: "{{{{ inputs.q }}}}"}}
---
name: cached_shared
version: 1.0.0
description: Answers kept a minute for every caller.
annotations: {{read_only: true}}
input_schema: {{parameters: [{{name: q, type: string}}]}}
output_schema: {{parameters: [{{name: n, type: integer}}]}}
cache: {{ttl: 60s, scope: shared}}
backend:
  http:
    url: "{origin}/shared"
    query: {{q: "{{{{ inputs.q }}}}"}}
---
name: cached_per_caller
version: 1.0.0
description: Answers kept a minute for the caller who asked.
annotations: {{read_only: true}}
input_schema: {{parameters: [{{name: q, type: string}}]}}
output_schema: {{parameters: [{{name: n, type: integer}}]}}
cache: {{ttl: 60s, scope: caller}}
backend:
  http:
    url: "{origin}/per-caller"
    query: {{q: "{{{{ inputs.q }}}}"}}
"""

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


class Upstream:
    """The tools' upstream: answers each path with how many requests that path had."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, handler: loopback.Handler) -> None:
        path = handler.path.split("?")[0]
        with self._lock:
            self.counts[path] += 1
            count = self.counts[path]
        handler.reply(200, {"n": count})


@dataclass
class Outcomes:
    """What calls of one tool came to: answered, refused by a limit, anything else."""

    answered: int = 0
    limited: int = 0
    other: Counter[str] = field(default_factory=Counter)
    answered_for: Counter[str] = field(default_factory=Counter)

    def add(self, result: Any, limit_text: str, caller: str) -> None:
        text = " ".join(getattr(part, "text", "") for part in result.content)
        if not result.is_error and isinstance((result.structured_content or {}).get("n"), int):
            self.answered += 1
            self.answered_for[caller] += 1
        elif result.is_error and limit_text in text:
            self.limited += 1
        else:
            self.other[f"{'isError' if result.is_error else 'answer'}: {text[:160]}"] += 1


async def call_tool(url: str, token: str, tool: str, arguments: dict[str, Any]) -> Any:
    """One call in a session of its own (bounded); the SDK's result."""

    async def call() -> Any:
        async with session(url, {"Authorization": f"Bearer {token}"}) as client:
            return await client.call_tool(tool, arguments)

    return await asyncio.wait_for(call(), CALL_SECONDS)


async def call_many(
    url: str, tokens: dict[str, str], tool: str, q: str, outcomes: Outcomes, limit_text: str
) -> None:
    """LIMITED_CALLS calls of ``tool``, spread over LIMITED_CLIENTS sessions of each
    caller calling at once, each session calling one call after the other."""
    share, extra = divmod(LIMITED_CALLS, LIMITED_CLIENTS * len(tokens))
    counts = [share + (number < extra) for number in range(LIMITED_CLIENTS * len(tokens))]
    clients = [caller for caller in tokens for _ in range(LIMITED_CLIENTS)]

    async def client(caller: str, calls: int) -> None:
        made = 0

        async def run() -> None:
            nonlocal made
            async with session(url, {"Authorization": f"Bearer {tokens[caller]}"}) as opened:
                for _ in range(calls):
                    outcomes.add(await opened.call_tool(tool, {"q": q}), limit_text, caller)
                    made += 1

        try:
            await asyncio.wait_for(run(), CALL_SECONDS * (1 + calls))
        except Exception as exc:  # the calls it did not make are lost, shown in the summary
            outcomes.other[f"{type(exc).__name__}: {str(exc)[:120]}"] += calls - made

    await asyncio.gather(*(client(c, n) for c, n in zip(clients, counts, strict=True)))


def audit_records(path: Path, skip: int = 0) -> list[dict[str, Any]]:
    """The audit trail's records in ``path`` after its first ``skip`` lines."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()[skip:]]


@dataclass
class Shared:
    """The second part's setting: the instances, their audit files, the callers' tokens."""

    front: str
    stats: int
    instances: list[Instance]
    audits: dict[str, Path]
    tokens: dict[str, str]
    upstream: Upstream
    redis: RedisServer
    problems: list[str] = field(default_factory=list)
    #: One line of figures for each part, printed at the end.
    summary: list[str] = field(default_factory=list)

    def url(self, instance: Instance) -> str:
        assert instance.served is not None
        return instance.served.url

    def audit_lines(self) -> dict[str, int]:
        return {name: len(audit_records(path)) for name, path in self.audits.items()}

    def served_by(self, tool: str, since: dict[str, int]) -> dict[str, Counter[str]]:
        """Each instance's audit outcomes of ``tool`` since the line counts ``since``."""
        return {
            name: Counter(
                "cache hit" if record["cache_hit"] else record["outcome"]
                for record in audit_records(path, since[name])
                if record["tool"] == tool
            )
            for name, path in self.audits.items()
        }


def check_limits(shared: Shared) -> None:
    """Both limited tools called LIMITED_CALLS times through haproxy by both callers."""
    for tool, whom, expected in (
        ("limited_total", "in total", LIMIT),
        ("limited_per_caller", "per caller", LIMIT * len(CALLERS)),
    ):
        since = shared.audit_lines()
        sent = shared.upstream.counts["/limited"]
        outcomes = Outcomes()
        started = time.monotonic()
        limit_text = f"limit of {LIMIT} per minute"
        asyncio.run(call_many(shared.front, shared.tokens, tool, tool, outcomes, limit_text))
        seconds = time.monotonic() - started
        upstream = shared.upstream.counts["/limited"] - sent
        served = shared.served_by(tool, since)
        lost = sum(outcomes.other.values())
        calls = LIMITED_CALLS
        print(
            f"scale-check: {tool} (limit of {LIMIT} per minute {whom}), {calls} calls "
            f"through haproxy by {len(CALLERS)} callers: {outcomes.answered} answered, "
            f"{outcomes.limited} limited, {lost} lost in {seconds:.1f} s; "
            f"answered per caller {dict(outcomes.answered_for)}; "
            f"upstream requests {upstream}; "
            f"by instance: "
            + ", ".join(f"{name} {dict(counts)}" for name, counts in served.items())
        )
        for what, count in outcomes.other.most_common():
            print(f"  lost {count}: {what}")
        each = dict(outcomes.answered_for)
        shared.summary.append(
            f"{tool}: {calls} calls, {outcomes.answered} answered (limit {LIMIT}/min {whom}: "
            f"{expected} expected), {outcomes.limited} limited, {lost} lost"
            + (
                f"; answered per caller {dict(sorted(each.items()))}"
                if whom == "per caller"
                else ""
            )
        )
        if outcomes.answered != expected or upstream != expected:
            shared.problems.append(
                f"{tool}: {outcomes.answered} calls answered and {upstream} sent upstream, "
                f"not {expected}: the shared limit did not hold across the instances"
            )
        if outcomes.limited != calls - expected or lost:
            shared.problems.append(
                f"{tool}: {outcomes.limited} limited and {lost} lost of {calls} calls, "
                f"not {calls - expected} limited and none lost"
            )
        if whom == "per caller" and each != dict.fromkeys(CALLERS, LIMIT):
            shared.problems.append(
                f"{tool}: answered per caller {each}, not {LIMIT} each: the limit per caller "
                "did not hold"
            )
        if seconds >= 60:
            shared.problems.append(
                f"{tool}: the calls took {seconds:.0f} s, longer than the limit's minute"
            )
        if not all(counts["success"] for counts in served.values()):
            shared.problems.append(f"{tool}: not every instance answered calls of it")


def check_caches(shared: Shared) -> None:
    """An answer made on one instance, asked of the other on its own port."""
    a, b = shared.instances
    alice, bob = (shared.tokens[name] for name in CALLERS)
    # (tool, instance, caller's token, answered from a cache?) in order
    steps = {
        "cached_shared": [(a, alice, False), (b, bob, True), (a, bob, True)],
        "cached_per_caller": [(a, alice, False), (b, alice, True), (b, bob, False), (a, bob, True)],
    }
    hits = made = across = 0
    for tool, calls in steps.items():
        since = shared.audit_lines()
        path = "/shared" if tool == "cached_shared" else "/per-caller"
        sent = shared.upstream.counts[path]
        answers = []
        for instance, token, _ in calls:
            result = asyncio.run(call_tool(shared.url(instance), token, tool, {"q": "same"}))
            answers.append(None if result.is_error else (result.structured_content or {}).get("n"))
        upstream = shared.upstream.counts[path] - sent
        # The upstream numbers its answers: the instance that first gave one made it.
        makers: dict[Any, str] = {}
        for (instance, _, _), answer in zip(calls, answers, strict=True):
            across += makers.setdefault(answer, instance.name) != instance.name
        served = shared.served_by(tool, since)
        tool_hits = sum(counts["cache hit"] for counts in served.values())
        hits += tool_hits
        made += len(calls)
        expected_hits = sum(hit for _, _, hit in calls)
        print(
            f"scale-check: {tool}: {len(calls)} calls on the instances' own ports "
            f"({', '.join(i.name for i, _, _ in calls)}), answers {answers}, "
            f"upstream requests {upstream}, cache hits by instance: "
            + ", ".join(f"{name} {counts['cache hit']}" for name, counts in served.items())
        )
        if None in answers or tool_hits != expected_hits or upstream != len(calls) - tool_hits:
            shared.problems.append(
                f"{tool}: {tool_hits} cache hits and {upstream} upstream requests of "
                f"{len(calls)} calls, not {expected_hits} hits and {len(calls) - expected_hits} "
                f"requests (answers {answers})"
            )
        if tool == "cached_per_caller" and answers[2] == answers[0]:
            shared.problems.append(f"{tool}: bob was answered with alice's kept answer")
    shared.summary.append(
        f"caches: {hits} cache hits of {made} calls, {across} of them an answer made on "
        "the other instance; none crossed callers"
    )


def check_redis_down(shared: Shared) -> None:
    """Redis stopped: `refuse` refuses calls with limits, then `local` counts per process."""
    shared.redis.stop()
    print("scale-check: redis-server stopped")
    alice = shared.tokens["alice"]
    refused = unlimited = 0
    for instance in shared.instances:
        url = shared.url(instance)
        limited = asyncio.run(call_tool(url, alice, "limited_total", {"q": "down"}))
        text = " ".join(getattr(part, "text", "") for part in limited.content)
        stats = asyncio.run(call_tool(url, alice, "text_stats", {"text": "Redis is down."}))
        words = (stats.structured_content or {}).get("words")
        print(
            f"scale-check: Redis down, refuse, instance {instance.name}: limited_total "
            f"{'refused' if limited.is_error else 'answered'}: {text[:300]!r}; "
            f"text_stats {'answered' if words == 3 else 'FAILED'}"
        )
        refused += limited.is_error and "cannot be reached" in text
        unlimited += not stats.is_error and words == 3
        if not limited.is_error or "cannot be reached" not in text:
            shared.problems.append(
                f"Redis down, refuse: instance {instance.name} did not refuse limited_total "
                f"saying the store cannot be reached: {text[:200]!r}"
            )
        if stats.is_error or words != 3:
            shared.problems.append(
                f"Redis down: instance {instance.name} did not answer text_stats, a tool "
                f"without limits: {stats.content!r}"[:300]
            )
    shared.summary.append(
        f"Redis down, refuse: limited_total refused on {refused} of 2 instances, "
        f"text_stats (no limits) answered on {unlimited} of 2"
    )
    for instance in shared.instances:
        instance.args = [*instance.args, "--limits-store-unreachable", "local"]
        restart(instance, shared.stats)
    since = shared.audit_lines()
    outcomes = Outcomes()
    asyncio.run(
        call_many(
            shared.front, shared.tokens, "limited_total", "local", outcomes,
            f"limit of {LIMIT} per minute",
        )
    )  # fmt: skip
    served = shared.served_by("limited_total", since)
    lost = sum(outcomes.other.values())
    print(
        f"scale-check: Redis down, local (restarted): limited_total, "
        f"{LIMITED_CALLS} calls through haproxy: {outcomes.answered} answered, "
        f"{outcomes.limited} limited, {lost} lost; by instance: "
        + ", ".join(f"{name} {dict(counts)}" for name, counts in served.items())
    )
    for what, count in outcomes.other.most_common():
        print(f"  lost {count}: {what}")
    by_instance = ", ".join(f"{name} {counts['success']}" for name, counts in served.items())
    shared.summary.append(
        f"Redis down, local: {LIMITED_CALLS} calls of limited_total, {outcomes.answered} "
        f"answered ({by_instance}: "
        f"the limit of {LIMIT} held in each process), {outcomes.limited} limited, {lost} lost"
    )
    for name, counts in served.items():
        total = counts["success"] + counts["limited"]
        if counts["success"] != min(LIMIT, total):
            shared.problems.append(
                f"Redis down, local: instance {name} answered {counts['success']} of {total} "
                f"calls, not {min(LIMIT, total)}: its own limit did not hold"
            )
    if lost:
        shared.problems.append(f"Redis down, local: {lost} calls lost")


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
    if shutil.which("redis-server") is None:
        print("scale-check: redis-server not found (apt-get install redis-server)", file=sys.stderr)
        return 2
    tokens = {name: secrets.token_urlsafe(32) for name in CALLERS}
    upstream = Upstream()
    routes: dict[str, loopback.Behaviour] = dict.fromkeys(
        ("/limited", "/shared", "/per-caller"), upstream
    )
    front, stats = free_port(), free_port()
    with (
        tempfile.TemporaryDirectory() as scratch_name,
        redis_server(Path(scratch_name)) as redis,
        loopback.serve(routes) as origin,
    ):
        scratch = Path(scratch_name)
        (scratch / "tools").mkdir()
        (scratch / "tools" / "limited.yaml").write_text(TOOLS.format(origin=origin, limit=LIMIT))
        (scratch / "tokens").write_text(
            "".join(f"{token} caller={name}\n" for name, token in tokens.items())
        )
        args = [
            "--tools", "tools.d", "--tools", str(scratch / "tools"), "--stateless",
            "--auth-token-file", str(scratch / "tokens"), "--limits-store", redis.url,
        ]  # fmt: skip
        audits = {name: scratch / f"audit-{name}.jsonl" for name in ("a", "b")}
        instances = [
            Instance(name, free_port(), [*args, "--audit", str(audits[name])], {})
            for name in ("a", "b")
        ]
        config_text = HAPROXY_CONFIG.format(
            front=front, stats=stats, a=instances[0].port, b=instances[1].port
        )
        if options.without_retries:
            config_text = config_text.replace(RETRY_ON, "")
        config = scratch / "haproxy.cfg"
        config.write_text(config_text)
        shared = Shared(
            f"http://127.0.0.1:{front}/mcp", stats, instances, audits, tokens, upstream, redis
        )
        proxy = None
        try:
            for instance in instances:
                instance.start()
            proxy = subprocess.Popen(
                [haproxy, "-f", str(config), "-db"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            return check(shared, options)
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


def check(shared: Shared, options: argparse.Namespace) -> int:
    stats, instances, problems = shared.stats, shared.instances, shared.problems
    for instance in instances:
        wait_until(
            lambda name=instance.name: server_status(stats, name) == "UP",
            f"haproxy to see {instance.name} ready",
        )
    token = shared.tokens[CALLERS[0]]
    tally, seconds = asyncio.run(
        rolling_restart(shared.front, token, stats, instances, options.rounds)
    )
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
    shared.summary.append(
        f"rolling restart: {tally.answered:,} of {tally.sent:,} calls answered, {lost:,} lost"
    )
    if tally.answered != tally.sent:
        problems.append(f"{tally.sent - tally.answered} of {tally.sent} calls not answered")
    if tally.sessions_ended:
        problems.append(f"{len(tally.sessions_ended)} client sessions ended")
    if not served["a"] or not served["b"]:
        problems.append("one instance served nothing: the load was not balanced")
    check_limits(shared)
    check_caches(shared)
    check_redis_down(shared)
    for instance in instances:
        if any(instance.exits):
            problems.append(f"instance {instance.name} exited {instance.exits} on SIGTERM, not 0")
    print("scale-check: summary (two instances, one Redis):")
    for line in shared.summary:
        print(f"  {line}")
    for problem in problems:
        print(f"scale-check: FAILED: {problem}", file=sys.stderr)
    if not problems:
        print("scale-check: passed")
    return 1 if problems else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
