"""Side-by-side timing: cases are interleaved round by round and each keeps its best round.

On a shared, noisy machine the minimum of several rounds is the figure that
reflects the code rather than the neighbours; interleaving the cases means a
slow spell hits all of them alike, so their ratios stay meaningful.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """One thing to time; ``reset`` (untimed) runs before each of its rounds.

    ``reset`` is for cases that pile up state as they run (an in-memory span
    exporter, say), so a round neither measures nor keeps the previous ones'.
    """

    label: str
    run: Callable[[], object]
    reset: Callable[[], object] | None = None


def best_per_call(
    cases: Sequence[Case],
    *,
    number: int,
    rounds: int = 7,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Seconds per call of each case: the best of ``rounds`` rounds of ``number`` calls.

    ``clock`` may be ``time.thread_time`` for single-threaded cases: the CPU time
    this thread spent, which a neighbour taking the core does not inflate.
    """
    best = {case.label: float("inf") for case in cases}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for case in cases:  # warm-up: caches, lazy imports, branch predictors
            for _ in range(min(number, 1000)):
                case.run()
        for _ in range(rounds):
            for case in cases:
                if case.reset is not None:
                    case.reset()
                run = case.run
                start = clock()
                for _ in range(number):
                    run()
                elapsed = (clock() - start) / number
                best[case.label] = min(best[case.label], elapsed)
    finally:
        if gc_was_enabled:
            gc.enable()
    return best


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def target_line(
    what: str, figure: float, limit: float, unit: str = "x", *, at_least: bool = False
) -> str:
    """``  target: <what> <= <limit>: <figure> -> PASS|MISS``, the line every target prints
    (``>=`` for a floor, ``at_least``)."""
    held = figure >= limit if at_least else figure <= limit
    sign = ">=" if at_least else "<="
    return f"  target: {what} {sign} {limit:g}{unit}: {figure:.2f}{unit} -> {verdict(held)}"


def median(figures: Sequence[float]) -> float:
    return statistics.median(figures)


def span(figures: Sequence[float], spec: str = ".1f") -> str:
    """``low-high`` of ``figures``, each formatted with ``spec``."""
    return f"{min(figures):{spec}}-{max(figures):{spec}}"


def ratios(top: Sequence[float], bottom: Sequence[float]) -> list[float]:
    """Each round's ``top`` over the same round's ``bottom``."""
    return [a / b for a, b in zip(top, bottom, strict=True)]


def ratio_line(what: str, figures: Sequence[float], limit: float, *, at_most: bool = False) -> str:
    """A target on a ratio measured over rounds: its median at least ``limit`` (a
    speed-up), or ``at_most`` it (a cost), with the rounds' range."""
    middle = median(figures)
    met = middle <= limit if at_most else middle >= limit
    bound = "" if at_most else f" >= {limit:g}x"
    return (
        f"  target: {what}{bound}: {middle:.2f}x (rounds {span(figures, '.2f')}) -> {verdict(met)}"
    )
