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
  token URL and what went wrong, and never the secret or a token:

  - what the endpoint sent is never quoted beyond the ``error`` and
    ``error_description`` of a refusal (RFC 6749 section 5.2), and those only
    with every token the reply holds (any value of a name ending in
    ``token``, found before the reply is parsed, whether or not it parses),
    every token this cache was ever handed (``MAX_REMEMBERED`` of them, the
    newest) and every word shaped like a token (``TOKEN_SHAPED``) masked;
  - a reply that is not a usable token is described (its status, Content-Type,
    size, the names of known fields, the types of wrong values), not quoted;
  - a reply that breaks HTTP framing (a bad chunk size, no status line) is
    said in our own words: urllib3's and http.client's quote the bytes, and
    their exceptions are not kept as the error's cause; while the reply is
    read, urllib3's log records keep no exception text either.
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

from agentkit.declarative.backends.http.oauth2.grant import (
    DEFAULT_EXPIRES_IN,
    DEFAULT_EXPIRY_MARGIN,
    MAX_EXPIRES_IN,
    MAX_REMEMBERED,
    MAX_TOKEN_RESPONSE_BYTES,
    ClientCredentials,
    TokenCache,
)
from agentkit.declarative.backends.http.oauth2.replies import TOKEN_SHAPED
from agentkit.toolerrors import OAuth2Error

__all__ = [
    "DEFAULT_EXPIRES_IN",
    "DEFAULT_EXPIRY_MARGIN",
    "MAX_EXPIRES_IN",
    "MAX_REMEMBERED",
    "MAX_TOKEN_RESPONSE_BYTES",
    "TOKEN_SHAPED",
    "ClientCredentials",
    "OAuth2Error",
    "TokenCache",
]
