"""Recorded exchanges: the HTTP requests one example's call made and the replies it got.

A recording is a YAML file beside the definitions, one per example, at
``<definition folder>/.recordings/<tool>/<example>.yaml``::

    tool: fetch_weather
    version: 1.2.0
    example: paris
    exchanges:
    - request:
        method: GET
        url: https://api.example.com/weather?q=Paris&appid=agentkit-placeholder-weather-api-key
        headers: {Accept: '*/*'}
      response:
        status: 200
        headers: {Content-Type: application/json}
        json: {main: {temp: 18.5}}

A credential never appears in one: where a request carried a credential's value
(the URL, a header, the body; a basic-auth pair decoded first), the recording holds
its placeholder, ``agentkit-placeholder-<name>``, the value replay calls the tool
with, so that replay renders the very same request with no credential at all. A
value still found after that, in any spelling the redactor knows (a reply that
echoes it, a form derived from it), refuses the recording, naming the credential
and where it was.

Only what decides a call is kept, so that a recording reads well in review and
records again unchanged: request headers but those the HTTP client sets itself
(``VOLATILE_REQUEST_HEADERS``); reply headers that a definition can read
(``Content-Type``, ``Location``, ``Link``, ``Retry-After``) and any other whose
name its definition mentions.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, final
from urllib.parse import quote, quote_plus

import yaml

from agentkit.redaction import Redactor
from agentkit.toolerrors import SecretInRecordingError, SemanticError
from agentkit.toolexamples import unified_diff

__all__ = [
    "KEPT_RESPONSE_HEADERS",
    "PLACEHOLDER_PREFIX",
    "VOLATILE_REQUEST_HEADERS",
    "RecordedExchange",
    "Recording",
    "SecretInRecordingError",
    "placeholder",
    "placeholders",
    "recording_path",
]

PLACEHOLDER_PREFIX: Final = "agentkit-placeholder-"
#: Set by the HTTP client, not the definition; they differ between versions and runs.
VOLATILE_REQUEST_HEADERS: Final = frozenset(
    {"user-agent", "accept-encoding", "connection", "content-length", "host"}
)
KEPT_RESPONSE_HEADERS: Final = frozenset({"content-type", "location", "link", "retry-after"})
_BOUNDARY: Final = re.compile(r"boundary=([^;\s]+)")


def placeholder(credential: str) -> str:
    """What replay gives the tool for ``credential``, and what recordings hold instead."""
    return f"{PLACEHOLDER_PREFIX}{credential}"


def placeholders(names: Iterable[str]) -> dict[str, str]:
    return {name: placeholder(name) for name in names}


def recording_path(definition_path: str | Path, tool: str, example: str) -> Path:
    """``<definition folder>/.recordings/<tool>/<example>.yaml``."""
    return Path(definition_path).parent / ".recordings" / tool / f"{example}.yaml"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedExchange:
    """One request as sent (normalized: ``normal_request``) and the reply it got."""

    request: Mapping[str, Any]
    response: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"request": dict(self.request), "response": dict(self.response)}

    @property
    def status(self) -> int:
        return int(self.response.get("status", 200))

    def response_headers(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in (self.response.get("headers") or {}).items()}

    def response_body(self) -> bytes:
        """The reply's body as bytes: from ``json``, ``text`` or ``base64``."""
        response = self.response
        if "json" in response:
            return json.dumps(response["json"]).encode()
        if "base64" in response:
            return base64.b64decode(str(response["base64"]))
        return str(response.get("text", "")).encode()


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Recording:
    """The exchanges of one example's call, in the order they were made."""

    tool: str
    version: str
    example: str
    exchanges: tuple[RecordedExchange, ...]

    def to_yaml(self) -> str:
        data = {
            "tool": self.tool,
            "version": self.version,
            "example": self.example,
            "exchanges": [exchange.to_json() for exchange in self.exchanges],
        }
        head = (
            "# Recorded by `agentkit test --record`: credentials are placeholders, never values.\n"
        )
        return head + yaml.safe_dump(
            data, default_flow_style=False, sort_keys=False, allow_unicode=True, width=100
        )

    @classmethod
    def load(cls, path: Path) -> Recording:
        """Read a recording; a broken one raises ``SemanticError`` naming the file."""
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise SemanticError(f"Cannot read recording {path}: {exc.strerror or exc}") from exc
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            raise SemanticError(f"{where}: not YAML: {getattr(exc, 'problem', exc)}") from exc
        problem = _shape_problem(data)
        if problem:
            raise SemanticError(f"{path}: not a recording: {problem}")
        exchanges = tuple(
            RecordedExchange(request=item["request"], response=item["response"])
            for item in data.get("exchanges") or []
        )
        return cls(
            tool=str(data["tool"]),
            version=str(data.get("version", "")),
            example=str(data.get("example", path.stem)),
            exchanges=exchanges,
        )


def _shape_problem(data: Any) -> str:
    if not isinstance(data, dict) or "tool" not in data:
        return "expected a mapping with 'tool', 'example' and 'exchanges'"
    exchanges = data.get("exchanges") or []
    if not isinstance(exchanges, list):
        return "'exchanges' must be a list"
    for index, item in enumerate(exchanges):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("request"), dict)
            and isinstance(item.get("response"), dict)
        ):
            return f"exchanges[{index}] needs a 'request' and a 'response' mapping"
        if not isinstance(item["response"].get("status", 200), int):
            return f"exchanges[{index}].response.status must be a whole number"
    return ""


# -- requests as compared --------------------------------------------------------------------------


def normal_request(
    method: str, url: str, headers: Mapping[str, str], body: bytes | str | None
) -> dict[str, Any]:
    """A request as recordings hold and compare it: method, URL, the headers the
    definition decides (sorted, ``VOLATILE_REQUEST_HEADERS`` left out), and the body:
    ``json`` when it is JSON, else ``text`` (a multipart boundary made constant)."""
    kept = {
        str(name): str(value)
        for name, value in sorted(headers.items(), key=lambda item: item[0].lower())
        if name.lower() not in VOLATILE_REQUEST_HEADERS
    }
    normal: dict[str, Any] = {"method": method, "url": url}
    if kept:
        normal["headers"] = kept
    if body is None or body == b"" or body == "":
        return normal
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    content_type = next((v for k, v in kept.items() if k.lower() == "content-type"), "")
    boundary = _BOUNDARY.search(content_type)
    if boundary is not None:
        text = text.replace(boundary.group(1), "BOUNDARY")
        kept = {k: v.replace(boundary.group(1), "BOUNDARY") for k, v in kept.items()}
        normal["headers"] = kept
    try:
        normal["json"] = json.loads(text) if "json" in content_type.lower() else None
    except ValueError:
        normal["json"] = None
    if normal["json"] is None:
        del normal["json"]
        normal["text"] = text
    return normal


def request_diff(recorded: Mapping[str, Any], sent: Mapping[str, Any]) -> str:
    """The two requests, as ``-`` recorded and ``+`` sent now."""
    return unified_diff(dict(recorded), dict(sent), "recorded", "sent")


def normal_response(
    status: int, headers: Mapping[str, str], body: bytes, mentioned: str
) -> dict[str, Any]:
    """A reply as recordings hold it: the status, the headers worth keeping (see the
    module), and the body as ``json``, ``text`` or ``base64``. ``mentioned``: the text
    of the definition, whose header names are kept too."""
    kept = {
        str(name): str(value)
        for name, value in headers.items()
        if name.lower() in KEPT_RESPONSE_HEADERS or name.lower() in mentioned
    }
    response: dict[str, Any] = {"status": status}
    if kept:
        response["headers"] = kept
    content_type = next((v for k, v in kept.items() if k.lower() == "content-type"), "")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        response["base64"] = base64.b64encode(body).decode("ascii")
        return response
    if "json" in content_type.lower():
        try:
            response["json"] = json.loads(text)
            return response
        except ValueError:
            pass
    if text:
        response["text"] = text
    return response


# -- keeping credentials out -----------------------------------------------------------------------


def with_placeholders(value: str, credentials: Mapping[str, str]) -> str:
    """``value`` with each credential's value (as is, and URL-encoded) replaced by its
    placeholder, and a basic-auth pair's likewise (decoded, replaced, encoded again)."""
    if value.startswith("Basic "):
        try:
            pair = base64.b64decode(value[6:], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            pair = ""
        if pair:
            replaced = with_placeholders(pair, credentials)
            if replaced != pair:
                return "Basic " + base64.b64encode(replaced.encode()).decode("ascii")
    # The longest first: a value that holds another is replaced whole.
    for name, secret in sorted(credentials.items(), key=lambda item: -len(item[1])):
        if not secret:
            continue
        stand_in = placeholder(name)
        for form in dict.fromkeys((secret, quote(secret, safe=""), quote_plus(secret))):
            value = value.replace(form, stand_in)
    return value


def placeholder_request(request: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
    """A normalized request with ``with_placeholders`` applied to its URL, headers and body."""
    if not credentials:
        return request
    swapped: dict[str, Any] = json.loads(json.dumps(request))
    swapped["url"] = with_placeholders(swapped["url"], credentials)
    if "headers" in swapped:
        swapped["headers"] = {
            name: with_placeholders(value, credentials)
            for name, value in swapped["headers"].items()
        }
    if "text" in swapped:
        swapped["text"] = with_placeholders(swapped["text"], credentials)
    if "json" in swapped:
        # In each string of the body, not in its JSON text, where a credential holding
        # '"' or '\\' is written escaped and would not be found.
        swapped["json"] = _in_strings(swapped["json"], credentials)
    return swapped


def _in_strings(value: Any, credentials: Mapping[str, str]) -> Any:
    """``value`` (JSON data) with ``with_placeholders`` applied to every string in it,
    keys included."""
    if isinstance(value, str):
        return with_placeholders(value, credentials)
    if isinstance(value, list):
        return [_in_strings(item, credentials) for item in value]
    if isinstance(value, dict):
        return {
            with_placeholders(key, credentials): _in_strings(item, credentials)
            for key, item in value.items()
        }
    return value


def refuse_secrets(
    exchange: RecordedExchange,
    credentials: Mapping[str, str],
    *,
    tool: str,
    example: str,
    position: int,
    derived: Redactor | None = None,
) -> None:
    """Raise ``SecretInRecordingError`` when any credential (in any spelling the
    redactor knows), or a secret the call derived from one (``derived``: the call's own
    redactor), is still in ``exchange``."""
    named = Redactor(named={name: value for name, value in credentials.items() if value})
    for redactor in (named, derived):
        if not redactor:
            continue
        leak = redactor.leak(exchange.to_json(), f"exchanges[{position}]")
        if leak is not None:
            raise SecretInRecordingError(
                tool=tool,
                example=example,
                credentials=leak.credentials or tuple(credentials),
                where=leak.where,
                # The credentials' own values were looked for first: what the call's own
                # redactor finds then is a secret obtained with them.
                derived=redactor is derived,
            )
