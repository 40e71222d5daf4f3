"""The YAML layer: an HTTP tool vs raw requests on loopback; loading 1,000 definitions."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import requests
import yaml

from agentkit import ToolExecutor, ToolRegistry, load_tools
from benchmarks.timing import Case, best_per_call, verdict
from tests.support import loopback

DEFINITION = """\
name: item_{index}
version: 1.0.0
description: Fetch item number {index}.
tags: {{bench: "true"}}
input_schema:
  parameters:
    - {{name: id, type: string}}
    - {{name: lang, type: string, required: false, default: en}}
    - {{name: limit, type: integer, required: false, default: 5}}
output_schema:
  parameters:
    - {{name: title, type: string}}
    - {{name: count, type: integer}}
backend:
  http:
    url: {origin}/items/{{{{ inputs.id }}}}
    query: {{lang: "{{{{ inputs.lang }}}}", limit: "{{{{ inputs.limit }}}}"}}
    headers: {{X-Request: "item-{{{{ inputs.id }}}}"}}
    output:
      title: "{{{{ response.json.title }}}}"
      count: "{{{{ response.json.count }}}}"
"""


def bench_http() -> list[str]:
    behaviours = {"/items/42": loopback.ok({"title": "answer", "count": 42})}
    with loopback.serve(behaviours) as origin, tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "item.yaml"
        path.write_text(DEFINITION.format(index=0, origin=origin))
        registry = ToolRegistry()
        load_tools(path, registry=registry)
        tool = registry["item_0"]
        executor = ToolExecutor(credentials={})
        session = requests.Session()
        # For reference only: requests without its per-call .netrc and proxy
        # lookups, which the tool's own session skips too (trust_env off).
        bare = requests.Session()
        bare.trust_env = False
        url = f"{origin}/items/42"

        def raw(session: requests.Session = session) -> object:
            reply = session.get(
                url, params={"lang": "en", "limit": "5"}, headers={"X-Request": "item-42"}
            )
            return reply.json()

        best = best_per_call(
            [
                Case("raw requests.Session().get().json()", raw),
                Case("  the same, trust_env=False (reference)", lambda: raw(bare)),
                Case(
                    "agentkit HTTP tool through the executor",
                    lambda: executor.execute(tool, {"id": "42"}),
                ),
            ],
            number=300,
            rounds=5,
        )
    baseline, bare_baseline, ours = best.values()
    ratio = ours / baseline
    return [
        "http: one GET against a loopback keep-alive server (best of 5 interleaved rounds)",
        *(f"  {label:<42} {seconds * 1e3:7.3f} ms" for label, seconds in best.items()),
        f"  target: <= 1.10x raw requests: {ratio:.2f}x -> {verdict(ratio <= 1.10)}"
        f" ({ours / bare_baseline:.2f}x the trust_env=False reference)",
    ]


def write_definitions(root: Path, count: int, *, first: int = 0) -> list[Path]:
    """Write ``count`` HTTP definitions (tools ``item_<first>`` on) into ``root``; sorted."""
    files = []
    for index in range(first, first + count):
        file = root / f"item_{index:05}.yaml"
        file.write_text(DEFINITION.format(index=index, origin="https://api.example.com"))
        files.append(file)
    return files


def bench_load(count: int = 1000) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        files = write_definitions(root, count)

        def parse_only() -> None:
            for file in files:
                yaml.safe_load(file.read_text())

        timings: dict[str, float] = {}
        for label, run in [
            ("yaml.safe_load of every file", parse_only),
            ("agentkit.load_tools (whole load)", lambda: load_tools(root)),
        ]:
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                run()
                best = min(best, time.perf_counter() - started)
            timings[label] = best
    parse, load = timings.values()
    ratio = load / parse
    return [
        f"load: {count} HTTP definitions, 7 templates each (best of 3)",
        *(f"  {label:<42} {seconds:7.3f} s" for label, seconds in timings.items()),
        f"  target: <= 1.0x safe_load and < 1 s: {ratio:.2f}x, {load:.2f} s "
        f"-> {verdict(ratio <= 1.0 and load < 1.0)}",
    ]


def run() -> list[str]:
    return [*bench_http(), "", *bench_load()]
