"""Exporting with deferred tools: each provider's own tool search where it has one
(Anthropic's ``tool_search_tool_bm25``, the Responses API's ``tool_search``), agentkit's
``search_tools`` as an ordinary function everywhere else, and the command's ``--defer``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import ToolRegistry, load_tools
from agentkit.adapters.export import FORMATS, ExportError, export_tools
from agentkit.cli import main
from agentkit.tool import Tool

ROOT = Path(__file__).resolve().parents[2]
GITHUB = "*github*"


@pytest.fixture(scope="module")
def tools() -> list[Tool]:
    registry = ToolRegistry()
    load_tools(ROOT / "tools.d", registry=registry)
    return list(registry)


def _names(document: Any, format: str) -> list[str]:
    """The tool names a document gives, in its order (a provider search tool by its type)."""
    if format == "gemini":
        return [entry["name"] for entry in document["functionDeclarations"]]
    if format == "openai":
        return [entry["function"]["name"] for entry in document]
    return [entry.get("name", entry.get("type")) for entry in document]


def test_anthropic_defers_loading_and_adds_its_bm25_tool_search(tools: list[Tool]) -> None:
    exported = export_tools(tools, "anthropic", deferred=[GITHUB])
    search, *entries = exported.document
    assert search == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    deferred = {entry["name"] for entry in entries if entry.get("defer_loading") is True}
    assert deferred == {tool.name for tool in tools if "github" in tool.name}
    # Every tool is still there, with its schema: the provider loads what its search finds.
    assert [entry["name"] for entry in entries] == [tool.name for tool in tools]
    assert all("input_schema" in entry for entry in entries)
    assert "defer_loading" not in next(e for e in entries if e["name"] == "fetch_weather")
    assert exported.warnings == []


def test_openai_responses_defers_loading_and_adds_its_hosted_tool_search(
    tools: list[Tool],
) -> None:
    exported = export_tools(tools, "openai-responses", deferred=["text_stats"], strict=True)
    assert exported.document[0] == {"type": "tool_search"}
    stats = next(e for e in exported.document if e.get("name") == "text_stats")
    assert stats["defer_loading"] is True
    assert stats["strict"] is True


@pytest.mark.parametrize("format", ["openai", "mcp", "gemini", "json-schema"])
def test_other_formats_list_the_rest_and_the_search_tool(tools: list[Tool], format: str) -> None:
    exported = export_tools(tools, format, deferred=[GITHUB, "text_stats"])
    names = _names(exported.document, format)
    assert names == ["fetch_weather", "forecast_daily", "search_tools"]
    assert len(exported.warnings) == 1
    assert "7 deferred tools are left out and found through 'search_tools'" in exported.warnings[0]
    assert "agentkit.adapters.dispatch with the same deferred=" in exported.warnings[0]


def test_the_search_tool_is_exported_as_a_function_with_its_schema(tools: list[Tool]) -> None:
    document = export_tools(tools, "openai", deferred=[GITHUB], strict=True).document
    search = document[-1]["function"]
    assert search["name"] == "search_tools"
    assert search["parameters"]["required"] == ["query", "limit"]  # strict: all listed
    assert search["parameters"]["properties"]["query"]["type"] == "string"


def test_nothing_deferred_exports_as_before(tools: list[Tool]) -> None:
    for format in FORMATS:
        assert export_tools(tools, format, deferred=()) == export_tools(tools, format)


def test_a_deferred_entry_that_matches_nothing_is_refused(tools: list[Tool]) -> None:
    with pytest.raises(
        ExportError,
        match=r"deferred 'fetch_wether' names no exported tool \(did you mean 'fetch_weather'\?\)",
    ):
        export_tools(tools, "anthropic", deferred=["fetch_wether"])


@pytest.mark.parametrize(
    ("format", "name"),
    [("openai", "search_tools"), ("anthropic", "tool_search_tool_bm25")],
)
def test_a_tool_named_like_the_search_tool_is_refused(
    tools: list[Tool], format: str, name: str
) -> None:
    class Taken(Tool):
        TOOL_NAME = name
        TOOL_DESCRIPTION = "Mine."

        def execute(self, inputs: dict[str, Any], credentials: Any) -> dict[str, Any]:
            return {}

    with pytest.raises(ExportError, match=f"tool '{name}' .* has the name of the search tool"):
        export_tools([*tools, Taken()], format, deferred=["text_stats"])


def test_the_command_takes_defer(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["export", "--tools", str(ROOT / "tools.d"), "--format", "anthropic", "--defer", GITHUB]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    document = json.loads(out)
    assert document[0]["type"] == "tool_search_tool_bm25_20251119"
    assert sum(1 for entry in document if entry.get("defer_loading")) == 6


def test_the_command_refuses_a_pattern_that_matches_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["export", "--tools", str(ROOT / "tools.d"), "--format", "openai", "--defer", "x*"])
    _, err = capsys.readouterr()
    assert exited.value.code == 2
    assert "deferred 'x*' names no exported tool" in err
    assert "Traceback" not in err
