"""A definition's ``max_output:``: its answers come in pages; a malformed one is a problem
at its file:line."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from agentkit import DefinitionError, ToolExecutor, load_tools
from agentkit.paging import CONTINUATION, PageStore, size_of
from tests.declarative.conftest import WriteFile
from tests.support.paged import REPORT_DEFINITION, every_page, merged, output_of
from tests.support.serve_tools import report

SCHEMA = json.loads(
    (
        Path(__file__).parents[2] / "agentkit" / "declarative" / "tool-definition.schema.json"
    ).read_text()
)


def problems_of(path: Path) -> list[str]:
    with pytest.raises(DefinitionError) as info:
        load_tools(path)
    return [str(problem) for problem in info.value.problems]


@pytest.mark.parametrize(
    ("budget", "expected"),
    [("{bytes: 2000}", 2000), ("{tokens: 500}", 2000)],
    ids=["bytes", "tokens"],
)
def test_a_definition_s_answers_come_in_pages(write: WriteFile, budget: str, expected: int) -> None:
    (cls,) = load_tools(write(REPORT_DEFINITION.format(budget=budget)))
    tool = cls()
    assert cls.spec is not None
    assert cls.spec.max_output == expected
    assert CONTINUATION in tool.input_schema.to_json_schema()["properties"]
    executor = ToolExecutor(credentials={}, pages=PageStore())
    results = every_page(lambda given: executor.execute(tool, given), {"rows": 200})
    assert len(results) > 2
    assert all(size_of(output_of(result)) <= expected for result in results)
    assert all(not tool.output_schema.check(output_of(r)).problems for r in results)
    assert merged(results) == report(200)


def test_the_definition_schema_takes_max_output(write: WriteFile) -> None:
    for budget in ("{bytes: 2000}", "{tokens: 500}"):
        jsonschema.validate(yaml.safe_load(REPORT_DEFINITION.format(budget=budget)), SCHEMA)
    for budget in ("{bytes: 10}", "{bytes: 2000, tokens: 500}", "{kilobytes: 2}", "2000"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load(REPORT_DEFINITION.format(budget=budget)), SCHEMA)


@pytest.mark.parametrize(
    ("budget", "said"),
    [
        ("{bytes: 10}", "got 10 bytes (10 bytes)"),
        ("{tokens: 20}", "got 20 tokens (80 bytes)"),
        ("{kilobytes: 2}", "'kilobytes' is not a unit"),
        ("{bytes: 2k}", "bytes must be a whole number, got '2k'"),
        ("{bytes: 2000, tokens: 500}", "got {'bytes': 2000, 'tokens': 500}"),
        ("20000", "got 20000"),
    ],
    ids=["too-small", "too-few-tokens", "unit", "text", "both", "bare-number"],
)
def test_a_malformed_budget_is_a_problem_at_its_line(
    write: WriteFile, budget: str, said: str
) -> None:
    path = write(REPORT_DEFINITION.format(budget=budget))
    (found,) = problems_of(path)
    assert found.startswith(f"{path}:4:")
    assert "max_output" in found
    assert said in found
    assert "{bytes: N} or {tokens: N}" in found


def test_a_parameter_named_continuation_is_a_problem_with_max_output(write: WriteFile) -> None:
    text = REPORT_DEFINITION.format(budget="{bytes: 2000}").replace(
        "- {name: rows, type: integer}",
        "- {name: rows, type: integer}\n    - {name: continuation, type: string}",
    )
    path = write(text)
    found = "\n".join(problems_of(path))
    assert f"{path}:4:" in found
    assert "declares 'continuation'" in found
    assert "rename" in found


def test_without_max_output_a_definition_is_unchanged(write: WriteFile) -> None:
    text = REPORT_DEFINITION.format(budget="{bytes: 2000}").replace(
        "max_output: {bytes: 2000}\n", ""
    )
    (cls,) = load_tools(write(text))
    assert cls.spec is not None
    assert cls.spec.max_output is None
    assert CONTINUATION not in cls.spec.input_schema


SOURCE = """\
source: tracker
base_url: https://tracker.invalid/api
max_output: {budget}
"""
TOOL_OF_SOURCE = """\
name: {name}
version: 1.0.0
{own}input_schema:
  parameters:
    - {{name: {parameter}, type: string}}
backend: {{http: {{source: tracker, path: /issues}}}}
"""


def _tool_of_source(name: str, own: str = "", parameter: str = "query") -> str:
    return TOOL_OF_SOURCE.format(name=name, own=own, parameter=parameter)


def test_a_source_s_budget_is_its_tools_unless_they_declare_their_own(
    write: WriteFile, tmp_path: Path
) -> None:
    write(SOURCE.format(budget="{tokens: 1000}"), "source.yaml")
    write(_tool_of_source("inherits"), "inherits.yaml")
    write(_tool_of_source("own", own="max_output: {bytes: 500}\n"), "own.yaml")
    budgets = {cls.TOOL_NAME: cls.spec.max_output for cls in load_tools(tmp_path) if cls.spec}
    assert budgets == {"inherits": 4000, "own": 500}


def test_a_malformed_source_budget_is_a_problem_at_the_source(
    write: WriteFile, tmp_path: Path
) -> None:
    source = write(SOURCE.format(budget="{tokens: 1}"), "source.yaml")
    write(_tool_of_source("inherits"), "inherits.yaml")
    found = "\n".join(problems_of(tmp_path))
    assert f"{source}:3:" in found
    assert "max_output" in found
    assert "got 1 tokens (4 bytes)" in found


def test_a_continuation_parameter_of_a_tool_of_a_budgeted_source_is_a_problem(
    write: WriteFile, tmp_path: Path
) -> None:
    source = write(SOURCE.format(budget="{bytes: 4000}"), "source.yaml")
    tool = write(_tool_of_source("clash", parameter="continuation"), "clash.yaml")
    (found,) = problems_of(tmp_path)
    assert found.startswith(f"{tool}:")
    assert f"from source 'tracker', {source}:1" in found
    assert "declares 'continuation'" in found
