"""Fixtures the test modules share: an executor, a registry, a tools folder, the chapter's tool.

A module that needs something else (other credentials, other tools) defines a
fixture of the same name, which takes precedence for that module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit import ToolExecutor, ToolRegistry
from tests.support.helpers import SECRET, WEATHER_KEY, Adder, WeatherTool


@pytest.fixture
def executor() -> Iterator[ToolExecutor]:
    """An executor with ``api-key`` (``SECRET``) and ``weather-api-key``; closed after the test."""
    credentials = {"api-key": SECRET, "weather-api-key": WEATHER_KEY}
    with ToolExecutor(credentials=credentials) as executor:
        yield executor


@pytest.fixture
def weather_tool() -> WeatherTool:
    """The chapter's ``fetch_weather`` tool, answering without a network."""
    return WeatherTool()


@pytest.fixture
def registry(weather_tool: WeatherTool) -> ToolRegistry:
    """A registry of ``add`` and ``fetch_weather``."""
    return ToolRegistry([Adder(), weather_tool])


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    """An empty ``tools.d`` folder for definition files."""
    folder = tmp_path / "tools.d"
    folder.mkdir()
    return folder
