"""Running an HTTP backend: send the request within its deadline, map the reply.

- The request is built by ``http_request`` (literal origin, one encoded segment
  per path template, no line break or NUL in a header); the final URL's origin
  is checked again before sending, and after each redirect.
- ``timeout.total`` is a deadline for the whole call: every attempt's timeouts,
  every retry wait and every body read are bounded by what is left of it, and
  every socket send and receive times out at the deadline (``http_transport``),
  so no read -- status line, headers or body, however slowly dripped -- outlives it.
- A request that may have reached the server is sent again only when its
  method is idempotent (or ``retry.non_idempotent`` says so); one that provably
  never left (its connect failed) may always be. urllib3 never resends.
- Redirects are followed only within the origin, at most five; after the user
  allowed the request (``confirm``), only one that makes it a GET without a body.
- The body is read as a stream, decoded, and counted against
  ``max_response_bytes``; ``Content-Length`` is never trusted.
- Credential values, and every form the call derives from them (basic auth's
  pair, a header or query value rendered from ``credentials``), join the
  call's redactor: they are redacted from every error -- the excerpt of an
  error body is redacted before it is cut -- and from urllib3's log lines
  while the call runs (``http_transport``).

What went wrong is put in words by ``http_failures``.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urljoin, urlsplit

from agentkit import binary, jsonvalues
from agentkit.audit import note_upstream_status
from agentkit.callcache import upstream_said
from agentkit.context import confirm, log
from agentkit.declarative.backends.base import BackendContext
from agentkit.declarative.backends.http import failures as failures
from agentkit.declarative.backends.http.multipart import MultipartError
from agentkit.declarative.backends.http.oauth2 import OAuth2Error
from agentkit.declarative.backends.http.pagination import Pagination, PaginationError, collect
from agentkit.declarative.backends.http.request import build_request, preview
from agentkit.declarative.backends.http.sources import (
    Source,
    substitute_auth,
    substitute_pairs,
    use_source,
)
from agentkit.declarative.backends.http.spec import (
    IDEMPOTENT,
    HttpSpec,
    is_plain_remote,
    parse_http_spec,
)
from agentkit.declarative.backends.http.url import authority, authority_problem
from agentkit.declarative.backends.http.values import (
    OAuth2Auth,
)
from agentkit.declarative.templates import TemplateRenderError
from agentkit.redaction import Redactor, active_redactor, excerpt, redacting
from agentkit.toolerrors import HttpCallError

if TYPE_CHECKING:
    import requests
    from requests.structures import CaseInsensitiveDict

    from agentkit.declarative.backends.http.transport import Exchange

# requests (about 200 ms to import) is imported where a request is made, not
# here: loading, listing and exporting definitions never send one.

__all__ = ["HttpBackend", "HttpCallError", "ResponseView"]

MAX_REDIRECTS: Final = 5
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_EXCERPT: Final = 200
# Said of timeout.total, so that it is not taken for the server's --call-timeout.
_OWN_DEADLINE: Final = (
    "the tool's own deadline: raise timeout.total in its definition if the API needs longer"
)
_jitter = random.Random()


# -- the response as templates see it --------------------------------------------------------------


class ResponseView:
    """``response`` in output templates: status, headers (case-insensitive), json, text."""

    TEMPLATE_ATTRIBUTES: Final = ("status", "headers", "json", "text")
    __slots__ = ("_body", "_encoding", "_json", "headers", "status")

    def __init__(
        self, status: int, headers: CaseInsensitiveDict[str], body: bytes, encoding: str | None
    ) -> None:
        self.status = status
        self.headers = headers
        self._body = body
        self._encoding = encoding or "utf-8"
        self._json: Any = _UNPARSED

    @property
    def size(self) -> int:
        """The body's length in bytes, as read (decoded)."""
        return len(self._body)

    @property
    def content(self) -> bytes:
        """The body as it came (decoded from any transfer encoding); not for templates."""
        return self._body

    @property
    def text(self) -> str:
        return self._body.decode(self._encoding, errors="replace")

    @property
    def json(self) -> Any:
        if self._json is _UNPARSED:
            try:
                # Strict: a reply nested too deeply, or with NaN, fails this call cleanly.
                self._json = jsonvalues.loads(self._body)
            except ValueError as exc:
                raise TemplateRenderError(f"the response body is not JSON ({exc})") from None
        return self._json


_UNPARSED: Final = object()
#: What a dry run's auth header says of an OAuth2 token.
NOT_FETCHED: Final = "an OAuth2 token would be fetched first; none was"
#: What a call can fail in before anything is sent, or while sending.
_FAILURES: Final = (
    TemplateRenderError,
    PaginationError,
    MultipartError,
    HttpCallError,
    OAuth2Error,
)


def _call_error(exc: Exception) -> HttpCallError:
    """``exc`` (one of ``_FAILURES``) as the call's failure."""
    if isinstance(exc, TemplateRenderError):
        return HttpCallError("template", str(exc))
    if isinstance(exc, PaginationError):
        return HttpCallError("paginate", str(exc))
    if isinstance(exc, MultipartError):
        return HttpCallError("request", str(exc))
    if isinstance(exc, OAuth2Error):  # its message names the token URL, never a secret
        return HttpCallError("auth", str(exc), status=exc.status)
    assert isinstance(exc, HttpCallError)
    return exc


class HttpBackend:
    """Calls one HTTP endpoint, as its ``HttpSpec`` describes."""

    kind: ClassVar[str] = "http"
    #: A ``confirm: true`` call asks the user here, showing the request it is about to
    #: send, instead of with its arguments before ``call`` (``DeclarativeTool``).
    confirms_sends: ClassVar[bool] = True

    def __init__(self, spec: HttpSpec, *, session: requests.Session | None = None) -> None:
        self.spec = spec
        self._session = session
        self._session_lock = threading.Lock()
        #: A proxy's password the environment gave (``proxy: environment``): a secret.
        self._proxy_secrets: tuple[str, ...] = ()
        #: What is wrong with the origin's host or port (loading refuses such a spec).
        self._origin_problem = authority_problem(authority(spec.origin))

    @classmethod
    def parse(cls, raw: Any, context: BackendContext) -> HttpBackend | None:
        """``${VAR}`` substituted in literal headers and query values, a ``source:``
        merged under the tool's own keys, then the whole checked (``parse_http_spec``)."""
        resolved = _resolve(raw, context)
        if resolved is None:
            return None
        raw, source = resolved
        credentials = context.credentials
        if source is not None:
            credentials = tuple(dict.fromkeys((*credentials, *source.credentials)))
        spec = parse_http_spec(
            raw,
            context.location,
            context.inputs,
            context.outputs,
            credentials,
            context.problems,
            token_cache=source.token_cache if source is not None else None,
        )
        if spec is None:
            return None
        if spec.binary:
            if len(context.outputs):
                context.problems.add(
                    ("output_schema",),
                    "a binary tool's output is fixed ({media_type, data, size}); remove "
                    "'output_schema'",
                )
                return None
            context.report.output_schema = binary.OUTPUT_SCHEMA
        # With no credential, nothing secret goes anywhere.
        if spec.plain_http and credentials:
            whose = (
                f" (the base_url of source '{source.name}', {source.location})"
                if source is not None
                else ""
            )
            what = (
                f"an OAuth2 token got with credentials ({', '.join(credentials)})"
                if isinstance(spec.auth, OAuth2Auth)
                else f"credentials ({', '.join(credentials)})"
            )
            context.warn(
                f"backend.http: {what} would be sent over plain http:// to {spec.origin}"
                f"{whose}, readable by anyone on the way; use https://"
            )
        if isinstance(spec.auth, OAuth2Auth) and is_plain_remote(spec.auth.grant.token_url):
            context.warn(
                f"backend.http.auth.oauth2.token_url: the client secret would be sent over "
                f"plain http:// to {spec.auth.grant.token_url}; use https://"
            )
        return cls(spec)

    @property
    def default_annotations(self) -> dict[str, Any]:
        """GET and HEAD read only, and are idempotent; PUT, DELETE and OPTIONS are idempotent."""
        if self.spec.method in ("GET", "HEAD"):
            return {"read_only": True, "idempotent": True}
        if self.spec.method in IDEMPOTENT:
            return {"idempotent": True}
        return {}

    @property
    def session(self) -> requests.Session:
        # One keep-alive pool per tool, made on first use (requests' pools are thread-safe).
        if self._session is None:
            with self._session_lock:
                if self._session is None:
                    self._session = self._new_session()
        return self._session

    def _new_session(self) -> requests.Session:
        """The tool's session: its proxies decided now, once (``http_transport.proxies``)."""
        from agentkit.declarative.backends.http import transport as transport

        spec = self.spec
        urls: tuple[str, ...] = (spec.origin,)
        if isinstance(spec.auth, OAuth2Auth):
            urls += (spec.auth.grant.token_url,)
        try:
            proxies = transport.proxies(spec.proxy, urls)
        except ValueError as exc:  # what the environment names cannot be used
            raise HttpCallError(
                "connection", f"{spec.method} {spec.origin}: proxy: {spec.proxy}: {exc}"
            ) from None
        self._proxy_secrets = transport.proxy_secrets(proxies)
        return transport.new_session(verify=spec.verify, proxies=proxies)

    def call(self, inputs: Mapping[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        # The executor's redactor for this call when there is one, so that what
        # is derived here is redacted from the call's output, events and records too.
        redactor = active_redactor()
        if redactor is None:
            redactor = Redactor()
        redactor.add(*credentials.values())
        view_inputs = {name: inputs.get(name) for name in self.spec.input_names}
        # Importing requests the first time (about 200 ms) is the process's cost,
        # not the call's; rendering the request counts against the deadline.
        session = self.session
        if self._proxy_secrets:
            redactor.add(*self._proxy_secrets)
        deadline = time.monotonic() + self.spec.total_timeout
        with redacting(redactor):
            try:
                request = build_request(self.spec, view_inputs, credentials, deadline)
                allowed = confirm(lambda: preview(self.spec, request, view_inputs))
                if allowed:
                    # The user's time to answer is not the call's: the deadline starts again.
                    deadline = time.monotonic() + self.spec.total_timeout
                if self.spec.paginate is not None:
                    pagination = self.spec.paginate
                    return self._pages(
                        pagination, credentials, session, deadline, view_inputs, request, allowed
                    )
                response = self._dispatch(credentials, session, deadline, request, allowed=allowed)
                return self._output(view_inputs, response, deadline)
            except _FAILURES as exc:
                failure = _call_error(exc)
        # Raised outside the handler, cleaned: neither the message nor the chain
        # (a requests error holds the prepared request, headers and all) keeps a secret.
        raise redactor.clean_exception(failure)

    def dry_run(self, inputs: Mapping[str, Any], credentials: Mapping[str, str]) -> str:
        """The request ``call`` would send first for ``inputs`` (checked already), as its
        confirmation shows it -- ``"send this request:\\n..."``, every secret masked, a
        paginated tool's further pages said -- with nothing sent and no OAuth2 token
        fetched. Raises ``HttpCallError`` (cleaned of secrets) when the request cannot be
        built, as ``call`` would before sending."""
        redactor = Redactor()
        redactor.add(*credentials.values())
        view_inputs = {name: inputs.get(name) for name in self.spec.input_names}
        deadline = time.monotonic() + self.spec.total_timeout
        with redacting(redactor):
            try:
                request = build_request(self.spec, view_inputs, credentials, deadline)
                shown = preview(self.spec, request, view_inputs, token=NOT_FETCHED)
                return redactor.redact(shown)
            except _FAILURES as exc:
                failure = _call_error(exc)
        raise redactor.clean_exception(failure)

    def _dispatch(
        self,
        credentials: Mapping[str, str],
        session: requests.Session,
        deadline: float,
        request: tuple[str, list[tuple[str, str]], dict[str, str], dict[str, Any]],
        limit: int | None = None,
        *,
        allowed: bool = False,
    ) -> ResponseView:
        """Send ``request`` (one page, or the only one), with a token when auth is OAuth2;
        ``allowed``: as the user allowed it (``confirm``), so never elsewhere by a
        redirect that would send it again."""
        if isinstance(self.spec.auth, OAuth2Auth):
            return self._send_with_token(
                self.spec.auth, credentials, session, deadline, request, limit, allowed=allowed
            )
        return self._send(session, deadline, *request, limit, allowed=allowed)

    def _send_with_token(
        self,
        auth: OAuth2Auth,
        credentials: Mapping[str, str],
        session: requests.Session,
        deadline: float,
        request: tuple[str, list[tuple[str, str]], dict[str, str], dict[str, Any]],
        limit: int | None = None,
        *,
        allowed: bool = False,
    ) -> ResponseView:
        """Send with an OAuth2 bearer token; on a 401, drop that token and resend once.

        A 401 means the API refused the token (expired early, revoked), not the
        request, so resending it -- a POST too -- does not repeat any work.
        """
        url, params, headers, body = request
        token = auth.token(credentials, deadline=deadline, session=session)
        headers[auth.name] = f"Bearer {token}"
        try:
            return self._send(session, deadline, url, params, headers, body, limit, allowed=allowed)
        except HttpCallError as exc:
            if exc.status != 401 or exc.kind != "status":
                raise
        auth.invalidate(token)
        token = auth.token(credentials, deadline=deadline, session=session)
        headers[auth.name] = f"Bearer {token}"
        return self._send(session, deadline, url, params, headers, body, limit, allowed=allowed)

    def _pages(
        self,
        pagination: Pagination,
        credentials: Mapping[str, str],
        session: requests.Session,
        deadline: float,
        inputs: dict[str, Any],
        request: tuple[str, list[tuple[str, str]], dict[str, str], dict[str, Any]],
        allowed: bool,
    ) -> dict[str, Any]:
        """Follow the pages (``pagination``), every one within the call's one deadline
        (``allowed``: as ``_dispatch``)."""
        spec = self.spec
        url, params, headers, body = request

        def fetch(
            page_url: str, page_params: list[tuple[str, str]], *, limit: int | None, page: int
        ) -> ResponseView | None:
            cap = spec.max_response_bytes if limit is None else min(limit, spec.max_response_bytes)
            page_request = (page_url, page_params, dict(headers), body)
            try:
                return self._dispatch(
                    credentials, session, deadline, page_request, cap, allowed=allowed
                )
            except HttpCallError as exc:
                if page > 1 and exc.kind == "too_large":
                    return None  # the records so far are the answer, marked truncated
                if page > 1:
                    raise HttpCallError(
                        exc.kind, f"page {page}: {exc}", status=exc.status
                    ) from None
                raise

        auth = spec.auth
        keep = [
            pair
            for pair in params
            if auth is not None and auth.placement == "query" and pair[0] == auth.name
        ]
        records = collect(
            pagination,
            inputs=inputs,
            url=url,
            params=params,
            keep=keep,
            origin=spec.origin,
            fetch=fetch,
            deadline=deadline,
        )
        outputs = spec.outputs
        return {name: outputs.project(name, value) for name, value in records.items()}

    # -- sending --------------------------------------------------------------------------------

    def _send(
        self,
        session: requests.Session,
        deadline: float,
        url: str,
        params: list[tuple[str, str]],
        headers: dict[str, str],
        body: dict[str, Any],
        limit: int | None = None,
        *,
        allowed: bool = False,
    ) -> ResponseView:
        """Send with retries, all within ``deadline``; read at most ``limit`` bytes of body
        (``max_response_bytes`` when None); ``allowed``: as ``_dispatch``.

        A request that may have reached the server is sent again only when the
        method is idempotent (or the definition says ``non_idempotent: true``);
        one that provably never left (the connect failed) always may be.
        """
        import requests

        from agentkit.declarative.backends.http.transport import Exchange

        spec = self.spec
        if self._origin_problem is not None:
            # A spec made in code, not loaded: urllib3 would fail on it in its own words.
            raise HttpCallError(
                "request", f"{spec.method} {spec.origin}: {self._origin_problem}; nothing was sent"
            )
        try:
            prepared = requests.Request(
                spec.method, url, params=params, headers=headers, **body
            ).prepare()
        except (requests.RequestException, ValueError) as exc:  # InvalidHeader, InvalidURL, ...
            raise HttpCallError(
                "request", f"{spec.method} {spec.origin}: cannot build the request: {exc}"
            ) from exc
        self._check_origin(prepared.url or "", spec.method)
        retry = spec.retry
        may_resend = spec.idempotent or retry.non_idempotent
        with Exchange(deadline) as exchange:
            for attempt in range(1, retry.attempts + 1):
                last = attempt == retry.attempts
                exchange.begin_attempt()
                response = None
                try:
                    response = self._exchange(session, prepared, exchange, allowed)
                    if response.status_code in retry.on_status and may_resend and not last:
                        delay = self._retry_delay(response, attempt)
                        response.close()
                        self._pause(
                            prepared, exchange, delay, status=response.status_code, attempt=attempt
                        )
                        continue
                    return self._read(prepared, response, exchange, limit)
                except requests.RequestException as exc:
                    if exchange.timed_out:
                        raise self._deadline(prepared, exchange) from None
                    resend = exchange.never_left or may_resend
                    retrying = failures.retrying(
                        prepared, failures.reason(exc), attempt, retry.attempts
                    )
                    if (
                        last
                        or not resend
                        or not self._wait(self._backoff(attempt), exchange, retrying)
                    ):
                        failure = self._failure(
                            prepared,
                            exchange,
                            exc,
                            attempt,
                            replied=response is not None,
                            held_back=not (resend or last),
                        )
                        raise failure from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _exchange(
        self,
        session: requests.Session,
        prepared: requests.PreparedRequest,
        exchange: Exchange,
        allowed: bool,
    ) -> requests.Response:
        """Send, following same-origin redirects; the body is not read yet.

        A request the user ``allowed`` as shown follows a redirect only as a GET (or
        HEAD) without a body: one that would send its method, and its body, again to
        another URL (307, 308; 301 and 302 but after a POST) fails the call instead.
        """
        request = prepared
        for _ in range(MAX_REDIRECTS + 1):
            response = session.send(
                request,
                stream=True,
                allow_redirects=False,
                timeout=self._timeouts(prepared, exchange),
                verify=self.spec.verify,
            )
            note_upstream_status(response.status_code)  # for the audit trail, if any
            location = response.headers.get("Location")
            if not (self.spec.follow_redirects and response.status_code in _REDIRECTS and location):
                return response
            target = urljoin(request.url or "", location)
            response.close()
            self._check_origin(target, request.method or "GET", redirect=True)
            status = response.status_code
            reads = status == 303 or (status in (301, 302) and request.method == "POST")
            if allowed and not reads and request.method not in ("GET", "HEAD"):
                raise HttpCallError(
                    "redirect",
                    f"{request.method} {request.url} answered {status}, redirecting to "
                    f"{target}: a request the user allowed is not sent again to a URL they "
                    f"were not shown (the {request.method} and its body would go there), so "
                    "the redirect was not followed and nothing was sent to it",
                    status=status,
                )
            request = request.copy()
            request.prepare_url(target, None)
            if reads:
                request.method = "GET" if request.method != "HEAD" else "HEAD"
                request.body = None
                for name in ("Content-Type", "Content-Length"):
                    request.headers.pop(name, None)
        raise HttpCallError(
            "redirect",
            f"{prepared.method} {prepared.url} redirected more than {MAX_REDIRECTS} times",
        )

    def _check_origin(self, url: str, method: str, *, redirect: bool = False) -> None:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin.lower() != self.spec.origin.lower():
            what = "redirected to" if redirect else "would go to"
            raise HttpCallError(
                "redirect" if redirect else "request",
                f"{method} {self.spec.origin}: {what} another origin ({origin}); "
                "only the definition's own origin is allowed",
            )

    def _timeouts(
        self, prepared: requests.PreparedRequest, exchange: Exchange
    ) -> tuple[float, float]:
        remaining = exchange.remaining
        if remaining <= 0:
            raise self._deadline(prepared, exchange)
        return min(self.spec.connect_timeout, remaining), min(self.spec.read_timeout, remaining)

    def _deadline(self, prepared: requests.PreparedRequest, exchange: Exchange) -> HttpCallError:
        maybe_processed = exchange.sent and not self.spec.idempotent
        return HttpCallError(
            "deadline",
            f"{prepared.method} {prepared.url} timed out after {self.spec.total_timeout} s "
            f"(timeout.total), {_OWN_DEADLINE}"
            + ("; the request was sent and may have been processed" if maybe_processed else ""),
        )

    def _failure(
        self,
        prepared: requests.PreparedRequest,
        exchange: Exchange,
        exc: Exception,
        attempt: int,
        *,
        replied: bool,
        held_back: bool,
    ) -> HttpCallError:
        """The error for an attempt that failed without a usable reply, saying what happened.

        ``replied``: the status and headers had arrived; ``held_back``: attempts
        were left, but the request may have been processed and is not idempotent.
        """
        import requests
        from requests.utils import select_proxy

        where = f"{prepared.method} {prepared.url}"
        kind = "timeout" if isinstance(exc, requests.Timeout) else "connection"
        if exchange.never_left:
            words = failures.connect_failure(
                exc,
                prepared.url or "",
                connect_timeout=self.spec.connect_timeout,
                proxy=select_proxy(prepared.url or "", self.session.proxies) or None,
            )
            return HttpCallError(
                "connection",
                f"{where} failed to connect after {attempt} attempt(s): "
                f"{words or failures.reason(exc)}",
            )
        happened = ("sent, " if exchange.sent else "maybe sent, ") + failures.what_happened(
            exc, replied=replied, read_timeout=self.spec.read_timeout
        )
        if held_back:
            return HttpCallError(kind, f"{where} {happened}; not retried (not idempotent)")
        return HttpCallError(kind, f"{where} failed after {attempt} attempt(s): {happened}")

    def _backoff(self, attempt: int) -> float:
        base: float = self.spec.retry.backoff * 2 ** (attempt - 1)
        return base * _jitter.uniform(0.5, 1.5)

    def _retry_delay(self, response: requests.Response, attempt: int) -> float:
        """The server's ``Retry-After`` capped at ``retry.max_wait``, else the backoff."""
        asked = failures.retry_after_seconds(response.headers.get("Retry-After"), now=time.time())
        if asked is None:
            return self._backoff(attempt)
        return min(asked, self.spec.retry.max_wait)

    def _pause(
        self,
        prepared: requests.PreparedRequest,
        exchange: Exchange,
        delay: float,
        *,
        status: int,
        attempt: int,
    ) -> None:
        retrying = failures.retrying(
            prepared, f"returned {status}", attempt, self.spec.retry.attempts
        )
        if not self._wait(delay, exchange, retrying):
            raise HttpCallError(
                "deadline",
                f"{prepared.method} {prepared.url} returned {status}; retrying after {delay:.1f} s "
                f"would pass the {self.spec.total_timeout} s deadline (timeout.total), "
                f"{_OWN_DEADLINE}",
                status=status,
            )

    @staticmethod
    def _wait(delay: float, exchange: Exchange, retrying: str = "") -> bool:
        """Sleep ``delay`` seconds if the deadline allows it; False when it does not.

        ``retrying`` (what is retried and why) goes to the client first, as a warning.
        """
        if delay >= exchange.remaining:
            return False
        if retrying:
            log("warning", f"{retrying} in {delay:.1f} s", logger_name="agentkit.http")
        time.sleep(delay)
        return True

    def _read(
        self,
        prepared: requests.PreparedRequest,
        response: requests.Response,
        exchange: Exchange,
        limit: int | None = None,
    ) -> ResponseView:
        """Read the body within the deadline; a requests error means the reply broke off."""
        spec = self.spec
        limit = spec.max_response_bytes if limit is None else limit
        chunks: list[bytes] = []
        size = 0
        with response:
            for chunk in failures.chunks(response):
                size += len(chunk)
                if size > limit:
                    raise HttpCallError(
                        "too_large",
                        f"{prepared.method} {prepared.url}: the response body is over "
                        f"max_response_bytes ({limit} bytes)",
                        status=response.status_code,
                    )
                if exchange.timed_out:
                    raise self._deadline(prepared, exchange)
                chunks.append(chunk)
        view = ResponseView(
            response.status_code, response.headers, b"".join(chunks), response.encoding
        )
        upstream_said(response.headers.get("Cache-Control"))  # for a cache: keep, or not
        if not (
            200 <= view.status < 300
            or view.status in spec.accept_status
            or spec.outputs.accepts(view.status)
        ):
            shown = " ".join(excerpt(view.text, _EXCERPT).split())
            raise HttpCallError(
                "status",
                f"{prepared.method} {prepared.url} returned {view.status} {response.reason}"
                + (f": {shown}" if shown else ""),
                status=view.status,
                retry_after=failures.retry_after_seconds(
                    response.headers.get("Retry-After"), now=time.time()
                )
                if view.status == 429
                else None,
            )
        return view

    # -- mapping the reply --------------------------------------------------------------------

    def _output(
        self, inputs: dict[str, Any], response: ResponseView, deadline: float
    ) -> dict[str, Any]:
        if self.spec.binary:
            return binary.encode(response.content, response.headers.get("Content-Type"))
        outputs = self.spec.outputs
        label, mapping = outputs.mapping_for(response.status)
        if mapping is not None:
            context = {"inputs": inputs, "response": response}
            return outputs.render(label, mapping, context, deadline)
        try:
            data = response.json
            reason = ""
        except TemplateRenderError as exc:
            data, reason = None, f" ({exc})"
        if not isinstance(data, dict):
            raise HttpCallError(
                "output",
                f"the response (status {response.status}) is not a JSON object{reason}; "
                "add an 'output' mapping to extract the output fields",
            )
        return {name: outputs.project(name, data[name]) for name in outputs.names if name in data}


def _resolve(raw: Any, context: BackendContext) -> tuple[Any, Source | None] | None:
    """``backend.http`` with ``${VAR}`` substituted and its source merged in, and the
    source; None on a problem."""
    if not isinstance(raw, dict):
        return raw, None  # the HTTP parser says what is wrong
    location = context.location
    raw = dict(raw)
    for key in ("headers", "query"):
        if key in raw:
            raw[key] = substitute_pairs(raw[key], (*location, key), context.substituter)
    substitute_auth(raw, (*location, "auth"), context.substituter)
    if "source" in raw:
        merged = use_source(raw, location, context.sources, context.problems)
        if merged is None:
            return None
        context.use_source(merged[1])
        return merged
    if "path" in raw:
        context.problem(
            "'path' goes with 'source' (a path under a source's base URL); without a source, "
            "give the whole 'url'",
            "path",
        )
        return None
    return raw, None
