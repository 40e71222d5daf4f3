"""Declared limits on a served tool, over streamable HTTP with the SDK's client: two
stateless replicas sharing one real redis-server count one limit.

Every caller here is anonymous (no token names a caller yet on this path), so the
per-caller limits are tested per caller at the executor level (tests/test_ratelimits.py,
tests/test_ratelimits_redis.py); what this shows is the refusal as the model sees it,
the limit held across replicas, and the command line's options.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")
pytest.importorskip("redis")

from tests.support.redis_server import RedisServer, redis_server
from tests.support.serving import ROOT, serving, session

DOZE = """\
name: doze
version: 1.0.0
input_schema: {parameters: [{name: seconds, type: float}]}
output_schema: {parameters: [{name: slept, type: float}]}
limits: {total: {requests: 3, per: 1m}}
backend: {python: "tests.support.serve_tools:doze"}
---
name: nap
version: 1.0.0
input_schema: {parameters: [{name: seconds, type: float}]}
output_schema: {parameters: [{name: slept, type: float}]}
limits: {per_caller: {requests: 1, per: 1h}}
backend: {python: "tests.support.serve_tools:nap"}
"""


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path) as server:
        yield server


async def _calls(urls: list[str], tool: str, count: int) -> list[Any]:
    results = []
    for index in range(count):
        async with session(urls[index % len(urls)]) as client:
            results.append(await client.call_tool(tool, {"seconds": 0}))
    return results


def test_a_limit_holds_across_two_replicas_sharing_redis(
    tmp_path: Path, redis: RedisServer
) -> None:
    (tmp_path / "tools.yaml").write_text(DOZE)
    args = ["--tools", str(tmp_path), "--stateless", "--limits-store", redis.url]
    with serving(args) as one, serving(args) as two:
        results = anyio.run(_calls, [one.url, two.url], "doze", 5)
        napped = anyio.run(_calls, [two.url, one.url], "nap", 2)
    assert [result.is_error for result in results] == [False, False, False, True, True]
    assert results[0].structured_content == {"slept": 0.0}
    text = results[3].content[0].text
    assert text.startswith(
        "Error: Tool 'doze' was not run: limit of 3 per minute in total, for all callers, "
        "for this tool; nothing was sent; retry after "
    )
    assert [result.is_error for result in napped] == [False, True]  # an async tool too
    assert "limit of 1 per hour per caller for this tool" in napped[1].content[0].text


def test_redis_unreachable_refuses_calls_with_limits_only(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(DOZE.replace("limits: {per_caller", "#"))
    args = ["--tools", str(tmp_path), "--limits-store", "redis://127.0.0.1:1/0"]
    with serving(args) as served:
        results = anyio.run(_calls, [served.url], "doze", 2)
        free = anyio.run(_calls, [served.url], "nap", 1)
        logged = served.stderr
    assert [result.is_error for result in results] == [True, True]
    # The outage is logged once, not once per call.
    assert logged.count("limits store redis://127.0.0.1:1/0 cannot be reached") == 1
    assert "the limits store redis://127.0.0.1:1/0 cannot be reached" in (
        results[0].content[0].text
    )
    assert free[0].is_error is False  # a tool without limits never asks the store


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--limits-store-unreachable", "local"],
            "--limits-store-unreachable applies with --limits-store URL",
        ),
        (["--limits-store", "http://127.0.0.1:6379"], "--limits-store: limits store http://"),
    ],
)
def test_bad_limits_options_are_usage_errors(args: list[str], said: str, tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(DOZE)
    finished = subprocess.run(
        [sys.executable, "-m", "agentkit", "serve", "--tools", str(tmp_path), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert finished.returncode == 2, finished.stderr
    assert said in finished.stderr
    assert "Traceback" not in finished.stderr
