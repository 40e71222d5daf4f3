"""A token endpoint whose reply breaks HTTP itself: the token never shows.

urllib3 and http.client quote the bytes they choke on (``InvalidChunkLength(got
length b'{"access_token": ...'``, ``BadStatusLine('{"access_token": ...')``), and
urllib3 logs a header line it cannot parse with its text. A raw-socket token
endpoint on 127.0.0.1 sends each broken reply below, its tokens inside, to a
declarative tool with ``auth: {oauth2: ...}``; the tokens are in none of the
call's error (its text, chain, traceback, ``logging.exception``), its events,
the log records made meanwhile, ``agentkit call``'s output or the MCP
``isError`` text, and the error says what broke in words of its own.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import requests

from agentkit import ToolEvent
from agentkit.declarative.backends.http.oauth2 import ClientCredentials, OAuth2Error
from tests.declarative.backends.http.test_oauth2_replies import (
    CLIENT_ID,
    SECRET,
    SOURCE,
    TOOL,
    call_get_item,
    everything_shown,
)
from tests.support import rawserver
from tests.support.leaks import chain_text, leaked, logged_exception

ROOT = Path(__file__).resolve().parents[4]
#: Not shaped like a token on purpose (no digit, one case): only the mechanism hides it.
TOKEN = "plainlowercaseaccesstokenvalue"
REFRESH = "RT-9f8e7d6c5b4a-refresh"
JSON_REPLY = json.dumps(
    {"access_token": TOKEN, "refresh_token": REFRESH, "token_type": "bearer", "expires_in": 60}
).encode()
FORM_REPLY = f"access_token={TOKEN}&refresh_token={REFRESH}&token_type=bearer".encode()


def _head(status: bytes, *headers: bytes) -> bytes:
    return b"HTTP/1.1 " + status + b"\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n"


def _framings(body: bytes) -> dict[str, tuple[bytes, str]]:
    """Each broken reply carrying ``body``, and what the error says of it."""
    bad_chunks = "the reply broke HTTP framing: a bad chunk size in its chunked body"
    return {
        "chunked-but-unframed": (
            _head(b"200 OK", b"Transfer-Encoding: chunked") + body + b"\r\n",
            bad_chunks,
        ),
        "bad-chunk-size-mid-body": (
            _head(b"200 OK", b"Transfer-Encoding: chunked")
            + b"5\r\n"
            + body[:5]
            + b"\r\nzz"
            + body
            + b"\r\n0\r\n\r\n",
            bad_chunks,
        ),
        "no-status-line": (
            body + b"\r\n\r\n",
            "the reply broke HTTP framing: no status line (the reply does not start with 'HTTP/')",
        ),
        "garbled-status-line": (
            b"HTTP/1.1 2OO " + body + b"\r\n\r\n",
            "the reply broke HTTP framing: a malformed status line",
        ),
        "status-line-over-the-limit": (
            b"HTTP/1.1 200 " + body * (70_000 // len(body) + 1) + b"\r\n\r\n",
            "the reply broke HTTP framing: a status or header line over",
        ),
        "unknown-http-version": (
            b"HTTP/7.3 200 " + body + b"\r\n\r\n",
            "the reply broke HTTP framing: a malformed reply (UnknownProtocol)",
        ),
        "over-100-headers": (
            _head(b"200 OK", *(b"X-T-%d: " % n + body[:60] for n in range(120))) + body,
            "the reply broke HTTP framing: a malformed reply (HTTPException)",
        ),
        "body-cut-short": (
            _head(b"200 OK", b"Content-Length: %d" % (len(body) + 50)) + body,
            "connection closed in the middle of the reply body",
        ),
        "deflate-declared-plain-body": (
            _head(b"200 OK", b"Content-Encoding: deflate", b"Content-Length: %d" % len(body))
            + body,
            "the reply body does not decode as its Content-Encoding says",
        ),
        "gzip-declared-plain-body": (
            _head(b"200 OK", b"Content-Encoding: gzip", b"Content-Length: %d" % len(body)) + body,
            "the reply body does not decode as its Content-Encoding says",
        ),
        "gzip-whose-inside-is-cut": (
            # A cut gzip stream decodes to the bytes so far: no framing error, and
            # what did arrive is described, not quoted.
            _head(b"200 OK", b"Content-Encoding: gzip", b"Content-Length: 40")
            + gzip.compress(body)[:40],
            "HTTP 200: the reply is not a JSON object",
        ),
    }


BY_NAME = {
    f"{spelling}-{name}": broken
    for spelling, body in (("json", JSON_REPLY), ("form", FORM_REPLY))
    for name, broken in _framings(body).items()
}
FRAMINGS = [pytest.param(*broken, id=name) for name, broken in BY_NAME.items()]


def _some(*names: str) -> list[Any]:
    return [pytest.param(*BY_NAME[name], id=name) for name in names]


def _send(reply: bytes) -> rawserver.Reply:
    def answer(conn: socket.socket, stop: threading.Event) -> bool:
        conn.sendall(reply)
        return False  # and close: some of these replies end only at the close

    return answer


def _folder(tmp_path: Path, api: str, token_url: str) -> Path:
    (tmp_path / "source.yaml").write_text(SOURCE.format(api=api, token_url=token_url))
    (tmp_path / "tools.yaml").write_text(TOOL)
    return tmp_path


def _seen(result: Any, events: list[ToolEvent], logs: str) -> str:
    return everything_shown(result, events) + "\n" + logs


@pytest.mark.parametrize(("reply", "said"), FRAMINGS)
def test_a_reply_breaking_http_framing_never_shows_a_token(
    tmp_path: Path, oauth2_api: str, caplog: pytest.LogCaptureFixture, reply: bytes, said: str
) -> None:
    with rawserver.serve(_send(reply)) as endpoint, caplog.at_level(logging.DEBUG):
        result, events = call_get_item(_folder(tmp_path, oauth2_api, endpoint.origin + "/token"))
    assert not result.succeeded
    message = str(result.error)
    assert f"OAuth2 token request to {endpoint.origin}/token: {said}" in message, message
    assert "as it may hold a token" in message
    assert leaked(_seen(result, events, caplog.text), [TOKEN, REFRESH, SECRET]) == []


@pytest.mark.parametrize("body", [JSON_REPLY, FORM_REPLY], ids=["json", "form"])
def test_urllib3s_warning_of_an_unparsable_header_never_logs_a_token(
    tmp_path: Path, oauth2_api: str, caplog: pytest.LogCaptureFixture, body: bytes
) -> None:
    # A header line without a colon: http.client keeps going, urllib3 logs the line.
    reply = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + b"X-Echo "
        + body
        + b"\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body
    )
    with rawserver.serve(_send(reply)) as endpoint, caplog.at_level(logging.DEBUG):
        result, events = call_get_item(_folder(tmp_path, oauth2_api, endpoint.origin + "/token"))
    warned = [r for r in caplog.records if r.getMessage().startswith("Failed to parse headers")]
    assert warned, "urllib3 no longer warns of such a header: this test proves nothing"
    assert "HeaderParsingError: not shown" in warned[0].getMessage()
    assert warned[0].exc_info is None
    assert leaked(_seen(result, events, caplog.text), [TOKEN, REFRESH, SECRET]) == []


@pytest.mark.parametrize(
    ("reply", "said"),
    _some("json-chunked-but-unframed", "form-bad-chunk-size-mid-body", "json-no-status-line"),
)
def test_with_a_plain_requests_session_too(reply: bytes, said: str) -> None:
    # The grant used on its own, with a session that is not the backend's.
    with rawserver.serve(_send(reply)) as endpoint, requests.Session() as session:
        grant = ClientCredentials(token_url=endpoint.origin + "/token")
        with pytest.raises(OAuth2Error) as caught:
            grant.token(CLIENT_ID, SECRET, deadline=_soon(), session=session)
    assert said in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    text = chain_text(caught.value) + logged_exception(caught.value)
    assert leaked(text, [TOKEN, REFRESH, SECRET]) == []


def _soon() -> float:
    return time.monotonic() + 10


def _clean_env(**extra: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "LANG": "C.UTF-8", **extra}


@pytest.mark.parametrize(
    ("reply", "said"),
    _some("json-chunked-but-unframed", "json-garbled-status-line", "form-no-status-line"),
)
def test_agentkit_call_prints_no_token(
    tmp_path: Path, oauth2_api: str, reply: bytes, said: str
) -> None:
    with rawserver.serve(_send(reply)) as endpoint:
        folder = _folder(tmp_path, oauth2_api, endpoint.origin + "/token")
        done = subprocess.run(
            [sys.executable, "-m", "agentkit", "call", "--tools", str(folder), "get_item"],
            env=_clean_env(CLIENT_ID=CLIENT_ID, CLIENT_SECRET=SECRET),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert said in done.stdout
    assert leaked(done.stdout + done.stderr, [TOKEN, REFRESH, SECRET]) == []


async def _mcp_call(folder: Path) -> Any:
    from tests.support.serving import stdio_session

    env = _clean_env(CLIENT_ID=CLIENT_ID, CLIENT_SECRET=SECRET)
    with anyio.fail_after(60):
        async with stdio_session(["--tools", str(folder)], env) as client:
            return await client.call_tool("get_item", {})


def test_the_mcp_error_result_shows_no_token(tmp_path: Path, oauth2_api: str) -> None:
    pytest.importorskip("mcp")
    reply, said = BY_NAME["json-bad-chunk-size-mid-body"]
    with rawserver.serve(_send(reply)) as endpoint:
        answer = anyio.run(_mcp_call, _folder(tmp_path, oauth2_api, endpoint.origin + "/token"))
    assert answer.is_error is True
    text = json.dumps(answer.model_dump(mode="json"), ensure_ascii=False)
    assert said in text
    assert leaked(text, [TOKEN, REFRESH, SECRET]) == []
