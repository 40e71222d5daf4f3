"""Importing GitHub's full REST description, and loading the folder the import writes.

The description (npm ``@octokit/openapi``, pinned in ``benchmarks/github/package-lock.json``;
about 1,000 operations, 13 MB) is too big to vendor: ``make bench`` installs it,
and without it this bench says so and skips.

The targets are CPU time (``time.process_time``), as docs/performance.md
explains: on a shared machine a neighbour stretches wall time 2-4x at random.
Wall time is printed beside it.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agentkit import ToolRegistry, load_tools
from agentkit.openapi import import_openapi
from agentkit.openapi.check import check_description
from agentkit.openapi.reader import load_description
from benchmarks.timing import target_line

PACKAGE = Path(__file__).resolve().parent / "github" / "node_modules" / "@octokit" / "openapi"
DESCRIPTION = PACKAGE / "generated" / "api.github.com.json"
RUNS = 5
#: Seconds: importing the description, and loading what it wrote (issue 11).
IMPORT_TARGET = 3.0
LOAD_TARGET = 1.5


def run() -> list[str]:
    if not DESCRIPTION.exists():
        return [
            "openapi: skipped: GitHub's REST description is not installed "
            f"({DESCRIPTION} is missing); `make bench` installs it with npm "
            "(`npm ci` in benchmarks/github)"
        ]
    imports: list[tuple[float, float]] = []
    loads: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        for index in range(RUNS):
            out = Path(folder) / f"run{index}"
            wall, cpu = time.perf_counter(), time.process_time()
            report = import_openapi(DESCRIPTION, source="github", out=out, check=False)
            imports.append((time.process_time() - cpu, time.perf_counter() - wall))
            registry = ToolRegistry()
            wall, cpu = time.perf_counter(), time.process_time()
            load_tools(out, registry=registry)
            loads.append((time.process_time() - cpu, time.perf_counter() - wall))
            shutil.rmtree(out)
    started = time.perf_counter()
    findings = check_description(load_description(DESCRIPTION))
    checked = time.perf_counter() - started
    import_cpu, import_wall = (statistics.median(times) for times in zip(*imports, strict=True))
    load_cpu, load_wall = (statistics.median(times) for times in zip(*loads, strict=True))
    size = DESCRIPTION.stat().st_size / 1e6
    check = (
        "  openapi-spec-validator's check (--no-check skips it; not in the target): "
        f"{checked:.2f} s, {len(findings)} finding(s)"
        if findings is not None
        else "  openapi-spec-validator is not installed: the check was not timed"
    )
    return [
        f"openapi: GitHub's REST description ({size:.1f} MB; CPU time, median of {RUNS} runs)",
        f"  agentkit import openapi --no-check       {import_cpu:7.2f} s "
        f"(wall {import_wall:.2f} s; {len(report.written) - 1} tools, "
        f"{len(report.skipped)} skipped)",
        f"  load_tools of the folder it wrote        {load_cpu:7.2f} s "
        f"(wall {load_wall:.2f} s; {len(registry)} tools)",
        check,
        target_line("import", import_cpu, IMPORT_TARGET, " s"),
        target_line("load", load_cpu, LOAD_TARGET, " s"),
    ]
