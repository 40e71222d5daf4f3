"""The tool chapter's FetchWeatherTool end to end, and the demo as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentkit import (
    STATUS_FAILURE,
    CredentialError,
    CredentialsManager,
    MappingProvider,
    ToolExecutionError,
    ToolExecutor,
    ToolValidationError,
)
from examples.convert import ConvertTemperatureTool
from examples.weather import FakeWeatherAPI, FetchWeatherTool

KEY = "owm-test-key-42"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def api() -> FakeWeatherAPI:
    return FakeWeatherAPI(KEY)


@pytest.fixture
def executor() -> ToolExecutor:
    return ToolExecutor(credentials=CredentialsManager([MappingProvider({"weather-api-key": KEY})]))


def test_validates_fills_defaults_and_executes(api: FakeWeatherAPI, executor: ToolExecutor) -> None:
    result = executor.execute(FetchWeatherTool(api), {"city": "San Francisco"})
    assert result.succeeded
    assert result.output == {"temperature": 14.2, "conditions": "fog", "humidity": 86}
    assert api.requests == [{"q": "San Francisco", "units": "metric", "appid": KEY}]


def test_imperial_units(api: FakeWeatherAPI, executor: ToolExecutor) -> None:
    result = executor.execute(FetchWeatherTool(api), {"city": "Oslo", "units": "imperial"})
    assert result.output is not None
    assert result.output["temperature"] == pytest.approx(25.7)


@pytest.mark.parametrize(
    ("inputs", "error"),
    [
        pytest.param({}, "Missing required parameter: 'city'", id="missing-city"),
        pytest.param({"city": 7}, "Parameter 'city': expected type 'string', got 'int'", id="type"),
        pytest.param(
            {"city": "Oslo", "units": "kelvin"},
            "Parameter 'units': expected one of ['metric', 'imperial'], got 'kelvin'",
            id="enum",
        ),
    ],
)
def test_invalid_input_in_both_modes(
    api: FakeWeatherAPI, executor: ToolExecutor, inputs: dict[str, object], error: str
) -> None:
    tool = FetchWeatherTool(api)
    with pytest.raises(ToolValidationError) as info:
        executor.execute(tool, inputs)
    assert info.value.direction == "input"
    assert info.value.errors == [error]
    result = executor.execute(tool, inputs, raise_on_failure=False)
    assert result.status == STATUS_FAILURE
    assert isinstance(result.error, ToolValidationError)
    assert result.error.errors == [error]
    assert api.requests == []


def test_api_failure_in_both_modes(api: FakeWeatherAPI, executor: ToolExecutor) -> None:
    tool = FetchWeatherTool(api)
    with pytest.raises(ToolExecutionError, match="LookupError: 404 Not Found") as info:
        executor.execute(tool, {"city": "Atlantis"})
    assert isinstance(info.value.cause, LookupError)
    result = executor.execute(tool, {"city": "Atlantis"}, raise_on_failure=False)
    assert isinstance(result.error, ToolExecutionError)


def test_bad_api_response_is_an_output_error(executor: ToolExecutor) -> None:
    def broken_api(url: str, params: object) -> object:
        return {"main": {"temp": "warm", "humidity": 50}, "weather": [{"description": "?"}]}

    with pytest.raises(ToolValidationError, match="Parameter 'temperature'") as info:
        executor.execute(FetchWeatherTool(broken_api), {"city": "Oslo"})
    assert info.value.direction == "output"


def test_missing_api_key_in_both_modes(api: FakeWeatherAPI) -> None:
    executor = ToolExecutor(credentials=CredentialsManager([MappingProvider({})]))
    tool = FetchWeatherTool(api)
    with pytest.raises(ToolExecutionError) as info:
        executor.execute(tool, {"city": "Oslo"})
    assert isinstance(info.value.cause, CredentialError)
    result = executor.execute(tool, {"city": "Oslo"}, raise_on_failure=False)
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, CredentialError)
    assert api.requests == []


def test_wrong_api_key_is_never_echoed(executor: ToolExecutor) -> None:
    api = FakeWeatherAPI("the-right-key")
    result = executor.execute(FetchWeatherTool(api), {"city": "Oslo"}, raise_on_failure=False)
    assert "401 Unauthorized" in str(result.error)
    assert KEY not in str(result.to_dict())


def test_convert_temperature(executor: ToolExecutor) -> None:
    tool = ConvertTemperatureTool()
    inputs = {"value": 100, "from_scale": "celsius", "to_scale": "kelvin"}
    assert executor.execute(tool, inputs).output == {"value": 373.1, "scale": "kelvin"}
    below = {"value": -1, "from_scale": "kelvin", "to_scale": "celsius"}
    with pytest.raises(ToolExecutionError, match="below absolute zero"):
        executor.execute(tool, below)


def test_the_demo_runs_and_prints_results() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert '"status": "success"' in done.stdout
    assert "raised ToolValidationError" in done.stdout
    assert "needs credential 'weather-api-key'" in done.stdout
    assert "agent.tool.execution.duration" in done.stdout
