"""`make demo`: what agentkit is for, offline -- REST APIs as YAML tools, called end to end.

The demo starts a small local weather service (``examples/demo_service.py``: canned
answers in the shape of OpenWeatherMap and Open-Meteo, on 127.0.0.1) and copies the
shipped ``tools.d/`` with those APIs' origins pointed at it. Then it calls the YAML
tools over real HTTP:

1. through the ``ToolExecutor``: a success, a validation error, an upstream error and a
   missing credential, in result mode and in strict mode;
2. through ``agentkit serve``, started as a subprocess and driven by the MCP SDK's
   stdio client: ``tools/list`` and ``tools/call``;
3. beside a hand-written Python tool, a Python-backed YAML tool and parallel calls.

Every answer says where it came from: the local service (it counts its requests),
or agentkit itself, before anything was sent.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentkit import (
    AgentKitError,
    CredentialsManager,
    InMemoryHistogram,
    MappingProvider,
    ToolExecutor,
    ToolRegistry,
    ToolResult,
    load_tools,
)
from examples.convert import ConvertTemperatureTool
from examples.demo_service import REAL_ORIGINS, WeatherService, local_copy
from examples.weather import FetchWeatherTool

ROOT = Path(__file__).resolve().parent.parent
# The stand-in accepts any key; this one is given to the executor in code.
DEMO_KEY = "demo-key-0123456789"


class Narrator:
    """Prints each call's result the way ``agentkit call`` does, and where the answer came from."""

    def __init__(self, service: WeatherService) -> None:
        self.service = service

    def call(self, label: str, run: Callable[[], Any], *, local: str = "") -> None:
        before = self.service.requests_served
        self.report(label, run(), before, local=local)

    def report(self, label: str, outcome: Any, before: int, *, local: str = "") -> None:
        """Print ``outcome``; ``before`` is the service's request count before it was made."""
        print(label)
        if self.service.requests_served > before:
            print(
                f"  answer from the demo's local weather service on {self.service.address}"
                " (not the real API)"
            )
        else:
            print(f"  answer from {local or 'agentkit itself'}: nothing was sent to any service")
        shown = json.dumps(outcome.to_dict()) if isinstance(outcome, ToolResult) else outcome
        print(f"  {shown}")


def through_the_executor(say: Narrator, registry: ToolRegistry, executor: ToolExecutor) -> None:
    print("\n== 1. YAML-defined REST tools through the executor (result mode) ==")
    weather, forecast = registry["fetch_weather"], registry["forecast_daily"]
    cases: list[tuple[str, Any, dict[str, Any], ToolExecutor, str]] = [
        ("fetch_weather city=Oslo (success)", weather, {"city": "Oslo"}, executor, ""),
        (
            "fetch_weather city=Cairo units=imperial (success)",
            weather,
            {"city": "Cairo", "units": "imperial"},
            executor,
            "",
        ),
        (
            "forecast_daily latitude=59.91 longitude=10.75 days=2 (a keyless API)",
            forecast,
            {"latitude": 59.91, "longitude": 10.75, "days": 2},
            executor,
            "",
        ),
        (
            "fetch_weather units=kelvin (a validation error: not in the enum)",
            weather,
            {"city": "Cairo", "units": "kelvin"},
            executor,
            "agentkit's input validation",
        ),
        (
            "fetch_weather city=Atlantis (an upstream error: the service answers 404)",
            weather,
            {"city": "Atlantis"},
            executor,
            "",
        ),
        (
            "fetch_weather with no API key configured (a missing credential)",
            weather,
            {"city": "Oslo"},
            ToolExecutor(credentials=CredentialsManager([MappingProvider({})])),
            "the executor's credential check",
        ),
    ]
    for label, tool, inputs, runner, local in cases:

        def run(tool: Any = tool, inputs: dict[str, Any] = inputs, runner: Any = runner) -> Any:
            return runner.execute(tool, inputs, raise_on_failure=False)

        say.call(label, run, local=local)

    print("\n== strict mode: the same failures raise ==")
    for label, inputs in [
        ("fetch_weather with a misspelt argument", {"citty": "Oslo"}),
        ("fetch_weather city=Atlantis", {"city": "Atlantis"}),
    ]:

        def strict(inputs: dict[str, Any] = inputs) -> str:
            try:
                return json.dumps(executor.execute(weather, inputs).to_dict())
            except AgentKitError as exc:
                return f"raised {type(exc).__name__}: {exc}"

        say.call(label, strict, local="agentkit's input validation")


def through_mcp(say: Narrator, definitions: Path) -> None:
    print("\n== 2. the same tools through the MCP server, to the MCP SDK's client ==")
    try:
        import anyio
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client
    except ImportError:
        print("skipped: the MCP SDK is not installed (pip install -e '.[mcp]')")
        return
    command = ["serve", "--tools", str(definitions)]
    print(f"started `agentkit {' '.join(command)}` as a subprocess, over stdio")
    # Only the key is passed on: the SDK gives the server a minimal environment.
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentkit", *command],
        cwd=str(ROOT),
        env={"WEATHER_API_KEY": DEMO_KEY, "PYTHONPATH": str(ROOT)},
    )

    async def talk() -> None:
        with anyio.fail_after(60):
            await session_with_the_server()

    async def session_with_the_server() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            print(f"tools/list: {', '.join(tool.name for tool in listed.tools)}")
            for arguments in ({"city": "San Francisco"}, {"city": "Atlantis"}):
                before = say.service.requests_served
                result = await session.call_tool("fetch_weather", arguments)
                # The SDK spells the wire's structuredContent and isError in snake case.
                say.report(
                    f"tools/call fetch_weather {json.dumps(arguments)}",
                    f"is_error={result.is_error} "
                    f"structured_content={json.dumps(result.structured_content)} "
                    f"text={getattr(result.content[0], 'text', '')!r}",
                    before,
                )

    anyio.run(talk)


def beside_other_tools(say: Narrator, registry: ToolRegistry, executor: ToolExecutor) -> None:
    print("\n== 3. a hand-written Python tool (examples/weather.py), same service ==")
    python_weather = FetchWeatherTool(api_url=say.service.url + "/data/2.5/weather")
    say.call(
        "FetchWeatherTool city=Oslo",
        lambda: executor.execute(python_weather, {"city": "Oslo"}, raise_on_failure=False),
    )

    print("\n== a YAML tool with a Python backend (tools.d/text_stats.yaml) ==")
    text = "The cat sat on the mat. The cat ran! Did the dog follow?"
    stats = registry["text_stats"]
    for label, top, local in (
        ("text_stats top=2", 2, "examples/textstats.py, in this process"),
        ("text_stats top=50 (over the maximum)", 50, "agentkit's input validation"),
    ):

        def run(top: int = top) -> ToolResult:
            return executor.execute(stats, {"text": text, "top": top}, raise_on_failure=False)

        say.call(label, run, local=local)

    print("\n== parallel calls (execute_many), results in call order ==")
    convert = ConvertTemperatureTool()
    calls = [
        (convert, {"value": v, "from_scale": "celsius", "to_scale": "fahrenheit"})
        for v in (0, 37, 100)
    ]
    say.call(
        "convert_temperature 0, 37 and 100 celsius to fahrenheit (examples/convert.py)",
        lambda: [result.output for result in executor.execute_many(calls)],
        local="examples/convert.py, in this process",
    )

    histogram = executor.metrics
    assert isinstance(histogram, InMemoryHistogram)
    print(f"\n== {histogram.name} (seconds, as in every result's duration) ==")
    for name in histogram.tool_names():
        snap = histogram.snapshot(name)
        assert snap is not None
        print(f"  {name}: {snap.count} calls, {snap.failures} failed, mean {snap.mean:.6f}")


def main() -> int:
    with WeatherService() as service, tempfile.TemporaryDirectory() as scratch:
        say = Narrator(service)
        print(
            f"started the demo's local weather service on {service.address}: canned answers in"
            " the shape of OpenWeatherMap and Open-Meteo, not the real APIs"
        )
        definitions = local_copy(ROOT / "tools.d", Path(scratch) / "tools.d", service.url)
        print(
            f"copied tools.d/ to {definitions}, with {' and '.join(REAL_ORIGINS)}"
            f" pointed at {service.url}"
        )
        registry = ToolRegistry()
        load_tools(definitions, registry=registry)
        width = max(len(tool.name) for tool in registry)
        for tool in registry:
            where = Path(tool.source).relative_to(definitions)
            print(f"  registered {tool.name:<{width}}  {tool.version:<6} from {where}")
        executor = ToolExecutor(
            credentials=CredentialsManager([MappingProvider({"weather-api-key": DEMO_KEY})])
        )
        through_the_executor(say, registry, executor)
        through_mcp(say, definitions)
        beside_other_tools(say, registry, executor)
        print(f"\nthe local weather service answered {service.requests_served} requests")
    return 0


if __name__ == "__main__":
    os.environ.pop("WEATHER_API_KEY", None)  # the demo's key comes from code, never the shell
    sys.exit(main())
