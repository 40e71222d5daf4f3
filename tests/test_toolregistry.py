"""ToolRegistry: by name, duplicates refused, lookup by tags, thread safety."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from agentkit import SemanticError, Tool, ToolRegistry


def make_tool(name: str, **tags: str) -> Tool:
    def execute(
        self: Tool, inputs: dict[str, Any], credentials: Mapping[str, str]
    ) -> dict[str, Any]:
        return {}

    cls = type(f"Tool_{name}", (Tool,), {"TOOL_NAME": name, "TOOL_TAGS": tags, "execute": execute})
    return cls()  # type: ignore[no-any-return]


def test_register_and_lookup() -> None:
    registry = ToolRegistry()
    tool = make_tool("weather")
    assert registry.register(tool) is tool
    assert registry.lookup("weather") is tool
    assert registry["weather"] is tool
    assert registry.lookup("missing") is None
    assert "weather" in registry
    assert tool in registry
    assert len(registry) == 1
    assert list(registry) == [tool]
    assert registry.names() == ["weather"]


def test_duplicate_names_are_refused_naming_both_sources() -> None:
    registry = ToolRegistry([make_tool("weather")])
    with pytest.raises(SemanticError) as info:
        registry.register(make_tool("weather"))
    message = str(info.value)
    assert message.startswith(
        "Duplicate tool registration attempted. "
        "Tool 'weather' is already registered (defined by tests."
    )
    assert "cannot register a second tool of that name (defined by tests." in message
    assert "Rename one of them, or unregister the first." in message


def test_register_a_class_by_mistake() -> None:
    with pytest.raises(SemanticError, match=r"got the class .*; register .*\(\) instead"):
        ToolRegistry().register(type(make_tool("a")))  # type: ignore[arg-type]


def test_register_something_else() -> None:
    with pytest.raises(SemanticError, match="register\\(\\) takes a Tool instance, got str"):
        ToolRegistry().register("weather")  # type: ignore[arg-type]


def test_unregister() -> None:
    registry = ToolRegistry([make_tool("a")])
    registry.unregister("a")
    assert "a" not in registry
    with pytest.raises(KeyError, match=r"Unknown tool: 'a'\. Available tools: none\."):
        registry.unregister("a")


def test_unknown_name_suggests_a_close_one() -> None:
    registry = ToolRegistry([make_tool("fetch_weather")])
    with pytest.raises(KeyError, match="did you mean 'fetch_weather'"):
        registry["fetch_wether"]


def test_lookup_by_tags_requires_every_tag() -> None:
    weather = make_tool("weather", domain="weather", tier="free")
    paid = make_tool("paid", domain="weather", tier="paid")
    issues = make_tool("issues", domain="github")
    registry = ToolRegistry([weather, paid, issues])
    assert registry.lookup_by_tags(domain="weather") == [weather, paid]
    assert registry.lookup_by_tags(domain="weather", tier="paid") == [paid]
    assert registry.lookup_by_tags(domain="nothing") == []
    assert registry.lookup_by_tags() == [weather, paid, issues]


def test_iteration_is_a_snapshot() -> None:
    registry = ToolRegistry([make_tool("a")])
    for _ in registry:
        registry.register(make_tool("b"))
    assert registry.names() == ["a", "b"]


def test_concurrent_registration_takes_each_name_once() -> None:
    registry = ToolRegistry()
    tools = [make_tool(f"t{i % 50}") for i in range(400)]
    refused: list[str] = []
    lock = threading.Lock()

    def register(tool: Tool) -> None:
        try:
            registry.register(tool)
        except SemanticError:
            with lock:
                refused.append(tool.name)

    threads = [threading.Thread(target=register, args=(tool,)) for tool in tools]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(registry) == 50
    assert len(refused) == 350


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param("fetch_weather", "fetch-weather", id="dash-for-underscore"),
        pytest.param("fetch_weather", "Fetch_Weather", id="case"),
        pytest.param("fetch_weather", "FETCH-WEATHER", id="case-and-dash"),
        pytest.param("fetch_weather", "fetchWeather", id="separator-dropped"),
        pytest.param("fetch-weather", "fetch__weather", id="doubled-separator"),
        pytest.param("weather", "weather_", id="trailing-separator"),
    ],
)
def test_names_differing_only_in_case_dash_or_underscore_collide(first: str, second: str) -> None:
    registry = ToolRegistry([make_tool(first)])
    with pytest.raises(
        SemanticError, match=f"Tool '{second}' .* collides with the registered tool '{first}'"
    ) as info:
        registry.register(make_tool(second))
    assert str(info.value).count("defined by tests.test_toolregistry.") == 2
    assert registry.names() == [first]
    assert registry.colliding(second) is registry[first]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param("fetch_weather", "fetch_weathers", id="plural"),
        pytest.param("weather2", "weather_3", id="digits"),
    ],
)
def test_distinct_names_do_not_collide(first: str, second: str) -> None:
    registry = ToolRegistry([make_tool(first), make_tool(second)])
    assert registry.names() == [first, second]


def test_an_unregistered_name_is_free_again_in_any_spelling() -> None:
    registry = ToolRegistry([make_tool("fetch_weather")])
    registry.unregister("fetch_weather")
    registry.register(make_tool("Fetch-Weather"))
    assert registry.names() == ["Fetch-Weather"]
