"""The requests adapters an HTTP tool's session gets while its examples run.

``requests.Session.mount`` is the seam: the backend's own session (and so its
deadline, redirects, retries, pagination and OAuth2 token requests) is used as
it is, and only the transport under it changes.

- ``ReplayAdapter`` answers each request from a recording, in order, and opens
  no socket. A request that differs from the one recorded at its place is
  answered with an error and noted (``mismatch``), with a diff of the two.
- ``RecordingAdapter`` sends through the adapter that was mounted (the real
  API), and keeps each request, with credentials replaced by placeholders, and
  its reply.
"""

from __future__ import annotations

import http.client
import io
from collections.abc import Mapping
from typing import Any

import requests
from requests.adapters import BaseAdapter, HTTPAdapter
from urllib3 import HTTPResponse

from agentkit.redaction import Redactor, active_redactor
from agentkit.testing.recordings import (
    RecordedExchange,
    normal_request,
    normal_response,
    placeholder_request,
    request_diff,
)
from agentkit.toolerrors import AgentKitError

__all__ = [
    "AnsweringAdapter",
    "RecordingAdapter",
    "ReplayAdapter",
    "build_response",
]


class _ReplayMismatch(AgentKitError):
    """A request that its recording does not have; the adapter's ``mismatch`` says how.

    Not a requests error, so that the backend neither retries nor reports it as the
    API's failure: the call fails at once, and the test reports the mismatch."""


def build_response(
    request: requests.PreparedRequest, status: int, headers: Mapping[str, str], body: bytes
) -> requests.Response:
    """A ``requests.Response`` for ``request``, read from ``body`` (nothing on a socket)."""
    headers = {k: v for k, v in headers.items() if k.lower() not in ("content-length",)}
    headers["Content-Length"] = str(len(body))
    raw = HTTPResponse(
        body=io.BytesIO(body),
        headers=headers,
        status=status,
        reason=http.client.responses.get(status, ""),
        preload_content=False,
        decode_content=False,
    )
    response: requests.Response = HTTPAdapter().build_response(request, raw)
    return response


def _normal(request: requests.PreparedRequest) -> dict[str, Any]:
    return normal_request(
        request.method or "GET", request.url or "", dict(request.headers), request.body
    )


class AnsweringAdapter(BaseAdapter):
    """A requests adapter whose ``answer`` gets each request and requests' options for it."""

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float, float] | tuple[float, None] | None = None,
        verify: bool | str = True,
        cert: bytes | str | tuple[bytes | str, bytes | str] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        options = {
            "stream": stream,
            "timeout": timeout,
            "verify": verify,
            "cert": cert,
            "proxies": proxies,
        }
        return self.answer(request, options)

    def answer(
        self, request: requests.PreparedRequest, options: dict[str, Any]
    ) -> requests.Response:
        raise NotImplementedError

    def close(self) -> None:
        pass


class ReplayAdapter(AnsweringAdapter):
    """Answers from ``exchanges``, in order; never opens a socket."""

    def __init__(self, exchanges: tuple[RecordedExchange, ...], *, where: str) -> None:
        super().__init__()
        self._exchanges = exchanges
        self._where = where
        self.used = 0
        #: Why replay stopped: the request that did not match, with a diff; "" if none.
        self.mismatch = ""

    @property
    def size(self) -> int:
        """How many exchanges the recording has."""
        return len(self._exchanges)

    def answer(
        self, request: requests.PreparedRequest, options: dict[str, Any]
    ) -> requests.Response:
        sent = _normal(request)
        position = self.used
        if position >= len(self._exchanges):
            self.mismatch = self.mismatch or (
                f"request {position + 1} is not in the recording ({self._where}"
                + (f", with {len(self._exchanges)} request(s)" if self._exchanges else "")
                + f"): {sent['method']} {sent['url']}; "
                "record it with `agentkit test --record`"
            )
            raise _ReplayMismatch(self.mismatch)
        exchange = self._exchanges[position]
        self.used += 1
        if dict(exchange.request) != sent:
            self.mismatch = self.mismatch or (
                f"request {position + 1} differs from its recording ({self._where}):\n"
                + request_diff(exchange.request, sent)
            )
            raise _ReplayMismatch(self.mismatch)
        return build_response(
            request, exchange.status, exchange.response_headers(), exchange.response_body()
        )


class RecordingAdapter(AnsweringAdapter):
    """Sends through ``inner`` and keeps each exchange, credentials as placeholders."""

    def __init__(
        self, inner: BaseAdapter, credentials: Mapping[str, str], *, mentioned: str
    ) -> None:
        super().__init__()
        self._inner = inner
        self._credentials = dict(credentials)
        self._mentioned = mentioned.lower()
        self.exchanges: list[RecordedExchange] = []
        #: The call's own redactor (what it derived from its credentials), once seen.
        self.derived: Redactor | None = None

    def answer(
        self, request: requests.PreparedRequest, options: dict[str, Any]
    ) -> requests.Response:
        self.derived = active_redactor() or self.derived
        response = self._inner.send(request, **options)
        body = response.content  # read whole (decoded), to keep and to give back
        headers = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("content-encoding", "transfer-encoding")
        }
        kept = normal_response(response.status_code, headers, body, self._mentioned)
        self.exchanges.append(
            RecordedExchange(
                request=placeholder_request(_normal(request), self._credentials), response=kept
            )
        )
        return build_response(request, response.status_code, headers, body)

    def close(self) -> None:
        self._inner.close()
