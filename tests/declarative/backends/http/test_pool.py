"""Many calls of one HTTP tool at once keep their connections for the next calls: none
is opened for one call and thrown away (requests' default keeps 10 a host)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from agentkit import ToolExecutor, ToolRegistry, load_tools
from tests.declarative.conftest import WriteFile
from tests.support import loopback

TOOL = """\
name: together
version: 1.0.0
output_schema:
  parameters:
    - {{name: ok, type: boolean}}
backend:
  http:
    url: {origin}/together
"""
#: Calls in flight at once, past requests' default pool of 10 connections a host.
IN_FLIGHT = 24
WAVES = 2
WAIT_SECONDS = 30


def test_calls_in_flight_at_once_keep_every_connection_for_the_next(
    write: WriteFile, caplog: pytest.LogCaptureFixture
) -> None:
    # The server answers once every call of a wave has arrived: all are in flight at once.
    arrived = threading.Barrier(IN_FLIGHT, timeout=WAIT_SECONDS)
    peers: set[tuple[str, int]] = set()
    lock = threading.Lock()

    def together(handler: loopback.Handler) -> None:
        with lock:
            peers.add(handler.client_address[:2])
        arrived.wait()
        handler.reply(200, {"ok": True})

    with loopback.serve({"/together": together}) as origin:
        registry = ToolRegistry()
        load_tools(Path(write(TOOL.format(origin=origin))), registry=registry)
        tool = registry["together"]
        executor = ToolExecutor(credentials={})
        outputs: list[object] = []

        def call() -> None:
            outputs.append(executor.execute(tool, {}).output)

        with caplog.at_level(logging.DEBUG, logger="urllib3"):
            for _ in range(WAVES):
                threads = [threading.Thread(target=call) for _ in range(IN_FLIGHT)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(WAIT_SECONDS)
                assert not any(thread.is_alive() for thread in threads)
        executor.close()

    assert outputs == [{"ok": True}] * (IN_FLIGHT * WAVES)
    # The second wave went over the first wave's connections, all kept.
    assert len(peers) == IN_FLIGHT
    assert not [record for record in caplog.records if "pool is full" in record.getMessage()]
