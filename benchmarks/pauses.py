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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, final

__all__ = [
    "NOTED_SECONDS",
    "STALL_SECONDS",
    "Pause",
    "Pauses",
    "noting",
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

    def logged(self) -> str:
        """The pause as a line of ``benchmarks.gc_trace``'s log (``read_log`` reads it)."""
        return f"{self.generation} {self.start:.6f} {self.end:.6f} {self.cpu:.6f}\n"


def noting(on_pause: Callable[[Pause], object]) -> Callable[[str, dict[str, int]], None]:
    """A ``gc.callbacks`` callback that hands ``on_pause`` each collection worth
    noting: every one of the oldest generation, any other over ``NOTED_SECONDS``."""
    began = [0.0, 0.0]  # the wall clock and the thread's CPU time at the start

    def observe(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0], began[1] = time.monotonic(), time.thread_time()
            return
        end = time.monotonic()
        generation = info["generation"]
        if generation == 2 or end - began[0] > NOTED_SECONDS:
            cpu = time.thread_time() - began[1]
            on_pause(Pause(generation=generation, start=began[0], end=end, cpu=cpu))

    return observe


@final
class Pauses:
    """This process's collections worth noting, kept as they come (``observe`` is the
    ``gc.callbacks`` callback)."""

    __slots__ = ("noted", "observe")

    def __init__(self) -> None:
        self.noted: list[Pause] = []
        self.observe = noting(self.noted.append)

    @property
    def full(self) -> int:
        """How many full collections (of the oldest generation) there were."""
        return sum(1 for pause in self.noted if pause.generation == 2)

    @property
    def longest_full(self) -> float:
        """The longest full collection, in seconds (0 when there was none)."""
        return max((pause.seconds for pause in self.noted if pause.generation == 2), default=0.0)


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
