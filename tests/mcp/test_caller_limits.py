"""Limits and caches per caller, end to end: callers named by the token file of a real
`agentkit serve --http`, the SDK's streamable HTTP client, and the audit trail saying
what each call came to (limited, a cache hit)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from tests.support import loopback
from tests.support.serving import Served, serving, session

ALICE = "alice-token-0123456789abcdefgh"
BOB = "bob-token-0123456789abcdefghij"

TOOLS = """\
name: limited
version: 1.0.0
description: One call a minute for each caller.
input_schema: {{parameters: [{{name: q, type: string}}]}}
output_schema: {{parameters: [{{name: found, type: boolean}}]}}
limits:
  per_caller: {{requests: 1, per: 1m}}
backend:
  http:
    url: "{origin}/limited"
    query: {{q: "{{{{ inputs.q }}}}"}}
---
name: brief
version: 1.0.0
description: One call every two seconds for each caller.
input_schema: {{parameters: [{{name: q, type: string}}]}}
output_schema: {{parameters: [{{name: found, type: boolean}}]}}
limits:
  per_caller: {{requests: 1, per: 2s}}
backend:
  http:
    url: "{origin}/limited"
    query: {{q: "{{{{ inputs.q }}}}"}}
---
name: kept
version: 1.0.0
description: Answers kept a minute for the caller who asked.
annotations: {{read_only: true}}
input_schema: {{parameters: [{{name: q, type: string}}]}}
output_schema: {{parameters: [{{name: found, type: boolean}}]}}
cache: {{ttl: 60s, scope: caller}}
backend:
  http:
    url: "{origin}/kept"
    query: {{q: "{{{{ inputs.q }}}}"}}
"""


class Upstream:
    """Answers every request; counts them by path."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def __call__(self, handler: loopback.Handler) -> None:
        self.paths.append(handler.path.split("?")[0])
        handler.reply(200, {"found": True})


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[str, Upstream]]:
    recorder = Upstream()
    with loopback.serve({"/limited": recorder, "/kept": recorder}) as origin:
        yield origin, recorder


@pytest.fixture(scope="module", params=["fast-path", "sdk-path"])
def server(
    tmp_path_factory: pytest.TempPathFactory,
    upstream: tuple[str, Upstream],
    request: pytest.FixtureRequest,
) -> Iterator[tuple[Served, Path]]:
    folder = tmp_path_factory.mktemp("caller-limits")
    (folder / "tools").mkdir()
    (folder / "tools" / "tools.yaml").write_text(TOOLS.format(origin=upstream[0]))
    (folder / "tokens").write_text(f"{ALICE} caller=alice\n{BOB} caller=bob\n")
    trail = folder / "audit.jsonl"
    args = [
        "--tools", str(folder / "tools"),
        "--auth-token-file", str(folder / "tokens"),
        "--audit", str(trail),
    ]  # fmt: skip
    if request.param == "sdk-path":
        args.append("--no-fast-path")
    with serving(args) as served:
        yield served, trail


def _call(served: Served, token: str, name: str, q: str) -> Any:
    async def call() -> Any:
        with anyio.fail_after(60):
            async with session(served.url, {"Authorization": f"Bearer {token}"}) as client:
                return await client.call_tool(name, {"q": q})

    return anyio.run(call)


def _records(trail: Path, tool: str, q: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in trail.read_text().splitlines()]
    return [r for r in lines if r["tool"] == tool and r["arguments"] == {"q": q}]


def test_a_limit_per_caller_refuses_one_caller_and_not_the_other(
    server: tuple[Served, Path], upstream: tuple[str, Upstream], request: pytest.FixtureRequest
) -> None:
    served, trail = server
    q = request.node.callspec.id  # a query of its own for each server
    sent = upstream[1].paths.count("/limited")
    assert not _call(served, ALICE, "limited", q).is_error
    refused = _call(served, ALICE, "limited", q)
    assert refused.is_error
    text = refused.content[0].text
    assert "limit of 1 per minute per caller for this tool" in text
    assert "nothing was sent" in text
    assert "retry after" in text
    assert not _call(served, BOB, "limited", q).is_error  # bob's window is his own
    assert upstream[1].paths.count("/limited") == sent + 2  # the refused call sent nothing
    records = _records(trail, "limited", q)
    assert [(r["caller"], r["outcome"]) for r in records] == [
        ("alice", "success"),
        ("alice", "limited"),
        ("bob", "success"),
    ]


def test_a_cache_per_caller_never_answers_one_caller_with_anothers_call(
    server: tuple[Served, Path], upstream: tuple[str, Upstream], request: pytest.FixtureRequest
) -> None:
    served, trail = server
    q = request.node.callspec.id
    sent = upstream[1].paths.count("/kept")
    for token in (ALICE, ALICE, BOB, BOB):
        assert _call(served, token, "kept", q).structured_content == {"found": True}
    assert upstream[1].paths.count("/kept") == sent + 2  # one call each, then kept
    records = _records(trail, "kept", q)
    assert [(r["caller"], r["cache_hit"]) for r in records] == [
        ("alice", False),
        ("alice", True),
        ("bob", False),
        ("bob", True),
    ]


def test_a_refused_caller_is_served_again_once_its_window_has_passed(
    server: tuple[Served, Path], request: pytest.FixtureRequest
) -> None:
    served, _ = server
    q = request.node.callspec.id
    assert not _call(served, ALICE, "brief", q).is_error
    refused = _call(served, ALICE, "brief", q)
    assert refused.is_error
    assert "limit of 1 per 2 s per caller for this tool; nothing was sent; retry after" in (
        refused.content[0].text
    )
    deadline = time.monotonic() + 10  # the window is 2 s; allow a busy machine its delays
    while time.monotonic() < deadline:
        time.sleep(0.5)
        if not _call(served, ALICE, "brief", q).is_error:
            break
    else:
        pytest.fail("alice was still refused 10 s after a 2 s window")
