"""``timeout.total`` ends the call at about that time, whatever the server does.

The calls run concurrently in one subprocess (``deadline_calls``) with a
timeout, so a regression fails these tests instead of hanging the run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.declarative import deadline_calls, rawserver
from tests.declarative.conftest import WriteFile
from tests.declarative.test_http_resend import load, run
from tests.helpers import WAIT_SECONDS, wait_until

ROOT = Path(__file__).resolve().parents[2]
TOTAL = deadline_calls.TOTAL
# A bound, not a speed test: generous for a loaded machine, and still far below
# what any of these calls takes when the deadline does not end it.
MARGIN = 4.0


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.declarative.deadline_calls", tmp_path_factory.mktemp("d")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("case", deadline_calls.CASES)
def test_the_deadline_ends_the_call(outcomes: dict[str, Any], case: str) -> None:
    method, sent = deadline_calls.CASES[case].method, deadline_calls.CASES[case].sent
    assert case in outcomes, f"the call was still running after {deadline_calls.GIVE_UP} s"
    outcome = outcomes[case]
    assert outcome["elapsed"] < TOTAL + MARGIN, outcome
    assert outcome["error"].startswith(f"Tool 'probe' failed: HttpCallError: {method} "), outcome
    assert f"timed out after {TOTAL} s (timeout.total)" in outcome["error"], outcome
    maybe_processed = outcome["error"].endswith(
        "; the request was sent and may have been processed"
    )
    assert maybe_processed == (method == "POST" and sent), outcome


def test_a_finished_call_leaves_its_keep_alive_connection_alone(write: WriteFile) -> None:
    # The watchdog is cancelled with the call: a connection back in the pool
    # serves the next call even after the first call's deadline has passed.
    with rawserver.serve(rawserver.ok) as server:
        tool = load(write, server.origin, "GET", "    timeout: {total: 0.3}")
        assert run(tool).succeeded
        time.sleep(0.5)
        second = run(tool)
        received = server.received
    assert second.output == {"title": "fine"}
    assert received == 2


def test_the_watchdog_spares_a_connection_another_call_took() -> None:
    import requests

    from agentkit.declarative.http_transport import DeadlineAdapter, Exchange

    session = requests.Session()
    session.mount("http://", DeadlineAdapter())
    with rawserver.serve(rawserver.ok) as server:
        with Exchange(time.monotonic() + 0.3) as first:
            assert session.get(server.origin, timeout=5).content  # back in the pool after
            with Exchange(time.monotonic() + 30):
                assert session.get(server.origin, timeout=5).content  # the same connection
                wait_until(lambda: first.expired, "the first call's watchdog to fire")
                assert session.get(server.origin, timeout=5).content
        connections = server.connections
    assert connections == 1  # never shut down, so never dialled again
