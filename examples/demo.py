"""`make demo`: hand-written tools through the registry and the executor, offline.

Registers the tool chapter's weather tool (against a stand-in for the weather
API, its key from a mapping provider) and a temperature converter, then runs
calls that succeed and calls that fail in each documented way -- in strict mode,
where failures raise, and in result mode, where they come back as results.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentkit import (
    AgentKitError,
    CredentialsManager,
    InMemoryHistogram,
    MappingProvider,
    Tool,
    ToolExecutor,
    ToolRegistry,
    ToolResult,
)
from examples.convert import ConvertTemperatureTool
from examples.weather import FakeWeatherAPI, FetchWeatherTool

DEMO_KEY = "demo-key-0123456789"


def show(label: str, result: ToolResult) -> None:
    data: dict[str, Any] = result.to_dict()
    data["duration"] = f"{result.duration * 1e6:.0f} us"
    print(f"{label}\n  {json.dumps(data)}")


def main() -> int:
    registry = ToolRegistry([FetchWeatherTool(FakeWeatherAPI(DEMO_KEY)), ConvertTemperatureTool()])
    executor = ToolExecutor(
        credentials=CredentialsManager([MappingProvider({"weather-api-key": DEMO_KEY})])
    )
    weather, convert = registry["fetch_weather"], registry["convert_temperature"]
    print(f"registered: {', '.join(registry.names())}")
    print(f"tagged domain=weather: {[t.name for t in registry.lookup_by_tags(domain='weather')]}\n")

    print("== strict mode: results, or an exception ==")
    show(
        "fetch_weather city=Oslo (units defaults to metric)",
        executor.execute(weather, {"city": "Oslo"}),
    )
    strict_cases: list[tuple[str, Tool, dict[str, Any]]] = [
        ("fetch_weather with a misspelt argument", weather, {"citty": "Oslo"}),
        (
            "convert_temperature below absolute zero",
            convert,
            {"value": -500, "from_scale": "celsius", "to_scale": "kelvin"},
        ),
    ]
    for label, tool, inputs in strict_cases:
        try:
            executor.execute(tool, inputs)
        except AgentKitError as exc:
            print(f"{label}\n  raised {type(exc).__name__}: {exc}")

    print("\n== result mode: every failure is a result ==")
    cases: list[tuple[str, Any, dict[str, Any], ToolExecutor]] = [
        (
            "fetch_weather city=Cairo units=imperial",
            weather,
            {"city": "Cairo", "units": "imperial"},
            executor,
        ),
        (
            "fetch_weather units=kelvin (not in the enum)",
            weather,
            {"city": "Cairo", "units": "kelvin"},
            executor,
        ),
        (
            "fetch_weather city=Atlantis (the API answers 404)",
            weather,
            {"city": "Atlantis"},
            executor,
        ),
        (
            "fetch_weather with no API key configured",
            weather,
            {"city": "Oslo"},
            ToolExecutor(credentials=CredentialsManager([MappingProvider({})])),
        ),
    ]
    for label, tool, inputs, runner in cases:
        show(label, runner.execute(tool, inputs, raise_on_failure=False))

    print("\n== parallel calls (execute_many), results in call order ==")
    calls = [
        (convert, {"value": v, "from_scale": "celsius", "to_scale": "fahrenheit"})
        for v in (0, 37, 100)
    ]
    for result in executor.execute_many(calls):
        print(f"  {result.status}: {result.output}")

    histogram = executor.metrics
    assert isinstance(histogram, InMemoryHistogram)
    print(f"\n== {histogram.name} ==")
    for name in histogram.tool_names():
        snap = histogram.snapshot(name)
        assert snap is not None
        print(
            f"  {name}: {snap.count} calls, {snap.failures} failed, mean {snap.mean * 1e6:.0f} us"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
