"""``timeout.total`` ends the call at about that time, whatever the server does.

The calls run concurrently in one subprocess (``deadline_calls``) with a
timeout, so a regression fails these tests instead of hanging the run.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.declarative.backends.http import deadline_calls
from tests.declarative.backends.http.test_resend import load, run
from tests.declarative.conftest import WriteFile
from tests.support import loopback, rawserver
from tests.support.helpers import WAIT_SECONDS, wait_until

ROOT = Path(__file__).resolve().parents[4]
TOTAL = deadline_calls.TOTAL
# A bound, not a speed test: generous for a loaded machine, and still far below
# what any of these calls takes when the deadline does not end it.
MARGIN = 4.0


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.declarative.backends.http.deadline_calls",
            tmp_path_factory.mktemp("d"),
        ],
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
    # The deadline belongs to the call, not the connection: a connection back in
    # the pool serves the next call even after the first call's deadline has passed.
    with rawserver.serve(rawserver.ok) as server:
        tool = load(write, server.origin, "GET", "    timeout: {total: 0.3}")
        assert run(tool).succeeded
        time.sleep(0.5)
        second = run(tool)
        received = server.received
    assert second.output == {"title": "fine"}
    assert received == 2


def test_a_passed_deadline_spares_a_connection_another_call_took() -> None:
    import requests

    from agentkit.declarative.backends.http.transport import DeadlineAdapter, Exchange

    session = requests.Session()
    session.mount("http://", DeadlineAdapter())
    with rawserver.serve(rawserver.ok) as server:
        with Exchange(time.monotonic() + 0.3) as first:
            assert session.get(server.origin, timeout=5).content  # back in the pool after
            with Exchange(time.monotonic() + 30):
                assert session.get(server.origin, timeout=5).content  # the same connection
                wait_until(lambda: first.timed_out, "the first call's deadline to pass")
                assert session.get(server.origin, timeout=5).content
        connections = server.connections
    assert connections == 1  # never shut down, so never dialled again


def test_calls_start_no_thread(write: WriteFile) -> None:
    # Each request records the threads alive while it is being answered: a
    # thread per call (a watchdog timer, say) would be a new one every time.
    alive: list[set[threading.Thread]] = []

    def answer(handler: loopback.Handler) -> None:
        alive.append(set(threading.enumerate()))
        handler.reply(200, {"title": "fine"})

    with loopback.serve({"/p": answer}) as origin:
        tool = load(write, origin, "GET", "    timeout: {total: 5}")
        assert run(tool).output == {"title": "fine"}  # the server's keep-alive thread starts
        before = threading.active_count()
        for _ in range(99):
            assert run(tool).output == {"title": "fine"}
        after = threading.active_count()
    assert len(alive) == 100
    assert set().union(*alive) == alive[0]
    assert after == before


# A header byte every 0.1 s keeps every read inside its 5 s timeout: only each
# call's own deadline can end it.
DEADLINES = [0.5, 1.2, 1.9]


def test_concurrent_calls_each_end_at_their_own_deadline(write: WriteFile) -> None:
    with rawserver.serve(rawserver.drip_headers(0.1)) as server:
        tools = [
            load(write, server.origin, "GET", f"    timeout: {{read: 5, total: {total}}}")
            for total in DEADLINES
        ]

        def timed(tool: Any) -> tuple[float, str]:
            started = time.monotonic()
            result = run(tool)
            return time.monotonic() - started, str(result.error)

        with ThreadPoolExecutor(len(tools)) as pool:
            outcomes = list(pool.map(timed, tools))
    for total, (elapsed, error) in zip(DEADLINES, outcomes, strict=True):
        assert f"timed out after {total} s (timeout.total)" in error
        # Not before its own deadline, and well before the next one.
        assert total - 0.05 <= elapsed < total + 0.6, (total, elapsed)


def test_the_deadline_bounds_sending_a_body_the_server_never_reads() -> None:
    import requests

    from agentkit.declarative.backends.http.transport import DeadlineAdapter, Exchange

    session = requests.Session()
    session.mount("http://", DeadlineAdapter())
    # Accepted by the kernel (backlog), never read: sending blocks once the
    # buffers are full, and each send alone would wait its whole 30 s timeout.
    with socket.create_server(("127.0.0.1", 0)) as listener:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
        started = time.monotonic()
        with Exchange(started + 1.0) as exchange, pytest.raises(requests.ConnectionError):
            session.post(url, data=b"x" * (64 << 20), timeout=(30, 30))
        elapsed = time.monotonic() - started
    assert exchange.sent
    assert exchange.timed_out
    assert elapsed < 1.0 + MARGIN
