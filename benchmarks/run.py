"""`make bench`: every benchmark, each printing figures measured side by side in one run."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import (
    bench_catalog,
    bench_cli,
    bench_concurrency,
    bench_declarative,
    bench_executor,
    bench_limits,
    bench_openapi,
    bench_overhead,
    bench_redaction,
    bench_scaling,
    bench_serve,
    bench_serve_concurrency,
    bench_sources,
)


def main() -> None:
    for bench in (
        bench_executor,
        bench_overhead,
        bench_redaction,
        bench_limits,
        bench_concurrency,
        bench_declarative,
        bench_sources,
        bench_scaling,
        bench_cli,
        bench_serve,
        bench_serve_concurrency,
        bench_openapi,
        bench_catalog,
    ):
        print("\n".join(bench.run()), flush=True)
        print()


if __name__ == "__main__":
    main()
