"""A request that may have reached the server is never sent twice unless its method is idempotent.

A raw loopback server counts the whole requests it received, then breaks the
reply in one way or another.
"""

from __future__ import annotations

import socket

import pytest

from agentkit import Tool, ToolExecutor, ToolRegistry, ToolResult, load_tools
from tests.declarative.backends.http.test_faults import TOOL
from tests.declarative.conftest import WriteFile
from tests.support import rawserver
from tests.support.helpers import wait_until

RETRY = "    timeout: {read: 0.3, total: 10}\n    retry: {attempts: 3, backoff: 0.01}"

FAULTS = {
    "closed before a reply": (rawserver.close_before_reply, "connection closed before a reply"),
    "reset before a reply": (rawserver.reset_before_reply, "connection reset before a reply"),
    "malformed status line": (
        rawserver.malformed_status_line,
        "the reply broke HTTP framing: a malformed status line",
    ),
    "garbage instead of a reply": (
        rawserver.garbage_reply,
        "the reply broke HTTP framing: no status line (the reply does not start with 'HTTP/')",
    ),
    "closed mid-body": (
        rawserver.close_mid_body,
        "connection closed in the middle of the reply body",
    ),
    "no reply": (rawserver.silence, "timed out after 0.3 s waiting for a reply (timeout.read)"),
}


def load(write: WriteFile, origin: str, method: str, extra: str = RETRY) -> Tool:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(method=method, origin=origin, extra=extra)), registry=registry)
    return registry["probe"]


def run(tool: Tool) -> ToolResult:
    return ToolExecutor(credentials={}).execute(tool, {"path": "p"}, raise_on_failure=False)


@pytest.mark.parametrize("method", ["POST", "PATCH"])
@pytest.mark.parametrize(("reply", "what"), FAULTS.values(), ids=FAULTS.keys())
def test_a_non_idempotent_request_that_left_is_sent_once(
    write: WriteFile, method: str, reply: rawserver.Reply, what: str
) -> None:
    with rawserver.serve(reply) as server:
        result = run(load(write, server.origin, method))
        received = server.received
    assert received == 1
    message = str(result.error)
    assert f"{method} {server.origin}/p sent, {what}" in message
    assert message.endswith("; not retried (not idempotent)")


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
@pytest.mark.parametrize(("reply", "what"), FAULTS.values(), ids=FAULTS.keys())
def test_an_idempotent_request_is_retried_after_any_fault(
    write: WriteFile, method: str, reply: rawserver.Reply, what: str
) -> None:
    with rawserver.serve(reply, reply, rawserver.ok) as server:
        result = run(load(write, server.origin, method))
        received = server.received
    assert result.output == {"title": "fine"}
    assert received == 3


@pytest.mark.parametrize(("reply", "what"), FAULTS.values(), ids=FAULTS.keys())
def test_an_idempotent_request_reports_what_happened_after_the_last_attempt(
    write: WriteFile, reply: rawserver.Reply, what: str
) -> None:
    with rawserver.serve(reply) as server:
        result = run(load(write, server.origin, "GET"))
        received = server.received
    assert received == 3
    assert f"GET {server.origin}/p failed after 3 attempt(s): sent, {what}" in str(result.error)


def test_a_post_declared_safe_to_resend_is_retried(write: WriteFile) -> None:
    extra = RETRY.replace("backoff: 0.01", "backoff: 0.01, non_idempotent: true")
    with rawserver.serve(rawserver.close_before_reply, rawserver.ok) as server:
        result = run(load(write, server.origin, "POST", extra))
        received = server.received
    assert result.output == {"title": "fine"}
    assert received == 2


@pytest.mark.parametrize("method", ["POST", "PATCH", "GET"])
def test_a_request_that_never_left_is_retried_whatever_the_method(
    write: WriteFile, method: str
) -> None:
    # A port nobody listens on: every connect is refused, nothing is ever sent.
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    result = run(load(write, f"http://127.0.0.1:{port}", method))
    assert f"{method} http://127.0.0.1:{port}/p failed to connect after 3 attempt(s)" in str(
        result.error
    )


def test_a_post_on_a_keep_alive_connection_the_server_closed_is_sent_once(
    write: WriteFile,
) -> None:
    # The classic trap: the pooled connection died while idle. urllib3 sees it
    # dropped and dials anew; nothing is resent on the dead one.
    with rawserver.serve(rawserver.close_after(0.05), rawserver.ok) as server:
        tool = load(write, server.origin, "POST")
        first = run(tool)
        wait_until(lambda: server.closed == 1, "the server to close the idle connection")
        second = run(tool)
        received = server.received
    assert (first.output, second.output) == ({"title": "fine"}, {"title": "fine"})
    assert received == 2


@pytest.mark.parametrize(
    ("method", "received", "outcome"),
    [
        ("POST", 2, "sent, connection closed before a reply; not retried (not idempotent)"),
        ("GET", 3, None),
    ],
    ids=["post-not-resent", "get-resent"],
)
def test_a_keep_alive_connection_closed_while_the_request_arrives(
    write: WriteFile, method: str, received: int, outcome: str | None
) -> None:
    # The race urllib3 cannot see: the connection is open when checked, and
    # the server closes it on reading the request.
    with rawserver.serve(rawserver.ok, rawserver.close_before_reply, rawserver.ok) as server:
        tool = load(write, server.origin, method)
        assert run(tool).succeeded
        second = run(tool)
        count = server.received
    assert count == received
    if outcome is None:
        assert second.output == {"title": "fine"}
    else:
        assert outcome in str(second.error)


def test_urllib3_itself_never_retries() -> None:
    from agentkit.declarative.backends.http.transport import DeadlineAdapter

    retries = DeadlineAdapter().max_retries
    assert (retries.total, retries.read, retries.redirect) == (0, False, False)


@pytest.mark.parametrize(
    "reply",
    [rawserver.garbage_reply, rawserver.malformed_status_line],
    ids=["garbage", "status line"],
)
def test_a_malformed_reply_is_quoted_escaped(write: WriteFile, reply: rawserver.Reply) -> None:
    with rawserver.serve(reply) as server:
        message = str(run(load(write, server.origin, "POST")).error)
    assert "the reply broke HTTP framing: " in message
    assert "(BadStatusLine: '" in message
    assert not any(char in message for char in "\r\n\x00\xff")
