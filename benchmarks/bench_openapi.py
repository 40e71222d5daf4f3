"""The default ``agentkit import openapi`` command on two large real descriptions, and
loading the folder it writes.

- GitHub's REST description (npm ``@octokit/openapi``, pinned in
  ``benchmarks/github/package-lock.json``; OpenAPI 3.0, 13 MB, about 1,200 operations).
- Kubernetes' (npm ``kubernetes-client``, pinned in ``benchmarks/kubernetes``; its
  ``lib/specs/swagger-1.13.json.gz``, Swagger 2.0, 4.2 MB, about 1,000 operations).

Both are too big to vendor: ``make bench`` installs them, and without them this bench
says so and skips that description.

Each command runs as the user runs it, a fresh process with the check included (the
default), beside the same command with ``--no-check``, interleaved round by round;
then ``--update`` of the folder the import wrote (the description unchanged, so the
merge, the classification and the lock are the whole of it), with its peak RSS.
The targets are CPU time of the child process, as docs/performance.md explains: on
a shared machine a neighbour stretches wall time 2-4x at random. Wall time is
printed beside it.
"""

from __future__ import annotations

import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentkit import ToolRegistry, load_tools
from agentkit.openapi.check import check_description
from agentkit.openapi.reader import load_description
from benchmarks.timing import target_line

HERE = Path(__file__).resolve().parent
GITHUB = HERE / "github" / "node_modules" / "@octokit" / "openapi" / "generated"
KUBERNETES = HERE / "kubernetes" / "node_modules" / "kubernetes-client" / "lib" / "specs"
#: name, the installed file, the npm folder that installs it, target seconds (CPU).
DESCRIPTIONS = (
    ("GitHub", GITHUB / "api.github.com.json", "benchmarks/github", 3.0),
    ("Kubernetes", KUBERNETES / "swagger-1.13.json.gz", "benchmarks/kubernetes", 8.0),
)
RUNS = 3
#: Seconds: loading what GitHub's import wrote.
LOAD_TARGET = 1.5
#: ``--update`` of Kubernetes' import: CPU seconds, and peak RSS in MB.
UPDATE_TARGETS = {"Kubernetes": (15.0, 500.0)}


def run() -> list[str]:
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        for name, installed, npm, target in DESCRIPTIONS:
            if not installed.exists():
                lines.append(
                    f"openapi: skipped: {name}'s description is not installed ({installed} is "
                    f"missing); `make bench` installs it with npm (`npm ci` in {npm})"
                )
                continue
            lines += _bench(name, _plain(installed, Path(folder)), Path(folder), target)
    return lines


def _plain(installed: Path, folder: Path) -> Path:
    """The description as a file the command reads (Kubernetes' is shipped gzipped)."""
    if installed.suffix != ".gz":
        return installed
    plain = folder / installed.stem
    plain.write_bytes(gzip.decompress(installed.read_bytes()))
    return plain


def _bench(name: str, spec: Path, folder: Path, target: float) -> list[str]:
    times: dict[str, list[tuple[float, float, float]]] = {"": [], "--no-check": []}
    out = folder / "out"
    for _ in range(RUNS):
        for flag, measured in times.items():
            shutil.rmtree(out, ignore_errors=True)
            measured.append(_command(spec, out, flag))
    updates = [_command(spec, out, "--update") for _ in range(RUNS)]
    registry = ToolRegistry()
    started = time.process_time()
    load_tools(out, registry=registry)
    loaded = time.process_time() - started
    findings = check_description(load_description(spec))
    checked = (
        f"{len(findings)} finding(s)" if findings is not None else "jsonschema-rs not installed"
    )
    cpu, wall, _ = (statistics.median(figures) for figures in zip(*times[""], strict=True))
    bare_cpu, bare_wall, _ = (
        statistics.median(figures) for figures in zip(*times["--no-check"], strict=True)
    )
    update_cpu, update_wall, update_peak = (
        statistics.median(figures) for figures in zip(*updates, strict=True)
    )
    size = spec.stat().st_size / 1e6
    possessive = name + ("'" if name.endswith("s") else "'s")
    lines = [
        f"openapi: {possessive} description ({size:.1f} MB; CPU time of the command, "
        f"median of {RUNS} runs)",
        f"  agentkit import openapi (the check: {checked}) {cpu:6.2f} s (wall {wall:.2f} s)",
        f"  agentkit import openapi --no-check     {bare_cpu:6.2f} s (wall {bare_wall:.2f} s)",
        f"  load_tools of the folder it wrote      {loaded:6.2f} s ({len(registry)} tools)",
        f"  agentkit import openapi --update       {update_cpu:6.2f} s (wall {update_wall:.2f} "
        f"s, peak RSS {update_peak:.0f} MB)",
        target_line(f"{name} import", cpu, target, " s"),
    ]
    if name in UPDATE_TARGETS:
        seconds, megabytes = UPDATE_TARGETS[name]
        lines.append(target_line(f"{name} --update", update_cpu, seconds, " s"))
        lines.append(target_line(f"{name} --update peak RSS", update_peak, megabytes, " MB"))
    if name == "GitHub":
        lines.append(target_line("GitHub load", loaded, LOAD_TARGET, " s"))
    return lines


def _command(spec: Path, out: Path, flag: str) -> tuple[float, float, float]:
    """CPU and wall seconds, and peak RSS in MB, of one ``agentkit import openapi`` process."""
    argv = [sys.executable, "-m", "agentkit", "import", "openapi", str(spec)]
    argv += ["--source", "bench", "--out", str(out), *([flag] if flag else [])]
    # A file, not a pipe, for what it says: nothing reads a pipe while it runs.
    with tempfile.TemporaryFile() as said:
        wall = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=said)
        # wait4: this child's own usage (RUSAGE_CHILDREN's peak is the largest child's).
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - wall
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            said.seek(0)
            raise subprocess.CalledProcessError(child.returncode, argv, stderr=said.read())
    cpu = usage.ru_utime + usage.ru_stime
    return cpu, wall, usage.ru_maxrss / 1024  # kilobytes on Linux
