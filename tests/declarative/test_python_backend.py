"""The Python-callable backend: references checked before import, signatures checked after."""

from __future__ import annotations

import pytest

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools
from tests.declarative.conftest import WriteFile

TOOL = """\
name: stats
version: 1.0.0
input_schema:
  parameters:
    - {{name: text, type: string}}
    - {{name: top, type: integer, required: false, default: 3}}
output_schema:
  parameters:
    - {{name: words, type: integer}}
    - {{name: sentences, type: integer}}
    - {{name: characters, type: integer}}
    - {{name: commonest, type: list, items: string}}
backend:
  python: {reference}
"""


def test_a_python_backend_runs_through_the_executor(write: WriteFile) -> None:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(reference="examples.textstats:text_stats")), registry=registry)
    result = ToolExecutor(credentials={}).execute(registry["stats"], {"text": "a b a."})
    assert result.output == {"words": 3, "sentences": 1, "characters": 6, "commonest": ["a", "b"]}


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        pytest.param("os:system", "'os' is a standard-library module", id="stdlib"),
        pytest.param("builtins:eval", "'builtins' is a standard-library module", id="builtin"),
        pytest.param("examples.textstats:__dict__", "'__dict__' is a dunder name", id="dunder"),
        pytest.param(
            "examples.textstats.text_stats", "expected 'package.module:function'", id="no-colon"
        ),
        pytest.param('"examples; rm -rf /:x"', "invalid reference", id="not-dotted"),
        pytest.param("no_such_module_xyz:f", "cannot import 'no_such_module_xyz'", id="missing"),
        pytest.param("examples.textstats:nothing", "has no attribute 'nothing'", id="no-attribute"),
        pytest.param("examples.textstats:re", "is not callable", id="not-callable"),
        pytest.param(
            "examples.convert:ConvertTemperatureTool",
            "does not accept the declared input",
            id="signature",
        ),
    ],
)
def test_bad_references_are_load_problems(write: WriteFile, reference: str, message: str) -> None:
    with pytest.raises(DefinitionError) as info:
        load_tools(write(TOOL.format(reference=reference)))
    assert any(message in str(problem) for problem in info.value.problems), info.value
