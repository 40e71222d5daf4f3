"""The command with toolsets: validate names what each holds, list and export --toolset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit.adapters.export import EXPORT_FORMATS
from tests.cli.test_cli import run
from tests.support.toolsets import ALL_TOOLS, CATALOG, HOLDS, write_catalog


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "tools")


def test_validate_names_what_each_set_holds(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    code, out, err = run(capsys, "validate", str(folder))
    assert code == 0, err
    sets = f"{folder}/sets.yaml"
    assert out.splitlines()[:3] == [
        f"toolset triage ({sets}:1): 3 tools: get_issue, list_issues, list_pages; 2 deferred",
        f"toolset wiki ({sets}:10): 2 tools: list_pages, edit_page",
        f"toolset readers ({sets}:13): 3 tools: get_issue, list_issues, list_pages",
    ]
    assert out.splitlines()[3].startswith("ok: 5 tools in 2 file(s); largest schema: ")
    assert err == ""


def test_validate_reports_a_set_problem_at_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = write_catalog(tmp_path, "toolset: t\ntools: [get_issue, list_isues]\n")
    code, out, err = run(capsys, "validate", str(folder))
    assert code == 2
    assert out == ""
    assert (
        f"{folder}/sets.yaml:2:20: tools[1]: 'list_isues' matches no tool (did you mean "
        "'list_issues'?)" in err
    )
    assert "Traceback" not in err


def big_catalog(folder: Path, count: int) -> Path:
    """``count`` small tools and a set of all of them, ``big``."""
    folder.mkdir()
    tool = CATALOG.split("---\n")[0]
    (folder / "tools.yaml").write_text(
        "---\n".join(tool.replace("get_issue", f"tool_{index}") for index in range(count))
    )
    (folder / "sets.yaml").write_text("toolset: big\ntools: ['tool_*']\n")
    return folder


def test_a_set_over_a_providers_limit_is_a_warning_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = big_catalog(tmp_path / "big", 129)
    code, out, err = run(capsys, "validate", str(folder))
    assert code == 0
    assert f"toolset big ({folder}/sets.yaml:1): 129 tools: tool_0, tool_1, tool_2" in out
    assert "tool_9 and 119 more" in out
    limits = "more than a provider accepts in one request (OpenAI 128, Gemini on Vertex AI 128)"
    assert f"warning: {folder}/sets.yaml:1: toolset 'big': 129 tools, {limits}" in err
    assert f"warning: all the tools together: 129 tools, {limits}" in err
    assert "Anthropic" not in err  # it documents no limit
    assert run(capsys, "validate", "--strict", str(folder))[0] == 1


def test_a_set_at_the_limit_is_no_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "validate", "--strict", str(big_catalog(tmp_path / "big", 128)))
    assert (code, err) == (0, "")


@pytest.mark.parametrize("name", list(HOLDS))
def test_list_shows_only_the_sets_tools(
    capsys: pytest.CaptureFixture[str], folder: Path, name: str
) -> None:
    code, out, err = run(capsys, "list", "--tools", str(folder), "--toolset", name, "--json")
    assert code == 0, err
    assert [tool["name"] for tool in json.loads(out)] == HOLDS[name]
    code, out, _ = run(capsys, "list", "--tools", str(folder), "--toolset", name)
    assert [line.split()[0] for line in out.splitlines()[1:]] == HOLDS[name]


def test_list_combines_a_toolset_and_tags(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    argv = ["list", "--tools", str(folder), "--toolset", "triage", "--tag", "domain=wiki"]
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    assert [tool["name"] for tool in json.loads(out)] == ["list_pages"]


def exported_names(data: object) -> list[str]:
    """The tool names of an export, whatever the provider's shape."""
    text = json.dumps(data)
    return [name for name in ALL_TOOLS if f'"{name}"' in text]


@pytest.mark.parametrize("form", list(EXPORT_FORMATS))
def test_export_gives_only_the_sets_tools_in_every_format(
    capsys: pytest.CaptureFixture[str], folder: Path, form: str
) -> None:
    argv = ["export", "--tools", str(folder), "--format", form]
    code, out, err = run(capsys, *argv, "--toolset", "wiki")
    assert code == 0, err
    assert exported_names(json.loads(out)) == HOLDS["wiki"]
    code, out, _ = run(capsys, *argv)
    assert exported_names(json.loads(out)) == ALL_TOOLS


@pytest.mark.parametrize("command", ["list", "export --format openai"])
def test_an_unknown_set_is_a_usage_error_with_a_hint(
    capsys: pytest.CaptureFixture[str], folder: Path, command: str
) -> None:
    code, out, err = run(capsys, *command.split(), "--tools", str(folder), "--toolset", "wikki")
    assert code == 2
    assert out == ""
    assert err == (
        "error: --toolset 'wikki': no such toolset (did you mean 'wiki'?); "
        "defined: triage, wiki, readers\n"
    )


def test_without_toolsets_the_error_says_how_to_declare_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "tools.yaml").write_text(CATALOG)
    code, _, err = run(capsys, "list", "--tools", str(tmp_path), "--toolset", "triage")
    assert code == 2
    assert "defined: none (a toolset is a document with a 'toolset:' key)" in err


def test_export_defers_the_sets_deferred_members(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    argv = ["export", "--tools", str(folder), "--format", "anthropic", "--toolset", "triage"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    tools = {tool["name"]: tool for tool in json.loads(out)}
    assert [name for name in tools if name in ALL_TOOLS] == HOLDS["triage"]
    assert [name for name in HOLDS["triage"] if tools[name].get("defer_loading")] == [
        "list_issues",
        "list_pages",
    ]
    # Tags narrow the set; the deferred members left are still deferred.
    code, out, err = run(capsys, *argv, "--tag", "domain=wiki")
    assert code == 0, err
    assert [tool.get("defer_loading") for tool in json.loads(out) if "input_schema" in tool] == [
        True
    ]
