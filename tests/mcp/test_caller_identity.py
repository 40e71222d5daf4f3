"""Who a call over HTTP is made for: the token file's names, a trusted proxy's header."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

from agentkit.callers import ANONYMOUS
from agentkit.cli import main
from agentkit.mcp.http_security import CallerIdentity, StaticTokens
from agentkit.mcp.options import (
    BearerToken,
    parse_caller_header,
    parse_trusted_proxy,
    read_tokens,
)
from agentkit.toolerrors import SemanticError

TOKEN_A = "token-a-0123456789abcdefghij"
TOKEN_B = "token-b-0123456789abcdefghij"


def _ctx(peer: str, headers: dict[str, str], user: Any = None) -> Any:
    scope = {
        "type": "http",
        "client": (peer, 50000),
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers.items()],
    }
    if user is not None:
        scope["user"] = user
    return SimpleNamespace(request=SimpleNamespace(scope=scope))


def _user(token: str, tokens: list[str | BearerToken]) -> AuthenticatedUser:
    access = anyio.run(StaticTokens(tokens).verify_token, token)
    assert access is not None
    return AuthenticatedUser(access)


def test_the_token_file_names_callers_and_labels_the_rest(tmp_path: Path) -> None:
    file = tmp_path / "tokens"
    file.write_text(f"{TOKEN_A} toolsets=triage caller=triage-bot\n{TOKEN_B}\n")
    tokens = list(read_tokens(file=str(file)))
    assert tokens[0] == BearerToken(
        token=TOKEN_A, toolsets=frozenset({"triage"}), caller="triage-bot", where=f"{file}:1"
    )
    identify = CallerIdentity()
    named = identify(_ctx("127.0.0.1", {}, _user(TOKEN_A, tokens)))
    unnamed = identify(_ctx("127.0.0.1", {}, _user(TOKEN_B, tokens)))
    assert (named.name, named.via) == ("triage-bot", "token")
    assert (unnamed.name, unnamed.via) == ("token-2", "token")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param(f"{TOKEN_A} caller=", "caller=NAME", id="empty"),
        pytest.param(f"{TOKEN_A} caller=a caller=b", "each at most once", id="twice"),
        pytest.param(f"{TOKEN_A} owner=a", "nothing else", id="unknown"),
        pytest.param(f"{TOKEN_A} caller=-bad", "caller name '-bad'", id="bad-name"),
        pytest.param(f"{TOKEN_A} caller=a/b", "starting with a letter or digit", id="slash"),
    ],
)
def test_a_bad_caller_option_names_the_line_and_never_the_token(
    tmp_path: Path, line: str, message: str
) -> None:
    file = tmp_path / "tokens"
    file.write_text(line + "\n")
    with pytest.raises(SemanticError, match=f"{file}:1: .*{message}") as raised:
        read_tokens(file=str(file))
    assert TOKEN_A not in str(raised.value)


def test_a_trusted_proxys_header_names_the_caller_over_the_token() -> None:
    identify = CallerIdentity(header="x-forwarded-user", trusted_proxies=["10.0.0.0/8"])
    user = _user(TOKEN_A, [BearerToken(token=TOKEN_A, caller="proxy")])
    caller = identify(_ctx("10.1.2.3", {"X-Forwarded-User": "ada@example.com"}, user))
    assert (caller.name, caller.via) == ("ada@example.com", "proxy-header")
    assert identify(_ctx("10.1.2.3", {}, user)).name == "proxy"  # no header: the token's


def test_the_header_from_a_peer_not_trusted_is_ignored_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    identify = CallerIdentity(header="x-forwarded-user", trusted_proxies=["10.0.0.0/8"])
    with caplog.at_level(logging.WARNING, logger="agentkit.serve"):
        for peer in ("127.0.0.1", "192.0.2.7", "::1"):
            assert identify(_ctx(peer, {"X-Forwarded-User": "admin"})) is ANONYMOUS
    (warning,) = caplog.records
    assert "carried the x-forwarded-user header, ignored" in warning.getMessage()
    assert "admin" not in warning.getMessage()


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param([("x-forwarded-user", "a"), ("x-forwarded-user", "b")], id="twice"),
        pytest.param([("x-forwarded-user", "")], id="empty"),
        pytest.param([("x-forwarded-user", "x" * 200)], id="too-long"),
        pytest.param([("x-forwarded-user", "a b")], id="space"),
    ],
)
def test_a_header_that_cannot_name_one_caller_is_ignored(headers: list[tuple[str, str]]) -> None:
    identify = CallerIdentity(header="x-forwarded-user", trusted_proxies=["127.0.0.1"])
    ctx = _ctx("127.0.0.1", {})
    ctx.request.scope["headers"] = [(name.encode(), value.encode()) for name, value in headers]
    assert identify(ctx) is ANONYMOUS


def test_no_request_is_anonymous() -> None:
    assert CallerIdentity()(SimpleNamespace()) is ANONYMOUS
    assert CallerIdentity()(_ctx("127.0.0.1", {})) is ANONYMOUS


def test_the_options_parse_and_refuse() -> None:
    assert parse_caller_header("X-Forwarded-User") == "x-forwarded-user"
    assert parse_trusted_proxy("10.0.0.7/8") == "10.0.0.0/8"
    assert parse_trusted_proxy("::1") == "::1/128"
    with pytest.raises(SemanticError, match="belongs to the transport"):
        parse_caller_header("Authorization")
    with pytest.raises(SemanticError, match="expected a header name"):
        parse_caller_header("X User")
    with pytest.raises(SemanticError, match="expected an IP address or network"):
        parse_trusted_proxy("proxy.internal")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--http", "127.0.0.1:0", "--caller-header", "X-User"],
            "--caller-header x-user: honoured only from a --trusted-proxy peer",
            id="header-alone",
        ),
        pytest.param(
            ["--http", "127.0.0.1:0", "--trusted-proxy", "10.0.0.0/8"],
            "give --caller-header HEADER too",
            id="proxy-alone",
        ),
        pytest.param(
            ["--http", "127.0.0.1:0", "--caller-header", "X-User", "--trusted-proxy", "proxy"],
            "--trusted-proxy 'proxy': expected an IP address or network",
            id="proxy-by-name",
        ),
        pytest.param(
            ["--caller-header", "X-User", "--metrics"],
            "--caller-header, --metrics only apply with --http",
            id="stdio",
        ),
        pytest.param(["--audit-backups", "2"], "apply with --audit FILE", id="backups-alone"),
        pytest.param(
            ["--audit", "a.jsonl", "--audit-max-bytes", "0"],
            "expected a number of bytes (1 or more)",
            id="no-size",
        ),
    ],
)
def test_serve_refuses_identity_and_audit_options_it_cannot_honour(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--tools", "tools.d", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
