"""Examples: checked against the tool's schemas, and each kind of answer held against a result."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentkit import ToolExecutor, ToolResult
from agentkit.declarative import load_tools
from agentkit.tool import Tool
from agentkit.toolerrors import DefinitionError, HttpCallError, SemanticError, ToolExecutionError
from agentkit.toolexamples import check_answer, examples_of, failure_kind, parse_examples
from agentkit.toolschema import ToolSchema
from tests.support.helpers import Adder

INPUTS = ToolSchema.from_dict(
    {
        "parameters": [
            {"name": "city", "type": "string"},
            {"name": "days", "type": "integer", "required": False, "maximum": 16},
        ]
    }
)
OUTPUTS = ToolSchema.from_dict(
    {
        "parameters": [
            {"name": "temperature", "type": "float"},
            {"name": "conditions", "type": "string"},
        ]
    }
)


def problems_of(raw: Any) -> list[str]:
    return [str(problem) for problem in parse_examples(raw, INPUTS, OUTPUTS)[1]]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param({"name": "x"}, "examples: expected a list of examples", id="not-a-list"),
        pytest.param(
            [{"inputs": {"city": "Oslo"}, "fails": "execution"}],
            "examples[0].name: missing 'name'",
            id="no-name",
        ),
        pytest.param(
            [{"name": "a b", "inputs": {"city": "Oslo"}, "fails": "execution"}],
            "examples[0].name: invalid name 'a b'",
            id="bad-name",
        ),
        pytest.param(
            [{"name": "a", "inputs": {"city": "Oslo"}, "fails": "execution"}] * 2,
            "examples[1].name: example 'a' is named twice",
            id="twice",
        ),
        pytest.param(
            [{"name": "a", "inputs": {}, "output_includes": {"conditions": "rain"}}],
            "examples[0].inputs: Missing required parameter: 'city'",
            id="inputs-missing",
        ),
        pytest.param(
            [{"name": "a", "inputs": {"city": "Oslo", "days": 40}, "fails": "execution"}],
            "examples[0].inputs: Parameter 'days': expected a value of at most 16, got 40",
            id="inputs-out-of-range",
        ),
        pytest.param(
            [
                {
                    "name": "a",
                    "inputs": {"city": "Oslo"},
                    "output": {"temperature": "warm", "conditions": "x"},
                }
            ],
            "examples[0].output: Parameter 'temperature': expected type 'float', got 'str'",
            id="output-type",
        ),
        pytest.param(
            [{"name": "a", "inputs": {"city": "Oslo"}, "output": {"conditions": "x"}}],
            "examples[0].output: Missing required parameter: 'temperature'",
            id="output-incomplete",
        ),
        pytest.param(
            [{"name": "a", "inputs": {"city": "Oslo"}, "output_includes": {"humidity": 3}}],
            "examples[0].output_includes.humidity: 'humidity' is not an output field (the fields: temperature, conditions)",
            id="includes-unknown",
        ),
        pytest.param(
            [{"name": "a", "inputs": {"city": "Oslo"}, "output_includes": {"temperature": "hot"}}],
            "examples[0].output_includes.temperature: Parameter 'temperature': expected type 'float', got 'str'",
            id="includes-type",
        ),
        pytest.param(
            [{"name": "a", "inputs": {"city": "Oslo"}}],
            "examples[0]: give exactly one of 'output'",
            id="no-expectation",
        ),
        pytest.param(
            [
                {
                    "name": "a",
                    "inputs": {"city": "Oslo"},
                    "fails": "execution",
                    "output_includes": {"conditions": "x"},
                }
            ],
            "found output_includes, fails",
            id="two-expectations",
        ),
        pytest.param(
            [{"name": "a", "inputs": {"city": "Oslo"}, "fails": "broken"}],
            "examples[0].fails: expected one of validation, output, credential, timeout, execution, got 'broken'",
            id="bad-kind",
        ),
        pytest.param(
            [
                {
                    "name": "a",
                    "inputs": {"city": "Oslo"},
                    "output_includes": {"conditions": "x"},
                    "status": 404,
                }
            ],
            "examples[0].status: 'status' goes with 'fails'",
            id="status-without-fails",
        ),
        pytest.param(
            [{"name": "a", "inputs": {"city": "Oslo"}, "fails": "execution", "status": "404"}],
            "examples[0].status: expected an HTTP status such as 404, got '404'",
            id="status-text",
        ),
        pytest.param(
            [{"name": "a", "input": {"city": "Oslo"}, "fails": "execution"}],
            "examples[0].input: unknown key 'input'; did you mean 'inputs'?",
            id="typo",
        ),
        pytest.param(
            [{"name": "n" * 65, "inputs": {"city": "Oslo"}, "fails": "execution"}],
            "examples[0].name: invalid name 'nnnnnnnnn",
            id="name-too-long",
        ),
        pytest.param(
            [
                {"name": "Oslo", "inputs": {"city": "Oslo"}, "fails": "execution"},
                {"name": "oslo", "inputs": {"city": "Oslo"}, "fails": "execution"},
            ],
            "examples[1].name: example 'oslo' is named twice (letter case aside)",
            id="twice-in-another-case",
        ),
        pytest.param(
            [{"name": "a", "inputs": {"city": "Oslo"}, "fails": "execution", "status": 99999}],
            "examples[0].status: expected an HTTP status from 100 to 599, got 99999",
            id="status-out-of-range",
        ),
        pytest.param(
            [{"name": "a", "inputs": {}, "fails": "validation", "status": 404}],
            "examples[0].status: 'status' is the upstream's HTTP status of a failed call: it "
            "goes with 'fails: execution', not 'fails: validation'",
            id="status-with-another-kind",
        ),
    ],
)
def test_a_broken_example_is_a_problem_at_its_field(raw: Any, expected: str) -> None:
    assert any(expected in problem for problem in problems_of(raw)), problems_of(raw)


def test_a_validation_example_may_give_inputs_the_schema_refuses() -> None:
    raw = [{"name": "too_far", "inputs": {"city": "Oslo", "days": 40}, "fails": "validation"}]
    examples, problems = parse_examples(raw, INPUTS, OUTPUTS)
    assert problems == []
    assert examples[0].expects == "fails"


def test_a_definition_reports_its_example_problems_at_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        "name: t\nversion: 1.0.0\n"
        "input_schema: {parameters: [{name: text, type: string}]}\n"
        "backend: {python: examples.textstats:text_stats}\n"
        "examples:\n"
        "  - name: ok\n"
        "    inputs: {text: Hi.}\n"
        "    output: {}\n"
        "  - name: bad\n"
        "    inputs: {txt: Hi.}\n"
        "    output: {}\n"
    )
    with pytest.raises(DefinitionError) as raised:
        load_tools(tmp_path)
    text = str(raised.value)
    assert (
        "t.yaml:10:13: examples[1].inputs: Unknown parameter: 'txt' (did you mean 'text'?)" in text
    )


def success(output: dict[str, Any]) -> ToolResult:
    return ToolResult("weather", ToolResult.STATUS_SUCCESS, output)


def failure(error: Exception) -> ToolResult:
    return ToolResult("weather", ToolResult.STATUS_FAILURE, None, error=error)


def one(raw: Mapping[str, Any]) -> Any:
    examples, problems = parse_examples(
        [{"name": "e", "inputs": {"city": "Oslo"}, **raw}], INPUTS, OUTPUTS
    )
    assert problems == []
    return examples[0]


WHOLE = {"output": {"temperature": 18.0, "conditions": "clear"}}
SOME = {"output_includes": {"conditions": "clear"}}
NOT_FOUND = ToolExecutionError(
    "weather", HttpCallError("status", "GET /x returned 404 Not Found: city not found", status=404)
)


@pytest.mark.parametrize(
    ("raw", "result"),
    [
        pytest.param(
            WHOLE, success({"temperature": 18, "conditions": "clear"}), id="whole-int-as-float"
        ),
        pytest.param(SOME, success({"temperature": 3.5, "conditions": "clear"}), id="some-fields"),
        pytest.param({"fails": "execution"}, failure(NOT_FOUND), id="fails-kind"),
        pytest.param(
            {"fails": "execution", "status": 404, "message": "city not found"},
            failure(NOT_FOUND),
            id="fails-status-message",
        ),
    ],
)
def test_an_answer_that_meets_its_example_passes(
    raw: Mapping[str, Any], result: ToolResult
) -> None:
    assert check_answer(one(raw), result) is None


@pytest.mark.parametrize(
    ("raw", "result", "lines"),
    [
        pytest.param(
            WHOLE,
            success({"temperature": 18.5, "conditions": "clear"}),
            ['-    "temperature": 18.0', '+    "temperature": 18.5'],
            id="whole-differs",
        ),
        pytest.param(
            WHOLE,
            failure(NOT_FOUND),
            ['-  "output": {', '+  "fails": "execution",'],
            id="whole-but-failed",
        ),
        pytest.param(
            SOME,
            success({"temperature": 1.0, "conditions": "rain"}),
            ['-    "conditions": "clear"', '+    "conditions": "rain"'],
            id="some-differ",
        ),
        pytest.param(
            {"fails": "execution", "status": 500},
            failure(NOT_FOUND),
            ['-  "status": 500', '+  "status": 404'],
            id="other-status",
        ),
        pytest.param(
            {"fails": "execution", "message": "rate limited"},
            failure(NOT_FOUND),
            ['-  "message": "... rate limited ..."'],
            id="other-message",
        ),
        pytest.param(
            {"fails": "credential"},
            failure(NOT_FOUND),
            ['-  "fails": "credential"', '+  "fails": "execution",'],
            id="other-kind",
        ),
        pytest.param(
            {"fails": "execution"},
            success({"temperature": 1.0, "conditions": "x"}),
            ['+  "output": {'],
            id="succeeded",
        ),
    ],
)
def test_an_answer_that_misses_shows_a_diff(
    raw: Mapping[str, Any], result: ToolResult, lines: list[str]
) -> None:
    problem = check_answer(one(raw), result)
    assert problem is not None
    assert "--- expected\n+++ got" in problem
    for line in lines:
        assert line in problem.splitlines(), problem


def test_each_failure_kind_is_told_apart() -> None:
    executor = ToolExecutor(credentials={})

    class Needs(Tool):
        TOOL_NAME = "needs"
        CREDENTIAL_NAMES = ("api-token",)

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return {}

    class Lies(Adder):
        TOOL_NAME = "lies"

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return {"sum": "many"}

    assert (
        failure_kind(executor.execute(Adder(), {"a": "x", "b": 1}, raise_on_failure=False).error)
        == "validation"
    )
    assert (
        failure_kind(executor.execute(Lies(), {"a": 1, "b": 1}, raise_on_failure=False).error)
        == "output"
    )
    assert failure_kind(executor.execute(Needs(), {}, raise_on_failure=False).error) == "credential"
    assert failure_kind(NOT_FOUND) == "execution"
    assert failure_kind(None) is None


class Documented(Adder):
    TOOL_NAME = "add_documented"
    EXAMPLES = (
        {"name": "small", "inputs": {"a": 1, "b": 2}, "output": {"sum": 3}},
        {"name": "text", "inputs": {"a": "one", "b": 2}, "fails": "validation"},
    )


def test_a_hand_written_tool_declares_examples_in_the_definition_form() -> None:
    examples = examples_of(Documented())
    assert [example.name for example in examples] == ["small", "text"]
    result = ToolExecutor(credentials={}).execute(Documented(), dict(examples[0].inputs))
    assert check_answer(examples[0], result) is None
    assert examples_of(Adder()) == ()


def test_a_hand_written_tool_with_a_broken_example_is_named() -> None:
    class Broken(Adder):
        TOOL_NAME = "add_broken"
        EXAMPLES = ({"name": "x", "inputs": {"b": 1}, "output": {"sum": 1}},)

    with pytest.raises(
        SemanticError,
        match=r"Tool 'add_broken' .*EXAMPLES:\n  examples\[0\]\.inputs: Missing required parameter: 'a'",
    ):
        examples_of(Broken())


@pytest.mark.parametrize("declared", [None, "abc", {"name": "x"}], ids=["none", "text", "mapping"])
def test_examples_of_a_hand_written_tool_must_be_a_list(declared: Any) -> None:
    class Odd(Adder):
        TOOL_NAME = "add_odd"
        EXAMPLES = declared

    with pytest.raises(
        SemanticError, match=r"Tool 'add_odd' .*EXAMPLES: expected a list of examples"
    ):
        examples_of(Odd())
