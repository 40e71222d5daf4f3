"""The definitions shipped in tools.d/: GitHub's on a loopback stand-in, the rest on `responses`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
import responses
import yaml
from responses import matchers

from agentkit import ToolExecutor, ToolRegistry, load_tools
from examples.demo_service import WeatherService, local_copy
from tests.support import loopback

TOOLS_D = Path(__file__).resolve().parent.parent / "tools.d"


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    loaded = ToolRegistry()
    load_tools(TOOLS_D, registry=loaded)
    return loaded


@pytest.fixture
def executor() -> ToolExecutor:
    return ToolExecutor(
        credentials={"weather-api-key": "owm-key-0123", "github-token": "ghp_test-0123"}
    )


def test_everything_in_tools_d_loads(registry: ToolRegistry) -> None:
    assert sorted(registry.names()) == [
        "comment_on_github_issue",
        "create_github_issue",
        "fetch_weather",
        "forecast_daily",
        "get_github_issue",
        "get_github_repo",
        "list_github_issues",
        "search_github_issues",
        "text_stats",
    ]


@responses.activate
def test_fetch_weather(registry: ToolRegistry, executor: ToolExecutor) -> None:
    responses.get(
        "https://api.openweathermap.org/data/2.5/weather",
        match=[
            matchers.query_param_matcher({"q": "Oslo", "units": "metric", "appid": "owm-key-0123"})
        ],
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


def test_the_weather_tools_on_a_loopback_service(tmp_path: Path, executor: ToolExecutor) -> None:
    with WeatherService() as service:
        folder = local_copy(TOOLS_D, tmp_path / "tools.d", service.url)
        registry = ToolRegistry()
        load_tools(folder, registry=registry)
        weather = executor.execute(registry["fetch_weather"], {"city": "Oslo"})
        forecast = executor.execute(
            registry["forecast_daily"], {"latitude": 59.9, "longitude": 10.7, "days": 2}
        )
        assert service.requests_served == 2
    assert weather.output == {"temperature": -3.5, "conditions": "light snow", "humidity": 74}
    assert forecast.output is not None
    assert forecast.output["dates"] == ["2026-12-03", "2026-12-04"]


# -- GitHub: the shipped source and its six tools against a stand-in on 127.0.0.1 ------------


class GitHub:
    """GitHub's REST API as the tools use it: canned replies, every request recorded."""

    ISSUE = {"number": 77, "title": "Docs typo", "state": "open", "body": None, "extra": {}}

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def behaviours(self) -> dict[str, loopback.Behaviour]:
        url = "https://github.com/pallets/jinja/issues/77"
        issue = {**self.ISSUE, "html_url": url}
        return {
            "/search/issues": self.reply({"total_count": 1, "items": [issue]}),
            "/repos/pallets/jinja/issues": self.reply([issue], created=issue),
            "/repos/pallets/jinja/issues/77": self.reply(issue),
            "/repos/pallets/jinja/issues/77/comments": self.reply(
                {}, created={"id": 9, "html_url": url + "#c9", "user": {}}
            ),
            "/repos/pallets/jinja": self.reply(
                {
                    "full_name": "pallets/jinja",
                    "description": None,
                    "stargazers_count": 10,
                    "open_issues_count": 2,
                    "default_branch": "main",
                    "owner": {"login": "pallets"},
                }
            ),
        }

    def reply(self, found: Any, created: Any = None) -> loopback.Behaviour:
        def behave(handler: loopback.Handler) -> None:
            path, _, query = handler.path.partition("?")
            self.requests.append(
                {
                    "method": handler.command,
                    "path": path,
                    "query": dict(parse_qsl(query)),
                    "headers": dict(handler.headers.items()),
                    "json": json.loads(handler.body) if handler.body else None,
                }
            )
            if handler.command == "POST":
                handler.reply(201, created)
            else:
                handler.reply(200, found)

        return behave


@pytest.fixture(scope="module")
def github() -> Iterator[tuple[GitHub, ToolRegistry]]:
    stub = GitHub()
    with loopback.serve(stub.behaviours()) as origin:
        registry = ToolRegistry()
        load_tools(TOOLS_D, registry=registry, environ={"GITHUB_API_URL": origin})
        yield stub, registry


@pytest.mark.parametrize(
    ("tool", "inputs", "sent", "output"),
    [
        pytest.param(
            "search_github_issues",
            {"query": "repo:pallets/jinja sandbox"},
            ("GET", "/search/issues", {"q": "repo:pallets/jinja sandbox", "per_page": "10"}, None),
            {
                "total": 1,
                "titles": ["Docs typo"],
                "urls": ["https://github.com/pallets/jinja/issues/77"],
            },
            id="search",
        ),
        pytest.param(
            "list_github_issues",
            {"owner": "pallets", "repo": "jinja"},
            ("GET", "/repos/pallets/jinja/issues", {"state": "open", "per_page": "30"}, None),
            {"numbers": [77], "titles": ["Docs typo"]},
            id="list",
        ),
        pytest.param(
            "get_github_issue",
            {"owner": "pallets", "repo": "jinja", "number": 77},
            ("GET", "/repos/pallets/jinja/issues/77", {}, None),
            {
                "title": "Docs typo",
                "state": "open",
                "html_url": "https://github.com/pallets/jinja/issues/77",
            },
            id="get-issue",
        ),
        pytest.param(
            "create_github_issue",
            {"owner": "pallets", "repo": "jinja", "title": "Docs typo", "labels": ["docs"]},
            ("POST", "/repos/pallets/jinja/issues", {}, {"title": "Docs typo", "labels": ["docs"]}),
            {"number": 77, "html_url": "https://github.com/pallets/jinja/issues/77"},
            id="create",
        ),
        pytest.param(
            "comment_on_github_issue",
            {"owner": "pallets", "repo": "jinja", "number": 77, "body": "Fixed in #78."},
            ("POST", "/repos/pallets/jinja/issues/77/comments", {}, {"body": "Fixed in #78."}),
            {"id": 9, "html_url": "https://github.com/pallets/jinja/issues/77#c9"},
            id="comment",
        ),
        pytest.param(
            "get_github_repo",
            {"owner": "pallets", "repo": "jinja"},
            ("GET", "/repos/pallets/jinja", {}, None),
            {
                "full_name": "pallets/jinja",
                "stargazers_count": 10,
                "open_issues_count": 2,
                "default_branch": "main",
            },
            id="get-repo",
        ),
    ],
)
def test_each_github_tool_on_a_loopback_github(
    github: tuple[GitHub, ToolRegistry],
    executor: ToolExecutor,
    tool: str,
    inputs: dict[str, Any],
    sent: tuple[str, str, dict[str, str], Any],
    output: dict[str, Any],
) -> None:
    stub, registry = github
    stub.requests.clear()
    result = executor.execute(registry[tool], inputs)
    assert result.output == output
    (request,) = stub.requests
    assert (request["method"], request["path"], request["query"], request["json"]) == sent
    headers = request["headers"]
    assert headers["Authorization"] == "Bearer ghp_test-0123"  # from the source
    assert headers["Accept"] == "application/vnd.github+json"
    assert headers["X-GitHub-Api-Version"] == "2022-11-28"


def test_the_github_tools_share_one_source(github: tuple[GitHub, ToolRegistry]) -> None:
    _, registry = github
    github_tools = [tool for tool in registry if tool.tags.get("domain") == "github"]
    assert len(github_tools) == 6
    for tool in github_tools:
        loaded = tool.definition
        assert loaded is not None
        assert loaded.loaded_with()["http_source"]["name"] == "github"


def normalized_lines(path: Path) -> int:
    """The lines of a definition file in one form, whatever the file's own style: each
    document through ``yaml.safe_dump`` in block style, keys in written order, blank
    lines left out, and without its ``examples:`` (the definition's tests, not what it
    takes to write a tool)."""
    count = 0
    for document in yaml.safe_load_all(path.read_text()):
        written = {key: value for key, value in document.items() if key != "examples"}
        dumped = yaml.safe_dump(written, default_flow_style=False, sort_keys=False)
        count += sum(1 for line in dumped.splitlines() if line.strip())
    return count


def test_the_github_definitions_take_at_most_157_normalized_lines() -> None:
    # The six tools and their source; owner and repo are the source's shared parameters.
    files = sorted((TOOLS_D / "github").glob("*.yaml"))
    assert sum(normalized_lines(path) for path in files) <= 157


def test_normalized_lines_ignore_style_and_examples(tmp_path: Path) -> None:
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: a\ntags: {x: '1', y: '2'}\nexamples: [{name: e}]\n---\nsource: s\n")
    block = tmp_path / "block.yaml"
    block.write_text("name: a\n\ntags:\n  x: '1'\n  y: '2'\n---\nsource: s\n")
    assert normalized_lines(flow) == normalized_lines(block) == 5


SHIPPED = sorted(path for path in TOOLS_D.rglob("*.yaml") if ".recordings" not in path.parts)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: str(path.relative_to(TOOLS_D)))
def test_shipped_definitions_are_in_block_style(path: Path) -> None:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split(" #")[0]
        # No flow mapping (a parameter, a mapping of settings) outside a quoted template.
        unquoted = re.sub(r'"[^"]*"|\'[^\']*\'|\$\{[^}]*\}|\{\{.*?\}\}', "", code)
        assert "{" not in unquoted, f"{path}:{number}: a flow mapping: {line!r}"
        # A template opens and closes on one line: grep and sed find it whole.
        assert code.count("{{") == code.count("}}"), f"{path}:{number}: {line!r}"


def test_create_github_issue_refuses_a_path_in_the_owner(
    github: tuple[GitHub, ToolRegistry], executor: ToolExecutor
) -> None:
    stub, registry = github
    stub.requests.clear()
    result = executor.execute(
        registry["create_github_issue"],
        {"owner": "../../user", "repo": "x", "title": "t"},
        raise_on_failure=False,
    )
    assert "expected a string matching" in str(result.error)
    assert stub.requests == []


def test_text_stats_offline(registry: ToolRegistry, executor: ToolExecutor) -> None:
    result = executor.execute(registry["text_stats"], {"text": "One fish. Two fish!"})
    assert result.output == {
        "words": 4,
        "sentences": 2,
        "characters": 19,
        "commonest": ["fish", "one", "two"],
    }
