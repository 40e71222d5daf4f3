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
    CredentialError,
    SemanticError,
    Tool,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    ToolValidationError,
)
from agentkit.content import Output, Text
from tests.support.helpers import SECRET, WAIT_SECONDS, Adder, Scripted, WeatherTool


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


class Uncredentialed(Tool):
    """Scripted without credentials: its calls take the executor's one stretch."""

    TOOL_NAME = "uncredentialed"
    INPUT_SCHEMA = Scripted.INPUT_SCHEMA
    OUTPUT_SCHEMA = Scripted.OUTPUT_SCHEMA

    def __init__(self, body: Callable[[dict[str, Any], Mapping[str, str]], Any]) -> None:
        super().__init__()
        self.body = body

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        return self.body(inputs, credentials)


class AnswerDict(dict[str, Any]):
    """An output the fast tier declines and the full check takes."""


def with_content(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
    return Output(Text("shown"), structured={"answer": "42"})


async def coroutine_body() -> dict[str, Any]:
    return {"answer": "42"}


@pytest.mark.parametrize(
    ("body", "inputs"),
    [
        pytest.param(answer, {"q": "x"}, id="success"),
        pytest.param(answer, {"q": None}, id="none-for-an-optional"),
        pytest.param(answer, {"q": 7}, id="input-invalid"),
        pytest.param(answer, {"qq": "x"}, id="input-unknown"),
        pytest.param(raises, {}, id="execute-raises"),
        pytest.param(wrong_output, {}, id="output-invalid"),
        pytest.param(not_a_dict, {}, id="output-not-a-dict"),
        pytest.param(
            lambda inputs, credentials: AnswerDict(answer="42"), {}, id="output-a-subclass"
        ),
        pytest.param(with_content, {}, id="output-with-content"),
        pytest.param(lambda inputs, credentials: coroutine_body(), {}, id="output-a-coroutine"),
    ],
)
@pytest.mark.parametrize("raise_on_failure", [False, True], ids=["result-mode", "strict"])
def test_the_one_stretch_ends_a_call_as_the_steps_do(
    body: Callable[[dict[str, Any], Mapping[str, str]], Any],
    inputs: dict[str, Any],
    raise_on_failure: bool,
) -> None:
    # No listener: the one stretch (when the values pass the fast tier); one: the steps.
    outcomes = []
    for executor in (
        ToolExecutor(credentials={}),
        ToolExecutor(credentials={}, listeners=[lambda event: None]),
    ):
        try:
            result = executor.execute(Uncredentialed(body), inputs, raise_on_failure)
        except (ToolValidationError, ToolExecutionError) as exc:
            outcome: tuple[Any, ...] = (
                type(exc),
                str(exc),
                type(exc.__cause__),
                exc.__context__ is exc.__cause__,
            )
        else:
            error = (type(result.error), str(result.error)) if result.error else None
            outcome = (result.status, result.output, error, result.content)
        snapshot = executor.metrics.snapshot("uncredentialed")  # type: ignore[attr-defined]
        outcomes.append((outcome, snapshot.count, snapshot.failures))
    assert outcomes[0] == outcomes[1]


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
    with pytest.raises(
        SemanticError, match=r"tests\.support\.helpers\.Adder replaced 'spec' with a dict"
    ):
        executor.execute(tool, {"a": 1}, raise_on_failure=False)
    assert repr(tool) == "<Adder ('spec' replaced)>"


def test_an_object_with_a_spec_of_its_own_is_not_a_tool(executor: ToolExecutor) -> None:
    class Lookalike:
        spec = "openapi.yaml"

    with pytest.raises(SemanticError, match=r"execute\(\) takes a Tool instance, got Lookalike"):
        executor.execute(Lookalike(), {})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("answer", "credentials", "expected"),
    [
        pytest.param("fine", {}, ["input fast", "output fast"], id="valid"),
        # The fast tier declines the bad output; the full check says why, once.
        pytest.param(7, {}, ["input fast", "output fast", "output"], id="invalid"),
        # A call with credentials takes the steps: one whole check a schema.
        pytest.param(
            "fine", {"api-key": SECRET}, ["input", "output"], id="valid-with-a-credential"
        ),
        pytest.param(7, {"api-key": SECRET}, ["input", "output"], id="invalid-with-a-credential"),
    ],
)
def test_each_schema_checks_once_a_call(
    answer: object, credentials: dict[str, str], expected: list[str]
) -> None:
    class Counted(Tool):
        TOOL_NAME = "counted"
        CREDENTIAL_NAMES = tuple(credentials)
        INPUT_SCHEMA = {"parameters": [{"name": "q", "type": "string"}]}
        OUTPUT_SCHEMA = {"parameters": [{"name": "answer", "type": "string"}]}

        def execute(self, inputs: dict[str, Any], creds: Mapping[str, str]) -> dict[str, Any]:
            return {"answer": answer}

    checks: list[str] = []

    def watched(label: str, check: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def counted(values: Any) -> Any:
            checks.append(label)
            return check(values)

        return counted

    tool = Counted()
    # Schemas are immutable; a test may still watch the compiled checks of one.
    for direction, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
        object.__setattr__(schema, "check", watched(direction, schema.check))
        object.__setattr__(schema, "fast_check", watched(f"{direction} fast", schema.fast_check))
    result = ToolExecutor(credentials=credentials).execute(tool, {"q": "x"}, raise_on_failure=False)
    assert result.succeeded == (answer == "fine")
    assert checks == expected


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


class _Mutates(Tool):
    """A tool without schemas that changes the lists and dicts it is given."""

    TOOL_NAME = "mutates"
    INPUT_SCHEMA = None
    OUTPUT_SCHEMA = None

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        inputs["xs"].append(9)
        inputs["nested"]["inner"].append("x")
        inputs["added"] = True
        return {"ok": True}


@pytest.mark.parametrize(
    "extra",
    [{}, {"raw": b"bytes"}, {1: "int key"}, {"t": (1, 2)}],
    ids=["plain-json", "bytes", "int-key", "tuple"],
)
def test_a_tool_without_an_input_schema_shares_no_container_with_its_caller(
    extra: dict[Any, Any],
) -> None:
    """Plain JSON takes the fast tier's copy, anything else the full tier's: either way
    the caller's lists and dicts, at every depth, stay as they were."""
    given: dict[Any, Any] = {"xs": [1], "nested": {"inner": ["a"]}, **extra}
    ToolExecutor(credentials={}).execute(_Mutates(), given)
    assert given == {"xs": [1], "nested": {"inner": ["a"]}, **extra}
