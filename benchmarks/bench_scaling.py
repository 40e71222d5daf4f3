"""Loading many HTTP definitions: time at 10,000 against 1,000, and memory kept per tool.

Loading should be linear in the number of definitions (10x the files, at most
10.5x the time), and a loaded HTTP tool should keep at most 12 KiB. Cyclic GC
stays on while timing, as it is for users; ``load_tools`` pauses it itself (its
passes over a growing heap made loading superlinear), and the GC column shows
what collection work is left inside the load.

The figure is the process's CPU time, not wall time: a 10,000 round lasts
seconds, longer than the spells in which neighbours on a shared machine take the
cores, so interleaving alone cannot even those out; a single-threaded load's
CPU time is what it costs whoever else is running.
"""

from __future__ import annotations

import gc
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentkit import ToolRegistry, load_tools
from benchmarks.bench_declarative import write_definitions
from benchmarks.timing import target_line

SMALL = 1_000
LARGE = 10_000
ROUNDS = 3  # a 10,000 round takes 3-10 s on a 2-core machine; the median is reported
MEMORY_TOOLS = 1_000
BREAKDOWN_TOOLS = 200
#: Frames kept per allocation, enough to find the agentkit module that made it.
FRAMES = 32
AGENTKIT = str(Path(__file__).resolve().parent.parent / "agentkit")


class _GCClock:
    """CPU seconds spent in cyclic GC passes, from the interpreter's gc callbacks."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started


@dataclass(frozen=True, slots=True, order=True)
class _LoadRound:
    cpu: float  # first, so rounds sort by CPU time
    wall: float
    gc: float


def _load_round(root: Path) -> _LoadRound:
    """One load of every definition under ``root``: CPU and wall seconds, and GC's share."""
    gc.collect()  # each round starts from the same heap, not the last round's garbage
    clock = _GCClock()
    gc.callbacks.append(clock)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        load_tools(root)
        return _LoadRound(time.process_time() - cpu, time.perf_counter() - wall, clock.seconds)
    finally:
        gc.callbacks.remove(clock)


def bench_load_scaling() -> list[str]:
    with tempfile.TemporaryDirectory() as small, tempfile.TemporaryDirectory() as large:
        roots = {SMALL: Path(small), LARGE: Path(large)}
        for count, root in roots.items():
            write_definitions(root, count)
        rounds: dict[int, list[_LoadRound]] = {count: [] for count in roots}
        for _ in range(ROUNDS):  # interleaved, so a slow spell hits both sizes alike
            for count, root in roots.items():
                rounds[count].append(_load_round(root))
    median = {count: sorted(taken)[len(taken) // 2] for count, taken in rounds.items()}
    lines = [
        f"load scaling: load_tools of HTTP definitions, CPU time (median of {ROUNDS} interleaved "
        "rounds; wall time for reference)"
    ]
    for count, round_ in median.items():
        lines.append(
            f"  {count:>6,} definitions  {round_.cpu:6.2f} s CPU  "
            f"{round_.cpu / count * 1e6:5.0f} us each  {round_.gc / round_.cpu:4.0%} in cyclic GC"
            f"  (wall {round_.wall:.2f} s)"
        )
    few, many = median[SMALL], median[LARGE]
    lines.append(
        f"  outside cyclic GC {(many.cpu - many.gc) / (few.cpu - few.gc):.2f}x; "
        f"in it {few.gc:.2f} s -> {many.gc:.2f} s"
    )
    lines.append(target_line(f"{LARGE:,} / {SMALL:,} definitions", many.cpu / few.cpu, 10.5))
    return lines


def _made_by(traceback: Sequence[tracemalloc.Frame]) -> str:
    """The innermost agentkit module on an allocation's stack (else its innermost file)."""
    for frame in reversed(traceback):  # tracemalloc lists the innermost frame last
        if frame.filename.startswith(AGENTKIT):
            return "agentkit" + frame.filename[len(AGENTKIT) :]
    return Path(traceback[-1].filename).name if traceback else "?"


def _kept_by_module(count: int, frames: int) -> Counter[str]:
    """Bytes still allocated after loading ``count`` tools into a live registry, by maker."""
    with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as folder:
        # Loading a few other definitions first leaves lazy imports and shared
        # caches out of the figure: only what each new tool keeps is counted.
        load_tools(*write_definitions(Path(warm), 20, first=LARGE))
        write_definitions(Path(folder), count)
        gc.collect()
        tracemalloc.start(frames)
        try:
            before = tracemalloc.take_snapshot()
            registry = ToolRegistry()
            load_tools(folder, registry=registry)
            gc.collect()
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
    loaded = len(registry.names())
    if loaded != count:
        raise RuntimeError(f"memory: loaded {loaded} tools, expected {count}")
    kept: Counter[str] = Counter()
    for stat in after.compare_to(before, "traceback"):
        kept[_made_by(stat.traceback)] += stat.size_diff
    return kept


def bench_memory() -> list[str]:
    # tracemalloc slows loading ~10x with one frame per allocation and ~30x with the
    # deep stacks the breakdown needs, so the breakdown takes a smaller sample.
    per_tool = sum(_kept_by_module(MEMORY_TOOLS, 1).values()) / MEMORY_TOOLS / 1024
    breakdown = _kept_by_module(BREAKDOWN_TOOLS, FRAMES)
    lines = [
        f"memory: kept per loaded HTTP tool, {MEMORY_TOOLS:,} tools (tracemalloc, after gc)",
        f"  {'total':<44} {per_tool:6.2f} KiB/tool",
        f"  by the agentkit module that allocated it ({BREAKDOWN_TOOLS} tools):",
    ]
    for module, size in breakdown.most_common(8):
        lines.append(f"    {module:<42} {size / BREAKDOWN_TOOLS / 1024:6.2f} KiB/tool")
    lines.append(target_line("memory per tool", per_tool, 12, " KiB"))
    return lines


def run() -> list[str]:
    return [*bench_load_scaling(), "", *bench_memory()]
