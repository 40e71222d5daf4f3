"""agentkit serve --http, end to end: a real server process, the SDK's streamable HTTP client."""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from mcp.shared.exceptions import MCPError

from agentkit.cli import main
from agentkit.mcp import HttpOptions, rebinding_refusal
from agentkit.mcp.http_serving import exposure_warnings
from agentkit.mcp.options import parse_address, parse_credential_header, read_tokens
from agentkit.toolerrors import SemanticError
from tests.support import loopback
from tests.support.serving import INITIALIZE, Served, open_session, post, serving, session

TOKEN = "transport-token-0123456789abcdef"
OTHER_TOKEN = "transport-token-second-fedcba98"
USER_A = "user-a-github-token-aaaaaaaa"
USER_B = "user-b-github-token-bbbbbbbb"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

# Answers with nothing secret: what it saw is kept on the side, for the test to read.
WHOAMI = """\
name: whoami
version: 1.0.0
description: Ask the upstream who the caller is.
credentials: [github-token]
input_schema: {parameters: [{name: n, type: integer, required: false}]}
output_schema: {parameters: [{name: ok, type: boolean}]}
backend:
  http:
    url: {origin}/whoami
    auth: {bearer: github-token}
    retry: {attempts: 1}
"""


class Upstream:
    """The loopback API the whoami tool calls; records each Authorization header it gets."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, handler: loopback.Handler) -> None:
        self.seen.append(handler.headers.get("Authorization", ""))
        handler.reply(200, {"ok": True})


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[str, Upstream]]:
    recorder = Upstream()
    with loopback.serve({"/whoami": recorder}) as origin:
        yield origin, recorder


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, upstream: tuple[str, Upstream]
) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("http")
    (folder / "whoami.yaml").write_text(WHOAMI.replace("{origin}", upstream[0]))
    tokens = folder / "tokens"
    tokens.write_text(f"# who may call\n{TOKEN}\n\n{OTHER_TOKEN}\n")
    args = [
        "--tools", "tools.d", "--tools", str(folder),
        "--auth-token-file", str(tokens),
        "--credential-header", "X-GitHub-Token=github-token",
        "--max-request-bytes", "65536",
        "--allowed-host", "tools.example.com:*",
        "--allowed-host", "API.example.com",
        "--allowed-origin", "https://app.example.com",
    ]  # fmt: skip
    with serving(args) as served:
        yield served


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def _calls(
    url: str, headers: dict[str, str], *calls: tuple[str, dict[str, Any]]
) -> list[Any]:
    with anyio.fail_after(60):
        async with session(url, headers) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]


# -- the protocol --------------------------------------------------------------------------------


def test_tools_list_over_http(server: Served) -> None:
    async def listed() -> Any:
        with anyio.fail_after(60):
            async with session(server.url, AUTH) as client:
                return await client.list_tools()

    names = {tool.name for tool in anyio.run(listed).tools}
    assert {"text_stats", "fetch_weather", "whoami"} <= names


def test_a_call_returns_structured_content_and_utf8_json_text(server: Served) -> None:
    [result] = anyio.run(_calls, server.url, AUTH, ("text_stats", {"text": "Zürich. Café!"}))
    assert result.is_error is False
    assert result.structured_content["words"] == 2
    assert "Zürich".lower() in result.content[0].text  # UTF-8 as it is, not \\u-escaped
    assert json.loads(result.content[0].text) == result.structured_content


def test_a_failed_call_is_an_error_result(server: Served) -> None:
    [result] = anyio.run(_calls, server.url, AUTH, ("text_stats", {"text": "x", "top": 99}))
    assert result.is_error is True
    assert "Parameter 'top': expected a value of at most 20, got 99" in result.content[0].text


# -- transport auth ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-token"),
        pytest.param({"Authorization": "Bearer wrong-token-0123456789abcdef"}, id="wrong-token"),
        pytest.param({"Authorization": f"Bearer {TOKEN[:-1]}"}, id="a-prefix-of-the-token"),
        pytest.param({"Authorization": f"Basic {TOKEN}"}, id="not-bearer"),
        pytest.param({"X-GitHub-Token": TOKEN}, id="token-in-another-header"),
    ],
)
def test_a_request_without_a_valid_token_is_refused_with_401(
    server: Served, headers: dict[str, str]
) -> None:
    status, answer_headers, body = post(server.url, INITIALIZE, headers)
    assert status == 401
    assert answer_headers["www-authenticate"].startswith("Bearer ")
    assert json.loads(body)["error"] == "invalid_token"


@pytest.mark.parametrize("token", [TOKEN, OTHER_TOKEN], ids=["first", "second"])
def test_each_configured_token_is_accepted(server: Served, token: str) -> None:
    status, _, _ = post(server.url, INITIALIZE, {"Authorization": f"Bearer {token}"})
    assert status == 200


def test_a_session_belongs_to_the_token_that_opened_it(server: Served) -> None:
    status, headers, _ = post(server.url, INITIALIZE, AUTH)
    assert status == 200
    session_id = {name.lower(): value for name, value in headers.items()}["mcp-session-id"]
    listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()
    other = {"Authorization": f"Bearer {OTHER_TOKEN}", "Mcp-Session-Id": session_id}
    assert post(server.url, listing, {**other, "MCP-Protocol-Version": "2025-06-18"})[0] == 404


def test_the_sdk_client_without_the_token_cannot_connect(server: Served) -> None:
    async def connect() -> None:
        with anyio.fail_after(60):
            async with session(server.url):
                pass

    with pytest.raises(BaseException) as info:  # noqa: PT011 -- an exception group, read below
        anyio.run(connect)
    # The SDK reports the refusal as a failed request; the status is the raw tests' business.
    assert any(isinstance(leaf, MCPError) for leaf in _leaves(info.value))


def _leaves(error: BaseException) -> list[BaseException]:
    # An exception group (BaseExceptionGroup is a builtin from Python 3.11 on).
    inner: tuple[BaseException, ...] = getattr(error, "exceptions", ())
    return [leaf for one in inner for leaf in _leaves(one)] if inner else [error]


def test_health_and_readiness_need_no_token(server: Served) -> None:
    assert _get(server.origin + "/healthz") == (200, {"status": "alive"})
    status, body = _get(server.origin + "/readyz")
    assert status == 200
    assert body["status"] == "ready"
    assert body["tools"] >= 6


# -- DNS rebinding and size ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        pytest.param({"Host": "attacker.example"}, 421, id="foreign-host"),
        pytest.param({"Host": "127.0.0.1:evil.com"}, 421, id="port-not-digits"),
        pytest.param({"Host": "api.example.com:8443"}, 421, id="allowed-host-other-port"),
        pytest.param({"Origin": "http://attacker.example"}, 403, id="foreign-origin"),
        pytest.param({"Origin": "http://127.0.0.1:1.evil.com"}, 403, id="origin-port-not-digits"),
        pytest.param({"Origin": "https://app.example.com:8443"}, 403, id="origin-other-port"),
        pytest.param({"Origin": "http://app.example.com"}, 403, id="origin-other-scheme"),
    ],
)
def test_dns_rebinding_protection_refuses_foreign_hosts_and_origins(
    server: Served, headers: dict[str, str], status: int
) -> None:
    answer, _, body = post(server.url, INITIALIZE, {**AUTH, **headers})
    assert answer == status
    assert ("--allowed-host NAME" in body) == (status == 421)


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"Host": "tools.example.com:8443"}, id="allowed-host-any-port"),
        pytest.param({"Host": "TOOLS.Example.COM"}, id="allowed-host-any-case"),
        pytest.param({"Host": "api.example.com:443"}, id="allowed-host-default-port"),
        pytest.param({"Host": "Api.Example.com"}, id="allowed-host-given-in-capitals"),
        pytest.param({"Host": "localhost"}, id="loopback-without-port"),
        pytest.param({"Origin": "https://app.example.com"}, id="allowed-origin"),
        pytest.param({"Origin": "HTTPS://APP.example.com:443"}, id="allowed-origin-normalised"),
    ],
)
def test_allowed_hosts_and_origins_are_let_through(server: Served, headers: dict[str, str]) -> None:
    answer, _, _ = post(server.url, INITIALIZE, {**AUTH, **headers})
    assert answer == 200


@pytest.mark.parametrize(
    ("host", "origin", "status"),
    [
        pytest.param("127.0.0.1:8000", None, None, id="loopback"),
        pytest.param("[::1]:80", "http://[::1]:3000", None, id="ipv6-loopback"),
        pytest.param("LOCALHOST:8000", "http://LocalHost:3000", None, id="loopback-any-case"),
        pytest.param("localhost", "http://localhost", None, id="loopback-default-port"),
        pytest.param("tools.example.com", "", None, id="empty-origin-is-none"),
        pytest.param("tools.example.com:80", "https://app.example.com:443", None, id="defaults"),
        pytest.param(None, None, 421, id="no-host"),
        pytest.param("", None, 421, id="empty-host"),
        pytest.param("localhost.", None, 421, id="trailing-dot"),
        pytest.param("127.0.0.1:evil.com", None, 421, id="host-port-not-digits"),
        pytest.param("127.0.0.1:99999", None, 421, id="host-port-out-of-range"),
        pytest.param("127.0.0.1:\u0661", None, 421, id="host-port-arabic-digit"),
        pytest.param("tools.example.com:8443", None, 421, id="host-other-port"),
        pytest.param("evil.com", None, 421, id="foreign-host"),
        pytest.param("::1:8000", None, 421, id="ipv6-without-brackets"),
        pytest.param("127.0.0.1", "null", 403, id="origin-null"),
        pytest.param("127.0.0.1", "https://localhost", 403, id="origin-loopback-https"),
        pytest.param("127.0.0.1", "http://127.0.0.1:80.evil.com", 403, id="origin-port-suffix"),
        pytest.param("127.0.0.1", "https://app.example.com/", 403, id="origin-with-path"),
        pytest.param("127.0.0.1", "http://app.example.com", 403, id="origin-other-scheme"),
    ],
)
def test_host_and_origin_compare_as_names_and_ports(
    host: str | None, origin: str | None, status: int | None
) -> None:
    refused = rebinding_refusal(
        host,
        origin,
        allowed_hosts=["tools.example.com"],
        allowed_origins=["https://app.example.com"],
    )
    assert (refused[0] if refused else None) == status


def test_a_request_body_over_the_cap_is_refused_with_413(server: Served) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "text_stats", "arguments": {"text": "x" * 100_000}},
    }
    status, _, _ = post(server.url, call, AUTH)
    assert status == 413


# -- per-user credentials ------------------------------------------------------------------------


def test_each_user_s_own_token_reaches_the_upstream_and_the_transport_token_never_does(
    server: Served, upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]
    recorder.seen.clear()

    async def both() -> list[Any]:
        found: list[Any] = []

        async def one(user: str) -> None:
            found.extend(
                await _calls(
                    server.url,
                    {**AUTH, "X-GitHub-Token": user},
                    *[("whoami", {"n": i}) for i in range(3)],
                )
            )

        async with anyio.create_task_group() as group:
            group.start_soon(one, USER_A)
            group.start_soon(one, USER_B)
        return found

    results = anyio.run(both)
    assert all(not result.is_error for result in results)
    assert sorted(recorder.seen) == [f"Bearer {USER_A}"] * 3 + [f"Bearer {USER_B}"] * 3
    assert not any(TOKEN in seen for seen in recorder.seen)


def test_a_call_without_the_header_fails_naming_where_it_looked(server: Served) -> None:
    [result] = anyio.run(_calls, server.url, AUTH, ("whoami", {}))
    assert result.is_error is True
    assert "github-token" in result.content[0].text
    assert "request header x-github-token" in result.content[0].text


def test_no_token_or_user_credential_reaches_the_server_log(server: Served) -> None:
    anyio.run(_calls, server.url, {**AUTH, "X-GitHub-Token": USER_A}, ("whoami", {}))
    for secret in (TOKEN, OTHER_TOKEN, USER_A, USER_B):
        assert secret not in server.stderr


def _raw_call(url: str, headers: list[tuple[str, str]], session: dict[str, str]) -> str:
    """A tools/call with ``headers`` sent as given, a name repeated if it is: its body."""
    parts = urllib.parse.urlsplit(url)
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "whoami", "arguments": {}}}  # fmt: skip
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    try:
        connection.putrequest("POST", parts.path)
        sent = [*session.items(), ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"), *headers]  # fmt: skip
        body = json.dumps(message).encode()
        for name, value in [*sent, ("Content-Length", str(len(body)))]:
            connection.putheader(name, value)
        connection.endheaders(body)
        return connection.getresponse().read().decode()
    finally:
        connection.close()


@pytest.mark.parametrize(
    "values",
    [
        pytest.param([USER_A, USER_B], id="two-users"),
        pytest.param([USER_A, USER_A], id="the-same-twice"),
        pytest.param(["", USER_A], id="an-empty-one-first"),
    ],
)
def test_a_credential_header_sent_twice_fails_the_call_naming_it(
    server: Served, upstream: tuple[str, Upstream], values: list[str]
) -> None:
    upstream[1].seen.clear()
    session = open_session(server.url, AUTH)
    body = _raw_call(server.url, [("X-GitHub-Token", value) for value in values], session)
    assert '"isError":true' in body
    assert "the request header x-github-token was sent 2 times" in body
    assert USER_A not in body
    assert USER_B not in body
    assert upstream[1].seen == []  # nothing was sent upstream


OPERATOR = "operator-own-github-token-0000"


@pytest.fixture(scope="module")
def whoami_folder(tmp_path_factory: pytest.TempPathFactory, upstream: tuple[str, Upstream]) -> Path:
    folder = tmp_path_factory.mktemp("whoami")
    (folder / "whoami.yaml").write_text(WHOAMI.replace("{origin}", upstream[0]))
    return folder


@pytest.fixture(scope="module")
def required_server(whoami_folder: Path) -> Iterator[Served]:
    # The operator's own value is in the environment: it must not be used.
    args = ["--tools", str(whoami_folder), "--credential-header", "X-GitHub-Token=github-token",
            "--require-credential-headers"]  # fmt: skip
    with serving(args, env={"GITHUB_TOKEN": OPERATOR}) as served:
        yield served


@pytest.mark.parametrize(
    "headers",
    [pytest.param({}, id="no-header"), pytest.param({"X-GitHub-Token": ""}, id="empty")],
)
def test_a_required_credential_header_missing_fails_the_call_naming_it(
    required_server: Served, upstream: tuple[str, Upstream], headers: dict[str, str]
) -> None:
    upstream[1].seen.clear()
    [result] = anyio.run(_calls, required_server.url, headers, ("whoami", {}))
    assert result.is_error is True
    text = result.content[0].text
    assert "the request has no request header x-github-token" in text
    assert "--require-credential-headers" in text
    assert OPERATOR not in text
    assert upstream[1].seen == []


def test_a_required_credential_header_given_is_used(
    required_server: Served, upstream: tuple[str, Upstream]
) -> None:
    upstream[1].seen.clear()
    headers = {"X-GitHub-Token": USER_A}
    [result] = anyio.run(_calls, required_server.url, headers, ("whoami", {}))
    assert result.is_error is False
    assert upstream[1].seen == [f"Bearer {USER_A}"]
    assert "also resolves from" not in required_server.stderr  # required: no fallback to warn of


def test_a_header_mapped_credential_the_server_also_has_is_a_warning_and_the_fallback(
    whoami_folder: Path, upstream: tuple[str, Upstream]
) -> None:
    args = ["--tools", str(whoami_folder), "--credential-header", "X-GitHub-Token=github-token"]
    upstream[1].seen.clear()
    with serving(args, env={"GITHUB_TOKEN": OPERATOR}) as served:
        [result] = anyio.run(_calls, served.url, {"X-GitHub-Token": ""}, ("whoami", {}))
        stderr = served.stderr
    assert (
        "warning: --credential-header x-github-token=github-token: 'github-token' also "
        "resolves from environment variable GITHUB_TOKEN, so a call without the "
        "x-github-token header runs with the server's own value; "
        "--require-credential-headers makes such a call fail instead"
    ) in stderr
    assert OPERATOR not in stderr
    assert result.is_error is False  # the documented fallback, now said at start
    assert upstream[1].seen == [f"Bearer {OPERATOR}"]


# -- stateless -----------------------------------------------------------------------------------


def test_stateless_mode_answers_each_request_on_its_own() -> None:
    with serving(["--tools", "tools.d", "--stateless"]) as served:
        status, headers, _ = post(served.url, INITIALIZE, {})
        assert status == 200
        assert "mcp-session-id" not in {name.lower() for name in headers}
        [result] = anyio.run(_calls, served.url, {}, ("text_stats", {"text": "One. Two."}))
    assert result.structured_content["sentences"] == 2


# -- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("127.0.0.1:8080", ("127.0.0.1", 8080), id="host-port"),
        pytest.param(":9000", ("127.0.0.1", 9000), id="port-only"),
        pytest.param("0.0.0.0", ("0.0.0.0", 8000), id="host-only"),
        pytest.param("[::1]:8001", ("::1", 8001), id="ipv6"),
        pytest.param("localhost:0", ("localhost", 0), id="any-port"),
    ],
)
def test_parse_address(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "host:http", "the port must be a number from 0 to 65535, got 'http'", id="name"
        ),
        pytest.param("host:70000", "got '70000'", id="too-big"),
        pytest.param("[::1:80", "closing ']'", id="unclosed"),
        pytest.param("host:\u00b2", "got '\u00b2'", id="superscript-digit"),
        pytest.param("host:\u0661\u0662", "got '\u0661\u0662'", id="arabic-digits"),
    ],
)
def test_parse_address_refuses(text: str, message: str) -> None:
    with pytest.raises(SemanticError, match=message.replace("(", r"\(")):
        parse_address(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("X-Token", "takes HEADER=CREDENTIAL", id="no-equals"),
        pytest.param("=github-token", "takes HEADER=CREDENTIAL", id="no-header"),
        pytest.param("X Token=t", "letters, digits", id="space"),
        pytest.param("Authorization=github-token", "belongs to the transport", id="authorization"),
        pytest.param("cookie=github-token", "belongs to the transport", id="cookie"),
    ],
)
def test_parse_credential_header_refuses(text: str, message: str) -> None:
    with pytest.raises(SemanticError, match=message):
        parse_credential_header(text)


def test_read_tokens_names_the_line_of_a_bad_token_never_its_text(tmp_path: Path) -> None:
    file = tmp_path / "tokens"
    file.write_text(f"{TOKEN}\nshort-secret\n")
    with pytest.raises(SemanticError, match=r"tokens:2: a bearer token needs at least 16") as info:
        read_tokens(file=str(file))
    assert "short-secret" not in str(info.value)


def test_read_tokens_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVE_TOKENS", f"{TOKEN}, {OTHER_TOKEN}")
    assert read_tokens(env="SERVE_TOKENS") == (TOKEN, OTHER_TOKEN)
    monkeypatch.delenv("SERVE_TOKENS")
    with pytest.raises(SemanticError, match="SERVE_TOKENS: the environment variable is not set"):
        read_tokens(env="SERVE_TOKENS")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--stateless"], "--stateless only applies with --http", id="stateless-on-stdio"
        ),
        pytest.param(
            ["--credential-header", "X-A=a", "--stateless"],
            "--stateless, --credential-header only apply with --http",
            id="two-on-stdio",
        ),
        pytest.param(["--http", "--path", "mcp"], "--path 'mcp': expected a path", id="path"),
        pytest.param(
            ["--http", "--path", "/healthz"], "/healthz, /readyz answer health", id="path-taken"
        ),
        pytest.param(["--http", "--path", "/mcp/../x"], "'.' and '..' segments", id="path-dot-dot"),
        pytest.param(["--http", "--path", "/mcp/./x"], "'.' and '..' segments", id="path-dot"),
        pytest.param(["--http", "--path", "/x/.."], "'.' and '..' segments", id="path-trailing"),
        pytest.param(
            ["--http", "--allowed-origin", "app.example.com"],
            "--allowed-origin 'app.example.com': expected an origin as browsers send it",
            id="origin-without-scheme",
        ),
        pytest.param(
            ["--http", "--allowed-origin", "https://app.example.com/"],
            "expected an origin",
            id="origin-with-path",
        ),
        pytest.param(
            ["--http", "--allowed-host", "tools.example.com:port"],
            "--allowed-host 'tools.example.com:port': expected HOST, HOST:PORT or HOST:*",
            id="host-port",
        ),
        pytest.param(
            ["--http", "--allowed-host", "tools.example.com:\u00b2"],
            "expected HOST, HOST:PORT or HOST:*",
            id="host-port-not-ascii",
        ),
        pytest.param(
            ["--http", "nowhere.invalid:0"],
            "the host is not an address of this machine",
            id="unknown-host",
        ),
        pytest.param(["--http", "127.0.0.1:x"], "the port must be a number", id="bad-port"),
        pytest.param(
            ["--http", "--call-timeout", "0"], "--call-timeout takes a positive", id="timeout"
        ),
        pytest.param(
            ["--http", "--credential-header", "X-A=a", "--credential-header", "x-a=b"],
            "--credential-header 'x-a=b': the header x-a is already mapped by "
            "--credential-header 'X-A=a'; map each header once",
            id="header-mapped-twice",
        ),
        pytest.param(
            ["--require-credential-headers"],
            "--require-credential-headers only applies with --http",
            id="require-without-http",
        ),
        pytest.param(
            ["--http", "--auth-token-file", "/nonexistent/tokens"],
            "Cannot read the token file /nonexistent/tokens",
            id="no-token-file",
        ),
    ],
)
def test_serve_usage_errors_exit_2_without_a_traceback(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--tools", "tools.d", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param(HttpOptions(host="127.0.0.1"), [], id="loopback"),
        pytest.param(HttpOptions(host="::1"), [], id="ipv6-loopback"),
        pytest.param(
            HttpOptions(host="0.0.0.0", tokens=(TOKEN,)), ["without --allowed-host"], id="no-host"
        ),
        pytest.param(
            HttpOptions(host="0.0.0.0", allowed_hosts=("tools.example.com",)),
            ["without --auth-token-file"],
            id="no-token",
        ),
        pytest.param(
            HttpOptions(host="10.1.2.3", tokens=(TOKEN,), allowed_hosts=("tools.example.com",)),
            [],
            id="both-given",
        ),
    ],
)
def test_a_server_reachable_from_elsewhere_warns_of_what_it_lacks(
    options: HttpOptions, expected: list[str]
) -> None:
    warnings = exposure_warnings(options)
    assert len(warnings) == len(expected)
    for warning, words in zip(warnings, expected, strict=True):
        assert words in warning
    if expected == ["without --allowed-host"]:
        assert "add --allowed-host NAME" in warnings[0]


def test_a_token_file_with_a_byte_order_mark_is_read_past_it(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_bytes(b"\xef\xbb\xbf" + f"{TOKEN}\r\n{OTHER_TOKEN}\r\n".encode())
    assert read_tokens(file=str(tokens)) == (TOKEN, OTHER_TOKEN)


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_token_file_must_be_a_regular_file(tmp_path: Path, kind: str) -> None:
    tokens = tmp_path / "tokens"
    if kind == "fifo":
        os.mkfifo(tokens)  # nobody writes to it: opening must not wait
    else:
        tokens.mkdir()
    with pytest.raises(SemanticError, match=f"the token file {tokens}: not a regular file"):
        read_tokens(file=str(tokens))


def test_a_credential_header_naming_no_tool_s_credential_is_a_warning_with_a_hint(
    tmp_path: Path,
) -> None:
    (tmp_path / "whoami.yaml").write_text(WHOAMI.replace("{origin}", "http://127.0.0.1:9"))
    args = ["--tools", str(tmp_path), "--credential-header", "X-Token=github-tokn"]
    with serving(args) as served:
        assert (
            "warning: --credential-header x-token=github-tokn: no tool takes the credential "
            "'github-tokn' (did you mean 'github-token'?), so the header never reaches a tool"
        ) in served.stderr
