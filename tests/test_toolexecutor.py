"""ToolExecutor: the five steps, strict and result modes, concurrency, and secrets."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import pytest

from agentkit import (
    STATUS_FAILURE,
    STATUS_SUCCESS,
    Checked,
    CredentialError,
    SemanticError,
    Tool,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    ToolValidationError,
)
from tests.helpers import SECRET, WAIT_SECONDS, Adder, Scripted, WeatherTool


def test_success_fills_defaults_and_converts(executor: ToolExecutor) -> None:
    result = executor.execute(Adder(), {"a": 2})
    assert result.status == STATUS_SUCCESS
    assert result.succeeded
    assert result.output == {"sum": 2.0}
    assert result.error is None
    assert result.tool_name == "add"
    assert result.duration > 0


def test_the_callers_dict_is_never_changed(executor: ToolExecutor) -> None:
    inputs: dict[str, Any] = {"a": 2}
    executor.execute(Adder(), inputs)
    assert inputs == {"a": 2}


def test_the_tool_cannot_change_the_callers_dict(executor: ToolExecutor) -> None:
    def vandal(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        inputs["q"] = "changed"
        inputs["extra"] = 1
        return {"answer": "ok"}

    inputs = {"q": "original"}
    executor.execute(Scripted(vandal), inputs)
    assert inputs == {"q": "original"}


def test_any_mapping_is_accepted(executor: ToolExecutor) -> None:
    assert executor.execute(Adder(), MappingProxyType({"a": 1, "b": 2})).output == {"sum": 3.0}


# -- each failure, in both modes ---------------------------------------------------------------


def answer(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
    return {"answer": "42"}


def raises(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
    raise RuntimeError("upstream said no")


def wrong_output(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
    return {"answer": 42}


def not_a_dict(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
    return ["42"]


FAILURES = [
    pytest.param(
        Adder,
        {"a": "2"},
        ToolValidationError,
        "Parameter 'a': expected type 'float', got 'str'",
        id="input-invalid",
    ),
    pytest.param(
        Adder,
        ["a"],
        ToolValidationError,
        "Expected a mapping of parameter names to values",
        id="input-not-a-mapping",
    ),
    pytest.param(
        lambda: Scripted(raises),
        {},
        ToolExecutionError,
        "RuntimeError: upstream said no",
        id="execute-raises",
    ),
    pytest.param(
        lambda: Scripted(wrong_output),
        {},
        ToolValidationError,
        "Parameter 'answer': expected type 'string', got 'int'",
        id="output-invalid",
    ),
    pytest.param(
        lambda: Scripted(not_a_dict),
        {},
        ToolValidationError,
        "Expected the tool to return a dictionary, got 'list'",
        id="output-not-a-dict",
    ),
]


@pytest.mark.parametrize(("make", "inputs", "error_type", "message"), FAILURES)
def test_strict_mode_raises_the_typed_error(
    executor: ToolExecutor, make: Any, inputs: Any, error_type: type[Exception], message: str
) -> None:
    with pytest.raises(error_type, match=message):
        executor.execute(make(), inputs)


@pytest.mark.parametrize(("make", "inputs", "error_type", "message"), FAILURES)
def test_result_mode_returns_the_failure(
    executor: ToolExecutor, make: Any, inputs: Any, error_type: type[Exception], message: str
) -> None:
    result = executor.execute(make(), inputs, raise_on_failure=False)
    assert result.status == STATUS_FAILURE
    assert not result.succeeded
    assert result.output is None
    assert isinstance(result.error, error_type)
    assert message in str(result.error)


def test_validation_errors_carry_direction(executor: ToolExecutor) -> None:
    result = executor.execute(Scripted(wrong_output), {}, raise_on_failure=False)
    assert isinstance(result.error, ToolValidationError)
    assert result.error.direction == "output"
    assert result.error.tool_name == "scripted"


def test_execution_error_keeps_the_cause(executor: ToolExecutor) -> None:
    with pytest.raises(ToolExecutionError) as info:
        executor.execute(Scripted(raises), {})
    assert isinstance(info.value.cause, RuntimeError)
    assert info.value.__cause__ is info.value.cause


def test_invalid_input_never_reaches_execute(executor: ToolExecutor) -> None:
    tool = Scripted(answer)
    executor.execute(tool, {"q": 1}, raise_on_failure=False)
    assert tool.calls == 0


def test_a_missing_credential_fails_before_execute() -> None:
    tool = Scripted(answer)
    executor = ToolExecutor(credentials={})
    result = executor.execute(tool, {}, raise_on_failure=False)
    assert tool.calls == 0
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, CredentialError)
    assert "needs credential 'api-key'" in str(result.error)
    with pytest.raises(ToolExecutionError, match="needs credential 'api-key'"):
        executor.execute(tool, {})


def test_credentials_reach_execute(executor: ToolExecutor) -> None:
    seen: dict[str, str] = {}

    def capture(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        seen.update(credentials)
        return {"answer": "ok"}

    executor.execute(Scripted(capture), {})
    assert seen == {"api-key": SECRET}


def test_default_credentials_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("API_KEY", "from-env")
    seen: list[str] = []

    def capture(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        seen.append(credentials["api-key"])
        return {"answer": "ok"}

    ToolExecutor().execute(Scripted(capture), {})
    assert seen == ["from-env"]


def test_base_exceptions_are_not_swallowed(executor: ToolExecutor) -> None:
    def interrupted(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        executor.execute(Scripted(interrupted), {}, raise_on_failure=False)


def test_misuse_raises_even_in_result_mode(executor: ToolExecutor) -> None:
    with pytest.raises(SemanticError, match="execute\\(\\) takes a Tool instance, got str"):
        executor.execute("add", {}, raise_on_failure=False)  # type: ignore[arg-type]


def test_a_tool_whose_init_skipped_super_still_needs_a_name(executor: ToolExecutor) -> None:
    class Sneaky(Tool):
        def __init__(self) -> None:
            pass  # never calls Tool.__init__

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return {}

    with pytest.raises(SemanticError, match="A Tool name is required"):
        executor.execute(Sneaky(), {})


def test_a_tool_that_replaced_its_spec_is_refused_with_the_reason(executor: ToolExecutor) -> None:
    tool = Adder()
    tool.spec = {"openapi": "3.1.0"}  # type: ignore[assignment]
    with pytest.raises(SemanticError, match=r"tests\.helpers\.Adder replaced 'spec' with a dict"):
        executor.execute(tool, {"a": 1}, raise_on_failure=False)
    assert repr(tool) == "<Adder ('spec' replaced)>"


def test_an_object_with_a_spec_of_its_own_is_not_a_tool(executor: ToolExecutor) -> None:
    class Lookalike:
        spec = "openapi.yaml"

    with pytest.raises(SemanticError, match=r"execute\(\) takes a Tool instance, got Lookalike"):
        executor.execute(Lookalike(), {})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("answer", "credentials"),
    [
        pytest.param("fine", {}, id="valid"),
        pytest.param(7, {}, id="invalid"),
        pytest.param("fine", {"api-key": SECRET}, id="valid-with-a-credential"),
        pytest.param(7, {"api-key": SECRET}, id="invalid-with-a-credential"),
    ],
)
def test_each_schema_checks_once_a_call(answer: object, credentials: dict[str, str]) -> None:
    class Counted(Tool):
        TOOL_NAME = "counted"
        CREDENTIAL_NAMES = tuple(credentials)
        INPUT_SCHEMA = {"parameters": [{"name": "q", "type": "string"}]}
        OUTPUT_SCHEMA = {"parameters": [{"name": "answer", "type": "string"}]}

        def execute(self, inputs: dict[str, Any], creds: Mapping[str, str]) -> dict[str, Any]:
            return {"answer": answer}

    checks: list[str] = []

    def watched(label: str, check: Callable[[Any], Checked]) -> Callable[[Any], Checked]:
        def counted(values: Any) -> Checked:
            checks.append(label)
            return check(values)

        return counted

    tool = Counted()
    # Schemas are immutable; a test may still watch the compiled check of one.
    object.__setattr__(tool.input_schema, "check", watched("input", tool.input_schema.check))
    object.__setattr__(tool.output_schema, "check", watched("output", tool.output_schema.check))
    result = ToolExecutor(credentials=credentials).execute(tool, {"q": "x"}, raise_on_failure=False)
    assert result.succeeded == (answer == "fine")
    assert checks == ["input", "output"]


# -- secrets -----------------------------------------------------------------------------------


def test_a_secret_in_an_exception_message_is_redacted(executor: ToolExecutor) -> None:
    def leaky(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        raise ValueError(f"GET https://api.example/?key={credentials['api-key']} failed")

    result = executor.execute(Scripted(leaky), {}, raise_on_failure=False)
    assert SECRET not in str(result.error)
    assert "key=*** failed" in str(result.error)
    assert SECRET not in str(result.to_dict())


def test_a_secret_in_the_output_fails_the_call_instead_of_being_altered(
    executor: ToolExecutor,
) -> None:
    def echo(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"answer": f"your key is {credentials['api-key']}"}

    with pytest.raises(ToolExecutionError, match=r"SecretInOutputError: .* at output\.answer"):
        executor.execute(Scripted(echo), {})


def test_a_secret_in_an_output_validation_error_is_redacted(executor: ToolExecutor) -> None:
    class Enum(Scripted):
        TOOL_NAME = "enum"
        OUTPUT_SCHEMA = {"parameters": [{"name": "answer", "type": "string", "enum": ["ok"]}]}

    def echo(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"answer": credentials["api-key"]}

    result = executor.execute(Enum(echo), {}, raise_on_failure=False)
    assert isinstance(result.error, ToolValidationError)
    assert SECRET not in str(result.error)
    assert SECRET not in repr(result.error.errors)


# -- execute_many ------------------------------------------------------------------------------


def test_execute_many_returns_results_in_call_order(executor: ToolExecutor) -> None:
    results = executor.execute_many([(Adder(), {"a": i}) for i in range(20)])
    assert [r.output for r in results] == [{"sum": float(i)} for i in range(20)]


def test_execute_many_runs_calls_concurrently(executor: ToolExecutor) -> None:
    barrier = threading.Barrier(4, timeout=WAIT_SECONDS)

    def meet(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        barrier.wait()  # only returns once four calls are in flight at the same time
        return {"answer": "met"}

    results = executor.execute_many([(Scripted(meet), {}) for _ in range(4)])
    assert [r.output for r in results] == [{"answer": "met"}] * 4


def test_execute_many_is_always_in_result_mode(executor: ToolExecutor) -> None:
    results = executor.execute_many(
        [(Adder(), {"a": 1}), (Adder(), {"a": "x"}), (Scripted(raises), {})]
    )
    assert [r.status for r in results] == [STATUS_SUCCESS, STATUS_FAILURE, STATUS_FAILURE]
    assert isinstance(results[1].error, ToolValidationError)
    assert isinstance(results[2].error, ToolExecutionError)


@pytest.mark.parametrize("count", [0, 1], ids=["none", "one"])
def test_execute_many_small(executor: ToolExecutor, count: int) -> None:
    assert len(executor.execute_many([(Adder(), {"a": 1})] * count)) == count


def test_the_chapters_weather_tool_gets_its_credential_by_name(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    result = executor.execute(registry["fetch_weather"], {"city": "Oslo", "units": "metric"})
    assert result.output == {
        "city": "Oslo",
        "country": "US",
        "temperature": 72.0,
        "units": "metric",
        "conditions": "sunny",
    }


def test_a_call_without_the_credential_names_it(weather_tool: WeatherTool) -> None:
    with (
        ToolExecutor(credentials={}) as bare,
        pytest.raises(ToolExecutionError, match="needs credential 'weather-api-key'"),
    ):
        bare.execute(weather_tool, {"city": "Oslo"})
