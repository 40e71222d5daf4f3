"""OAuth2 client credentials against a real token endpoint on 127.0.0.1 that counts its requests."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar
from urllib.parse import unquote_plus

import pytest
import requests

from agentkit import SecretInOutputError, Tool, ToolEvent, ToolExecutionError, ToolExecutor
from agentkit.declarative.backends.http.oauth2 import (
    DEFAULT_EXPIRES_IN,
    MAX_EXPIRES_IN,
    MAX_TOKEN_RESPONSE_BYTES,
    ClientCredentials,
    OAuth2Error,
    TokenCache,
)
from agentkit.redaction import Redactor, redacting
from tests.declarative.backends.http.token_endpoint import Reply, TokenEndpoint, serving
from tests.support.helpers import WAIT_SECONDS, wait_until
from tests.support.leaks import SECRETS, chain_text, leaked, logged_exception

CLIENT_ID = "agent-7-client"
SECRET = SECRETS[1]  # non-ASCII, a space, '/' and '+': every encoding differs


@pytest.fixture
def endpoint() -> Iterator[TokenEndpoint]:
    with serving() as state:
        yield state


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def session() -> Iterator[requests.Session]:
    with requests.Session() as made:
        yield made


def soon(seconds: float = 10.0) -> float:
    return time.monotonic() + seconds


def grant(endpoint: TokenEndpoint, **options: Any) -> ClientCredentials:
    return ClientCredentials(token_url=endpoint.url, **options)


# -- what is sent ------------------------------------------------------------------------------


def test_the_request_is_a_client_credentials_grant_with_basic_client_auth(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    token = grant(endpoint, scopes=["items.read", "items.write"]).token(
        CLIENT_ID, SECRET, deadline=soon(), session=session
    )
    assert token == "token-1"
    [seen] = endpoint.seen
    assert seen.form == {"grant_type": "client_credentials", "scope": "items.read items.write"}
    scheme, _, encoded = seen.headers["Authorization"].partition(" ")
    client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
    assert scheme == "Basic"
    # RFC 6749 section 2.3.1: each part form-encoded before Basic.
    assert (unquote_plus(client_id), unquote_plus(secret)) == (CLIENT_ID, SECRET)


def test_client_auth_in_the_body_sends_no_authorization_header(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    grant(endpoint, client_auth="body", audience="https://api.example.test").token(
        CLIENT_ID, SECRET, deadline=soon(), session=session
    )
    [seen] = endpoint.seen
    assert "Authorization" not in seen.headers
    assert seen.form == {
        "grant_type": "client_credentials",
        "audience": "https://api.example.test",
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
    }


# -- caching and expiry ----------------------------------------------------------------------


def test_a_token_is_fetched_once_and_then_served_from_the_cache(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    client = grant(endpoint)
    tokens = {client.token(CLIENT_ID, SECRET, deadline=soon(), session=session) for _ in range(5)}
    assert tokens == {"token-1"}
    assert endpoint.count == 1


@pytest.mark.parametrize(
    ("fields", "margin", "fresh_for"),
    [
        pytest.param({"expires_in": 3600}, 30.0, 3570.0, id="expires_in-less-margin"),
        pytest.param({"expires_in": "3600"}, 30.0, 3570.0, id="expires_in-as-digit-string"),
        pytest.param({"expires_in": 10}, 30.0, 5.0, id="short-token-margin-capped-at-half"),
        pytest.param({"expires_in": 100.5}, 0.0, 100.5, id="float-expires_in-no-margin"),
        pytest.param({}, 30.0, DEFAULT_EXPIRES_IN - 30.0, id="missing-expires_in-default"),
        pytest.param({"expires_in": None}, 30.0, DEFAULT_EXPIRES_IN - 30.0, id="null-expires_in"),
        pytest.param({"expires_in": 10**400}, 30.0, MAX_EXPIRES_IN - 30.0, id="huge-int-capped"),
        pytest.param(
            {"expires_in": "9" * 5000}, 30.0, MAX_EXPIRES_IN - 30.0, id="huge-digit-string-capped"
        ),
        pytest.param({"expires_in": 1e300}, 0.0, MAX_EXPIRES_IN, id="huge-float-capped"),
    ],
)
def test_a_token_is_cached_until_its_expiry_less_the_margin(
    endpoint: TokenEndpoint,
    session: requests.Session,
    fields: dict[str, Any],
    margin: float,
    fresh_for: float,
) -> None:
    endpoint.issue("first", "second", **fields)
    clock = FakeClock()
    client = grant(endpoint, clock=clock, expiry_margin=margin)
    start = clock.now
    assert client.token(CLIENT_ID, SECRET, deadline=soon(), session=session) == "first"
    clock.now = start + fresh_for - 0.001
    assert client.token(CLIENT_ID, SECRET, deadline=soon(), session=session) == "first"
    clock.now = start + fresh_for
    assert client.token(CLIENT_ID, SECRET, deadline=soon(), session=session) == "second"
    assert endpoint.count == 2


def test_a_token_that_expires_at_once_is_fetched_for_every_call(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    endpoint.issue("a", "b", "c", expires_in=0)
    client = grant(endpoint, clock=FakeClock())
    got = [client.token(CLIENT_ID, SECRET, deadline=soon(), session=session) for _ in range(3)]
    assert got == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("other", "shares"),
    [
        pytest.param({}, True, id="same-grant-shared-cache"),
        pytest.param({"scopes": ["other"]}, False, id="other-scopes"),
        pytest.param({"audience": "https://other.test"}, False, id="other-audience"),
        pytest.param({"client_auth": "body"}, True, id="other-client-auth-same-client"),
    ],
)
def test_grants_sharing_a_cache_share_a_token_only_for_the_same_key(
    endpoint: TokenEndpoint, session: requests.Session, other: dict[str, Any], shares: bool
) -> None:
    cache = TokenCache()
    one = grant(endpoint, scopes=["read"], cache=cache)
    two = grant(endpoint, **{"scopes": ["read"], "cache": cache, **other})
    first = one.token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    second = two.token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    assert (first == second) is shares
    assert endpoint.count == (1 if shares else 2)


@pytest.mark.parametrize(
    ("client_id", "secret"),
    [
        pytest.param(CLIENT_ID, "a wrong secret", id="other-secret"),
        pytest.param("someone-else", SECRET, id="other-client-id"),
    ],
)
def test_a_cached_token_is_never_handed_to_other_credentials(
    endpoint: TokenEndpoint, session: requests.Session, client_id: str, secret: str
) -> None:
    client = grant(endpoint)
    assert client.token(CLIENT_ID, SECRET, deadline=soon(), session=session) == "token-1"
    assert client.token(client_id, secret, deadline=soon(), session=session) == "token-2"
    assert endpoint.count == 2


# -- concurrency -----------------------------------------------------------------------------


def run_together(count: int, work: Callable[[], str]) -> list[str]:
    barrier = threading.Barrier(count)
    results: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run() -> None:
        barrier.wait(timeout=10)
        try:
            value = work()
        except BaseException as exc:  # reported below, on the test's thread
            with lock:
                errors.append(exc)
            return
        with lock:
            results.append(value)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert not errors, errors
    assert len(results) == count
    return results


def test_sixteen_concurrent_callers_make_one_request(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    endpoint.script = lambda n: Reply(
        body=json.dumps({"access_token": f"token-{n}", "expires_in": 60}).encode(), delay=0.3
    )
    client = grant(endpoint)
    results = run_together(
        16, lambda: client.token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    )
    assert set(results) == {"token-1"}
    assert endpoint.count == 1


def test_invalidate_drops_only_the_current_token_and_the_next_call_refetches(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    client = grant(endpoint)
    stale = client.token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    assert client.invalidate(stale) is True
    fresh = client.token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    assert (stale, fresh) == ("token-1", "token-2")
    # A late caller still holding the stale token must not drop the fresh one.
    assert client.invalidate(stale) is False
    assert client.invalidate("never-issued") is False
    assert client.token(CLIENT_ID, SECRET, deadline=soon(), session=session) == "token-2"
    assert endpoint.count == 2


def test_many_callers_refreshing_one_stale_token_make_one_request(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    client = grant(endpoint)
    stale = client.token(CLIENT_ID, SECRET, deadline=soon(), session=session)

    def refresh() -> str:
        client.invalidate(stale)
        return client.token(CLIENT_ID, SECRET, deadline=soon(), session=session)

    # Each caller invalidates before fetching; only the first invalidate finds the stale token.
    assert client.invalidate(stale) is True
    results = run_together(8, refresh)
    assert set(results) == {"token-2"}
    assert endpoint.count == 2


# -- failures: clear, structured, and without a secret ---------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "error", "message"),
    [
        pytest.param(
            Reply(
                401,
                b'{"error": "invalid_client", "error_description": "Client authentication failed"}',
            ),
            401,
            "invalid_client",
            r"HTTP 401 \(check the client id and secret\); error 'invalid_client': 'Client authentication failed'$",
            id="401-invalid-client",
        ),
        pytest.param(
            Reply(400, b'{"error": "invalid_scope"}'),
            400,
            "invalid_scope",
            r"HTTP 400 \(check the scopes\); error 'invalid_scope'$",
            id="400-invalid-scope",
        ),
        pytest.param(
            Reply(500, b"<html>oops</html>", "text/html"),
            500,
            None,
            r"HTTP 500; no OAuth2 error in the reply \(Content-Type 'text/html', 17 bytes; "
            r"not shown, as it may hold a token\)$",
            id="500-html",
        ),
        pytest.param(Reply(503), 503, None, r"HTTP 503; no reply body$", id="503-empty"),
        pytest.param(
            Reply(401, b"denied", "text/plain"),
            401,
            None,
            r"HTTP 401 \(check the client id and secret\); no OAuth2 error in the reply "
            r"\(Content-Type 'text/plain', 6 bytes; not shown, as it may hold a token\)$",
            id="401-plain-text",
        ),
        pytest.param(
            Reply(400, b'{"error": "unauthorized_client", "error_description": 7}'),
            400,
            "unauthorized_client",
            r"HTTP 400 \(this client may not use the client-credentials grant\); error 'unauthorized_client': '7'$",
            id="400-unauthorized-client-odd-description",
        ),
        pytest.param(
            Reply(302), 302, None, r"HTTP 302; no reply body$", id="redirect-not-followed"
        ),
    ],
)
def test_a_refusal_names_the_url_the_status_and_what_the_endpoint_said(
    endpoint: TokenEndpoint,
    session: requests.Session,
    reply: Reply,
    status: int,
    error: str | None,
    message: str,
) -> None:
    endpoint.script = lambda n: reply
    with pytest.raises(
        OAuth2Error, match=rf"^OAuth2 token request to {endpoint.url}: {message}"
    ) as caught:
        grant(endpoint).token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    assert (caught.value.kind, caught.value.status, caught.value.error) == ("status", status, error)
    assert endpoint.count == 1  # never retried: a refusal will not change by asking again


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            b"xyz-junk",
            r"the reply is not a JSON object \(Content-Type 'application/json', 8 bytes: not JSON: "
            r"Expecting value: line 1 column 1 \(char 0\)\); the reply itself is not shown, as "
            r"it may hold a token$",
            id="not-json",
        ),
        pytest.param(b'["tok"]', r"the reply is not a JSON object", id="json-list"),
        pytest.param(
            b'{"token": "abc"}',
            r"the reply has no 'access_token' string \(its fields: token\)",
            id="no-access-token",
        ),
        pytest.param(
            b'{"access_token": 42}',
            r"no 'access_token' string \(its fields: access_token\)",
            id="access-token-number",
        ),
        pytest.param(b'{"access_token": ""}', r"no 'access_token' string", id="access-token-empty"),
        pytest.param(
            b'{"access_token": "abc", "token_type": "mac"}',
            r"'token_type' is 'mac'; only 'Bearer' tokens can be sent",
            id="mac-token",
        ),
        pytest.param(
            b'{"access_token": "abc", "expires_in": -1}',
            r"'expires_in' must be a number of seconds >= 0, not '-1'",
            id="negative-expiry",
        ),
        pytest.param(
            b'{"access_token": "abc", "expires_in": "soon"}',
            r"not a string of 4 characters \(not shown\)",
            id="word-expiry",
        ),
        pytest.param(
            b'{"access_token": "abc", "expires_in": true}', r"not 'true'", id="boolean-expiry"
        ),
        pytest.param(
            b'{"access_token": "abc", "expires_in": 1e400}',
            r"not JSON: the number 1e400 is too large for a float",
            id="infinite-expiry",
        ),
        pytest.param(
            b'{"access_token": "abc", "expires_in": -' + b"9" * 5000 + b"}",
            r"'expires_in' must be a number of seconds >= 0, not 'a number of more than 18 digits'",
            id="huge-negative-expiry",
        ),
    ],
)
def test_a_malformed_token_reply_is_a_clear_error(
    endpoint: TokenEndpoint, session: requests.Session, body: bytes, message: str
) -> None:
    endpoint.script = lambda n: Reply(body=body)
    client = grant(endpoint)
    with pytest.raises(OAuth2Error, match=message) as caught:
        client.token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    assert caught.value.kind == "response"
    assert str(caught.value).startswith(f"OAuth2 token request to {endpoint.url}: HTTP 200: ")
    assert len(client.cache) == 0


def test_an_oversized_reply_is_refused(endpoint: TokenEndpoint, session: requests.Session) -> None:
    endpoint.script = lambda n: Reply(body=b"x" * (MAX_TOKEN_RESPONSE_BYTES + 10))
    with pytest.raises(OAuth2Error, match=f"the reply is over {MAX_TOKEN_RESPONSE_BYTES} bytes"):
        grant(endpoint).token(CLIENT_ID, SECRET, deadline=soon(), session=session)


def test_a_slow_endpoint_fails_at_the_deadline(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    endpoint.script = lambda n: Reply(body=b"{}", delay=3.0)
    with pytest.raises(OAuth2Error, match=r"no reply before the deadline") as caught:
        grant(endpoint).token(CLIENT_ID, SECRET, deadline=soon(0.3), session=session)
    assert caught.value.kind == "timeout"


def test_a_caller_waiting_on_another_callers_request_gives_up_at_its_own_deadline(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    # The leader's request is held at the endpoint until the other caller gave up.
    release = threading.Event()
    endpoint.script = lambda n: Reply(body=b'{"access_token": "slow"}', hold=release)
    client = grant(endpoint)
    leader = threading.Thread(
        target=client.token,
        args=(CLIENT_ID, SECRET),
        kwargs={"deadline": soon(WAIT_SECONDS), "session": session},
    )
    leader.start()
    try:
        wait_until(lambda: endpoint.count > 0 or not leader.is_alive(), "the leader's request")
        with pytest.raises(OAuth2Error, match="the deadline passed before a token was had"):
            client.token(CLIENT_ID, SECRET, deadline=soon(0.1), session=session)
    finally:
        release.set()
        leader.join(timeout=WAIT_SECONDS)
    assert client.token(CLIENT_ID, SECRET, deadline=soon(), session=session) == "slow"
    assert endpoint.count == 1


def test_a_refused_connection_is_a_connection_error(session: requests.Session) -> None:
    client = ClientCredentials(token_url="http://127.0.0.1:9/token", client_auth="body")
    with pytest.raises(
        OAuth2Error,
        match=r"^OAuth2 token request to http://127.0.0.1:9/token: could not connect: the "
        r"connection to 127.0.0.1:9 was refused",
    ) as caught:
        client.token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    assert caught.value.kind == "connection"
    assert leaked(chain_text(caught.value) + logged_exception(caught.value), [SECRET]) == []


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
@pytest.mark.parametrize("client_auth", ["basic", "body"])
def test_an_endpoint_echoing_the_secret_never_gets_it_into_an_error(
    endpoint: TokenEndpoint, session: requests.Session, secret: str, client_auth: str
) -> None:
    def echo(number: int) -> Reply:
        seen = endpoint.seen[-1]
        said = json.dumps([seen.headers.get("Authorization"), seen.form])
        return Reply(401, json.dumps({"error": said, "error_description": said}).encode())

    endpoint.script = echo
    with pytest.raises(OAuth2Error) as caught:
        grant(endpoint, client_auth=client_auth).token(
            CLIENT_ID, secret, deadline=soon(), session=session
        )
    text = chain_text(caught.value) + logged_exception(caught.value) + repr(vars(caught.value))
    assert "***" in text  # the endpoint did send it back
    assert leaked(text, [secret]) == []


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"token_type": "mac"}, id="unusable-token-type"),
        pytest.param({"expires_in": "later"}, id="bad-expiry"),
    ],
)
def test_a_token_in_a_rejected_reply_is_never_shown(
    endpoint: TokenEndpoint, session: requests.Session, body: dict[str, Any]
) -> None:
    token = SECRETS[3]
    endpoint.script = lambda n: Reply(
        body=json.dumps({"access_token": token, **body, "note": f"yours: {token}"}).encode()
    )
    with pytest.raises(OAuth2Error) as caught:
        grant(endpoint).token(CLIENT_ID, SECRET, deadline=soon(), session=session)
    assert leaked(chain_text(caught.value) + repr(vars(caught.value)), [token, SECRET]) == []


def test_the_secret_and_the_token_are_registered_with_the_running_calls_redactor(
    endpoint: TokenEndpoint, session: requests.Session
) -> None:
    token = SECRETS[4]
    endpoint.issue(token, expires_in=3600)
    client = grant(endpoint)
    for _ in range(2):  # a fresh call's redactor learns them from a cached token too
        redactor = Redactor()
        with redacting(redactor):
            assert client.token(CLIENT_ID, SECRET, deadline=soon(), session=session) == token
        text = redactor.redact(f"Bearer {token}; secret={SECRET}; {json.dumps(SECRET)}")
        assert leaked(text, [token, SECRET]) == []
        basic = endpoint.seen[0].headers["Authorization"]
        assert redactor.redact(basic) == "Basic ***"
    assert endpoint.count == 1


# -- an invalid grant is refused when it is made -----------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {"token_url": "ftp://auth.test/token"},
            r"the token URL must start with https://",
            id="scheme",
        ),
        pytest.param(
            {"token_url": "https:///token"}, r"the token URL must name a host", id="no-host"
        ),
        pytest.param(
            {"token_url": "https://id:secret@auth.test/token"},
            r"must not carry user info",
            id="userinfo",
        ),
        pytest.param(
            {"token_url": "https://auth.test/{{ inputs.x }}"}, r"must be literal", id="template"
        ),
        pytest.param(
            {"token_url": "https://auth.test/token#x"}, r"must not have a fragment", id="fragment"
        ),
        pytest.param(
            {"token_url": "https://auth.test/to ken"}, r"spaces or control characters", id="space"
        ),
        pytest.param(
            {"token_url": "https://auth.test:99999/token"},
            r"the token URL's port 99999 is out of range; give one from 1 to 65535",
            id="bad-port",
        ),
        pytest.param(
            {"scopes": "read write"}, r"scopes must be a list of scope tokens", id="scopes-string"
        ),
        pytest.param(
            {"scopes": ["read write"]},
            r"scope 'read write' is not a scope token",
            id="scope-with-space",
        ),
        pytest.param({"scopes": ['a"b']}, r"is not a scope token", id="scope-with-quote"),
        pytest.param({"scopes": [""]}, r"scope '' is not a scope token", id="empty-scope"),
        pytest.param({"audience": ""}, r"audience must be a non-empty string", id="empty-audience"),
        pytest.param(
            {"client_auth": "jwt"},
            r"client_auth must be 'basic' or 'body', not 'jwt'",
            id="client-auth",
        ),
        pytest.param(
            {"expiry_margin": -1}, r"expiry_margin must be a finite number", id="negative-margin"
        ),
        pytest.param(
            {"expiry_margin": float("nan")},
            r"expiry_margin must be a finite number",
            id="nan-margin",
        ),
    ],
)
def test_an_invalid_grant_is_refused_when_made(options: dict[str, Any], message: str) -> None:
    options = {"token_url": "https://auth.test/token", **options}
    with pytest.raises(OAuth2Error, match=message) as caught:
        ClientCredentials(**options)
    assert caught.value.kind == "config"


class TokenUser(Tool):
    """What a wired HTTP backend will do: get a token, use it, maybe fail while holding it."""

    TOOL_NAME = "token_user"
    INPUT_SCHEMA = {"parameters": [{"name": "fail", "type": "boolean"}]}
    OUTPUT_SCHEMA = None
    CREDENTIAL_NAMES = ("client-id", "client-secret")
    grant: ClassVar[ClientCredentials]

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        with requests.Session() as session:
            token = self.grant.token(
                credentials["client-id"],
                credentials["client-secret"],
                deadline=soon(),
                session=session,
            )
        if inputs["fail"]:
            raise RuntimeError(f"the API refused Authorization: Bearer {token}")
        return {"authorization": f"Bearer {token}", "echo": json.dumps({"token": token})}


@pytest.mark.parametrize("fail", [False, True], ids=["output", "error"])
def test_a_token_never_shows_in_a_calls_output_error_or_events(
    endpoint: TokenEndpoint, fail: bool
) -> None:
    token = SECRETS[2]
    endpoint.issue(token, expires_in=3600)
    TokenUser.grant = grant(endpoint)
    events: list[ToolEvent] = []
    executor = ToolExecutor(
        credentials={"client-id": CLIENT_ID, "client-secret": SECRET}, listeners=[events.append]
    )
    for _ in range(2):  # fetched, then cached: the second call's redactor learns it too
        result = executor.execute(TokenUser(), {"fail": fail}, raise_on_failure=False)
        assert isinstance(result.error, ToolExecutionError)
        # An answer holding the token is withheld, not given with the token masked.
        assert isinstance(result.error.cause, SecretInOutputError) is not fail
        texts = [repr(result), json.dumps(result.to_dict(), ensure_ascii=False)]
        texts += [repr(event) for event in events]
        texts += [chain_text(result.error), logged_exception(result.error)]
        assert leaked("\n".join(texts), [token, SECRET]) == []
    assert endpoint.count == 1
