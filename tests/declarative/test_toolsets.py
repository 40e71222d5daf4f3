"""Toolset documents: what a set holds, and every problem at its file:line."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agentkit import (
    DefinitionError,
    SemanticError,
    Tool,
    ToolRegistry,
    ToolSchema,
    Toolset,
    load_tools,
    load_toolsets,
)
from tests.declarative.conftest import WriteFile
from tests.support.toolsets import ALL_TOOLS, CATALOG, HOLDS, TOOLSETS, write_catalog


def catalog(folder: Path, toolsets: str = TOOLSETS) -> tuple[ToolRegistry, dict[str, Toolset]]:
    write_catalog(folder, toolsets)
    registry = ToolRegistry()
    load_tools(folder, registry=registry)
    return registry, load_toolsets(folder, registry=registry)


def problems_of(folder: Path, toolsets: str) -> list[str]:
    """The problems ``load_toolsets`` reports for ``toolsets`` beside the catalog."""
    with pytest.raises(DefinitionError) as info:
        catalog(folder, toolsets)
    return [str(problem) for problem in info.value.problems]


def test_names_globs_tags_and_exclusions_choose_the_tools(tmp_path: Path) -> None:
    registry, toolsets = catalog(tmp_path)
    assert list(toolsets) == ["triage", "wiki", "readers"]  # in the order defined
    assert {name: list(toolset.tools) for name, toolset in toolsets.items()} == HOLDS
    triage = toolsets["triage"]
    assert triage.description == "What the triage agent may use."
    assert triage.source == f"{tmp_path}/sets.yaml:1"
    assert triage.deferred == {"list_issues", "list_pages"}
    assert toolsets["wiki"].deferred == frozenset()
    assert "issue_delete" not in triage
    assert len(registry) == len(ALL_TOOLS)


def test_a_tool_may_be_in_several_sets(tmp_path: Path) -> None:
    _, toolsets = catalog(tmp_path)
    holding = [name for name, toolset in toolsets.items() if "list_pages" in toolset]
    assert holding == ["triage", "wiki", "readers"]


def test_a_restricted_registry_holds_the_same_tools_and_nothing_else(tmp_path: Path) -> None:
    registry, toolsets = catalog(tmp_path)
    restricted = toolsets["wiki"].restrict(registry)
    assert restricted.names() == ["list_pages", "edit_page"]
    assert restricted["edit_page"] is registry["edit_page"]
    assert restricted.lookup("get_issue") is None


def test_the_order_is_the_registrys_whatever_the_entries_order(tmp_path: Path) -> None:
    _, toolsets = catalog(tmp_path, "toolset: mixed\ntools: [edit_page, get_issue, 'list_*']\n")
    assert toolsets["mixed"].tools == ("get_issue", "list_issues", "list_pages", "edit_page")


class Clock(Tool):
    TOOL_NAME = "clock_now"
    TOOL_DESCRIPTION = "The time."
    TOOL_TAGS: ClassVar[dict[str, str]] = {"domain": "time"}
    INPUT_SCHEMA = ToolSchema()
    OUTPUT_SCHEMA = ToolSchema()

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {}


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("clock_now", id="name"),
        pytest.param('"clock_*"', id="glob"),
        pytest.param('"tag:domain=time"', id="tag"),
        pytest.param("{tags: {domain: time}}", id="tags-mapping"),
    ],
)
def test_hand_written_tools_match_like_loaded_ones(write: WriteFile, entry: str) -> None:
    write(CATALOG, "tools.yaml")
    write(f"toolset: timing\ntools: [{entry}, get_issue]\n", "sets.yaml")
    registry = ToolRegistry([Clock()])
    load_tools(write.folder, registry=registry)
    toolsets = load_toolsets(write.folder, registry=registry)
    assert toolsets["timing"].tools == ("clock_now", "get_issue")


def test_load_tools_ignores_what_a_set_holds_but_checks_its_shape(tmp_path: Path) -> None:
    write_catalog(tmp_path, "toolset: later\ntools: [not_loaded_yet]\n")
    assert len(load_tools(tmp_path)) == len(ALL_TOOLS)
    (tmp_path / "sets.yaml").write_text("toolset: later\ntools: [x]\ncolor: red\n")
    with pytest.raises(DefinitionError, match=r"sets.yaml:3:8: color: unknown key 'color'"):
        load_tools(tmp_path)


@pytest.mark.parametrize(
    ("toolsets", "expected"),
    [
        pytest.param(
            "toolset: t\ntools:\n  - get_isue\n",
            "sets.yaml:3:5: tools[0]: 'get_isue' matches no tool (did you mean 'get_issue'?); "
            "5 tools are loaded (agentkit list shows them)",
            id="unknown-name",
        ),
        pytest.param(
            "toolset: t\ntools: [get_issue, 'lst_*']\n",
            "sets.yaml:2:20: tools[1]: 'lst_*' matches no tool; 5 tools are loaded",
            id="glob-matching-nothing",
        ),
        pytest.param(
            "toolset: t\ntools: ['tag:domain=gthub']\n",
            "sets.yaml:2:9: tools[0]: 'tag:domain=gthub' matches no tool (did you mean "
            "'tag:domain=github'?); the tags in use: tag:domain=github, tag:domain=wiki",
            id="unknown-tag",
        ),
        pytest.param(
            "toolset: t\ntools: [get_issue]\nexclude: [get_isue]\n",
            "sets.yaml:3:11: exclude[0]: 'get_isue' matches no tool (did you mean 'get_issue'?)",
            id="exclusion-matching-nothing",
        ),
        pytest.param(
            "toolset: t\ntools: [get_issue, list_pages]\ndeferred: [edit_page]\n",
            "sets.yaml:3:12: deferred[0]: 'edit_page' matches no tool of the set 't', only "
            "tools outside it (edit_page); defer only members, or add them to 'tools'",
            id="deferred-outside-the-set",
        ),
        pytest.param(
            "toolset: t\ntools: [get_issue, list_pages]\ndeferred: [list_page]\n",
            "sets.yaml:3:12: deferred[0]: 'list_page' matches no tool of the set 't' (did you "
            "mean 'list_pages'?); the set holds: get_issue, list_pages",
            id="deferred-unknown",
        ),
        pytest.param(
            "toolset: t\ntools: ['tag:domain=wiki']\nexclude: ['*_page*']\n",
            "sets.yaml:1:10: toolset: toolset 't' holds no tool: 'exclude' takes out every "
            "tool 'tools' chose (edit_page, list_pages); exclude fewer",
            id="empty-set",
        ),
        pytest.param(
            "toolset: t\ntools: [get_issue]\n---\ntoolset: t\ntools: [edit_page]\n",
            "sets.yaml:4:10: toolset: toolset 't' is already defined at ",
            id="duplicate-name",
        ),
        pytest.param(
            "toolset: t\ntools: [get_issue]\ndefered: [get_issue]\n",
            "sets.yaml:3:10: defered: unknown key 'defered' (did you mean 'deferred'?); a "
            "toolset takes: toolset, description, tools, exclude, deferred",
            id="unknown-key",
        ),
        pytest.param(
            "toolset: t\n",
            "sets.yaml:1:10: toolset: missing 'tools': a list of tool names, globs (list_*) "
            "or tags (tag:key=value)",
            id="no-tools",
        ),
        pytest.param(
            "toolset: t\ntools: []\n",
            "sets.yaml:2:8: tools: 'tools' takes a list of entries",
            id="empty-tools",
        ),
        pytest.param(
            "toolset: t/x\ntools: [get_issue]\n",
            "sets.yaml:1:10: toolset: invalid toolset name 't/x': use letters, digits",
            id="bad-name",
        ),
        pytest.param(
            "toolset: t\ntools: [{tag: {domain: wiki}}]\n",
            "sets.yaml:2:9: tools[0]: An entry is a tool name (get_issue), a glob over names "
            "(list_*), tag:key=value, or {tags: {key: value}}",
            id="bad-mapping",
        ),
        pytest.param(
            "toolset: t\ntools: ['tag:domain']\n",
            "sets.yaml:2:9: tools[0]: 'tag:domain' is not a tag entry; write tag:key=value",
            id="tag-without-value",
        ),
        pytest.param(
            "toolset: t\ntools: ['get issue']\n",
            "sets.yaml:2:9: tools[0]: 'get issue' is not a tool name.",
            id="not-a-name",
        ),
        pytest.param(
            "toolset: t\ntools: ['get/*']\n",
            "sets.yaml:2:9: tools[0]: 'get/*' is not a glob over tool names",
            id="not-a-glob",
        ),
    ],
)
def test_each_problem_names_its_file_line_and_the_fix(
    tmp_path: Path, toolsets: str, expected: str
) -> None:
    found = problems_of(tmp_path, toolsets)
    assert len(found) == 1, found
    assert found[0].startswith(f"{tmp_path}/{expected}"), found[0]


def test_every_problem_of_every_set_is_reported_at_once(tmp_path: Path) -> None:
    found = problems_of(
        tmp_path, "toolset: a\ntools: [nope]\n---\ntoolset: b\ntools: [get_issue, 'x_*']\n"
    )
    assert [problem.split(": ", 1)[0] for problem in found] == [
        f"{tmp_path}/sets.yaml:2:9",
        f"{tmp_path}/sets.yaml:5:20",
    ]


def test_a_toolset_outside_its_tools_deferred_is_refused() -> None:
    with pytest.raises(SemanticError, match="deferred names tools outside the set: b"):
        Toolset(name="t", tools=("a",), deferred=frozenset({"a", "b"}))


def test_the_summary_shortens_a_long_set() -> None:
    toolset = Toolset(name="big", tools=tuple(f"t{index}" for index in range(25)))
    assert toolset.summary() == "25 tools: t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 and 15 more"
    assert Toolset(name="one", tools=("a",)).summary() == "1 tool: a"
