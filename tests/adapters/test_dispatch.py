"""dispatch: provider tool calls in, executed results and replies out."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from agentkit import ToolExecutor, ToolRegistry
from agentkit.adapters.dispatch import (
    dispatch_anthropic,
    dispatch_openai,
    dispatch_openai_responses,
)
from tests.support.helpers import SECRET, Adder, Scripted
from tests.support.paged import Report, report_rows


def leaky(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
    raise RuntimeError(f"upstream rejected key {credentials['api-key']}")


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([Adder(), Scripted(leaky)])


def openai_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_openai_chat_results_in_order(registry: ToolRegistry, executor: ToolExecutor) -> None:
    replies = dispatch_openai(
        [openai_call("c1", "add", '{"a": 1, "b": 2}'), openai_call("c2", "add", '{"a": 5}')],
        registry,
        executor,
    )
    assert replies == [
        {"role": "tool", "tool_call_id": "c1", "content": '{"sum": 3.0}'},
        {"role": "tool", "tool_call_id": "c2", "content": '{"sum": 5.0}'},
    ]


def test_failures_become_text_the_model_can_act_on(
    registry: ToolRegistry, executor: ToolExecutor
) -> None:
    replies = dispatch_openai(
        [
            openai_call("bad-json", "add", '{"a": 1'),
            openai_call("unknown", "ad", "{}"),
            openai_call("invalid", "add", '{"a": "x", "c": 1}'),
            openai_call("raises", "scripted", "{}"),
        ],
        registry,
        executor,
    )
    contents = {reply["tool_call_id"]: reply["content"] for reply in replies}
    assert contents["bad-json"].startswith("Error: the arguments are not valid JSON")
    assert (
        contents["unknown"]
        == "Error: Unknown tool: 'ad' (did you mean 'add'?). Available tools: add, scripted."
    )
    assert "Parameter 'a': expected type 'float', got 'str'" in contents["invalid"]
    assert "Unknown parameter: 'c'" in contents["invalid"]
    assert contents["invalid"].endswith("Correct the arguments and call the tool again.")
    assert (
        contents["raises"]
        == "Error: Tool 'scripted' failed: RuntimeError: upstream rejected key ***"
    )
    assert SECRET not in json.dumps(replies)
    assert "Traceback" not in json.dumps(replies)


def test_sdk_objects_are_accepted(registry: ToolRegistry, executor: ToolExecutor) -> None:
    call = SimpleNamespace(
        id="c1", type="function", function=SimpleNamespace(name="add", arguments='{"a": 2}')
    )
    assert dispatch_openai([call], registry, executor)[0]["content"] == '{"sum": 2.0}'
    block = SimpleNamespace(type="tool_use", id="toolu_1", name="add", input={"a": 4})
    assert dispatch_anthropic([block], registry, executor)[0]["content"] == '{"sum": 4.0}'


def test_openai_responses(registry: ToolRegistry, executor: ToolExecutor) -> None:
    items = [
        {"type": "reasoning", "id": "r1"},
        {"type": "function_call", "call_id": "fc1", "name": "add", "arguments": '{"a": 1}'},
    ]
    assert dispatch_openai_responses(items, registry, executor) == [
        {"type": "function_call_output", "call_id": "fc1", "output": '{"sum": 1.0}'}
    ]


def test_anthropic_blocks_with_is_error(registry: ToolRegistry, executor: ToolExecutor) -> None:
    content = [
        {"type": "text", "text": "Let me add."},
        {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}},
        {"type": "tool_use", "id": "t2", "name": "add", "input": {"a": "x"}},
    ]
    ok, failed = dispatch_anthropic(content, registry, executor)
    assert ok == {"type": "tool_result", "tool_use_id": "t1", "content": '{"sum": 1.0}'}
    assert failed["tool_use_id"] == "t2"
    assert failed["is_error"] is True
    assert "expected type 'float'" in failed["content"]


def test_the_call_id_reaches_events(registry: ToolRegistry) -> None:
    seen: list[str] = []
    executor = ToolExecutor(credentials={}, listeners=[lambda event: seen.append(event.call_id)])
    dispatch_openai([openai_call("call_abc", "add", '{"a": 1}')], registry, executor)
    assert set(seen) == {"call_abc"}


# -- answers in pages (max_output) ------------------------------------------------------------

_NOTE = re.compile(r'call \'report\' again with the arguments (\{"continuation": "[^"]+"\})')


def _paged_answer(text: str) -> tuple[dict[str, Any], str | None]:
    """A paged reply's JSON page, and the arguments its note says fetch the next (None on
    the last page)."""
    answer, _, note = text.partition("\n")
    assert note.startswith("[agentkit] This answer is page ")
    found = _NOTE.search(note)
    return json.loads(answer), found.group(1) if found else None


@pytest.mark.parametrize("own_executor", [True, False], ids=["given-executor", "default"])
def test_a_long_answer_is_given_in_pages_the_model_can_follow(own_executor: bool) -> None:
    tool = Report()
    registry = ToolRegistry([tool])
    executor = ToolExecutor(credentials={}) if own_executor else None
    replies = dispatch_openai([openai_call("c1", "report", '{"rows": 150}')], registry, executor)
    page, arguments = _paged_answer(replies[0]["content"])
    rows = list(page["rows"])
    turns = 1
    while arguments is not None and turns < 100:  # each turn a dispatch of its own
        replies = dispatch_openai(
            [openai_call(f"c{turns}", "report", arguments)], registry, executor
        )
        page, arguments = _paged_answer(replies[0]["content"])
        assert page["title"] == "150 rows"
        rows += page["rows"]
        turns += 1
    assert turns > 2
    assert rows == report_rows(150)["rows"]
    assert tool.runs == 1


def test_anthropic_and_responses_replies_carry_the_note(executor: ToolExecutor) -> None:
    registry = ToolRegistry([Report()])
    (block,) = dispatch_anthropic(
        [{"type": "tool_use", "id": "t1", "name": "report", "input": {"rows": 80}}],
        registry,
        executor,
    )
    assert "is_error" not in block
    assert _paged_answer(block["content"])[1] is not None
    (item,) = dispatch_openai_responses(
        [{"type": "function_call", "call_id": "f1", "name": "report", "arguments": '{"rows": 80}'}],
        registry,
        executor,
    )
    assert _paged_answer(item["output"])[1] is not None


def test_a_stale_continuation_is_an_error_the_model_can_act_on(executor: ToolExecutor) -> None:
    registry = ToolRegistry([Report()])
    (reply,) = dispatch_openai(
        [openai_call("c1", "report", '{"continuation": "stale.2"}')], registry, executor
    )
    assert reply["content"].startswith("Error: Tool 'report' received invalid input")
    assert "call 'report' again with its original arguments" in reply["content"]


def test_an_answer_under_the_budget_reads_as_before(executor: ToolExecutor) -> None:
    (reply,) = dispatch_openai(
        [openai_call("c1", "report", '{"rows": 2}')], ToolRegistry([Report()]), executor
    )
    assert reply["content"] == json.dumps(report_rows(2))
