"""``validate`` names the largest schema and warns past the budget; ``show`` prints the size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit import ToolRegistry, load_tools
from agentkit.schemasize import schema_size
from tests.cli.test_cli import run

#: What every definition here has besides its name and schema.
COMMON = "version: 1.0.0\nbackend: {http: {url: 'https://api.example.test/x'}}\n"
SMALL = (
    COMMON
    + """\
name: small
description: A small tool.
input_schema: {parameters: [{name: text, type: string}]}
"""
)


def big(fields: int, name: str = "big") -> str:
    described = ", ".join(
        f"{{name: f{i}, type: string, description: {'word ' * 20}}}" for i in range(fields)
    )
    schema = f"input_schema: {{parameters: [{described}]}}\n"
    return f"name: {name}\ndescription: A big tool.\n{COMMON}{schema}"


def size_of(folder: Path, name: str) -> int:
    registry = ToolRegistry()
    load_tools(folder, registry=registry)
    return schema_size(registry[name]).total


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    (tmp_path / "small.yaml").write_text(SMALL)
    (tmp_path / "big.yaml").write_text(big(80))
    return tmp_path


def test_validate_warns_of_a_tool_over_the_budget_naming_it_and_the_fix(
    capsys: pytest.CaptureFixture[str], tools: Path
) -> None:
    size = size_of(tools, "big")
    assert size > 8192
    code, out, err = run(capsys, "validate", str(tools))
    assert code == 0
    assert f"warning: {tools / 'big.yaml'}:1: schema size: {size} bytes (input " in err
    assert "for tool 'big', over the budget of 8192; shrink it: shorter descriptions" in err
    assert "(--schema-budget BYTES sets the budget)" in err
    assert "small" not in err
    assert out.endswith(f"; largest schema: big, {size} bytes (budget 8192)\n")
    assert run(capsys, "validate", "--strict", str(tools))[0] == 1


@pytest.mark.parametrize("margin", [0, 1], ids=["at-the-budget", "over-by-one"])
def test_the_budget_option_sets_where_the_warning_starts(
    capsys: pytest.CaptureFixture[str], tools: Path, margin: int
) -> None:
    budget = size_of(tools, "big") - margin
    code, out, err = run(capsys, "validate", "--strict", "--schema-budget", str(budget), str(tools))
    assert code == margin
    assert ("schema size:" in err) is bool(margin)
    assert f"(budget {budget})" in out


@pytest.mark.parametrize("value", ["0", "-5", "8k", ""], ids=["zero", "negative", "unit", "empty"])
def test_a_budget_that_is_not_a_number_of_bytes_is_refused(
    capsys: pytest.CaptureFixture[str], tools: Path, value: str
) -> None:
    code, _, err = run(capsys, "validate", "--schema-budget", value, str(tools))
    assert code == 2
    assert f"--schema-budget: expected a number of bytes (1 or more), got {value!r}" in err
    assert "Traceback" not in err


def test_show_prints_the_schema_size(capsys: pytest.CaptureFixture[str], tools: Path) -> None:
    registry = ToolRegistry()
    load_tools(tools, registry=registry)
    size = schema_size(registry["small"])
    code, out, _ = run(capsys, "show", "--tools", str(tools), "small")
    assert code == 0
    expected = f"schema size: {size.total} bytes (input {size.input}, output {size.output})"
    assert f"  {expected}\n" in out
    code, out, _ = run(capsys, "show", "--tools", str(tools), "--json", "small")
    assert json.loads(out)["schema_size"] == {
        "input": size.input,
        "output": size.output,
        "total": size.total,
    }
