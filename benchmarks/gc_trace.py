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
from typing import Final

from benchmarks.pauses import noting

__all__ = ["main"]


def main(argv: list[str]) -> None:
    log_path, *args = argv
    log = open(log_path, "w", buffering=1, encoding="utf-8")  # noqa: SIM115 (the process's life)
    gc.callbacks.append(noting(lambda pause: log.write(pause.logged())))
    sys.argv = ["agentkit", *args]
    runpy.run_module("agentkit", run_name="__main__", alter_sys=True)


_USAGE: Final = "usage: python -m benchmarks.gc_trace LOG ARGS..."

if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(_USAGE)
    main(sys.argv[1:])
