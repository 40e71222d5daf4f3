"""Fixtures the test modules share: an executor, a registry, a tools folder, the chapter's tool.

A module that needs something else (other credentials, other tools) defines a
fixture of the same name, which takes precedence for that module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agentkit import ToolExecutor, ToolRegistry
from tests.support.helpers import SECRET, WEATHER_KEY, Adder, WeatherTool

#: Fixtures that start a server from npm.
NPM_FIXTURES = frozenset({"json_server", "prism"})
#: Fixtures, and helper modules a test module imports, that start a real server.
SERVER_FIXTURES = frozenset({"httpbin", "httpbin_url", "oauth2_api", "server", "served"})
SERVER_HELPERS = frozenset(
    {
        "tests.support.loopback",
        "tests.support.rawserver",
        "tests.declarative.backends.http.token_endpoint",
        "tests.support.serving",
    }
)
#: Test modules that take seconds by design (measured with ``--durations=0``: each of
#: these takes over 4 s in all, every other module of the fast lane less).
SLOW_MODULES = frozenset(
    {
        "tests.test_docs",  # runs every block of the README and docs/
        "tests.test_examples",  # runs the demo
        "tests.test_layering",  # parses every module of the package
        "tests.cli.test_cli_hostile",  # runs the command in a subprocess per case
        "tests.test_confirm_preview_recoverable",  # rounds of random text
        "tests.test_content",  # MCP over stdio and HTTP
        "tests.test_toolschema_fast",  # rounds of random values
        "tests.declarative.test_loading_bounds",  # attacks, bounded in time and memory
        "tests.declarative.test_yamlsource",  # the pure-Python parser's bounds
        "tests.openapi.test_kubernetes",  # imports Kubernetes' whole description
        "tests.openapi.test_real_descriptions",
        "tests.openapi.test_update",  # imports and updates whole descriptions
        "tests.openapi.test_same_files",
        "tests.openapi.test_server_variables",
        "tests.openapi.test_yamlwriter",
    }
)


def _uses_a_server_helper(module: ModuleType) -> bool:
    for value in vars(module).values():
        home = value if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        name = home.__name__ if isinstance(home, ModuleType) else home
        if name in SERVER_HELPERS:
            return True
    return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with what it needs (``npm``, ``server``, ``slow``), from the fixtures
    it uses and the helpers its module imports: markers that cannot go stale as tests
    are added."""
    seen: dict[str, bool] = {}
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        module = getattr(item, "module", None)
        name = module.__name__ if module is not None else ""
        if fixtures & NPM_FIXTURES:
            item.add_marker(pytest.mark.npm)
        if name not in seen:
            seen[name] = module is not None and _uses_a_server_helper(module)
        if fixtures & SERVER_FIXTURES or seen[name] or name.startswith("tests.mcp."):
            item.add_marker(pytest.mark.server)
        if name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


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
