"""Sending one HTTP request of a tool: retries, redirects and reading, within one deadline.

``Sender(spec).send(...)`` sends a built request (``request.build_request``) and reads
the reply within ``timeout.total``:

- every attempt's timeouts, every retry wait and every body read are bounded by what
  is left of the deadline, and every socket send and receive times out at it
  (``transport``), so no read -- status line, headers or body, however slowly
  dripped -- outlives it;
- a request that may have reached the server is sent again only when its method is
  idempotent (or ``retry.non_idempotent`` says so); one that provably never left (its
  connect failed) may always be; a ``Retry-After`` is honoured up to ``retry.max_wait``;
- redirects are followed only within the origin, at most ``MAX_REDIRECTS``; after the
  user allowed the request (``confirm``), only one that makes it a GET without a body;
- the body is read as a stream and counted against ``max_response_bytes``
  (``Content-Length`` is never trusted); a status that is neither 2xx nor accepted
  fails the call with an excerpt of the body, redacted before it is cut.

What went wrong is put in words by ``failures``.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Final, final
from urllib.parse import urljoin, urlsplit

from agentkit.audit import note_upstream_status
from agentkit.callcache import upstream_said
from agentkit.context import log
from agentkit.declarative.backends.http import failures
from agentkit.declarative.backends.http.responses import ResponseView
from agentkit.declarative.backends.http.spec import HttpSpec
from agentkit.declarative.backends.http.url import authority, authority_problem
from agentkit.redaction import excerpt
from agentkit.toolerrors import HttpCallError

if TYPE_CHECKING:
    from typing import Any

    import requests

    from agentkit.declarative.backends.http.transport import Exchange

__all__ = ["MAX_REDIRECTS", "Sender"]

MAX_REDIRECTS: Final = 5
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_EXCERPT: Final = 200
# Said of timeout.total, so that it is not taken for the server's --call-timeout.
_OWN_DEADLINE: Final = (
    "the tool's own deadline: raise timeout.total in its definition if the API needs longer"
)
_jitter = random.Random()


@final
class Sender:
    """Sends the requests of one ``HttpSpec`` (see the module docstring)."""

    __slots__ = ("origin_problem", "spec")

    def __init__(self, spec: HttpSpec) -> None:
        self.spec = spec
        #: What is wrong with the origin's host or port (loading refuses such a spec).
        self.origin_problem = authority_problem(authority(spec.origin))

    def send(
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
        (``max_response_bytes`` when None); ``allowed``: as the user allowed it
        (``confirm``), so never sent elsewhere by a redirect that would send it again.

        A request that may have reached the server is sent again only when the
        method is idempotent (or the definition says ``non_idempotent: true``);
        one that provably never left (the connect failed) always may be.
        """
        import requests

        from agentkit.declarative.backends.http.transport import Exchange

        spec = self.spec
        if self.origin_problem is not None:
            # A spec made in code, not loaded: urllib3 would fail on it in its own words.
            raise HttpCallError(
                "request", f"{spec.method} {spec.origin}: {self.origin_problem}; nothing was sent"
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
                            session,
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
        session: requests.Session,
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
                proxy=select_proxy(prepared.url or "", session.proxies) or None,
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
