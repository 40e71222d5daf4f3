"""Calls against stalling servers, all at once, for ``test_http_deadline`` to run in a subprocess.

``python -m tests.declarative.backends.http.deadline_calls DIRECTORY`` makes every call in
``CASES`` concurrently, each on its own server and tool, and prints one JSON
object: case id -> {"elapsed", "error", "received"}; a call that has not
ended after ``GIVE_UP`` seconds is missing.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Final, NamedTuple

from agentkit import ToolExecutor, ToolRegistry, load_tools
from tests.declarative.backends.http.test_faults import TOOL
from tests.support import rawserver

TOTAL: Final = 1.0
GIVE_UP: Final = 20.0  # seconds for all calls together; far past any deadline
# Reads may take 30 s each: only the deadline can end these calls in time.
LONG_READS: Final = (
    f"    timeout: {{read: 30, total: {TOTAL}}}\n    retry: {{attempts: 3, backoff: 0.01}}"
)
LONG_CONNECT: Final = f"    timeout: {{connect: 30, read: 30, total: {TOTAL}}}"
# Without the deadline, ten reads of 0.9 s: 9 s, well past test_http_deadline's bound.
NEAR_TIMEOUT_RETRIES: Final = (
    f"    timeout: {{read: 0.9, total: {TOTAL}}}\n    retry: {{attempts: 10, backoff: 0}}"
)


class Case(NamedTuple):
    method: str
    server: Callable[[], AbstractContextManager[rawserver.RawServer]]
    extra: str = LONG_READS
    sent: bool = True  # whether the request left before the deadline


SERVERS: Final[dict[str, Callable[[], AbstractContextManager[rawserver.RawServer]]]] = {
    "status line a byte every 0.3 s": lambda: rawserver.serve(rawserver.drip_status_line(0.3)),
    "headers a byte every 0.3 s": lambda: rawserver.serve(rawserver.drip_headers(0.3)),
    "body a byte every 0.05 s": lambda: rawserver.serve(rawserver.drip_body(0.05)),
    "chunked body a chunk every 0.05 s": lambda: rawserver.serve(rawserver.drip_chunked_body(0.05)),
    "accepts, then silence": lambda: rawserver.serve(rawserver.silence),
    "redirects, then drips headers": lambda: rawserver.serve(
        rawserver.redirect("/a"), rawserver.redirect("/b"), rawserver.drip_headers(0.3)
    ),
}
CASES: Final[dict[str, Case]] = {
    f"{method}, {name}": Case(method, server)
    for name, server in SERVERS.items()
    for method in ("GET", "POST")
}
CASES["GET, ten retries each near the read timeout"] = Case(
    "GET", lambda: rawserver.serve(rawserver.silence), NEAR_TIMEOUT_RETRIES
)
for _method in ("GET", "POST"):
    CASES[f"{_method}, a connect that never completes"] = Case(
        _method, rawserver.unaccepting, LONG_CONNECT, sent=False
    )


def call(directory: Path, case: str, outcomes: dict[str, Any]) -> None:
    method, serving, extra, _ = CASES[case]
    with serving() as server:
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
    """Run every case at once; a call still running after ``GIVE_UP`` seconds is left out."""
    outcomes: dict[str, Any] = {}
    threads = [
        threading.Thread(target=call, args=(directory, case, outcomes), daemon=True)
        for case in CASES
    ]
    for thread in threads:
        thread.start()
    give_up = time.monotonic() + GIVE_UP
    for thread in threads:
        thread.join(timeout=max(0.0, give_up - time.monotonic()))
    print(json.dumps(dict(outcomes)))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
