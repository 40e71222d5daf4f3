"""ToolResult: immutable, and serialisable for any outcome."""

from __future__ import annotations

import json

import pytest

from agentkit import (
    STATUS_FAILURE,
    STATUS_SUCCESS,
    ToolExecutionError,
    ToolResult,
    ToolValidationError,
)
from agentkit.content import Text
from agentkit.toolresult import make_result


def test_success() -> None:
    result = ToolResult(tool_name="t", status=STATUS_SUCCESS, output={"a": 1}, duration=0.5)
    assert result.succeeded
    assert result.to_dict() == {
        "tool": "t",
        "status": "success",
        "output": {"a": 1},
        "duration": 0.5,
        "error": None,
    }


@pytest.mark.parametrize(
    "attribute", ["tool_name", "status", "output", "duration", "error", "content", "_fields", "new"]
)
@pytest.mark.parametrize("build", ["init", "fast"])
def test_immutable(attribute: str, build: str) -> None:
    if build == "init":
        result = ToolResult(tool_name="t", status=STATUS_SUCCESS, output={})
    else:
        result = make_result("t", STATUS_SUCCESS, {}, 0.0, None)
    with pytest.raises(AttributeError, match="immutable"):
        setattr(result, attribute, "x")
    with pytest.raises(AttributeError, match="immutable"):
        delattr(result, attribute)


def test_fast_and_keyword_construction_agree() -> None:
    fast = make_result("t", STATUS_SUCCESS, {"a": 1}, 1.0, None)
    slow = ToolResult(tool_name="t", status=STATUS_SUCCESS, output={"a": 1}, duration=1.0)
    assert type(fast) is ToolResult
    assert fast == slow


@pytest.mark.parametrize("build", ["init", "fast"])
def test_every_field_reads_back_as_given(build: str) -> None:
    error = ToolExecutionError("t", ValueError("boom"))
    block = Text("hello")
    if build == "init":
        result = ToolResult("t", STATUS_FAILURE, {"a": 1}, 0.25, error, content=[block])  # type: ignore[arg-type]
    else:
        result = make_result("t", STATUS_FAILURE, {"a": 1}, 0.25, error, (block,))
    assert (result.tool_name, result.status, result.output, result.duration) == (
        "t",
        STATUS_FAILURE,
        {"a": 1},
        0.25,
    )
    assert result.error is error
    assert result.content == (block,)
    assert not result.succeeded


def test_validation_failure_to_dict_is_json() -> None:
    error = ToolValidationError("t", "input", ["Missing required parameter: 'city'"])
    result = ToolResult(tool_name="t", status=STATUS_FAILURE, duration=0.1, error=error)
    assert not result.succeeded
    data = json.loads(json.dumps(result.to_dict()))
    assert data["error"] == {
        "type": "ToolValidationError",
        "message": "Tool 't' received invalid input:\n  - Missing required parameter: 'city'",
        "direction": "input",
        "errors": ["Missing required parameter: 'city'"],
    }


def test_execution_failure_to_dict_names_the_cause() -> None:
    error = ToolExecutionError("t", ValueError("boom"))
    data = ToolResult(tool_name="t", status=STATUS_FAILURE, error=error).to_dict()
    assert data["error"] == {
        "type": "ToolExecutionError",
        "message": "Tool 't' failed: ValueError: boom",
        "cause": "ValueError",
        "detail": "boom",
    }


def test_repr() -> None:
    result = make_result("t", STATUS_SUCCESS, {"a": 1}, 0.25, None)
    assert (
        repr(result)
        == "ToolResult(tool_name='t', status='success', output={'a': 1}, duration=0.250000)"
    )
