"""The tool chapter's FetchWeatherTool end to end, and the demo as a user runs it."""

from __future__ import annotations

import itertools
import json
import os
import re
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


@pytest.fixture(scope="module")
def demo_output() -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def _answers(output: str) -> dict[str, str]:
    """Each call's label -> the line saying where its answer came from."""
    lines = output.splitlines()
    return {
        label: source.strip()
        for label, source in itertools.pairwise(lines)
        if source.startswith("  answer from ")
    }


def test_the_demo_calls_rest_backed_yaml_tools_on_its_local_service(demo_output: str) -> None:
    answers = _answers(demo_output)
    local = re.compile(
        r"answer from the demo's local weather service on 127\.0\.0\.1:\d+ \(not the real API\)"
    )
    for label in (
        "fetch_weather city=Oslo (success)",
        "forecast_daily latitude=59.91 longitude=10.75 days=2 (a keyless API)",
        "fetch_weather city=Atlantis (an upstream error: the service answers 404)",
        'tools/call fetch_weather {"city": "San Francisco"}',
        "FetchWeatherTool city=Oslo",
    ):
        assert local.fullmatch(answers[label]), (label, answers.get(label))
    assert (
        '"output": {"temperature": -3.5, "conditions": "light snow", "humidity": 74}' in demo_output
    )
    assert "returned 404 Not Found" in demo_output


@pytest.mark.parametrize(
    ("label", "source", "shown"),
    [
        pytest.param(
            "fetch_weather units=kelvin (a validation error: not in the enum)",
            "agentkit's input validation",
            "expected one of ['metric', 'imperial'], got 'kelvin'",
            id="validation",
        ),
        pytest.param(
            "fetch_weather with no API key configured (a missing credential)",
            "the executor's credential check",
            "needs credential 'weather-api-key'",
            id="credential",
        ),
        pytest.param(
            "fetch_weather with a misspelt argument",
            "agentkit's input validation",
            "raised ToolValidationError",
            id="strict",
        ),
    ],
)
def test_the_demo_says_when_nothing_was_sent(
    demo_output: str, label: str, source: str, shown: str
) -> None:
    assert _answers(demo_output)[label] == (
        f"answer from {source}: nothing was sent to any service"
    )
    after = demo_output.split(label + "\n", 1)[1].splitlines()[1]
    assert shown in after


def test_the_demo_goes_through_mcp_with_the_sdk_spelling(demo_output: str) -> None:
    assert "tools/list: fetch_weather, forecast_daily," in demo_output
    assert 'is_error=False structured_content={"temperature": 14.2' in demo_output
    assert "is_error=True structured_content=null" in demo_output


def test_the_demo_never_shows_its_key_and_prints_durations_in_seconds(demo_output: str) -> None:
    assert "demo-key-0123456789" not in demo_output
    assert "appid=***" in demo_output
    assert " us" not in demo_output
    durations = [
        json.loads(line)["duration"] for line in demo_output.splitlines() if line.startswith("  {")
    ]
    assert durations
    assert all(isinstance(d, float) and 0 <= d < 60 for d in durations)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param([], '"temperature": -3.5', id="default-city"),
        pytest.param(["Cairo", "--units", "imperial"], '"temperature": 87.8', id="imperial"),
        pytest.param(["Atlantis"], "404 Client Error: Not Found", id="unknown-city"),
    ],
)
def test_weather_example_runs_offline_and_says_so(argv: list[str], expected: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "weather.py"), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "WEATHER_API_KEY"},
    )
    assert done.returncode == (1 if "404" in expected else 0), done.stderr
    first, result = done.stdout.splitlines()
    assert re.fullmatch(
        r"answer from the demo's local weather service on 127\.0\.0\.1:\d+ \(not the real API\)",
        first,
    )
    assert expected in result
