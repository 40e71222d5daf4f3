"""OAuth 2.0 client credentials (RFC 6749 section 4.4): fetching, caching and refreshing a token.

``ClientCredentials`` is one token endpoint with its scopes (and audience); its
``token()`` returns a bearer token for a client id and secret, fetching one only
when the cache has none that is still fresh::

    grant = ClientCredentials(token_url="https://auth.example.com/oauth/token",
                              scopes=("items.read",))
    token = grant.token(client_id, client_secret, deadline=deadline, session=session)
    # send with  Authorization: Bearer <token>
    # on a 401:  grant.invalidate(token), then token(...) again and resend once

- **Cache.** A token is kept per (token URL, client id, client secret, scopes,
  audience) until ``expires_in`` less the expiry margin (at most half its
  lifetime, so a short-lived token is still reused) by the injected clock. A
  reply without ``expires_in`` is kept ``DEFAULT_EXPIRES_IN`` seconds. The key
  holds a digest of the secret, never the secret, so a caller with a wrong
  secret never gets another caller's token. Clients that share a
  ``TokenCache`` (the tools of one source) share tokens.
- **Single flight.** Concurrent callers wanting the same key wait for one
  request, within their own deadline, and then share its token.
- **Refresh on 401.** ``invalidate(token)`` drops the cached token only while it
  is still that token, so many callers failing with the same stale token cause
  one new request, not one each.
- **Secrets.** The client secret, the Basic header made from it and every token
  are registered with the running call's redactor (``redact_also``) and
  redacted from this module's errors even outside a call. An error names the
  token URL, what went wrong (the HTTP status, and the endpoint's ``error`` and
  ``error_description`` quoted) and never the secret or a token. The reply is
  searched for tokens before it is parsed (any value of a name ending in
  ``token``, in JSON or form spelling, whether or not the reply parses), so an
  error about a malformed reply cannot show one; and a successful (2xx) reply
  that is not a token document is described (its Content-Type, size and what
  is wrong with it), never quoted, since the token may be anywhere in it.
- **Reading the reply.** RFC 6749 section 5.1: a JSON object, parsed strictly
  (``agentkit.jsonvalues``: nesting within ``MAX_DEPTH``, finite numbers;
  trailing data after the object is refused). A leading UTF-8 byte order mark
  is dropped. A reply that is not JSON but a form
  (``access_token=...&token_type=bearer``, as GitHub sends to a client that
  does not ask for JSON) is read as one, although ``Accept: application/json``
  is always sent. ``expires_in`` may be a number or a string of digits; a
  lifetime over ``MAX_EXPIRES_IN`` is cut to it (however many digits it has).
- **Sending.** A POST of ``application/x-www-form-urlencoded`` with
  ``grant_type=client_credentials``; the client authenticates with HTTP Basic
  (id and secret form-encoded first, RFC 6749 section 2.3.1) or, with
  ``client_auth="body"``, as ``client_id``/``client_secret`` form fields. No
  redirect is followed (that would resend the credentials elsewhere), the reply
  is read up to ``MAX_TOKEN_RESPONSE_BYTES``, and the whole exchange ends at the
  caller's ``deadline``.
"""

from __future__ import annotations

import base64
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, final
from urllib.parse import parse_qsl, quote_plus, unquote_plus, urlsplit

from agentkit import jsonvalues
from agentkit.declarative.http_url import authority, authority_problem
from agentkit.redaction import Redactor, excerpt, redact_also
from agentkit.toolerrors import OAuth2Error

if TYPE_CHECKING:
    import requests

__all__ = [
    "DEFAULT_EXPIRES_IN",
    "DEFAULT_EXPIRY_MARGIN",
    "MAX_EXPIRES_IN",
    "MAX_TOKEN_RESPONSE_BYTES",
    "ClientCredentials",
    "OAuth2Error",
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
#: How much of the endpoint's own text an error quotes.
_QUOTED: Final = 200
#: Integers of more digits are only "huge": no lifetime needs them, and reading
#: thousands of digits is slow (and past 4,300 refused by ``int``).
_INT_DIGITS: Final = 18
_HUGE: Final = 10**_INT_DIGITS
#: A value under a name ending in "token" (access_token, refresh_token, id_token,
#: accessToken), in JSON spelling (the closing quote may be missing: a cut reply)
#: and in form spelling: what is searched for before the reply is parsed.
_JSON_TOKEN: Final = re.compile(r'"[^"\\]{0,64}token"\s*:\s*"((?:[^"\\]|\\.)*)', re.IGNORECASE)
_FORM_TOKEN: Final = re.compile(r"(?:^|[&;\s?])[\w.~%-]{0,64}token=([^&;\s]*)", re.IGNORECASE)
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
@dataclass(frozen=True, slots=True)
class _Token:
    value: str
    expires_at: float


@final
class TokenCache:
    """Tokens and their in-flight requests, shared by the ``ClientCredentials`` that use it.

    Thread-safe. Share one cache among the grants whose tokens may be shared
    (the tools of one source) and that use the same clock.
    """

    __slots__ = ("_flights", "_guard", "_tokens")

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._tokens: dict[tuple[str, ...], _Token] = {}
        self._flights: dict[tuple[str, ...], threading.Lock] = {}

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
        if not _is_number(expiry_margin) or expiry_margin < 0:
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
        redact_also(cached.value)
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
            value, lifetime = self._fetch(client_id, client_secret, deadline, session)
            # The clock is read after the reply, so time spent waiting is not counted twice.
            token = _Token(value, self._clock() + lifetime - min(self.expiry_margin, lifetime / 2))
            self._cache._store(key, token)
            return token
        finally:
            flight.release()

    def _fetch(
        self, client_id: str, client_secret: str, deadline: float, session: requests.Session
    ) -> tuple[str, float]:
        import requests

        from agentkit.declarative.http_transport import Exchange

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
        shown = Redactor(self._secret_forms(client_id, client_secret))
        with Exchange(deadline) as exchange:
            remaining = exchange.remaining
            if remaining <= 0:
                raise OAuth2Error(self.token_url, "timeout", "the deadline passed before sending")
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
            except requests.RequestException as exc:
                # The exception holds the request, body and headers included: only a
                # redacted copy travels on as the cause.
                cause = shown.clean_exception(exc)
                if isinstance(exc, requests.Timeout) or exchange.timed_out:
                    raise OAuth2Error(
                        self.token_url,
                        "timeout",
                        f"no reply before the deadline ({type(exc).__name__})",
                    ) from cause
                raise OAuth2Error(
                    self.token_url,
                    "connection",
                    f"no reply ({type(exc).__name__}: {excerpt(str(exc), _QUOTED, shown)})",
                ) from cause
        return self._parse(response.status_code, response.headers.get("Content-Type"), body, shown)

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
    ) -> tuple[str, float]:
        text = body.decode("utf-8", "replace").removeprefix("\ufeff")
        # Before anything can fail: whatever may be a token is a secret from here on.
        found = [form for form in _token_candidates(text) if form]
        shown.add(*found)
        redact_also(*found)
        success = 200 <= status < 300
        if success and text.strip():
            shown.add(text.strip())  # the token may be anywhere in it: never quoted
        document, wrong = _document(text)
        if not success:
            raise self._refused(status, document, text, shown)
        if not isinstance(document, dict):
            what = wrong if document is None else f"it is a JSON {type(document).__name__}"
            raise OAuth2Error(
                self.token_url,
                "response",
                f"HTTP {status}: the reply is not a JSON object "
                f"(Content-Type {content_type!r}, {len(body)} bytes: "
                f"{excerpt(what, _QUOTED, shown)}); its text is not shown, as it may hold "
                "the token",
                status=status,
            )
        value = document.get("access_token")
        if not isinstance(value, str) or not value:
            # The reply may hold a token under another name: show only its keys.
            keys = excerpt(", ".join(sorted(map(str, document))), _QUOTED, shown)
            raise OAuth2Error(
                self.token_url,
                "response",
                f"HTTP {status}: the reply has no 'access_token' string "
                f"(its keys: {keys or 'none'})",
                status=status,
            )
        shown.add(value)
        redact_also(value)
        token_type = document.get("token_type")
        if token_type is not None and (
            not isinstance(token_type, str) or token_type.lower() != "bearer"
        ):
            raise OAuth2Error(
                self.token_url,
                "response",
                f"HTTP {status}: 'token_type' is {_quote(str(token_type), shown)}; "
                "only 'Bearer' tokens can be sent",
                status=status,
            )
        return value, self._lifetime(status, document.get("expires_in", None), shown)

    def _lifetime(self, status: int, expires_in: Any, shown: Redactor) -> float:
        if expires_in is None:
            return DEFAULT_EXPIRES_IN
        # Some endpoints send the number as a string ("3600"): accepted, digits only.
        if isinstance(expires_in, str) and expires_in.isascii() and expires_in.isdigit():
            expires_in = int(expires_in) if len(expires_in) <= _INT_DIGITS else _HUGE
        if not _is_number(expires_in) or expires_in < 0:
            raise OAuth2Error(
                self.token_url,
                "response",
                f"HTTP {status}: 'expires_in' must be a number of seconds >= 0, "
                f"not {_quote(_shown_value(expires_in), shown)}",
                status=status,
            )
        return min(float(expires_in), MAX_EXPIRES_IN)

    def _refused(self, status: int, document: Any, text: str, shown: Redactor) -> OAuth2Error:
        error = description = None
        if isinstance(document, dict):
            error = _string(document.get("error"), shown)
            description = _string(document.get("error_description"), shown)
        if error is not None:
            said = f"error {error!r}" + (f": {description!r}" if description is not None else "")
        else:
            said = f"reply {_quote(text, shown)}" if text.strip() else "no reply body"
        fix = _FIXES.get(error or "") or (_FIXES["invalid_client"] if status == 401 else None)
        hint = f" ({fix})" if fix else ""
        return OAuth2Error(
            self.token_url,
            "status",
            f"HTTP {status}{hint}; {said}",
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


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _token_candidates(text: str) -> Iterator[str]:
    """Every spelling of what may be a token in ``text``, found without parsing it."""
    for match in _JSON_TOKEN.finditer(text):
        raw = match[1]
        yield raw
        try:
            decoded = json.loads(f'"{raw}"')
        except ValueError:  # cut inside an escape: the raw spelling is all there is
            continue
        yield decoded
    for match in _FORM_TOKEN.finditer(text):
        yield match[1]
        yield unquote_plus(match[1])


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) <= _INT_DIGITS:
        return int(digits)
    return -_HUGE if digits.startswith("-") else _HUGE


def _document(text: str) -> tuple[Any, str]:
    """The reply as a JSON value, else as a form with an ``access_token``.

    ``(None, why)`` when it is neither; ``why`` quotes none of the text (the
    parser's own reasons name a position, not what is there).
    """
    try:
        return jsonvalues.loads(text, parse_int=_bounded_int), ""
    except ValueError as exc:
        # Only the reason is kept: the exception holds the whole text (``doc``).
        why = f"not JSON: {exc}"
    if "=" in text:
        try:
            pairs = parse_qsl(
                text.strip(), keep_blank_values=True, strict_parsing=True, max_num_fields=64
            )
        except ValueError:
            pairs = []
        names = [name for name, _ in pairs]
        if "access_token" in names and len(set(names)) == len(names):
            return dict(pairs), ""
    return None, why


def _shown_value(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _HUGE:
        return f"a number of more than {_INT_DIGITS} digits"
    return json.dumps(value)


def _string(value: Any, shown: Redactor) -> str | None:
    if value is None:
        return None
    return excerpt(value if isinstance(value, str) else json.dumps(value), _QUOTED, shown)


def _quote(text: str, shown: Redactor) -> str:
    return repr(excerpt(text, _QUOTED, shown))
