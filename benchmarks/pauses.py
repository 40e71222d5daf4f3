"""Garbage collector pauses, and the calls that waited on one (``make soak``'s tail).

A pause is one collection: its generation, its start and end on ``time.monotonic()``
(a clock every process on the machine shares), and the CPU time spent in it. The
client records its own (``Pauses``); the server's come from ``benchmarks.gc_trace``'s
log (``read_log``). ``waited_share`` says which share of some calls overlapped a pause
of at least ``STALL_SECONDS``: for the slowest 1% of a tool's calls against all of
them, it shows whether the tail is made of pauses.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = [
    "NOTED_SECONDS",
    "STALL_SECONDS",
    "Pause",
    "Pauses",
    "read_log",
    "waited_share",
]

#: A collection of a young generation is noted when it took longer than this; one of
#: the oldest generation always is.
NOTED_SECONDS: Final = 0.002
#: A pause at least this long counts as one a call waited on.
STALL_SECONDS: Final = 0.005


@dataclass(frozen=True, slots=True, kw_only=True)
class Pause:
    generation: int
    start: float
    end: float
    cpu: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass
class Pauses:
    """This process's collections, noted through ``gc.callbacks`` (``observe``): its
    full collections counted, the longest timed, and every noted one kept."""

    full: int = 0
    longest_full: float = 0.0
    noted: list[Pause] = field(default_factory=list)
    _began: tuple[float, float] = (0.0, 0.0)

    def observe(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = (time.monotonic(), time.thread_time())
            return
        began, cpu = self._began
        end = time.monotonic()
        generation = info["generation"]
        if generation == 2:
            self.full += 1
            self.longest_full = max(self.longest_full, end - began)
        if generation == 2 or end - began > NOTED_SECONDS:
            pause = Pause(generation=generation, start=began, end=end, cpu=time.thread_time() - cpu)
            self.noted.append(pause)


def read_log(path: Path) -> list[Pause]:
    """The pauses ``benchmarks.gc_trace`` wrote to ``path`` (none if it wrote nothing);
    a line cut short (the server killed while writing it) is left out."""
    if not path.exists():
        return []
    pauses = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) != 4:
            continue
        generation, start, end, cpu = fields
        pauses.append(
            Pause(generation=int(generation), start=float(start), end=float(end), cpu=float(cpu))
        )
    return pauses


def waited_share(
    calls: Sequence[tuple[float, float]], pauses: Sequence[Pause], stall: float = STALL_SECONDS
) -> float:
    """The share of ``calls`` (each its start and end, on ``time.monotonic()``) during
    which a pause of at least ``stall`` seconds was under way."""
    if not calls:
        return 0.0
    stalls = sorted((pause.start, pause.end) for pause in pauses if pause.seconds >= stall)
    starts = [start for start, _ in stalls]
    # Stalls do not overlap one another (one process collects one at a time), so the
    # stall that began last before a call ended is the only one that may overlap it
    # and not be over before the call began -- unless an earlier, longer one is: the
    # running maximum of the ends covers that.
    reach = []
    furthest = float("-inf")
    for _, end in stalls:
        furthest = max(furthest, end)
        reach.append(furthest)
    waited = 0
    for start, end in calls:
        index = bisect.bisect_left(starts, end) - 1
        if index >= 0 and reach[index] > start:
            waited += 1
    return waited / len(calls)
