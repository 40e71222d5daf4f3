"""A large catalog served with progressive discovery: Kubernetes' description imported
by the default ``agentkit import openapi`` and served over stdio with every tool
deferred, through the MCP SDK's own client.

- the first ``tools/list`` a client gets, in bytes of JSON as the SDK's client
  parsed it (target: under 50 KB, against tens of megabytes listed whole);
- ``search_tools`` round trips, client to server and back, over queries made from
  the tools' own names (target: p99 under 100 ms), and how often the tool a query
  was made from is among the first five matches (a figure, not a target: the
  queries are the words of one name, which several tools share).

The description is too big to vendor: ``make bench`` installs it with npm
(``benchmarks/kubernetes``); without it this bench says so and skips.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentkit import ToolRegistry, load_tools
from benchmarks.bench_openapi import KUBERNETES
from benchmarks.serving import agentkit_command, over_stdio
from benchmarks.timing import target_line

SPEC = KUBERNETES / "swagger-1.13.json.gz"
#: Bytes: the first tools/list of a deferred catalog.
LIST_TARGET = 50_000
#: Seconds: a search round trip at p99.
SEARCH_P99_TARGET = 0.100
QUERIES = 300
SEED = 20261205


def run() -> list[str]:
    title = "catalog: Kubernetes' description served with every tool deferred (stdio)"
    if not SPEC.exists():
        return [
            f"{title}: skipped, the description is not installed ({SPEC} is missing); "
            "`make bench` installs it with npm (`npm ci` in benchmarks/kubernetes)"
        ]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        spec = folder / "kubernetes.json"
        spec.write_bytes(gzip.decompress(SPEC.read_bytes()))
        tools = folder / "tools.d"
        argv = [sys.executable, "-m", "agentkit", "import", "openapi", str(spec)]
        argv += ["--source", "kubernetes", "--out", str(tools)]
        subprocess.run(argv, check=True, capture_output=True)
        registry = ToolRegistry()
        load_tools(tools, registry=registry)
        command = agentkit_command("--tools", str(tools), "--defer", "*")
        listed, names, seconds, found = asyncio.run(over_stdio(command, _measure))
    p50 = statistics.median(seconds)
    p99 = statistics.quantiles(seconds, n=100)[98]
    return [
        f"{title}: {len(registry)} tools imported, {len(names)} found by searching",
        f"  first tools/list: {listed:,} bytes of JSON",
        target_line("first tools/list", listed / 1000, LIST_TARGET / 1000, " KB"),
        f"  search_tools round trip over {len(seconds)} queries: p50 {p50 * 1e3:.2f} ms, "
        f"p99 {p99 * 1e3:.2f} ms; the named tool in the first five for {found:.0%}",
        target_line("search p99", p99 * 1e3, SEARCH_P99_TARGET * 1e3, " ms"),
    ]


async def _measure(session: Any) -> tuple[int, list[str], list[float], float]:
    listing = await session.list_tools()
    listed = len(json.dumps(listing.model_dump(by_alias=True, exclude_none=True, mode="json")))
    # Every tool is deferred: the names come from searching, one query per word stem.
    names = await _all_names(session)
    pick = random.Random(SEED)
    seconds: list[float] = []
    hits = 0
    for name in pick.choices(names, k=QUERIES):
        query = " ".join(re.split(r"[_\W]+", name))
        started = time.perf_counter()
        result = await session.call_tool("search_tools", {"query": query, "limit": 5})
        seconds.append(time.perf_counter() - started)
        matches = [match["name"] for match in result.structured_content["tools"]]
        hits += name in matches
    return listed, names, seconds, hits / QUERIES


async def _all_names(session: Any) -> list[str]:
    """The deferred tools' names, found by searching the words Kubernetes' operations use."""
    names: set[str] = set()
    verbs = ("list", "read", "create", "replace", "patch", "delete", "watch", "connect", "get")
    kinds = (
        "namespaced pod", "node", "service", "deployment", "config map", "secret", "job",
        "cron job", "ingress", "namespace", "persistent volume", "role binding", "event",
        "stateful set", "daemon set", "replica set", "endpoints", "service account",
        "custom resource definition", "api service", "storage class", "lease", "status",
    )  # fmt: skip
    for verb in verbs:
        for kind in kinds:
            result = await session.call_tool(
                "search_tools", {"query": f"{verb} {kind}", "limit": 20}
            )
            names.update(match["name"] for match in result.structured_content["tools"])
    return sorted(names)
