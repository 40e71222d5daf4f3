"""Small tools the tests share."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentkit import Tool

ROOT = Path(__file__).resolve().parents[2]

SECRET = "sk-live-8f3a/9+Zq=="
#: How long a test waits for something it is sure will happen: generous, as the
#: machine may be loaded; a wait ends as soon as its condition holds.
WAIT_SECONDS = 60


def wait_until(condition: Callable[[], bool], what: str, *, seconds: float = WAIT_SECONDS) -> None:
    """Poll ``condition`` until it holds; fail, naming ``what`` was awaited, after ``seconds``.

    For a test that must wait for another thread or process: a condition, never
    a guessed delay.
    """
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.01)


def generated_tool(name: str, description: str, parameter: str) -> Tool:
    """A tool as an importer makes many of: ``name``, ``description``, a string
    ``parameter`` and an optional ``page_size``; it answers ``{}``."""

    class Generated(Tool):
        TOOL_NAME = name
        TOOL_DESCRIPTION = description
        TOOL_TAGS = {"source": "generated"}
        INPUT_SCHEMA = {
            "parameters": [
                {"name": parameter, "type": "string", "description": f"The {parameter}"},
                {"name": "page_size", "type": "integer", "required": False},
            ]
        }

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
            return {}

    return Generated()


class Adder(Tool):
    TOOL_NAME = "add"
    TOOL_DESCRIPTION = "Add two numbers."
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "a", "type": "float"},
            {"name": "b", "type": "float", "required": False, "default": 0},
        ]
    }
    OUTPUT_SCHEMA = {"parameters": [{"name": "sum", "type": "float"}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"sum": inputs["a"] + inputs["b"]}


class Scripted(Tool):
    """Runs whatever function a test hands it; needs the credential 'api-key'."""

    TOOL_NAME = "scripted"
    CREDENTIAL_NAMES = ("api-key",)
    INPUT_SCHEMA = {"parameters": [{"name": "q", "type": "string", "required": False}]}
    OUTPUT_SCHEMA = {"parameters": [{"name": "answer", "type": "string"}]}

    def __init__(self, body: Callable[[dict[str, Any], Mapping[str, str]], Any]) -> None:
        super().__init__()
        self.body = body
        self.calls = 0

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        self.calls += 1
        return self.body(inputs, credentials)  # type: ignore[no-any-return]


WEATHER_KEY = "wk-7f3a9c1e55b2"


class WeatherTool(Tool):
    """The chapter's ``FetchWeatherTool``: its schemas and credential, a fixed answer."""

    TOOL_NAME = "fetch_weather"
    TOOL_DESCRIPTION = "Look up the current weather for a city."
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "city", "type": "string", "description": "City name"},
            {"name": "country", "type": "string", "required": False, "default": "US"},
            {"name": "units", "type": "string", "required": False, "default": "imperial"},
        ]
    }
    OUTPUT_SCHEMA = {
        "parameters": [
            {"name": "city", "type": "string"},
            {"name": "country", "type": "string"},
            {"name": "temperature", "type": "float"},
            {"name": "units", "type": "string"},
            {"name": "conditions", "type": "string"},
        ]
    }

    def __init__(self) -> None:
        super().__init__(credential_names=["weather-api-key"])

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {**inputs, "temperature": 72, "conditions": "sunny"}


def run_bounded(
    code: str, *, memory_bytes: int = 1 << 30, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh Python limited to ``memory_bytes`` and ``timeout`` seconds.

    For tests that prove a bound against hostile input: a regression makes the
    child fail (MemoryError, a kill, a timeout) instead of taking the test run down.
    """
    limit = (
        "import resource\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({memory_bytes}, {memory_bytes}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", limit + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
