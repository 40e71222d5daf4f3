"""Shared parameters: a source declares them once, its tools take them by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit.adapters.diff import BREAKING, diff_tools
from tests.declarative.conftest import WriteFile, load, problems

SOURCE = """\
source: gh
base_url: http://127.0.0.1:9
parameters:
  - name: owner
    type: string
    pattern: "[a-z]+"
  - name: repo
    type: string
    description: The repository's name
"""


def tool(name: str, *entries: str, version: str = "1.0.0", source: str = "gh") -> str:
    params = "".join(f"    {entry}\n" for entry in entries)
    return (
        f"---\nname: {name}\nversion: {version}\ninput_schema:\n  parameters:\n{params}"
        f"backend:\n  http:\n    source: {source}\n    path: /x\n"
    )


def test_a_name_or_use_takes_the_sources_parameter(write: WriteFile) -> None:
    path = write(
        SOURCE
        + tool("a", "- owner", "- {use: repo, required: false, description: Its name}")
        + tool("b", "- {name: number, type: integer}", "- repo")
    )
    registry = load(path)
    a, b = registry["a"].input_schema, registry["b"].input_schema
    assert a["owner"].pattern == "[a-z]+"
    assert not a["repo"].required
    assert a["repo"].description == "Its name"
    assert b["repo"].required
    assert b["repo"].description == "The repository's name"
    assert [param.name for param in b] == ["number", "repo"]
    # The source's own parameter is unchanged by a tool's override.
    source = getattr(registry["a"].definition, "http_source", None)
    assert source is not None
    assert source.parameters["repo"]["description"] == "The repository's name"


def test_the_schema_checks_a_shared_parameter_like_any_other(write: WriteFile) -> None:
    registry = load(write(SOURCE + tool("a", "- owner")))
    (problem,) = registry["a"].input_schema.validate({"owner": "Not Lower"})
    assert "owner" in problem
    assert "[a-z]+" in problem


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (("- ownr",), "unknown shared parameter 'ownr' (did you mean 'owner'?); source 'gh'"),
        (("- {use: repp}",), "unknown shared parameter 'repp' (did you mean 'repo'?)"),
        (("- {use: repo, type: integer}",), "unknown key 'type'"),
        (("- owner", "- owner"), "duplicate parameter name 'owner'"),
        (("- owner", "- {name: owner, type: string}"), "duplicate parameter name 'owner'"),
        (
            ("- {use: 5}",),
            "use: expected the name of a shared parameter of the tool's source, such as "
            "'owner', got 5",
        ),
        (("- {use: [owner]}",), "use: expected the name of a shared parameter"),
    ],
)
def test_a_wrong_use_is_a_problem_at_its_line(
    write: WriteFile, entries: tuple[str, ...], expected: str
) -> None:
    path = write(SOURCE + tool("a", *entries))
    (problem,) = problems(path)
    assert expected in problem
    line = int(problem.split(":")[1])
    assert path.read_text().splitlines()[line - 1].strip() == entries[-1]


def test_a_tool_without_a_source_cannot_take_one(write: WriteFile) -> None:
    text = SOURCE + "---\nname: a\nversion: 1.0.0\ninput_schema:\n  parameters: [owner]\n"
    text += "backend:\n  http: {url: 'http://127.0.0.1:9/x'}\n"
    (problem,) = problems(write(text))
    assert "'owner' names a shared parameter, but the tool has no source" in problem
    assert "backend: {http: {source: NAME}}" in problem


def test_a_sources_parameters_are_checked_at_the_source(write: WriteFile) -> None:
    text = "source: gh\nbase_url: http://127.0.0.1:9\nparameters:\n  - {name: owner, type: strin}\n"
    text += "  - {name: owner, type: string}\n" + tool("a", "- owner")
    found = problems(write(text))
    assert any(":4:" in p and "did you mean 'string'" in p for p in found), found
    # The tool is not blamed a second time: its source's problems are listed with it.
    assert not any("unknown shared parameter" in p for p in found), found


def test_a_source_without_parameters_says_it_declares_none(write: WriteFile) -> None:
    text = "source: gh\nbase_url: http://127.0.0.1:9\n" + tool("a", "- owner")
    (problem,) = problems(write(text))
    assert "source 'gh' (tool.yaml:1) declares: none" in problem.replace(
        str(write.folder) + "/", ""
    )


def test_diff_reports_a_shared_parameter_change_on_every_tool_that_takes_it(
    write: WriteFile, tmp_path: Path
) -> None:
    tools = tool("a", "- owner") + tool("b", "- owner", "- repo") + tool("c", "- repo")
    old = load(write(SOURCE + tools, "old/tools.yaml"))
    new = load(write(SOURCE.replace("[a-z]+", "[a-z0-9]+") + tools, "new/tools.yaml"))
    diffs = {diff.name: diff for diff in diff_tools(old, new)}
    assert sorted(diffs) == ["a", "b"]  # c takes only repo, unchanged
    for diff in diffs.values():
        assert [change.kind for change in diff.changes] == [BREAKING]
        assert "owner" in diff.changes[0].message
        assert diff.version_problem is not None  # 1.0.0 -> 1.0.0 is not the bump needed


def test_show_prints_the_resolved_parameters(write: WriteFile) -> None:
    path = write(SOURCE + tool("a", "- owner", "- {use: repo, required: false}"))
    shown = subprocess.run(
        [sys.executable, "-m", "agentkit", "show", "a", "--tools", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    written = json.loads(shown.stdout)["definition"]["input_schema"]["parameters"]
    assert written == [
        {"name": "owner", "type": "string", "pattern": "[a-z]+"},
        {
            "name": "repo",
            "type": "string",
            "description": "The repository's name",
            "required": False,
        },
    ]
