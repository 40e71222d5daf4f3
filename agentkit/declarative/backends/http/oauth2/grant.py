"""The client-credentials grant: one token endpoint, its cache, single flight and refresh.

The package docstring (``agentkit.declarative.backends.http.oauth2``) says what it
guarantees; ``replies`` reads what the endpoint sends back. The grant and its cache
stay in one module, past 500 lines: the grant's single flight, its refresh after a
401 and the tokens it keeps for redaction are the cache's state under the cache's
one lock, which the grant reads through private methods that a split would have to
make public.
"""

from __future__ import annotations

import base64
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, final
from urllib.parse import quote_plus, urlsplit

from agentkit.declarative.backends.http.oauth2.replies import (
    Quoter,
    bounded_int,
    fields_named,
    is_number,
    read_reply,
    token_candidates,
    token_type_shown,
    value_shown,
)
from agentkit.declarative.backends.http.url import authority, authority_problem
from agentkit.redaction import Redactor, redact_also
from agentkit.toolerrors import OAuth2Error

if TYPE_CHECKING:
    import requests

__all__ = [
    "DEFAULT_EXPIRES_IN",
    "DEFAULT_EXPIRY_MARGIN",
    "MAX_EXPIRES_IN",
    "MAX_REMEMBERED",
    "MAX_TOKEN_RESPONSE_BYTES",
    "ClientCredentials",
    "TokenCache",
]

#: Seconds a token is kept when the endpoint's reply has no ``expires_in``.
DEFAULT_EXPIRES_IN: Final = 300.0
#: Seconds before its expiry a token is no longer handed out.
DEFAULT_EXPIRY_MARGIN: Final = 30.0
#: Seconds a token is kept at most, whatever its ``expires_in`` says (a day):
#: fetching a long-lived token again once a day costs nothing.
MAX_EXPIRES_IN: Final = 86400.0
#: A token reply is a few hundred bytes; anything over this is not one.
MAX_TOKEN_RESPONSE_BYTES: Final = 64 * 1024
#: How many tokens a ``TokenCache`` remembers (the newest) after handing them out, to
#: keep them out of a later refusal's quoted text.
MAX_REMEMBERED: Final = 1024
#: RFC 6749 appendix A.4: a scope token is printable ASCII without space, '"' or '\\'.
_SCOPE_TOKEN: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")

#: What to check for each error code of RFC 6749 section 5.2.
_FIXES: Final = {
    "invalid_client": "check the client id and secret",
    "invalid_grant": "check the client id and secret",
    "unauthorized_client": "this client may not use the client-credentials grant",
    "invalid_scope": "check the scopes",
    "unsupported_grant_type": "the endpoint does not offer the client-credentials grant",
    "invalid_request": "the endpoint refused the request's form",
}

Clock = Callable[[], float]
ClientAuth = Literal["basic", "body"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _Token:
    value: str
    expires_at: float
    #: The reply's other tokens (a refresh token, an id token): secrets as well.
    others: tuple[str, ...] = ()


@final
class TokenCache:
    """Tokens and their in-flight requests, shared by the ``ClientCredentials`` that use it.

    Thread-safe. Share one cache among the grants whose tokens may be shared
    (the tools of one source) and that use the same clock.
    """

    __slots__ = ("_flights", "_guard", "_seen", "_tokens")

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._tokens: dict[tuple[str, ...], _Token] = {}
        self._flights: dict[tuple[str, ...], threading.Lock] = {}
        # Every token handed out (in order, the newest last), long after it expired:
        # an endpoint may quote an old one in a refusal.
        self._seen: dict[str, None] = {}

    def __len__(self) -> int:
        with self._guard:
            return len(self._tokens)

    def _fresh(self, key: tuple[str, ...], now: float) -> _Token | None:
        with self._guard:
            token = self._tokens.get(key)
            if token is not None and now < token.expires_at:
                return token
            return None

    def _flight(self, key: tuple[str, ...]) -> threading.Lock:
        with self._guard:
            return self._flights.setdefault(key, threading.Lock())

    def _store(self, key: tuple[str, ...], token: _Token) -> None:
        with self._guard:
            self._tokens[key] = token

    def _remember(self, values: Iterable[str]) -> None:
        with self._guard:
            for value in values:
                self._seen.pop(value, None)
                self._seen[value] = None
            while len(self._seen) > MAX_REMEMBERED:
                del self._seen[next(iter(self._seen))]

    def _remembered(self) -> tuple[str, ...]:
        with self._guard:
            return tuple(self._seen)

    def _drop(self, value: str) -> bool:
        with self._guard:
            stale = [key for key, token in self._tokens.items() if token.value == value]
            for key in stale:
                del self._tokens[key]
            return bool(stale)


@final
class ClientCredentials:
    """One token endpoint's client-credentials grant; see the module docstring.

    Keyword-only: ``token_url`` (a literal ``http``/``https`` URL with a host,
    no user info, fragment or template), ``scopes`` (sent space-separated as
    ``scope``; none: no ``scope`` field), ``audience`` (sent as ``audience``
    when given), ``client_auth`` (``"basic"`` or ``"body"``), ``cache`` (a
    ``TokenCache`` to share; default a new one), ``clock`` (seconds, for
    expiry; default ``time.monotonic``) and ``expiry_margin`` (seconds).
    An invalid option raises ``OAuth2Error`` of kind ``config``.
    """

    __slots__ = (
        "_cache",
        "_clock",
        "audience",
        "client_auth",
        "expiry_margin",
        "scopes",
        "token_url",
    )

    def __init__(
        self,
        *,
        token_url: str,
        scopes: Iterable[str] = (),
        audience: str | None = None,
        client_auth: ClientAuth = "basic",
        cache: TokenCache | None = None,
        clock: Clock = time.monotonic,
        expiry_margin: float = DEFAULT_EXPIRY_MARGIN,
    ) -> None:
        self.token_url = token_url
        _check_token_url(token_url)
        if isinstance(scopes, str):
            raise self._config(f"scopes must be a list of scope tokens, not the string {scopes!r}")
        self.scopes = tuple(scopes)
        for scope in self.scopes:
            if not isinstance(scope, str) or not _SCOPE_TOKEN.fullmatch(scope):
                raise self._config(
                    f"scope {scope!r} is not a scope token "
                    "(printable ASCII without spaces, '\"' or '\\\\')"
                )
        if audience is not None and (not isinstance(audience, str) or not audience):
            raise self._config(f"audience must be a non-empty string, not {audience!r}")
        if client_auth not in ("basic", "body"):
            raise self._config(f"client_auth must be 'basic' or 'body', not {client_auth!r}")
        if not is_number(expiry_margin) or expiry_margin < 0:
            raise self._config(
                f"expiry_margin must be a finite number of seconds >= 0, not {expiry_margin!r}"
            )
        self.audience = audience
        self.client_auth: ClientAuth = client_auth
        self.expiry_margin = float(expiry_margin)
        self._cache = cache if cache is not None else TokenCache()
        self._clock = clock

    def __repr__(self) -> str:
        return f"ClientCredentials(token_url={self.token_url!r}, scopes={self.scopes!r})"

    @property
    def cache(self) -> TokenCache:
        return self._cache

    def token(
        self,
        client_id: str,
        client_secret: str,
        *,
        deadline: float,
        session: requests.Session,
    ) -> str:
        """A bearer token for this client: the cached one while fresh, else a new one.

        ``deadline`` is a ``time.monotonic()`` value: waiting for another
        caller's request and making one's own both end there. ``session`` sends
        the request (the HTTP backend's, so its adapter and pools are used).
        The secret and the token are registered with the running call's
        redactor. Raises ``OAuth2Error``.
        """
        redact_also(*self._secret_forms(client_id, client_secret))
        key = self._key(client_id, client_secret)
        cached = self._cache._fresh(key, self._clock())
        if cached is None:
            cached = self._single_flight(key, client_id, client_secret, deadline, session)
        redact_also(cached.value, *cached.others)
        return cached.value

    def invalidate(self, token: str) -> bool:
        """Forget ``token`` if it is still the cached one (after the API answered 401 to it).

        True if it was dropped. A token already replaced stays replaced, so
        callers that all saw one stale token cause a single new request.
        """
        return self._cache._drop(token)

    # -- fetching ----------------------------------------------------------------------------

    def _key(self, client_id: str, client_secret: str) -> tuple[str, ...]:
        import hashlib  # with OpenSSL: when a token is fetched, not when tools load

        digest = hashlib.sha256(f"{client_id}\0{client_secret}".encode()).hexdigest()
        return (self.token_url, client_id, digest, " ".join(self.scopes), self.audience or "")

    def _single_flight(
        self,
        key: tuple[str, ...],
        client_id: str,
        client_secret: str,
        deadline: float,
        session: requests.Session,
    ) -> _Token:
        flight = self._cache._flight(key)
        wait = deadline - time.monotonic()
        if wait <= 0 or not flight.acquire(timeout=min(wait, threading.TIMEOUT_MAX)):
            raise OAuth2Error(
                self.token_url, "timeout", "the deadline passed before a token was had"
            )
        try:
            # Whoever held the flight before us may have just stored a fresh token.
            cached = self._cache._fresh(key, self._clock())
            if cached is not None:
                return cached
            value, lifetime, others = self._fetch(client_id, client_secret, deadline, session)
            # The clock is read after the reply, so time spent waiting is not counted twice.
            expires_at = self._clock() + lifetime - min(self.expiry_margin, lifetime / 2)
            token = _Token(value=value, expires_at=expires_at, others=others)
            self._cache._store(key, token)
            return token
        finally:
            flight.release()

    def _fetch(
        self, client_id: str, client_secret: str, deadline: float, session: requests.Session
    ) -> tuple[str, float, tuple[str, ...]]:
        import http.client

        import requests
        import urllib3

        from agentkit.declarative.backends.http.transport import Exchange

        form = {"grant_type": "client_credentials"}
        if self.scopes:
            form["scope"] = " ".join(self.scopes)
        if self.audience is not None:
            form["audience"] = self.audience
        headers = {"Accept": "application/json"}
        if self.client_auth == "body":
            form |= {"client_id": client_id, "client_secret": client_secret}
        else:
            headers |= self._basic(client_id, client_secret)
        failure: OAuth2Error | None = None
        with Exchange(deadline, secret_reply=True) as exchange:
            remaining = exchange.remaining
            if remaining <= 0:
                raise OAuth2Error(self.token_url, "timeout", "the deadline passed before sending")
            response = None
            try:
                response = session.post(
                    self.token_url,
                    data=form,
                    headers=headers,
                    timeout=(remaining, remaining),
                    allow_redirects=False,
                    stream=True,
                )
                with response:
                    body = self._read(response, exchange)
            except (
                requests.RequestException,
                urllib3.exceptions.HTTPError,
                http.client.HTTPException,
                OSError,
            ) as exc:
                # Only words of our own travel on: the exception may quote the reply's
                # bytes (a token), and holds the request, secret and all.
                failure = self._no_reply(
                    exc, exchange, session, replied=response is not None, timeout=remaining
                )
        if failure is not None:
            raise failure  # raised here, outside the handler: no context to keep the bytes
        assert response is not None
        return self._parse(
            response.status_code,
            response.headers.get("Content-Type"),
            body,
            Redactor(self._secret_forms(client_id, client_secret)),
        )

    def _no_reply(
        self,
        exc: Exception,
        exchange: Any,
        session: requests.Session,
        *,
        replied: bool,
        timeout: float,
    ) -> OAuth2Error:
        """The error for an exchange that gave no usable reply, in words quoting none of it."""
        import requests
        import urllib3
        from requests.utils import select_proxy

        from agentkit.declarative.backends.http import failures as failures

        if isinstance(exc, requests.Timeout) or exchange.timed_out:
            return OAuth2Error(
                self.token_url, "timeout", f"no reply before the deadline ({type(exc).__name__})"
            )
        proxy = select_proxy(self.token_url, session.proxies) or None
        connecting = exchange.never_left or any(
            isinstance(
                cause,
                (
                    urllib3.exceptions.NewConnectionError,
                    requests.exceptions.SSLError,
                    requests.exceptions.ProxyError,
                ),
            )
            for cause in failures.causes(exc)
        )
        words = (
            failures.connect_failure(exc, self.token_url, connect_timeout=timeout, proxy=proxy)
            if connecting
            else None
        )
        if words is not None:
            return OAuth2Error(self.token_url, "connection", f"could not connect: {words}")
        happened = failures.what_happened(exc, replied=replied, read_timeout=timeout, quote=False)
        return OAuth2Error(
            self.token_url,
            "connection",
            f"{happened}; nothing of the reply is shown, as it may hold a token",
        )

    def _read(self, response: requests.Response, exchange: Any) -> bytes:
        body = bytearray()
        for chunk in response.iter_content(chunk_size=8192):
            body += chunk
            if len(body) > MAX_TOKEN_RESPONSE_BYTES:
                raise OAuth2Error(
                    self.token_url,
                    "response",
                    f"HTTP {response.status_code}: the reply is over "
                    f"{MAX_TOKEN_RESPONSE_BYTES} bytes; a token reply is small",
                    status=response.status_code,
                )
            if exchange.timed_out:
                raise OAuth2Error(self.token_url, "timeout", "the deadline passed during the reply")
        return bytes(body)

    def _parse(
        self, status: int, content_type: str | None, body: bytes, shown: Redactor
    ) -> tuple[str, float, tuple[str, ...]]:
        """The token, its lifetime and the reply's other tokens; else ``OAuth2Error``.

        ``shown`` holds the client's secret forms; whatever may be a token joins it,
        the call's redactor and this cache's memory before anything can fail.
        """
        text = body.decode("utf-8", "replace").removeprefix("\ufeff")
        document, wrong = read_reply(text)
        found = list(dict.fromkeys(form for form in token_candidates(text, document) if form))
        shown.add(*found)
        redact_also(*found)
        self._cache._remember(found)
        said = Quoter(shown, self._cache._remembered())
        what = f"Content-Type {said.media_type(content_type)}, {len(body)} bytes"
        if not 200 <= status < 300:
            raise self._refused(status, document, what, said, empty=not text.strip())
        if not isinstance(document, dict):
            kind = said(wrong) if document is None else f"it is a JSON {type(document).__name__}"
            raise self._unusable(status, f"the reply is not a JSON object ({what}: {kind})")
        value = document.get("access_token")
        if not isinstance(value, str) or not value:
            raise self._unusable(
                status, f"the reply has no 'access_token' string ({fields_named(document)})"
            )
        token_type = document.get("token_type")
        if token_type is not None and (
            not isinstance(token_type, str) or token_type.lower() != "bearer"
        ):
            raise self._unusable(
                status,
                f"'token_type' is {token_type_shown(token_type)}; only 'Bearer' tokens can be sent",
            )
        lifetime = self._lifetime(status, document.get("expires_in", None))
        return value, lifetime, tuple(form for form in found if form != value)

    def _unusable(self, status: int, reason: str) -> OAuth2Error:
        # A 2xx reply may hold the token anywhere: described, never quoted.
        return OAuth2Error(
            self.token_url,
            "response",
            f"HTTP {status}: {reason}; the reply itself is not shown, as it may hold a token",
            status=status,
        )

    def _lifetime(self, status: int, expires_in: Any) -> float:
        if expires_in is None:
            return DEFAULT_EXPIRES_IN
        # Some endpoints send the number as a string ("3600"): accepted, digits only.
        if isinstance(expires_in, str) and expires_in.isascii() and expires_in.isdigit():
            expires_in = bounded_int(expires_in)
        if not is_number(expires_in) or expires_in < 0:
            raise self._unusable(
                status,
                f"'expires_in' must be a number of seconds >= 0, not {value_shown(expires_in)}",
            )
        return min(float(expires_in), MAX_EXPIRES_IN)

    def _refused(
        self, status: int, document: Any, what: str, said: Quoter, *, empty: bool
    ) -> OAuth2Error:
        """A refusal: its ``error`` and ``error_description`` quoted, masked; nothing else."""
        error = description = None
        if isinstance(document, dict):
            error = said.field(document.get("error"))
            description = said.field(document.get("error_description"))
        if error is not None:
            told = f"error {error!r}" + (f": {description!r}" if description is not None else "")
        elif empty:
            told = "no reply body"
        else:
            told = f"no OAuth2 error in the reply ({what}; not shown, as it may hold a token)"
        fix = _FIXES.get(error or "") or (_FIXES["invalid_client"] if status == 401 else None)
        hint = f" ({fix})" if fix else ""
        return OAuth2Error(
            self.token_url,
            "status",
            f"HTTP {status}{hint}; {told}",
            status=status,
            error=error,
            error_description=description,
        )

    # -- helpers ------------------------------------------------------------------------------

    def _basic(self, client_id: str, client_secret: str) -> dict[str, str]:
        if self.client_auth != "basic":
            return {}
        return {"Authorization": "Basic " + _basic_pair(client_id, client_secret)}

    def _secret_forms(self, client_id: str, client_secret: str) -> list[str]:
        """The secret and what is sent made from it, for the redactors."""
        forms = [client_secret, quote_plus(client_secret)]
        if self.client_auth == "basic":
            forms.append(_basic_pair(client_id, client_secret))
        return forms

    def _config(self, reason: str) -> OAuth2Error:
        return OAuth2Error(self.token_url, "config", reason)


def _check_token_url(url: str) -> None:
    def refuse(reason: str) -> OAuth2Error:
        return OAuth2Error(str(url), "config", f"the token URL {reason}")

    if not isinstance(url, str):
        raise refuse(f"must be a string, not {type(url).__name__}")
    if "{{" in url or "{%" in url:
        raise refuse("must be literal: templates are not allowed in it")
    if url.partition("://")[0].lower() not in ("http", "https"):
        raise refuse("must start with https:// (or http://)")
    netloc = authority(url)
    if not netloc:
        raise refuse("must name a host")
    if "@" in netloc:
        raise refuse("must not carry user info: give the client id and secret as credentials")
    problem = authority_problem(netloc, "the token URL")
    if problem is not None:
        raise OAuth2Error(url, "config", problem)
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise refuse(f"is not a valid URL ({exc})") from exc
    if parts.fragment or url.endswith("#"):
        raise refuse("must not have a fragment")
    if any(ord(char) <= 0x20 or ord(char) == 0x7F for char in url):
        raise refuse("must not contain spaces or control characters")


def _basic_pair(client_id: str, client_secret: str) -> str:
    # RFC 6749 section 2.3.1: each is form-encoded before the two are joined.
    pair = f"{quote_plus(client_id)}:{quote_plus(client_secret)}"
    return base64.b64encode(pair.encode()).decode("ascii")
