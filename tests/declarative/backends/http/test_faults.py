"""The HTTP backend against a real loopback server: retries, timeouts, deadlines, redirects, caps."""

from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from email.utils import formatdate
from typing import Any

import pytest

from agentkit import ToolExecutor, ToolRegistry, ToolResult, load_tools
from agentkit.declarative.backends.http import sending
from tests.declarative.conftest import WriteFile
from tests.support import loopback, rawserver

TOOL = """\
name: probe
version: 1.0.0
input_schema:
  parameters:
    - {{name: path, type: string}}
output_schema:
  parameters:
    - {{name: title, type: string}}
backend:
  http:
    method: {method}
    url: {origin}/{{{{ inputs.path }}}}
{extra}
"""


@pytest.fixture(autouse=True)
def no_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sending._jitter, "uniform", lambda low, high: 1.0)


@pytest.fixture
def behaviours() -> dict[str, loopback.Behaviour]:
    return {}


@pytest.fixture
def origin(behaviours: dict[str, loopback.Behaviour]) -> Iterator[str]:
    with loopback.serve(behaviours) as served:
        yield served


def call(
    write: WriteFile, origin: str, path: str, *, method: str = "GET", extra: str = ""
) -> ToolResult:
    text = TOOL.format(method=method, origin=origin, extra=extra)
    registry = ToolRegistry()
    load_tools(write(text), registry=registry)
    return ToolExecutor(credentials={}).execute(
        registry["probe"], {"path": path}, raise_on_failure=False
    )


RETRY = "    retry: {attempts: 3, backoff: 0.01}"


def test_a_plain_call(write: WriteFile, origin: str, behaviours: dict[str, Any]) -> None:
    behaviours["/a"] = loopback.ok({"title": "hello"})
    assert call(write, origin, "a").output == {"title": "hello"}


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_retry_on_status_then_succeed(
    write: WriteFile, origin: str, behaviours: dict[str, Any], status: int
) -> None:
    behaviours["/r"] = loopback.fail_then_ok(2, status, {"title": "finally"})
    assert call(write, origin, "r", extra=RETRY).output == {"title": "finally"}


def test_retries_give_up_after_the_attempts(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/r"] = loopback.fail_then_ok(5, 503, {"title": "never"})
    result = call(write, origin, "r", extra=RETRY)
    assert "returned 503 Service Unavailable" in str(result.error)


def test_a_post_is_not_retried_on_status(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/p"] = loopback.fail_then_ok(1, 503, {"title": "second"})
    result = call(write, origin, "p", method="POST", extra=RETRY)
    assert "returned 503" in str(result.error)


def test_a_post_is_retried_when_declared_non_idempotent(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/p"] = loopback.fail_then_ok(1, 503, {"title": "second"})
    extra = "    retry: {attempts: 2, backoff: 0.01, non_idempotent: true}"
    assert call(write, origin, "p", method="POST", extra=extra).output == {"title": "second"}


@pytest.mark.parametrize("form", ["seconds", "http-date"])
def test_retry_after_is_honoured(
    write: WriteFile, origin: str, behaviours: dict[str, Any], form: str
) -> None:
    # An HTTP-date has whole seconds: "now + 2 s" truncates to a wait of 1 to 2 s.
    value = "1" if form == "seconds" else formatdate(time.time() + 2, usegmt=True)
    behaviours["/w"] = loopback.fail_then_ok(1, 429, {"title": "waited"}, {"Retry-After": value})
    started = time.monotonic()
    result = call(write, origin, "w", extra=RETRY)
    elapsed = time.monotonic() - started
    assert result.output == {"title": "waited"}
    assert elapsed >= 0.9  # waited for the server's word, not the 10 ms backoff


def test_retry_after_is_capped_by_max_wait(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/w"] = loopback.fail_then_ok(1, 429, {"title": "soon"}, {"Retry-After": "3600"})
    started = time.monotonic()
    extra = "    retry: {attempts: 2, backoff: 0.01, max_wait: 0.2}"
    assert call(write, origin, "w", extra=extra).output == {"title": "soon"}
    assert time.monotonic() - started < 5


def test_a_read_timeout(write: WriteFile, origin: str, behaviours: dict[str, Any]) -> None:
    behaviours["/s"] = loopback.slow(2, {"title": "late"})
    extra = "    timeout: {read: 0.2, total: 10}\n    retry: {attempts: 1}"
    result = call(write, origin, "s", extra=extra)
    assert "timed out" in str(result.error)


def test_the_total_deadline_bounds_retries(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/s"] = loopback.slow(0.4, {"title": "late"})
    extra = "    timeout: {read: 0.3, total: 1}\n    retry: {attempts: 10, backoff: 0.05}"
    started = time.monotonic()
    result = call(write, origin, "s", extra=extra)
    assert not result.succeeded
    assert time.monotonic() - started < 1.6


def test_the_total_deadline_cuts_a_trickling_body(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/t"] = loopback.trickle(200, 0.02)  # ~4 s in all, every byte quick
    extra = "    timeout: {read: 1, total: 0.8}\n    retry: {attempts: 1}"
    started = time.monotonic()
    result = call(write, origin, "t", extra=extra)
    assert "timed out after 0.8 s (timeout.total), the tool's own deadline: raise " in str(
        result.error
    )
    assert time.monotonic() - started < 2


def test_the_size_cap_counts_decoded_bytes(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/g"] = loopback.gzip_bomb(5_000_000)
    result = call(write, origin, "g", extra="    max_response_bytes: 100000")
    assert "over max_response_bytes (100000 bytes)" in str(result.error)


def test_same_origin_redirects_are_followed(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/old"] = loopback.redirect("/new")
    behaviours["/new"] = loopback.ok({"title": "moved"})
    assert call(write, origin, "old").output == {"title": "moved"}


def test_redirect_loops_stop_after_five(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/loop"] = loopback.redirect("/loop")
    result = call(write, origin, "loop")
    assert "redirected more than 5 times" in str(result.error)


def test_redirects_can_be_turned_off(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/old"] = loopback.redirect("/new")
    result = call(write, origin, "old", extra="    follow_redirects: false")
    assert "returned 302" in str(result.error)


def test_a_cross_origin_redirect_fails(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/x"] = loopback.redirect("http://localhost:1/elsewhere")
    result = call(write, origin, "x")
    assert "redirected to another origin" in str(result.error)


def test_connection_refused_is_retried_then_reported(write: WriteFile) -> None:
    result = call(write, "http://127.0.0.1:9", "a", extra=RETRY)
    assert "failed to connect after 3 attempt(s)" in str(result.error)


def test_urllib3s_own_debug_lines_carry_no_secret(
    write: WriteFile, origin: str, behaviours: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    behaviours["/k"] = loopback.ok({"title": "fine"})
    text = TOOL.format(
        method="GET",
        origin=origin,
        extra="    auth: {api_key: {credential: api-key, in: query, name: key}}",
    ).replace("version: 1.0.0\n", "version: 1.0.0\ncredentials: [api-key]\n")
    registry = ToolRegistry()
    load_tools(write(text), registry=registry)
    secret = "s3cret/with+chars"
    with caplog.at_level(logging.DEBUG, logger="urllib3"):
        result = ToolExecutor(credentials={"api-key": secret}).execute(
            registry["probe"], {"path": "k"}
        )
    assert result.succeeded
    lines = [record.getMessage() for record in caplog.records if record.name.startswith("urllib3")]
    assert any('"GET /k?key=*** HTTP/1.1" 200' in line for line in lines), lines
    assert not any(secret in line or "s3cret%2Fwith%2Bchars" in line for line in lines)


def raw_reply(body: bytes) -> loopback.Behaviour:
    def behaviour(handler: loopback.Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return behaviour


DEEPER = "nested more than 64 levels deep"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        pytest.param(b'{"title": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", DEEPER, id="deep"),
        pytest.param(b'{"title": ' + b"[" * 65 + b"]" * 65 + b"}", DEEPER, id="just-too-deep"),
        pytest.param(b'{"title": NaN}', "NaN is not a number JSON allows", id="nan"),
        pytest.param(b'{"title": -Infinity}', "-Infinity is not", id="infinity"),
        pytest.param(b'{"title": 1e999}', "too large for a float", id="overflow"),
    ],
)
def test_a_hostile_json_reply_fails_the_call_cleanly(
    write: WriteFile, origin: str, behaviours: dict[str, Any], body: bytes, reason: str
) -> None:
    behaviours["/h"] = raw_reply(body)
    result = call(write, origin, "h")
    assert not result.succeeded
    assert "the response (status 200) is not a JSON object (the response body" in str(result.error)
    assert reason in str(result.error)


def test_a_hostile_reply_fails_an_output_template_cleanly(
    write: WriteFile, origin: str, behaviours: dict[str, Any]
) -> None:
    behaviours["/h"] = raw_reply(b'{"title": NaN}')
    result = call(write, origin, "h", extra='    output: {title: "{{ response.json.title }}"}')
    assert not result.succeeded
    assert "NaN is not a number JSON allows" in str(result.error)


# -- a failure to reach the server says where, what failed and what would fix it ----------------


def _free_port() -> int:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port: int = placeholder.getsockname()[1]
    return port


@contextmanager
def _refused(scheme: str) -> Iterator[str]:
    yield f"{scheme}://127.0.0.1:{_free_port()}"


@contextmanager
def _tls_to_plain_http() -> Iterator[str]:
    with loopback.serve({}) as origin:
        yield origin.replace("http://", "https://")


@contextmanager
def _unaccepting() -> Iterator[str]:
    with rawserver.unaccepting() as server:
        yield server.origin


@contextmanager
def _silent() -> Iterator[str]:
    with rawserver.serve(rawserver.silence) as server:
        yield server.origin


Origin = Callable[[], AbstractContextManager[str]]
UNREACHABLE: dict[str, tuple[Origin, str, str]] = {
    # id: (the origin, what failed, what would fix it)
    "name under .invalid, https": (
        lambda: nullcontext("https://weather.invalid"),
        "the host name 'weather.invalid' (port 443) could not be resolved",
        "check the host in the URL",
    ),
    "name under .invalid, own port": (
        lambda: nullcontext("http://api.weather.invalid:8080"),
        "the host name 'api.weather.invalid' (port 8080) could not be resolved",
        "can resolve names (DNS)",
    ),
    "refused port, http": (
        lambda: _refused("http"),
        "the connection to 127.0.0.1:{port} was refused",
        "check the port in the URL and that the server is running",
    ),
    "refused port, https": (
        lambda: _refused("https"),
        "the connection to 127.0.0.1:{port} was refused",
        "check the port in the URL and that the server is running",
    ),
    "TLS to a plain-HTTP port": (
        _tls_to_plain_http,
        "the TLS handshake with 127.0.0.1:{port} failed",
        "if it serves plain HTTP, the URL wants http://",
    ),
    "connect timeout": (
        _unaccepting,
        "connecting to 127.0.0.1:{port} timed out after 0.3 s (timeout.connect)",
        "raise timeout.connect in the tool's definition",
    ),
    "read timeout": (
        _silent,
        "127.0.0.1:{port}/p failed after 2 attempt(s): sent, timed out after 0.3 s waiting "
        "for a reply (timeout.read)",
        "raise timeout.read in its definition",
    ),
}
FAST_FAIL = (
    "    timeout: {connect: 0.3, read: 0.3, total: 10}\n    retry: {attempts: 2, backoff: 0.01}"
)
# urllib3's words for its connection objects: never the user's business.
INTERNALS = re.compile(r"Connection\(|object at 0x|_Tracked|urllib3|HTTPConnectionPool")


@pytest.mark.parametrize(
    ("origin_of", "failed", "fix"), UNREACHABLE.values(), ids=UNREACHABLE.keys()
)
def test_an_unreachable_server_is_named_with_what_failed_and_the_fix(
    write: WriteFile,
    monkeypatch: pytest.MonkeyPatch,
    origin_of: Origin,
    failed: str,
    fix: str,
) -> None:
    warnings: list[str] = []
    monkeypatch.setattr(sending, "log", lambda level, message, **_: warnings.append(message))
    with origin_of() as origin:
        result = call(write, origin, "p", extra=FAST_FAIL)
    port = origin.rsplit(":", 1)[-1]
    error = str(result.error)
    assert error.startswith("Tool 'probe' failed: HttpCallError: GET "), error
    assert failed.format(port=port) in error
    assert fix in error
    assert warnings, "the retry is announced"
    for text in (error, *warnings):
        assert not INTERNALS.search(text), text


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy"])
def test_proxy_variables_do_not_redirect_a_tool(
    write: WriteFile,
    origin: str,
    behaviours: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
) -> None:
    # A proxy nobody runs: were it used, every call would fail naming it.
    monkeypatch.setenv(variable, f"http://127.0.0.1:{_free_port()}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    behaviours["/a"] = loopback.ok({"title": "direct"})
    assert call(write, origin, "a").output == {"title": "direct"}
    error = str(call(write, "https://weather.invalid", "a", extra=FAST_FAIL).error)
    assert "the host name 'weather.invalid' (port 443) could not be resolved" in error
    assert not INTERNALS.search(error), error
