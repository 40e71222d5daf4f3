"""``min_length`` / ``max_length`` in a definition file: each problem at its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit import load_tools
from agentkit.toolerrors import DefinitionError

TOOL = """\
name: lookup
version: 1.0.0
description: Look a code up.
backend: {{python: "math:floor"}}
input_schema:
  parameters:
    - name: code
      type: {type}
      {key}: {value}
"""


@pytest.mark.parametrize(
    ("kind", "key", "value", "problem"),
    [
        pytest.param(
            "string",
            "min_length",
            "-1",
            "input_schema.parameters[0].min_length: expected a whole number of characters, "
            "0 or more, got -1",
            id="negative",
        ),
        pytest.param(
            "string",
            "max_length",
            "2.5",
            "input_schema.parameters[0].max_length: expected a whole number of characters, "
            "0 or more, got 2.5",
            id="not-an-integer",
        ),
        pytest.param(
            "integer",
            "max_length",
            "3",
            "input_schema.parameters[0].max_length: 'max_length' applies to string "
            "parameters, not 'integer'",
            id="not-a-string",
        ),
        pytest.param(
            "string",
            "min_length",
            "5\n      max_length: 2",
            "input_schema.parameters[0].max_length: max_length 2 is below min_length 5",
            id="min-above-max",
        ),
    ],
)
def test_a_length_problem_names_its_file_and_line(
    tmp_path: Path, kind: str, key: str, value: str, problem: str
) -> None:
    path = tmp_path / "lookup.yaml"
    path.write_text(TOOL.format(type=kind, key=key, value=value))
    with pytest.raises(DefinitionError) as info:
        load_tools(path)
    line = 10 if problem.endswith("below min_length 5") else 9
    assert f"lookup.yaml:{line}:" in str(info.value)
    assert problem in str(info.value)
