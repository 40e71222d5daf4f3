"""``auth: {oauth2: ...}`` on a source, against a real token endpoint and API on 127.0.0.1.

The token is fetched once and shared by the tools of the source, fetched again
when it expires, refreshed once on a 401, and neither it nor the client secret
shows up in any output, error or event.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit import (
    DefinitionError,
    SecretInOutputError,
    Tool,
    ToolEvent,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    load_tools,
)
from tests.declarative.backends.http.token_endpoint import Reply, TokenEndpoint, serving
from tests.support import loopback
from tests.support.leaks import SECRETS, chain_text, leaked

CLIENT_ID = "agent-7-client"
SECRET = SECRETS[1]

SOURCE = """\
source: api
base_url: {api}
credentials: [client-id, client-secret]
auth:
  oauth2:
    token_url: {token_url}
    client_id: client-id
    client_secret: client-secret
    scopes: [items.read]
timeout: {{total: 10}}
retry: {{attempts: 1}}
"""
TOOLS = """\
name: get_item
version: 1.0.0
output_schema:
  parameters:
    - {name: seen, type: string}
backend:
  http: {source: api, path: /items/1}
---
name: list_items
version: 1.0.0
output_schema:
  parameters:
    - {name: seen, type: string}
backend:
  http: {source: api, path: /items}
"""


class Api:
    """The API: accepts the bearer tokens in ``valid`` and echoes what it was sent."""

    def __init__(self) -> None:
        self.valid: set[str] = set()
        self.seen: list[str] = []
        self.lock = threading.Lock()

    def behave(self, handler: loopback.Handler) -> None:
        sent = handler.headers.get("Authorization", "")
        with self.lock:
            self.seen.append(sent)
            accepted = sent in {f"Bearer {token}" for token in self.valid}
        if accepted:
            handler.reply(200, {"seen": sent})
        else:  # an API that echoes the refused header in its error body
            handler.reply(401, {"error": f"token refused: {sent}"})


@pytest.fixture
def endpoint() -> Iterator[TokenEndpoint]:
    with serving() as state:
        yield state


@pytest.fixture
def api() -> Iterator[tuple[Api, str]]:
    state = Api()
    with loopback.serve({"/items/1": state.behave, "/items": state.behave}) as origin:
        yield state, origin


@pytest.fixture
def registry(tmp_path: Path, endpoint: TokenEndpoint, api: tuple[Api, str]) -> ToolRegistry:
    (tmp_path / "source.yaml").write_text(SOURCE.format(api=api[1], token_url=endpoint.url))
    (tmp_path / "tools.yaml").write_text(TOOLS)
    registry = ToolRegistry()
    load_tools(tmp_path, registry=registry)
    return registry


def executor(events: list[ToolEvent] | None = None) -> ToolExecutor:
    return ToolExecutor(
        credentials={"client-id": CLIENT_ID, "client-secret": SECRET},
        listeners=[events.append] if events is not None else [],
    )


def test_one_token_is_shared_by_the_tools_of_a_source(
    registry: ToolRegistry, endpoint: TokenEndpoint, api: tuple[Api, str]
) -> None:
    api[0].valid = {"token-1"}
    run = executor()
    for name in ("get_item", "list_items", "get_item"):
        assert run.execute(registry[name], {}).succeeded
    assert endpoint.count == 1
    assert endpoint.seen[0].form == {"grant_type": "client_credentials", "scope": "items.read"}
    assert api[0].seen == ["Bearer token-1"] * 3


def test_concurrent_calls_fetch_one_token(
    registry: ToolRegistry, endpoint: TokenEndpoint, api: tuple[Api, str]
) -> None:
    api[0].valid = {"token-1"}
    calls: list[tuple[Tool, dict[str, Any]]] = [
        (registry["get_item" if i % 2 else "list_items"], {}) for i in range(8)
    ]
    results = executor().execute_many(calls)
    assert all(result.succeeded for result in results)
    assert endpoint.count == 1


def test_an_expired_token_is_fetched_again(
    registry: ToolRegistry, endpoint: TokenEndpoint, api: tuple[Api, str]
) -> None:
    endpoint.issue("token-1", "token-2", expires_in=0)  # stale as soon as it arrives
    api[0].valid = {"token-1", "token-2"}
    run = executor()
    assert run.execute(registry["get_item"], {}).succeeded
    assert run.execute(registry["get_item"], {}).succeeded
    assert endpoint.count == 2
    assert api[0].seen == ["Bearer token-1", "Bearer token-2"]


def test_a_401_refreshes_the_token_once_and_resends(
    registry: ToolRegistry, endpoint: TokenEndpoint, api: tuple[Api, str]
) -> None:
    endpoint.issue("token-1", "token-2", expires_in=3600)
    api[0].valid = {"token-2"}  # token-1 was revoked behind the cache's back
    run = executor()
    result = run.execute(registry["get_item"], {})
    assert result.succeeded, result.error
    assert endpoint.count == 2
    assert api[0].seen == ["Bearer token-1", "Bearer token-2"]
    assert run.execute(registry["list_items"], {}).succeeded  # the new token is shared
    assert endpoint.count == 2


def test_a_second_401_fails_the_call_without_a_loop(
    registry: ToolRegistry, endpoint: TokenEndpoint, api: tuple[Api, str]
) -> None:
    endpoint.issue("token-0001", "token-0002", "token-0003", expires_in=3600)
    events: list[ToolEvent] = []
    result = executor(events).execute(registry["get_item"], {}, raise_on_failure=False)
    assert not result.succeeded
    assert "returned 401" in str(result.error)
    assert endpoint.count == 2  # one refresh, then the API's answer stands
    assert len(api[0].seen) == 2
    assert result.error is not None
    text = json.dumps(result.to_dict()) + chain_text(result.error) + repr(events)
    for token in ("token-0001", "token-0002"):
        assert token not in text
    assert "***" in str(result.error)  # the echoed header, redacted


def test_the_token_and_secret_never_reach_output_or_events(
    registry: ToolRegistry, endpoint: TokenEndpoint, api: tuple[Api, str]
) -> None:
    endpoint.issue("tok-9f8e7d", expires_in=3600)
    api[0].valid = {"tok-9f8e7d"}
    events: list[ToolEvent] = []
    result = executor(events).execute(registry["get_item"], {}, raise_on_failure=False)
    # The API echoes the header it got: the answer holds the token, so it is withheld.
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert result.error.cause.where == "output.seen"
    text = json.dumps(result.to_dict()) + repr(events)
    assert "tok-9f8e7d" not in text
    assert not leaked(text, [SECRET])


def test_a_refused_token_request_fails_cleanly_without_the_secret(
    registry: ToolRegistry, endpoint: TokenEndpoint
) -> None:
    body = json.dumps({"error": "invalid_client", "error_description": f"bad {SECRET}"})
    endpoint.script = lambda n: Reply(status=401, body=body.encode())
    result = executor().execute(registry["get_item"], {}, raise_on_failure=False)
    assert not result.succeeded
    assert result.error is not None
    message = str(result.error)
    assert "OAuth2 token request to" in message
    assert "invalid_client" in message
    assert "check the client id and secret" in message
    assert not leaked(message + chain_text(result.error), [SECRET])


@pytest.mark.parametrize(
    ("oauth2", "message"),
    [
        pytest.param(
            "{token_url: 'https://{{ inputs.h }}/t', client_id: client-id, "
            "client_secret: client-secret}",
            "templates are not allowed",
            id="templated-token-url",
        ),
        pytest.param(
            "{token_url: 'ftp://a/t', client_id: client-id, client_secret: client-secret}",
            "must start with https://",
            id="scheme",
        ),
        pytest.param(
            "{token_url: 'https://a/t', client_id: nope, client_secret: client-secret}",
            "credential 'nope' is used but not declared",
            id="undeclared-credential",
        ),
        pytest.param(
            "{token_url: 'https://a/t', client_id: client-id, client_secret: client-secret, "
            "scopes: ['a b']}",
            "is not a scope token",
            id="scope",
        ),
        pytest.param(
            "{token_url: 'https://a/t', client_id: client-id, client_secret: client-secret, "
            "grant: x}",
            "unknown key 'grant'",
            id="unknown-key",
        ),
    ],
)
def test_oauth2_settings_are_checked_at_load_time(
    tmp_path: Path, oauth2: str, message: str
) -> None:
    source = (
        "source: api\nbase_url: https://api.example.com\n"
        "credentials: [client-id, client-secret]\n"
        f"auth: {{oauth2: {oauth2}}}\n"
    )
    (tmp_path / "source.yaml").write_text(source)
    with pytest.raises(DefinitionError, match=message) as info:
        load_tools(tmp_path)
    assert str(info.value).count("source.yaml:4:") >= 1


def test_validate_warns_about_a_plain_http_token_url(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        "name: t\nversion: 1.0.0\ncredentials: [i, s]\nbackend:\n  http:\n"
        "    url: https://api.example.com/x\n"
        "    auth: {oauth2: {token_url: 'http://auth.example.com/t', client_id: i, "
        "client_secret: s}}\n"
    )
    (cls,) = load_tools(tmp_path)
    warnings: Any = cls.DEFINITION.warnings()
    assert warnings == [
        "backend.http.auth.oauth2.token_url: the client secret would be sent over plain "
        "http:// to http://auth.example.com/t; use https://"
    ]


def test_the_token_url_takes_a_variable_on_a_source(
    tmp_path: Path, endpoint: TokenEndpoint, api: tuple[Api, str]
) -> None:
    """The token endpoint differs between environments, like the base URL."""
    (tmp_path / "source.yaml").write_text(
        SOURCE.format(api=api[1], token_url="${AUTH_ORIGIN}/oauth/token")
    )
    (tmp_path / "tools.yaml").write_text(TOOLS)
    origin = endpoint.url.removesuffix("/oauth/token")
    assert origin != endpoint.url, "the token endpoint's path changed; update this test"
    registry = ToolRegistry()
    load_tools(tmp_path, registry=registry, environ={"AUTH_ORIGIN": origin})
    endpoint.issue("token-1", expires_in=3600)
    api[0].valid = {"token-1"}
    assert executor().execute(registry["get_item"], {}).succeeded
    assert endpoint.count == 1


def test_the_token_url_takes_a_variable_with_a_default_on_a_tool(
    tmp_path: Path, endpoint: TokenEndpoint, api: tuple[Api, str]
) -> None:
    (tmp_path / "tool.yaml").write_text(f"""\
name: get_item
version: 1.0.0
credentials: [client-id, client-secret]
output_schema:
  parameters:
    - {{name: seen, type: string}}
backend:
  http:
    url: {api[1]}/items/1
    auth:
      oauth2:
        token_url: ${{TOKEN_URL:-{endpoint.url}}}
        client_id: client-id
        client_secret: client-secret
""")
    registry = ToolRegistry()
    load_tools(tmp_path, registry=registry, environ={})
    endpoint.issue("token-1", expires_in=3600)
    api[0].valid = {"token-1"}
    assert executor().execute(registry["get_item"], {}).succeeded


def test_an_unset_variable_in_the_token_url_is_located(
    tmp_path: Path, endpoint: TokenEndpoint, api: tuple[Api, str]
) -> None:
    (tmp_path / "source.yaml").write_text(
        SOURCE.format(api=api[1], token_url="${AUTH_ORIGIN}/oauth/token")
    )
    (tmp_path / "tools.yaml").write_text(TOOLS)
    with pytest.raises(DefinitionError) as caught:
        load_tools(tmp_path, environ={})
    text = str(caught.value)
    assert "source.yaml:6" in text
    assert text.count("token_url") == 1
    assert "auth.oauth2.token_url" in text
    assert "'AUTH_ORIGIN' is not set" in text
