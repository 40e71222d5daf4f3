"""Calls against stalling servers, all at once, for ``test_http_deadline`` to run in a subprocess.

``python -m tests.declarative.deadline_calls DIRECTORY`` makes every call in
``CASES`` concurrently, each on its own server and tool, and prints one JSON
object: case id -> {"elapsed", "error", "received"}.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from agentkit import ToolExecutor, ToolRegistry, load_tools
from tests.declarative import rawserver
from tests.declarative.test_http_faults import TOOL

TOTAL: Final = 1.0
# Reads may take 30 s each: only the deadline can end these calls in time.
LONG_READS: Final = (
    f"    timeout: {{read: 30, total: {TOTAL}}}\n    retry: {{attempts: 3, backoff: 0.01}}"
)
NEAR_TIMEOUT_RETRIES: Final = (
    f"    timeout: {{read: 0.45, total: {TOTAL}}}\n    retry: {{attempts: 10, backoff: 0}}"
)

Case = tuple[str, Callable[[], list[rawserver.Reply]], str]
SERVERS: Final[dict[str, Callable[[], list[rawserver.Reply]]]] = {
    "status line a byte every 0.3 s": lambda: [rawserver.drip_status_line(0.3)],
    "headers a byte every 0.3 s": lambda: [rawserver.drip_headers(0.3)],
    "body a byte every 0.05 s": lambda: [rawserver.drip_body(0.05)],
    "chunked body a chunk every 0.05 s": lambda: [rawserver.drip_chunked_body(0.05)],
    "accepts, then silence": lambda: [rawserver.silence],
    "redirects, then drips headers": lambda: [
        rawserver.redirect("/a"),
        rawserver.redirect("/b"),
        rawserver.drip_headers(0.3),
    ],
}
CASES: Final[dict[str, Case]] = {
    f"{method}, {server}": (method, replies, LONG_READS)
    for server, replies in SERVERS.items()
    for method in ("GET", "POST")
}
CASES["GET, ten retries each near the read timeout"] = (
    "GET",
    lambda: [rawserver.silence],
    NEAR_TIMEOUT_RETRIES,
)


def call(directory: Path, case: str, outcomes: dict[str, Any]) -> None:
    method, replies, extra = CASES[case]
    with rawserver.serve(*replies()) as server:
        path = directory / f"{len(outcomes)}-{threading.get_ident()}.yaml"
        path.write_text(TOOL.format(method=method, origin=server.origin, extra=extra))
        registry = ToolRegistry()
        load_tools(path, registry=registry)
        started = time.monotonic()
        result = ToolExecutor(credentials={}).execute(
            registry["probe"], {"path": "p"}, raise_on_failure=False
        )
        elapsed = time.monotonic() - started
        outcomes[case] = {
            "elapsed": elapsed,
            "error": str(result.error),
            "received": server.received,
        }


def main(directory: Path) -> None:
    outcomes: dict[str, Any] = {}
    threads = [threading.Thread(target=call, args=(directory, case, outcomes)) for case in CASES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    print(json.dumps(outcomes))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
