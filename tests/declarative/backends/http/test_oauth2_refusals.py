"""What a token endpoint's reply may put in an error: its ``error`` and
``error_description``, with every token masked -- the reply's own, every token
the cache was ever handed, and every word shaped like one -- and nothing else.

A real token endpoint on 127.0.0.1 (``token_endpoint``) answers; the grant is
used on its own with a fake clock, and through a declarative tool whose API
answers 401 so that a later call fetches again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.declarative.backends.http.oauth2 import ClientCredentials, OAuth2Error
from agentkit.declarative.backends.http.oauth2 import grant as oauth2_grant
from tests.declarative.backends.http.test_oauth2 import CLIENT_ID, FakeClock, soon
from tests.declarative.backends.http.test_oauth2_replies import SOURCE, TOOL
from tests.declarative.backends.http.token_endpoint import (
    Reply,
    TokenEndpoint,
    serving,
    token_reply,
)
from tests.support import loopback
from tests.support.leaks import SECRETS, chain_text, leaked, logged_exception

SECRET = SECRETS[0]
# Tokens no shape check would catch (letters of one case without a digit, or shorter
# than 16): only the cache's memory of them keeps them out of a later error.
ACCESS = "quietmeadowlark"
REFRESH = "hiddenrefreshvalue"
ID_TOKEN = "idtokenvalue"


@pytest.fixture
def endpoint() -> Iterator[TokenEndpoint]:
    with serving() as state:
        yield state


@pytest.fixture
def session() -> Iterator[requests.Session]:
    with requests.Session() as made:
        yield made


def _refusal(status: int = 400, **fields: Any) -> Reply:
    return Reply(status, json.dumps(fields).encode())


def _failure(grant: ClientCredentials, session: requests.Session) -> OAuth2Error:
    with pytest.raises(OAuth2Error) as caught:
        grant.token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    return caught.value


def _everything(error: OAuth2Error) -> str:
    return "\n".join(
        [str(error), repr(error), chain_text(error), logged_exception(error), repr(vars(error))]
    )


# -- tokens from earlier calls ----------------------------------------------------------------


ECHOES = [
    pytest.param(lambda t: {"error_description": f"token {t} was revoked"}, id="in-description"),
    pytest.param(lambda t: {"error_description": t}, id="description-is-the-token"),
    pytest.param(lambda t: {"error_description": f"bad token={quote(t)}"}, id="percent-encoded"),
    pytest.param(lambda t: {"error_description": f"'{t}'"}, id="quoted"),
    pytest.param(lambda t: {"error_description": ["list", {"k": t}]}, id="description-not-text"),
]


@pytest.mark.parametrize("echo", ECHOES)
@pytest.mark.parametrize("which", [ACCESS, REFRESH, ID_TOKEN], ids=["access", "refresh", "id"])
def test_a_token_from_an_earlier_fetch_is_masked_in_a_later_refusal(
    endpoint: TokenEndpoint, session: requests.Session, which: str, echo: Any
) -> None:
    first = token_reply(ACCESS, refresh_token=REFRESH, id_token=ID_TOKEN, expires_in=60)
    endpoint.script = lambda n: first if n == 1 else _refusal(error="invalid_grant", **echo(which))
    clock = FakeClock()
    grant = ClientCredentials(token_url=endpoint.url, clock=clock)
    assert grant.token(CLIENT_ID, SECRET, deadline=soon(), session=session) == ACCESS
    clock.now += 3600  # long expired
    error = _failure(grant, session)
    assert "error 'invalid_grant': " in str(error)
    assert "***" in str(error)
    assert leaked(_everything(error), [ACCESS, REFRESH, ID_TOKEN, SECRET]) == []


def test_the_first_of_many_tokens_is_still_masked(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    issued = [f"generation{'x' * n}" for n in range(1, 6)]
    endpoint.script = lambda n: (
        token_reply(issued[n - 1], expires_in=60)
        if n <= len(issued)
        else _refusal(error=issued[0], error_description=f"{issued[0]} and {issued[2]} revoked")
    )
    clock = FakeClock()
    grant = ClientCredentials(token_url=endpoint.url, clock=clock)
    for token in issued:
        assert grant.token(CLIENT_ID, SECRET, deadline=soon(), session=session) == token
        clock.now += 3600
    error = _failure(grant, session)
    assert str(error).endswith("error '***': '*** and *** revoked'")
    assert error.error == "***"
    assert leaked(_everything(error), issued) == []


def test_grants_sharing_a_cache_share_its_memory(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    endpoint.script = lambda n: (
        token_reply(ACCESS) if n == 1 else _refusal(error_description=f"{ACCESS} is old")
    )
    cache = oauth2_grant.TokenCache()
    ClientCredentials(token_url=endpoint.url, cache=cache).token(
        CLIENT_ID, SECRET, deadline=soon(), session=session
    )
    other = ClientCredentials(token_url=endpoint.url, cache=cache, scopes=["other"])
    assert leaked(_everything(_failure(other, session)), [ACCESS]) == []


def test_the_memory_keeps_the_newest_tokens(
    endpoint: TokenEndpoint, session: requests.Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oauth2_grant, "MAX_REMEMBERED", 2)
    issued = ["oldestword", "middleword", "newestword"]
    endpoint.script = lambda n: (
        token_reply(issued[n - 1])
        if n <= 3
        else _refusal(error="invalid_grant", error_description=" ".join(issued))
    )
    clock = FakeClock()
    grant = ClientCredentials(token_url=endpoint.url, clock=clock)
    for _ in issued:
        grant.token(CLIENT_ID, SECRET, deadline=soon(), session=session)
        clock.now += 3600
    # The documented bound: the oldest is forgotten once more are handed out.
    assert str(_failure(grant, session)).endswith("'oldestword *** ***'")


# -- through a tool: a token of an earlier call, echoed at a later call ------------------------


def test_a_later_call_never_shows_an_earlier_calls_tokens(
    tmp_path: Path, endpoint: TokenEndpoint
) -> None:
    calls = {"n": 0}

    def api(handler: loopback.Handler) -> None:
        calls["n"] += 1  # the first call's token works, then the API refuses it
        handler.reply(200 if calls["n"] == 1 else 401, {"seen": True})

    first = token_reply(ACCESS, refresh_token=REFRESH, expires_in=3600)
    echo = _refusal(
        401, error="invalid_client", error_description=f"client had {ACCESS} and {REFRESH}"
    )
    endpoint.script = lambda n: first if n == 1 else echo
    with loopback.serve({"/items/1": api}) as origin:
        (tmp_path / "source.yaml").write_text(SOURCE.format(api=origin, token_url=endpoint.url))
        (tmp_path / "tools.yaml").write_text(TOOL)
        registry = ToolRegistry()
        load_tools(tmp_path, registry=registry)
        executor = ToolExecutor(credentials={"client-id": CLIENT_ID, "client-secret": SECRET})
        assert executor.execute(registry["get_item"], {}).succeeded
        later = executor.execute(registry["get_item"], {}, raise_on_failure=False)
    assert later.error is not None
    text = str(later.error)
    assert "error 'invalid_client': 'client had *** and ***'" in text
    shown = "\n".join([json.dumps(later.to_dict()), chain_text(later.error)])
    assert leaked(shown, [ACCESS, REFRESH, SECRET]) == []


# -- tokens never handed out ------------------------------------------------------------------


SHAPED = [
    pytest.param("RT-sup3r-s3cret-refresh", id="dashes-and-digits"),
    pytest.param("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2lnbmF0dXJlLXZhbHVl", id="jwt-like"),
    pytest.param("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", id="hex"),
    pytest.param("ghp_AbCdEfGhIjKlMnOpQrStUv", id="mixed-case-no-digit"),
    pytest.param("aGVsbG8rd29ybGQvYmFzZTY0PT0=", id="base64"),
    pytest.param("123e4567-e89b-12d3-a456-426614174000", id="uuid"),
]


@pytest.mark.parametrize("token", SHAPED)
@pytest.mark.parametrize("field", ["error_description", "error"])
def test_a_token_shaped_word_the_process_never_saw_is_masked(
    endpoint: TokenEndpoint, session: requests.Session, token: str, field: str
) -> None:
    fields: dict[str, Any] = {"error": "invalid_grant", field: f"refresh {token} expired"}
    endpoint.script = lambda n: _refusal(**fields)
    error = _failure(ClientCredentials(token_url=endpoint.url), session)
    assert "refresh *** expired" in str(error)
    assert leaked(_everything(error), [token]) == []


@pytest.mark.parametrize(
    "description",
    [
        "Client authentication failed (unknown client, no client authentication included)",
        "The grant_type 'client_credentials' is not supported; see "
        "https://docs.example.com/oauth/errors#unsupported_grant_type",
        "unauthorized_client: this client may not use this grant type",
    ],
)
def test_a_description_without_tokens_is_quoted_whole(
    endpoint: TokenEndpoint, session: requests.Session, description: str
) -> None:
    endpoint.script = lambda n: _refusal(error="invalid_client", error_description=description)
    error = _failure(ClientCredentials(token_url=endpoint.url), session)
    assert str(error).endswith(f"error 'invalid_client': {description!r}")
    assert error.error_description == description


# -- whatever else a refusal holds is described, never quoted ---------------------------------


TOKEN = "AT-sup3r-s3cret-access"
UNQUOTED = [
    pytest.param(Reply(500, f"<p>token={TOKEN}</p>".encode(), "text/html"), id="html-page"),
    pytest.param(
        Reply(500, b'{"access\\u005ftoken": "' + TOKEN.encode() + b'"}'), id="escaped-key"
    ),
    pytest.param(Reply(400, json.dumps({"access": TOKEN}).encode()), id="unusual-key"),
    pytest.param(Reply(401, TOKEN.encode(), "text/plain"), id="bare-token"),
    pytest.param(Reply(403, json.dumps([TOKEN]).encode()), id="json-list"),
    pytest.param(Reply(502, f"upstream: {TOKEN[::-1]}".encode(), "text/plain"), id="reversed"),
    pytest.param(Reply(400, json.dumps({"message": TOKEN.lower()}).encode()), id="lower"),
]


@pytest.mark.parametrize("reply", UNQUOTED)
def test_a_refusal_without_an_oauth2_error_is_described_not_quoted(
    endpoint: TokenEndpoint, session: requests.Session, reply: Reply
) -> None:
    endpoint.script = lambda n: reply
    error = _failure(ClientCredentials(token_url=endpoint.url), session)
    assert f"; no OAuth2 error in the reply (Content-Type {reply.content_type!r}, " in str(error)
    assert str(error).endswith(" bytes; not shown, as it may hold a token)")
    texts = _everything(error)
    assert leaked(texts, [TOKEN, TOKEN[::-1], TOKEN.lower()]) == []


NOT_A_TOKEN = [
    pytest.param(
        {"access_token": "x1", "token_type": TOKEN},
        "'token_type' is a string of 22 characters",
        id="type",
    ),
    pytest.param(
        {"access_token": "x2", "expires_in": TOKEN},
        "not a string of 22 characters",
        id="expires_in",
    ),
    pytest.param({TOKEN: 1}, "(it has 1 field, not named)", id="key"),
    pytest.param(
        {"accessToken": "x", TOKEN: 1}, "(its fields: accessToken and 1 more, not named)", id="keys"
    ),
    pytest.param({"data": {"access_token": TOKEN}}, "(its fields: data)", id="nested"),
    pytest.param({"access_token": [TOKEN]}, "(its fields: access_token)", id="list-token"),
    pytest.param(
        {"access_token": "x3", "expires_in": [TOKEN]}, "not a JSON array", id="list-expiry"
    ),
]


@pytest.mark.parametrize(("document", "said"), NOT_A_TOKEN)
def test_a_successful_reply_that_is_no_token_is_described_not_quoted(
    endpoint: TokenEndpoint, session: requests.Session, document: dict[str, Any], said: str
) -> None:
    endpoint.script = lambda n: Reply(body=json.dumps(document).encode())
    error = _failure(ClientCredentials(token_url=endpoint.url), session)
    assert said in str(error)
    assert str(error).endswith("the reply itself is not shown, as it may hold a token")
    assert leaked(_everything(error), [TOKEN]) == []


@pytest.mark.parametrize(
    ("content_type", "shown"),
    [
        pytest.param(TOKEN, "Content-Type not a media type (not shown)", id="token-alone"),
        pytest.param(f"text/{TOKEN}", "Content-Type '***'", id="token-as-subtype"),
        pytest.param(f"text/plain; t={TOKEN}", "Content-Type 'text/plain'", id="token-param"),
    ],
)
@pytest.mark.parametrize("status", [200, 500])
def test_a_content_type_holding_a_token_is_not_quoted(
    endpoint: TokenEndpoint,
    session: requests.Session,
    content_type: str,
    shown: str,
    status: int,
) -> None:
    endpoint.script = lambda n: Reply(status, b"not json", content_type)
    error = _failure(ClientCredentials(token_url=endpoint.url), session)
    assert f"({shown}, 8 bytes" in str(error)
    assert leaked(_everything(error), [TOKEN]) == []


def test_a_token_under_an_escaped_name_is_found_and_remembered(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    # Only the parsed reply names it access_token: no search of the text finds it.
    escaped = b'{"access\\u005ftoken": "' + ACCESS.encode() + b'", "token_type": "mac"}'
    endpoint.script = lambda n: (
        Reply(body=escaped)
        if n == 1
        else _refusal(error="invalid_grant", error_description=f"{ACCESS} was a mac token")
    )
    grant = ClientCredentials(token_url=endpoint.url)
    first = _failure(grant, session)
    assert "'token_type' is 'mac'" in str(first)
    later = _failure(grant, session)
    assert str(later).endswith("error 'invalid_grant': '*** was a mac token'")
