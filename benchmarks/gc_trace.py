"""Run the ``agentkit`` command with its garbage collector's pauses written to a file.

    python -m benchmarks.gc_trace LOG ARGS...    (as ``python -m agentkit ARGS...``)

For ``python -m benchmarks.soak --trace-gc`` (``make soak SOAK_ARGS=--trace-gc``):
each collection of the oldest generation, and any other that took over
``NOTED_SECONDS``, is one line of ``LOG``: the generation, its start and end on
``time.monotonic()`` (the clock every process on the machine shares, so they line
up with the client's calls) and the CPU time the collecting thread spent in it. The
only change to the server is the callback, which runs twice per collection.
"""

from __future__ import annotations

import gc
import runpy
import sys
import time
from collections.abc import Callable
from typing import Final, TextIO

from benchmarks.pauses import NOTED_SECONDS

__all__ = ["main", "tracer"]


def tracer(log: TextIO) -> Callable[[str, dict[str, int]], None]:
    """A ``gc.callbacks`` callback writing the pauses it notes to ``log``."""
    began = [0.0, 0.0]

    def observe(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0], began[1] = time.monotonic(), time.thread_time()
            return
        end = time.monotonic()
        generation = info["generation"]
        if generation == 2 or end - began[0] > NOTED_SECONDS:
            log.write(
                f"{generation} {began[0]:.6f} {end:.6f} {time.thread_time() - began[1]:.6f}\n"
            )

    return observe


def main(argv: list[str]) -> None:
    log_path, *args = argv
    log = open(log_path, "w", buffering=1, encoding="utf-8")  # noqa: SIM115 (the process's life)
    gc.callbacks.append(tracer(log))
    sys.argv = ["agentkit", *args]
    runpy.run_module("agentkit", run_name="__main__", alter_sys=True)


_USAGE: Final = "usage: python -m benchmarks.gc_trace LOG ARGS..."

if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(_USAGE)
    main(sys.argv[1:])
