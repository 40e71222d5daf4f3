"""The tool chapter's weather tool, written in Python against the agentkit contract.

``FetchWeatherTool`` calls the OpenWeatherMap current-weather API. The HTTP call
goes through ``fetch`` (a function taking a URL and query parameters, returning
the decoded JSON), so tests and the offline demo hand it a double instead of
the network.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agentkit import Tool

Fetch = Callable[[str, Mapping[str, str]], Any]

API_URL = "https://api.openweathermap.org/data/2.5/weather"


def fetch_json(url: str, params: Mapping[str, str]) -> Any:
    """GET ``url`` with ``params`` and decode the JSON body (the real network)."""
    import requests

    response = requests.get(url, params=dict(params), timeout=(5, 30))
    response.raise_for_status()
    return response.json()


class FetchWeatherTool(Tool):
    TOOL_NAME = "fetch_weather"
    TOOL_DESCRIPTION = "Look up the current weather for a city."
    TOOL_VERSION = "1.0.0"
    TOOL_TAGS = {"domain": "weather"}
    CREDENTIAL_NAMES = ("weather-api-key",)
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "city", "type": "string", "description": "City name (e.g., 'San Francisco')"},
            {
                "name": "units",
                "type": "string",
                "required": False,
                "default": "metric",
                "enum": ["metric", "imperial"],
                "description": "Temperature units",
            },
        ]
    }
    OUTPUT_SCHEMA = {
        "parameters": [
            {"name": "temperature", "type": "float", "description": "Current temperature"},
            {"name": "conditions", "type": "string", "description": "Short description"},
            {"name": "humidity", "type": "integer", "description": "Relative humidity, %"},
        ]
    }

    def __init__(self, fetch: Fetch = fetch_json) -> None:
        super().__init__()
        self._fetch = fetch

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        data = self._fetch(
            API_URL,
            {
                "q": inputs["city"],
                "units": inputs["units"],
                "appid": credentials["weather-api-key"],
            },
        )
        return {
            "temperature": data["main"]["temp"],
            "conditions": data["weather"][0]["description"],
            "humidity": data["main"]["humidity"],
        }


class FakeWeatherAPI:
    """A stand-in for OpenWeatherMap: known cities answer, others raise like a 404 would."""

    CITIES: Mapping[str, tuple[float, str, int]] = {
        "San Francisco": (14.2, "fog", 86),
        "Cairo": (31.0, "clear sky", 20),
        "Oslo": (-3.5, "light snow", 74),
    }

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.requests: list[dict[str, str]] = []

    def __call__(self, url: str, params: Mapping[str, str]) -> Any:
        self.requests.append(dict(params))
        if params.get("appid") != self.api_key:
            raise PermissionError("401 Unauthorized: invalid API key")
        if params["q"] not in self.CITIES:
            raise LookupError(f"404 Not Found: city {params['q']!r} is unknown")
        celsius, conditions, humidity = self.CITIES[params["q"]]
        temp = celsius if params["units"] == "metric" else round(celsius * 9 / 5 + 32, 1)
        return {
            "main": {"temp": temp, "humidity": humidity},
            "weather": [{"description": conditions}],
        }
