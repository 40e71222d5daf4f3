"""Dispatching the search tool an export added (``deferred=``): answered from the
registry's deferred tools, ranked as the MCP server ranks them, for each provider."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.adapters.dispatch import (
    adispatch_openai,
    dispatch_anthropic,
    dispatch_openai,
    dispatch_openai_responses,
)
from agentkit.toolsearch import SearchTools

ROOT = Path(__file__).resolve().parents[2]
DEFERRED = ["*github*", "text_stats"]
QUERY = {"query": "comment on an issue", "limit": 2}


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    tools = ToolRegistry()
    load_tools(ROOT / "tools.d", registry=tools)
    return tools


def _found(content: str) -> list[str]:
    return [match["name"] for match in json.loads(content)["tools"]]


def test_openai_search_then_call_by_name(registry: ToolRegistry, executor: ToolExecutor) -> None:
    calls = [
        {"id": "1", "function": {"name": "search_tools", "arguments": json.dumps(QUERY)}},
        {"id": "2", "function": {"name": "text_stats", "arguments": '{"text": "Hi there."}'}},
    ]
    first, second = dispatch_openai(calls, registry, executor, deferred=DEFERRED)
    assert _found(first["content"]) == ["comment_on_github_issue", "create_github_issue"]
    assert json.loads(second["content"])["words"] == 2


def test_the_answer_is_the_servers_ranking(registry: ToolRegistry, executor: ToolExecutor) -> None:
    deferred = [tool for tool in registry if "github" in tool.name or tool.name == "text_stats"]
    expected = SearchTools(deferred).search("comment on an issue", 2)
    blocks = [{"type": "tool_use", "id": "t", "name": "search_tools", "input": QUERY}]
    (block,) = dispatch_anthropic(blocks, registry, executor, deferred=DEFERRED)
    assert json.loads(block["content"]) == expected
    assert "is_error" not in block


def test_responses_and_async(registry: ToolRegistry, executor: ToolExecutor) -> None:
    items = [
        {
            "type": "function_call",
            "call_id": "c",
            "name": "search_tools",
            "arguments": '{"query": "weather"}',
        }
    ]
    (item,) = dispatch_openai_responses(items, registry, executor, deferred=["fetch_weather"])
    assert _found(item["output"]) == ["fetch_weather"]
    calls = [{"id": "a", "function": {"name": "search_tools", "arguments": '{"query": "words"}'}}]
    (reply,) = asyncio.run(adispatch_openai(calls, registry, executor, deferred=DEFERRED))
    assert _found(reply["content"]) == ["text_stats"]


def test_without_deferred_the_search_tool_is_unknown(
    registry: ToolRegistry, executor: ToolExecutor
) -> None:
    calls = [{"id": "1", "function": {"name": "search_tools", "arguments": '{"query": "x"}'}}]
    (reply,) = dispatch_openai(calls, registry, executor)
    assert reply["content"].startswith("Error: Unknown tool: 'search_tools'.")


def test_bad_search_arguments_are_text_the_model_can_act_on(
    registry: ToolRegistry, executor: ToolExecutor
) -> None:
    calls = [{"id": "1", "function": {"name": "search_tools", "arguments": '{"limit": 99}'}}]
    (reply,) = dispatch_openai(calls, registry, executor, deferred=DEFERRED)
    assert "Missing required parameter: 'query'" in reply["content"]
    assert "expected a value of at most 20, got 99" in reply["content"]


def test_a_registry_that_changes_gets_a_new_search(executor: ToolExecutor) -> None:
    registry = ToolRegistry()
    load_tools(ROOT / "tools.d" / "text_stats.yaml", registry=registry)
    calls: list[dict[str, Any]] = [
        {"id": "1", "function": {"name": "search_tools", "arguments": '{"query": "weather"}'}}
    ]
    (before,) = dispatch_openai(calls, registry, executor, deferred=["*"])
    load_tools(ROOT / "tools.d" / "fetch_weather.yaml", registry=registry)
    (after,) = dispatch_openai(calls, registry, executor, deferred=["*"])
    assert _found(before["content"]) == []
    assert _found(after["content"]) == ["fetch_weather"]
