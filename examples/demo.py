"""`make demo`: YAML-defined and hand-written tools in one registry, offline.

Loads every definition in tools.d/ beside two hand-written tools -- the tool
chapter's weather tool (against a stand-in for the weather API, its key from a
mapping provider) and a temperature converter -- and runs the offline ones:
calls that succeed and calls that fail in each documented way, in strict mode,
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
    load_tools,
)
from examples.convert import ConvertTemperatureTool
from examples.weather import FakeWeatherAPI, FetchWeatherTool

DEMO_KEY = "demo-key-0123456789"
ROOT = Path(__file__).resolve().parent.parent


def show(label: str, result: ToolResult) -> None:
    data: dict[str, Any] = result.to_dict()
    data["duration"] = f"{result.duration * 1e6:.0f} us"
    print(f"{label}\n  {json.dumps(data)}")


def main() -> int:
    registry = ToolRegistry([FetchWeatherTool(FakeWeatherAPI(DEMO_KEY)), ConvertTemperatureTool()])
    # tools.d/ defines fetch_weather too (the same tool, as YAML). A registry takes a
    # name once, so the demo loads the other definitions beside the Python one.
    definitions = sorted(p for p in (ROOT / "tools.d").glob("*.yaml") if p.stem != "fetch_weather")
    load_tools(*definitions, registry=registry)
    executor = ToolExecutor(
        credentials=CredentialsManager([MappingProvider({"weather-api-key": DEMO_KEY})])
    )
    weather, convert = registry["fetch_weather"], registry["convert_temperature"]
    for tool in registry:
        print(f"registered {tool.name:<21} {tool.version:<6} from {tool.source}")
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

    print("\n== a YAML-defined tool with a Python backend (tools.d/text_stats.yaml) ==")
    text = "The cat sat on the mat. The cat ran! Did the dog follow?"
    stats = registry["text_stats"]
    show("text_stats", executor.execute(stats, {"text": text, "top": 2}))
    over = executor.execute(stats, {"text": text, "top": 50}, raise_on_failure=False)
    show("text_stats top=50 (over the maximum of 20)", over)

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
