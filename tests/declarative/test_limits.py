"""``limits:`` in definitions and sources: refused before anything is sent, as a failed call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools, load_toolsets
from agentkit.callers import Caller, calling_as
from agentkit.toolerrors import LimitedError, ToolExecutionError
from tests.declarative.conftest import WriteFile
from tests.support import loopback
from tests.support.helpers import Adder

SOURCE = """\
source: api
base_url: {origin}
retry: {{attempts: 1}}
{limits}
---
"""
TOOL = """\
name: {name}
version: 1.0.0
input_schema:
  parameters:
    - {{name: path, type: string}}
output_schema:
  parameters:
    - {{name: title, type: string}}
{limits}
backend:
  http: {{source: api, path: "/{{{{ inputs.path }}}}"}}
"""
pytestmark = pytest.mark.usefixtures("fresh_limits_store")
ALICE = Caller(name="alice", via="token")
BOB = Caller(name="bob", via="token")


@pytest.fixture
def api() -> Iterator[tuple[str, list[str]]]:
    """An API whose /ok answers a title and /busy a 429 asking for 30 s; the paths hit."""
    hits: list[str] = []

    def ok(handler: loopback.Handler) -> None:
        hits.append("ok")
        handler.reply(200, {"title": "fine"})

    def busy(handler: loopback.Handler) -> None:
        hits.append("busy")
        handler.reply(429, {"error": "slow down"}, {"Retry-After": "30"})

    with loopback.serve({"/ok": ok, "/busy": busy}) as origin:
        yield origin, hits


def load(write: WriteFile, origin: str, source: str = "", **tools: str) -> ToolRegistry:
    text = SOURCE.format(origin=origin, limits=source)
    text += "---\n".join(TOOL.format(name=name, limits=limits) for name, limits in tools.items())
    registry = ToolRegistry()
    load_tools(write(text), registry=registry)
    return registry


def outcome(registry: ToolRegistry, name: str, caller: Caller, path: str = "ok") -> object:
    with calling_as(caller):
        result = ToolExecutor(credentials={}).execute(
            registry[name], {"path": path}, raise_on_failure=False
        )
    if result.error is None:
        return result.output
    assert isinstance(result.error, ToolExecutionError)
    cause = result.error.cause
    return cause if isinstance(cause, LimitedError) else result.error


def test_a_tool_limit_refuses_before_sending_and_keeps_callers_apart(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, hits = api
    registry = load(write, origin, probe="limits: {per_caller: {requests: 2, per: 1m}}")
    assert outcome(registry, "probe", ALICE) == {"title": "fine"}
    assert outcome(registry, "probe", ALICE) == {"title": "fine"}
    refused = outcome(registry, "probe", ALICE)
    assert isinstance(refused, LimitedError)
    assert str(refused).startswith("limit of 2 per minute per caller for this tool; nothing")
    assert hits == ["ok", "ok"]  # nothing was sent for the refused call
    assert outcome(registry, "probe", BOB) == {"title": "fine"}
    assert hits == ["ok", "ok", "ok"]


def test_the_message_of_a_refused_call_names_the_tool(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, _ = api
    registry = load(write, origin, probe="limits: {total: {requests: 1, per: 1h}}")
    outcome(registry, "probe", ALICE)
    with calling_as(BOB):
        result = ToolExecutor(credentials={}).execute(
            registry["probe"], {"path": "ok"}, raise_on_failure=False
        )
    assert str(result.error).startswith(
        "Tool 'probe' failed: LimitedError: limit of 1 per hour in total, for all callers, "
        "for this tool; nothing was sent; retry after "
    )


def test_a_source_limit_is_shared_by_its_tools(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, hits = api
    registry = load(write, origin, "limits: {total: {requests: 2, per: 1m}}", first="", second="")
    assert outcome(registry, "first", ALICE) == {"title": "fine"}
    assert outcome(registry, "second", BOB) == {"title": "fine"}
    refused = outcome(registry, "first", BOB)
    assert isinstance(refused, LimitedError)
    assert "limit of 2 per minute in total, for all callers, for source 'api'" in str(refused)
    assert len(hits) == 2


def test_a_429_pauses_every_tool_of_the_source_for_every_caller(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, hits = api
    registry = load(write, origin, "limits: {max_pause: 10s}", first="", second="")
    failed = outcome(registry, "first", ALICE, "busy")
    assert isinstance(failed, ToolExecutionError)
    assert "returned 429" in str(failed)
    paused = outcome(registry, "second", BOB)
    assert isinstance(paused, LimitedError)
    assert paused.scope == "paused"
    assert paused.retry_after == 10.0  # Retry-After: 30, capped by max_pause
    assert hits == ["busy"]


def test_a_source_without_limits_is_not_paused(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, hits = api
    registry = load(write, origin, "", first="", second="")
    assert type(registry["first"]).LIMITER is None  # type: ignore[attr-defined]
    outcome(registry, "first", ALICE, "busy")
    assert outcome(registry, "second", BOB) == {"title": "fine"}
    assert hits == ["busy", "ok"]


def test_problems_are_reported_at_their_lines(write: WriteFile, tmp_path: Path) -> None:
    text = SOURCE.format(
        origin="http://127.0.0.1:9", limits="limits: {total: {requests: 5, per: soon}}"
    ) + TOOL.format(name="probe", limits="limits:\n  per_caller: {concurrent: 0}")
    with pytest.raises(DefinitionError) as raised:
        load_tools(write(text), registry=ToolRegistry())
    message = str(raised.value)
    assert (
        "tool.yaml:4:36: limits.total.per: expected the interval as a duration such as 30s, 1m, "
        "1h or 1d (at most 7d), got 'soon'"
    ) in message
    assert (
        "tool.yaml:15:28: limits.per_caller.concurrent: expected a whole number of calls from 1 "
        "to 10000 that one caller may run at once, got 0"
    ) in message


def test_a_toolset_limit_holds_for_its_members_together(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, hits = api
    registry = load(write, origin, "", first="", second="", outside="")
    write(
        "toolset: triage\ntools: [first, second]\n"
        "limits: {per_caller: {requests: 1, per: 1m, concurrent: 1}}\n",
        "sets.yaml",
    )
    assert set(load_toolsets(write.folder, registry=registry)) == {"triage"}
    assert outcome(registry, "first", ALICE) == {"title": "fine"}
    refused = outcome(registry, "second", ALICE)
    assert isinstance(refused, LimitedError)
    assert "limit of 1 per minute per caller for toolset 'triage'" in str(refused)
    assert outcome(registry, "second", BOB) == {"title": "fine"}
    assert outcome(registry, "outside", ALICE) == {"title": "fine"}  # not a member
    assert len(hits) == 3


def test_a_toolset_limit_on_a_tool_registered_in_code_is_a_problem(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, _ = api
    registry = load(write, origin, "", first="")
    registry.register(Adder())
    write(
        "toolset: mixed\ntools: [first, add]\nlimits: {total: {requests: 5, per: 1m}}\n",
        "sets.yaml",
    )
    with pytest.raises(DefinitionError) as raised:
        load_toolsets(write.folder, registry=registry)
    assert (
        "sets.yaml:3:9: limits: limits apply to tools from definition files; add is "
        "registered in code: exclude it, or give the set no limits"
    ) in str(raised.value)
