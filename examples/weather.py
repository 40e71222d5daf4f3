"""The tool chapter's weather tool, written in Python against the agentkit contract.

``FetchWeatherTool`` calls the OpenWeatherMap current-weather API. The HTTP call
goes through ``fetch`` (a function taking a URL and query parameters, returning
the decoded JSON) at ``api_url``, so tests hand it a double and the demo points
it at its local stand-in (``examples/demo_service.py``) instead of the network.

``python examples/weather.py Oslo`` runs it offline, against that stand-in;
``python examples/weather.py Oslo --live`` calls the real API with ``WEATHER_API_KEY``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `examples` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentkit import CredentialsManager, MappingProvider, Tool, ToolExecutor
from examples.demo_service import WeatherService, current_weather

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

    def __init__(self, fetch: Fetch = fetch_json, *, api_url: str = API_URL) -> None:
        super().__init__()
        self._fetch = fetch
        self._api_url = api_url

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        data = self._fetch(
            self._api_url,
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
    """A stand-in for OpenWeatherMap in memory: the local service's answers, without HTTP."""

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.requests: list[dict[str, str]] = []

    def __call__(self, url: str, params: Mapping[str, str]) -> Any:
        self.requests.append(dict(params))
        if params.get("appid") != self.api_key:
            raise PermissionError("401 Unauthorized: invalid API key")
        data = current_weather(params["q"], params["units"])
        if data is None:
            raise LookupError(f"404 Not Found: city {params['q']!r} is unknown")
        return data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Call FetchWeatherTool through the executor.")
    parser.add_argument("city", nargs="?", default="Oslo")
    parser.add_argument("--units", choices=("metric", "imperial"), default="metric")
    parser.add_argument(
        "--live", action="store_true", help="call the real API (needs WEATHER_API_KEY)"
    )
    args = parser.parse_args(argv)
    inputs = {"city": args.city, "units": args.units}
    if args.live:
        result = ToolExecutor().execute(FetchWeatherTool(), inputs, raise_on_failure=False)
        print("answer from the real OpenWeatherMap API")
    else:
        # The stand-in accepts any key; a real one is never needed offline.
        offline = CredentialsManager([MappingProvider({"weather-api-key": "demo-key"})])
        with WeatherService() as service:
            tool = FetchWeatherTool(api_url=service.url + "/data/2.5/weather")
            result = ToolExecutor(credentials=offline).execute(tool, inputs, raise_on_failure=False)
        print(
            f"answer from the demo's local weather service on {service.address} (not the real API)"
        )
    print(json.dumps(result.to_dict()))
    return 0 if result.succeeded else 1


if __name__ == "__main__":
    sys.exit(main())
