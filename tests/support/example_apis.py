"""The APIs of the shipped tools.d, as their documentation shows their replies.

OpenWeatherMap's current weather, Open-Meteo's forecast and GitHub's REST API
answer with the shapes their documents give; ``FakeApis`` is a requests adapter
serving them, so the shipped recordings can be made again, offline, by the very
code ``agentkit test --record`` runs (``record_shipped``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests

from agentkit.credentials import CredentialsManager
from agentkit.declarative import load_tools
from agentkit.testing.adapters import AnsweringAdapter, build_response
from agentkit.testing.runner import ExampleOutcome, collect_examples, run_example
from agentkit.tool import Tool

#: What the shipped examples are recorded with: never written to a recording.
RECORDING_CREDENTIALS = {
    "weather-api-key": "0123456789abcdef0123456789abcdef",
    "github-token": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
}

_ISSUE = {
    "number": 1347,
    "title": "Found a bug",
    "state": "open",
    "body": "I'm having a problem with this.",
    "html_url": "https://github.com/octocat/Hello-World/issues/1347",
    "labels": [{"name": "bug"}],
}


def _weather(query: dict[str, list[str]]) -> tuple[int, Any]:
    city = query["q"][0]
    if city == "Atlantis":
        return 404, {"cod": "404", "message": "city not found"}
    imperial = query.get("units") == ["imperial"]
    description = "light rain" if city == "London" else "clear sky"
    return 200, {
        "coord": {"lon": -0.1257, "lat": 51.5085},
        "weather": [{"id": 500, "main": "Rain", "description": description, "icon": "10d"}],
        "main": {"temp": 57.6 if imperial else 14.2, "pressure": 1012, "humidity": 81},
        "name": city,
        "cod": 200,
    }


def _forecast(query: dict[str, list[str]]) -> tuple[int, Any]:
    days = int(query["forecast_days"][0])
    return 200, {
        "latitude": 52.52,
        "longitude": 13.419998,
        "timezone": "Europe/Berlin",
        "daily_units": {"time": "iso8601", "temperature_2m_max": "°C"},
        "daily": {
            "time": ["2026-12-05", "2026-12-06", "2026-12-07"][:days],
            "temperature_2m_max": [4.1, 5.3, 6.0][:days],
            "temperature_2m_min": [-0.8, 1.2, 2.2][:days],
        },
    }


def _github(method: str, path: str, body: Any) -> tuple[int, Any]:
    not_found = {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}
    if path == "/search/issues":
        items = [
            ("Sandbox escape through format_map", 1990),
            ("Document the sandbox's limits", 2011),
        ]
        return 200, {
            "total_count": 2,
            "incomplete_results": False,
            "items": [
                {
                    "number": n,
                    "title": t,
                    "html_url": f"https://github.com/pallets/jinja/issues/{n}",
                }
                for t, n in items
            ],
        }
    if path == "/repos/octocat/Hello-World":
        return 200, {
            "full_name": "octocat/Hello-World",
            "description": "My first repository on GitHub!",
            "stargazers_count": 80,
            "open_issues_count": 2,
            "default_branch": "master",
        }
    if path == "/repos/octocat/Hello-World/issues" and method == "GET":
        second = {**_ISSUE, "number": 1346, "title": "Add a README"}
        return 200, [_ISSUE, second]
    if path == "/repos/octocat/Hello-World/issues" and method == "POST":
        return 201, {**_ISSUE, "title": body["title"]}
    if path == "/repos/octocat/Hello-World/issues/1347":
        return 200, _ISSUE
    if path == "/repos/octocat/Hello-World/issues/1347/comments" and method == "POST":
        return 201, {
            "id": 1,
            "body": body["body"],
            "html_url": "https://github.com/octocat/Hello-World/issues/1347#issuecomment-1",
        }
    return 404, not_found


class FakeApis(AnsweringAdapter):
    """A requests adapter answering as the three APIs document; opens no socket."""

    def answer(
        self, request: requests.PreparedRequest, options: dict[str, Any]
    ) -> requests.Response:
        parts = urlsplit(request.url or "")
        query = parse_qs(parts.query)
        body = json.loads(request.body) if request.body else None
        if parts.netloc == "api.openweathermap.org":
            status, data = _weather(query)
        elif parts.netloc == "api.open-meteo.com":
            status, data = _forecast(query)
        else:
            status, data = _github(request.method or "GET", parts.path, body)
        headers = {"Content-Type": "application/json; charset=utf-8", "Date": "now"}
        return build_response(request, status, headers, json.dumps(data).encode())


def record_shipped(folder: Path, tools: Iterable[Tool] | None = None) -> list[ExampleOutcome]:
    """``agentkit test --record`` on ``folder``, the APIs answered by ``FakeApis``."""
    if tools is None:
        tools = [cls() for cls in load_tools(folder)]
    credentials = CredentialsManager.from_mapping(RECORDING_CREDENTIALS)
    outcomes = []
    for tool, example in collect_examples(tools):
        session = getattr(getattr(type(tool), "BACKEND", None), "session", None)
        if session is not None:
            for prefix in ("http://", "https://"):
                session.mount(prefix, FakeApis())
        outcomes.append(run_example(tool, example, record=True, credentials=credentials))
    return outcomes
