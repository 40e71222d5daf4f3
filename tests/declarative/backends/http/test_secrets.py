"""Against a loopback server that echoes the request back, no spelling of a secret gets out.

Every way a call is seen is checked: the output, the error (str, repr, its whole
chain, a formatted traceback, ``logging.exception``), every event, the span,
the recorder's JSON Lines and the log records made while the call ran.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentkit import (
    ExecutionRecorder,
    OTelTracer,
    SecretInOutputError,
    ToolEvent,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    ToolResult,
    load_tools,
)
from agentkit.declarative.backends.http.backend import HttpBackend, HttpCallError
from tests.declarative.conftest import WriteFile
from tests.support import loopback
from tests.support.leaks import SECRETS, chain_text, leaked, logged_exception

TOOL = """\
name: echo
version: 1.0.0
credentials: [user, token]
input_schema:
  parameters:
    - {{name: path, type: string}}
output_schema:
  parameters:
    - {{name: echo, type: string}}
backend:
  http:
    method: POST
    url: {origin}/{{{{ inputs.path }}}}
    auth: {auth}
    json:
      note: "sent {{{{ credentials.token }}}}"
      signature: "v1;{{{{ credentials.token | upper }}}};{{{{ credentials.token | reverse }}}}"
    output:
      echo: "{{{{ response.text }}}}"
"""

AUTHS = {
    "basic": "{basic: {username: user, password: token}}",
    "bearer": "{bearer: token}",
    "api-key-query": "{api_key: {credential: token, in: query, name: key}}",
    "api-key-header": "{api_key: {credential: token, in: header, name: X-Api-Key}}",
}


def echo(handler: loopback.Handler) -> None:
    """The request as text -- every header, the path with its query, the body."""
    lines = [f"{name}: {value}" for name, value in handler.headers.items()]
    text = "\n".join([handler.path, *lines, handler.body.decode("utf-8", "replace")])
    route, _, pad = handler.path.split("?")[0].strip("/").partition("/")
    status = 200 if route == "ok" else 500
    payload = ("." * int(pad or 0) + text).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "text/plain; charset=utf-8")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


class EveryPath(dict[str, loopback.Behaviour]):
    def get(self, key: str, default: Any = None) -> loopback.Behaviour:
        return echo


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with loopback.serve(EveryPath()) as served:
        yield served


class Seen:
    """Everything a call exposes, gathered as text."""

    def __init__(self, tmp_path: Path) -> None:
        self.events: list[ToolEvent] = []
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = OTelTracer(provider)
        self.recording = tmp_path / "calls.jsonl"

    def run(self, tool: Any, token: str, path: str) -> tuple[ToolResult, str]:
        executor = ToolExecutor(
            credentials={"user": "ann.user@example.test", "token": token},
            listeners=[self.events.append],
            tracer=self.tracer,
        )
        recorder = ExecutionRecorder(executor)
        result = executor.execute(tool, {"path": path}, raise_on_failure=False)
        recorder.save(self.recording)
        texts = [repr(result), json.dumps(result.to_dict(), ensure_ascii=False)]
        texts += [repr(event) for event in self.events]
        texts += [span.to_json() for span in self.exporter.get_finished_spans()]
        texts.append(self.recording.read_text(encoding="utf-8"))
        if result.error is not None:
            texts += [chain_text(result.error), logged_exception(result.error)]
        return result, "\n".join(texts)


def _is_latin1(text: str) -> bool:
    return all(ord(char) < 256 for char in text)


def make_tool(write: WriteFile, origin: str, auth: str) -> Any:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(origin=origin, auth=AUTHS[auth])), registry=registry)
    return registry["echo"]


@pytest.mark.parametrize("route", ["ok", "fail"])
@pytest.mark.parametrize("auth", sorted(AUTHS))
@pytest.mark.parametrize("token", SECRETS, ids=range(len(SECRETS)))
def test_an_echoed_secret_is_never_seen(
    write: WriteFile,
    tmp_path: Path,
    origin: str,
    caplog: pytest.LogCaptureFixture,
    token: str,
    auth: str,
    route: str,
) -> None:
    tool = make_tool(write, origin, auth)
    with caplog.at_level(logging.DEBUG):
        result, seen = Seen(tmp_path).run(tool, token, route)
    if auth in ("bearer", "api-key-header") and not _is_latin1(token):
        assert result.error is not None  # an HTTP header cannot carry it: refused, unsent
        assert "outside Latin-1" in str(result.error)
    elif route == "ok":  # the server sent the secret back: the answer is withheld
        assert isinstance(result.error, ToolExecutionError)
        assert isinstance(result.error.cause, SecretInOutputError)
        assert result.error.cause.where == "output.echo"
    else:
        assert "***" in str(result.error)  # the error quotes the reply, redacted
    derived = [f"v1;{token.upper()};{token[::-1]}"]
    assert leaked(seen + caplog.text, [token, *derived]) == []


@pytest.mark.parametrize("auth", ["basic", "api-key-query"])
@pytest.mark.parametrize("token", SECRETS[:2], ids=range(2))
def test_no_prefix_of_a_secret_at_the_edge_of_an_error_excerpt(
    write: WriteFile, tmp_path: Path, origin: str, token: str, auth: str
) -> None:
    tool = make_tool(write, origin, auth)
    seen = Seen(tmp_path)
    # Slide the echoed request across the excerpt's 200-character cut.
    for pad in range(120, 205, 2):
        result, text = seen.run(tool, token, f"fail/{pad}")
        assert result.error is not None
        assert leaked(text, [token]) == [], pad
        # No longer prefix survives than a partial escape sequence could make.
        assert token[:4] not in str(result.error)


def test_a_backend_called_directly_raises_a_clean_error(write: WriteFile, origin: str) -> None:
    token = SECRETS[2]
    backend: HttpBackend = make_tool(write, origin, "api-key-query").BACKEND
    with pytest.raises(HttpCallError) as caught:
        backend.call({"path": "fail"}, {"user": "ann.user@example.test", "token": token})
    assert caught.value.kind == "status"
    assert caught.value.__context__ is None or leaked(chain_text(caught.value), [token]) == []
    assert leaked(chain_text(caught.value) + logged_exception(caught.value), [token]) == []


def test_an_unsendable_header_fails_without_showing_it(
    write: WriteFile, tmp_path: Path, origin: str
) -> None:
    token = " " + SECRETS[0]  # leading whitespace: HTTP drops it or refuses the header
    result, seen = Seen(tmp_path).run(make_tool(write, origin, "api-key-header"), token, "ok")
    assert result.error is not None
    assert "header 'X-Api-Key' would start or end with whitespace" in str(result.error)
    assert leaked(seen, [token.strip()]) == []


@pytest.mark.parametrize("auth", ["api-key-query", "bearer", "basic"])
def test_a_refused_connection_shows_neither_the_key_nor_the_request(
    write: WriteFile, tmp_path: Path, auth: str
) -> None:
    text = TOOL.format(origin="http://127.0.0.1:9", auth=AUTHS[auth])  # port 9: closed
    text = text.replace("    method: POST\n", "    method: POST\n    retry: {attempts: 1}\n")
    registry = ToolRegistry()
    load_tools(write(text), registry=registry)
    token = SECRETS[0]
    result, seen = Seen(tmp_path).run(registry["echo"], token, "ok")
    assert result.error is not None
    assert "failed to connect" in str(result.error)
    assert leaked(seen, [token]) == []
