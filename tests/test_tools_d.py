"""The definitions shipped in tools.d/, each against `responses` (or offline)."""

from __future__ import annotations

from pathlib import Path

import pytest
import responses
from responses import matchers

from agentkit import ToolExecutor, ToolRegistry, load_tools

TOOLS_D = Path(__file__).resolve().parent.parent / "tools.d"


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    loaded = ToolRegistry()
    load_tools(TOOLS_D, registry=loaded)
    return loaded


@pytest.fixture
def executor() -> ToolExecutor:
    return ToolExecutor(credentials={"weather-api-key": "owm-key", "github-token": "ghp_test"})


def test_everything_in_tools_d_loads(registry: ToolRegistry) -> None:
    assert sorted(registry.names()) == [
        "create_github_issue",
        "fetch_weather",
        "forecast_daily",
        "search_github_issues",
        "text_stats",
    ]


@responses.activate
def test_fetch_weather(registry: ToolRegistry, executor: ToolExecutor) -> None:
    responses.get(
        "https://api.openweathermap.org/data/2.5/weather",
        match=[matchers.query_param_matcher({"q": "Oslo", "units": "metric", "appid": "owm-key"})],
        json={"main": {"temp": -3.5, "humidity": 74}, "weather": [{"description": "light snow"}]},
    )
    result = executor.execute(registry["fetch_weather"], {"city": "Oslo"})
    assert result.output == {"temperature": -3.5, "conditions": "light snow", "humidity": 74}


@responses.activate
def test_forecast_daily(registry: ToolRegistry, executor: ToolExecutor) -> None:
    responses.get(
        "https://api.open-meteo.com/v1/forecast",
        json={
            "daily": {
                "time": ["2026-12-02"],
                "temperature_2m_max": [3],
                "temperature_2m_min": [-1.5],
            }
        },
    )
    result = executor.execute(
        registry["forecast_daily"], {"latitude": 59.9, "longitude": 10.7, "days": 1}
    )
    assert result.output == {"dates": ["2026-12-02"], "max_celsius": [3.0], "min_celsius": [-1.5]}
    sent = responses.calls[0].request
    assert sent.url is not None
    assert "forecast_days=1" in sent.url
    assert "Authorization" not in sent.headers


@responses.activate
def test_search_github_issues(registry: ToolRegistry, executor: ToolExecutor) -> None:
    responses.get(
        "https://api.github.com/search/issues",
        match=[matchers.query_param_matcher({"q": "repo:pallets/jinja sandbox", "per_page": "10"})],
        json={
            "total_count": 1,
            "items": [{"title": "Sandbox escape", "html_url": "https://github.com/x/1"}],
        },
    )
    result = executor.execute(
        registry["search_github_issues"], {"query": "repo:pallets/jinja sandbox"}
    )
    assert result.output == {
        "total": 1,
        "titles": ["Sandbox escape"],
        "urls": ["https://github.com/x/1"],
    }
    assert responses.calls[0].request.headers["Authorization"] == "Bearer ghp_test"


@responses.activate
def test_create_github_issue(registry: ToolRegistry, executor: ToolExecutor) -> None:
    responses.post(
        "https://api.github.com/repos/pallets/jinja/issues",
        match=[matchers.json_params_matcher({"title": "Docs typo", "labels": ["docs"]})],
        status=201,
        json={"number": 77, "html_url": "https://github.com/pallets/jinja/issues/77"},
    )
    inputs = {"owner": "pallets", "repo": "jinja", "title": "Docs typo", "labels": ["docs"]}
    result = executor.execute(registry["create_github_issue"], inputs)
    assert result.output == {"number": 77, "url": "https://github.com/pallets/jinja/issues/77"}


def test_create_github_issue_refuses_a_path_in_the_owner(
    registry: ToolRegistry, executor: ToolExecutor
) -> None:
    result = executor.execute(
        registry["create_github_issue"],
        {"owner": "../../user", "repo": "x", "title": "t"},
        raise_on_failure=False,
    )
    assert "expected a string matching" in str(result.error)


def test_text_stats_offline(registry: ToolRegistry, executor: ToolExecutor) -> None:
    result = executor.execute(registry["text_stats"], {"text": "One fish. Two fish!"})
    assert result.output == {
        "words": 4,
        "sentences": 2,
        "characters": 19,
        "commonest": ["fish", "one", "two"],
    }
