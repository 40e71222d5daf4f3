"""A local stand-in for the weather APIs that ``tools.d/`` calls, for the demo and the docs test.

``WeatherService`` serves, on 127.0.0.1 at a free port, the two endpoints the
shipped definitions use, in the shape of the real APIs:

- ``GET /data/2.5/weather?q=CITY&units=metric|imperial&appid=KEY`` (OpenWeatherMap):
  a known city answers 200, an unknown one 404, a missing ``appid`` 401;
- ``GET /v1/forecast?latitude=..&longitude=..&forecast_days=N`` (Open-Meteo).

Its answers are canned (``CITIES``), never the real weather. ``local_copy``
copies a definitions folder with each real API origin pointed at the service:
the definitions are the shipped ones, only the scheme, host and port differ.
(Origins are literal in a definition, so the copy is rewritten; once base URLs
can come from the environment, ``local_copy`` becomes setting a variable.)
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Mapping
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "CITIES",
    "REAL_ORIGINS",
    "WeatherService",
    "current_weather",
    "local_copy",
    "point_at",
]

#: City -> (temperature in Celsius, conditions, relative humidity %).
CITIES: Mapping[str, tuple[float, str, int]] = {
    "San Francisco": (14.2, "fog", 86),
    "Cairo": (31.0, "clear sky", 20),
    "Oslo": (-3.5, "light snow", 74),
}

#: The origins of the real APIs the shipped definitions call.
REAL_ORIGINS = ("https://api.openweathermap.org", "https://api.open-meteo.com")


def current_weather(city: str, units: str) -> dict[str, Any] | None:
    """OpenWeatherMap's reply body for ``city``, or ``None`` for a city it does not know."""
    if city not in CITIES:
        return None
    celsius, conditions, humidity = CITIES[city]
    temp = celsius if units == "metric" else round(celsius * 9 / 5 + 32, 1)
    return {"main": {"temp": temp, "humidity": humidity}, "weather": [{"description": conditions}]}


def _forecast(latitude: float, days: int) -> dict[str, Any]:
    start = date(2026, 12, 3)
    base = round(25 - abs(latitude) / 3, 1)  # warmer near the equator; canned all the same
    return {
        "daily": {
            "time": [(start + timedelta(days=n)).isoformat() for n in range(days)],
            "temperature_2m_max": [round(base + n / 2, 1) for n in range(days)],
            "temperature_2m_min": [round(base - 8 + n / 2, 1) for n in range(days)],
        }
    }


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True  # else every keep-alive reply waits on a delayed ACK
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the demo prints what matters itself

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        self.server.count()
        if parts.path == "/data/2.5/weather":
            self._weather(query)
        elif parts.path == "/v1/forecast":
            self._reply(200, _forecast(float(query.get("latitude", 0)), _days(query)))
        else:
            self._reply(404, {"error": f"no such path: {parts.path}"})

    def _weather(self, query: Mapping[str, str]) -> None:
        if not query.get("appid"):
            self._reply(401, {"cod": 401, "message": "Invalid API key."})
            return
        body = current_weather(query.get("q", ""), query.get("units", "metric"))
        if body is None:
            self._reply(404, {"cod": "404", "message": "city not found"})
        else:
            self._reply(200, body)

    def _reply(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _days(query: Mapping[str, str]) -> int:
    try:
        return max(1, min(16, int(query.get("forecast_days", "3"))))
    except ValueError:
        return 3


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests_served = 0
    _lock = threading.Lock()

    def count(self) -> None:
        with self._lock:
            self.requests_served += 1


class WeatherService:
    """The stand-in, running in a background thread while the ``with`` block lasts."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"{host!s}:{port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    @property
    def requests_served(self) -> int:
        return self._server.requests_served

    def __enter__(self) -> WeatherService:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def point_at(text: str, base_url: str) -> str:
    """``text`` with each of ``REAL_ORIGINS`` replaced by ``base_url``."""
    for origin in REAL_ORIGINS:
        text = text.replace(origin, base_url)
    return text


def local_copy(source: Path, destination: Path, base_url: str) -> Path:
    """Copy the definitions in ``source`` to ``destination``, real API origins -> ``base_url``."""
    shutil.copytree(source, destination)
    for path in sorted(destination.rglob("*.y*ml")):
        path.write_text(point_at(path.read_text(encoding="utf-8"), base_url), encoding="utf-8")
    return destination
