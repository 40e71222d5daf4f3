"""Running an HTTP backend: build the request safely, send it within its deadline, map the reply.

- The scheme, host and port are literal; each path template becomes one
  percent-encoded segment, and a segment that renders empty, ``.`` or ``..``
  fails the call. The final URL's origin is checked again before sending.
- A header value with CR, LF or NUL fails the call before anything is sent.
- ``timeout.total`` is a deadline for the whole call: every attempt's timeouts,
  every retry wait and every body read are bounded by what is left of it.
- Redirects are followed only within the origin, at most five.
- The body is read as a stream, decoded, and counted against
  ``max_response_bytes``; ``Content-Length`` is never trusted.
- Credential values, and every form the call derives from them (basic auth's
  pair, a header or query value rendered from ``credentials``), join the
  call's redactor: they are redacted from every error -- the excerpt of an
  error body is redacted before it is cut -- and from urllib3's debug log lines
  while the call runs.
"""

from __future__ import annotations

import base64
import logging
import random
import threading
import time
from collections.abc import Iterator, Mapping
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urljoin, urlsplit

from agentkit import jsonvalues
from agentkit.declarative.http_spec import HttpSpec
from agentkit.declarative.templates import Template, TemplateRenderError
from agentkit.redaction import Redactor, active_redactor, excerpt, redact_also, redacting
from agentkit.toolerrors import AgentKitError

if TYPE_CHECKING:
    import requests
    from requests.structures import CaseInsensitiveDict

# requests (about 200 ms to import) is imported where a request is made, not
# here: loading, listing and exporting definitions never send one.

__all__ = ["HttpBackend", "HttpCallError", "ResponseView"]

MAX_REDIRECTS: Final = 5
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_EXCERPT: Final = 200
_CHUNK: Final = 64 * 1024
_jitter = random.Random()


class HttpCallError(AgentKitError):
    """An HTTP backend call failed; ``kind`` says how (status, timeout, deadline, ...)."""

    def __init__(self, kind: str, message: str, *, status: int | None = None) -> None:
        self.kind = kind
        self.status = status
        super().__init__(message)


# -- keeping secrets out of urllib3's debug lines -----------------------------------------------


class _RedactingFilter(logging.Filter):
    """Redacts the secrets of the call running in this context from each log record."""

    def filter(self, record: logging.LogRecord) -> bool:
        redactor = active_redactor()
        if redactor:
            message = record.getMessage()
            cleaned = redactor.redact(message)
            if cleaned != message:
                record.msg, record.args = cleaned, ()
        return True


_FILTER: Final = _RedactingFilter()
for _name in (
    "urllib3.connectionpool",
    "urllib3.connection",
    "urllib3.response",
    "urllib3.util.retry",
):
    logging.getLogger(_name).addFilter(_FILTER)


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


def _text(value: Any, where: str) -> str:
    """A rendered value as it goes into a URL, header or form field."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise HttpCallError("request", f"{where}: cannot send a {type(value).__name__} here")


class HttpBackend:
    """Calls one HTTP endpoint, as its ``HttpSpec`` describes."""

    kind = "http"

    def __init__(self, spec: HttpSpec, *, session: requests.Session | None = None) -> None:
        self.spec = spec
        self._session = session
        self._session_lock = threading.Lock()

    @property
    def session(self) -> requests.Session:
        # One keep-alive pool per tool, made on first use (requests' pools are thread-safe).
        import requests

        if self._session is None:
            with self._session_lock:
                if self._session is None:
                    session = requests.Session()
                    session.trust_env = False  # no .netrc, no proxies from the environment
                    self._session = session
        return self._session

    def call(self, inputs: Mapping[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        # The executor's redactor for this call when there is one, so that what
        # is derived here is redacted from the call's output, events and records too.
        redactor = active_redactor()
        if redactor is None:
            redactor = Redactor()
        redactor.add(*credentials.values())
        view_inputs = {name: inputs.get(name) for name in self.spec.input_names}
        # The deadline covers the whole call: rendering templates included.
        deadline = time.monotonic() + self.spec.total_timeout
        with redacting(redactor):
            try:
                request = self._build(view_inputs, credentials, deadline)
                response = self._send(*request, deadline)
                return self._output(view_inputs, response, deadline)
            except TemplateRenderError as exc:
                failure = HttpCallError("template", str(exc))
            except HttpCallError as exc:
                failure = exc
        # Raised outside the handler, cleaned: neither the message nor the chain
        # (a requests error holds the prepared request, headers and all) keeps a secret.
        raise redactor.clean_exception(failure)

    # -- building the request -----------------------------------------------------------------

    def _build(
        self, inputs: dict[str, Any], credentials: Mapping[str, str], deadline: float
    ) -> tuple[str, list[tuple[str, str]], dict[str, str], dict[str, Any]]:
        spec = self.spec
        context = {"inputs": inputs, "credentials": dict(credentials)}
        url = spec.origin + self._path(context, deadline)
        params: list[tuple[str, str]] = []
        for name, value in spec.query:
            rendered = _render(value, context, deadline)
            if rendered is None:
                continue
            items = rendered if isinstance(rendered, list) else [rendered]
            params.extend((name, _text(item, f"query '{name}'")) for item in items)
        headers: dict[str, str] = {}
        for name, value in spec.headers:
            rendered = _render(value, context, deadline)
            if rendered is not None:
                headers[name] = _text(rendered, f"header '{name}'")
        body: dict[str, Any] = {}
        if spec.body_kind == "json":
            body["json"] = _render_json(spec.body, context, deadline)
        elif spec.body_kind == "form":
            body["data"] = [
                (name, _text(rendered, f"form field '{name}'"))
                for name, value in spec.body
                if (rendered := _render(value, context, deadline)) is not None
            ]
        elif spec.body_kind == "body":
            body["data"] = _text(_render(spec.body, context, deadline), "body").encode("utf-8")
        if spec.content_type:
            headers["Content-Type"] = spec.content_type
        if spec.auth is not None:
            self._authenticate(spec.auth, credentials, headers, params)
        for name, value in headers.items():
            if any(char in value for char in "\r\n\0"):
                raise HttpCallError(
                    "request",
                    f"header '{name}' would contain a line break or NUL; refusing to send "
                    "(the value is not shown)",
                )
            if not value.isascii() and not _is_latin1(value):
                raise HttpCallError(
                    "request",
                    f"header '{name}' has a character outside Latin-1, which an HTTP header "
                    "cannot carry; refusing to send (the value is not shown)",
                )
        return url, params, headers, body

    def _path(self, context: Mapping[str, Any], deadline: float) -> str:
        path = ""
        for index, segment in enumerate(self.spec.path, start=1):
            text = "".join(
                piece
                if isinstance(piece, str)
                else quote(
                    _text(_render(piece, context, deadline), f"URL path segment {index}"), safe=""
                )
                for piece in segment
            )
            if text in ("", ".", "..") and any(isinstance(piece, Template) for piece in segment):
                raise HttpCallError(
                    "request",
                    f"URL path segment {index} rendered to {text!r}; a path argument must be a "
                    "non-empty name, not '.' or '..'",
                )
            path += "/" + text
        return path

    @staticmethod
    def _authenticate(
        auth: tuple[str, ...],
        credentials: Mapping[str, str],
        headers: dict[str, str],
        params: list[tuple[str, str]],
    ) -> None:
        kind = auth[0]
        if kind == "bearer":
            headers["Authorization"] = f"Bearer {credentials[auth[1]]}"
        elif kind == "basic":
            pair = f"{credentials[auth[1]]}:{credentials[auth[2]]}"
            redact_also(pair)  # its base64 is found as a whole, not only each part's core
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        elif auth[2] == "query":
            params.append((auth[3], credentials[auth[1]]))
        else:
            headers[auth[3]] = credentials[auth[1]]

    # -- sending --------------------------------------------------------------------------------

    def _send(
        self,
        url: str,
        params: list[tuple[str, str]],
        headers: dict[str, str],
        body: dict[str, Any],
        deadline: float,
    ) -> ResponseView:
        import requests

        spec = self.spec
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
        may_retry_reply = spec.idempotent or retry.non_idempotent
        for attempt in range(1, retry.attempts + 1):
            last = attempt == retry.attempts
            try:
                response = self._exchange(prepared, deadline)
            except requests.ConnectionError as exc:
                if last or not self._wait(self._backoff(attempt), deadline):
                    raise HttpCallError(
                        "connection",
                        f"{spec.method} {prepared.url} failed to connect after {attempt} "
                        f"attempt(s): {_reason(exc)}",
                    ) from None
                continue
            except requests.Timeout as exc:
                if last or not may_retry_reply or not self._wait(self._backoff(attempt), deadline):
                    raise self._timeout(prepared, deadline, exc) from None
                continue
            if response.status_code in retry.on_status and may_retry_reply and not last:
                delay = self._retry_after(response) or self._backoff(attempt)
                response.close()
                if self._wait(delay, deadline):
                    continue
                raise HttpCallError(
                    "deadline",
                    f"{spec.method} {prepared.url} returned {response.status_code} and the "
                    f"{spec.total_timeout:g}s deadline leaves no time to retry",
                    status=response.status_code,
                )
            return self._read(prepared, response, deadline)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _exchange(self, prepared: requests.PreparedRequest, deadline: float) -> requests.Response:
        """Send, following same-origin redirects; the body is not read yet."""
        request = prepared
        for _ in range(MAX_REDIRECTS + 1):
            response = self.session.send(
                request, stream=True, allow_redirects=False, timeout=self._timeouts(deadline)
            )
            location = response.headers.get("Location")
            if not (self.spec.follow_redirects and response.status_code in _REDIRECTS and location):
                return response
            target = urljoin(request.url or "", location)
            response.close()
            self._check_origin(target, request.method or "GET", redirect=True)
            request = request.copy()
            request.prepare_url(target, None)
            if response.status_code == 303 or (
                response.status_code in (301, 302) and request.method == "POST"
            ):
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

    def _timeouts(self, deadline: float) -> tuple[float, float]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise HttpCallError("deadline", f"the {self.spec.total_timeout:g}s deadline passed")
        return min(self.spec.connect_timeout, remaining), min(self.spec.read_timeout, remaining)

    def _timeout(
        self, prepared: requests.PreparedRequest, deadline: float, exc: Exception
    ) -> HttpCallError:
        if time.monotonic() >= deadline - 0.001:
            return HttpCallError(
                "deadline",
                f"{prepared.method} {prepared.url} did not finish within the "
                f"{self.spec.total_timeout:g}s deadline",
            )
        return HttpCallError(
            "timeout", f"{prepared.method} {prepared.url} timed out: {_reason(exc)}"
        )

    def _backoff(self, attempt: int) -> float:
        base: float = self.spec.retry.backoff * 2 ** (attempt - 1)
        return base * _jitter.uniform(0.5, 1.5)

    def _retry_after(self, response: requests.Response) -> float | None:
        value = response.headers.get("Retry-After")
        if not value:
            return None
        value = value.strip()
        if value.isdigit():
            seconds = float(value)
        else:
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError):
                return None
            seconds = when.timestamp() - time.time()
        return max(0.0, min(seconds, self.spec.retry.max_wait))

    @staticmethod
    def _wait(delay: float, deadline: float) -> bool:
        """Sleep ``delay`` seconds if the deadline allows it; False when it does not."""
        if time.monotonic() + delay >= deadline:
            return False
        time.sleep(delay)
        return True

    def _read(
        self, prepared: requests.PreparedRequest, response: requests.Response, deadline: float
    ) -> ResponseView:
        import requests

        spec = self.spec
        limit = spec.max_response_bytes
        chunks: list[bytes] = []
        size = 0
        try:
            with response:
                for chunk in _chunks(response):
                    size += len(chunk)
                    if size > limit:
                        raise HttpCallError(
                            "too_large",
                            f"{prepared.method} {prepared.url}: the response body is over "
                            f"max_response_bytes ({limit} bytes)",
                            status=response.status_code,
                        )
                    if time.monotonic() > deadline:
                        raise HttpCallError(
                            "deadline",
                            f"{prepared.method} {prepared.url} did not finish within the "
                            f"{spec.total_timeout:g}s deadline",
                        )
                    chunks.append(chunk)
        except requests.RequestException as exc:
            raise self._timeout(prepared, deadline, exc) from None
        view = ResponseView(
            response.status_code, response.headers, b"".join(chunks), response.encoding
        )
        if not (200 <= view.status < 300 or view.status in spec.accept_status):
            shown = " ".join(excerpt(view.text, _EXCERPT).split())
            raise HttpCallError(
                "status",
                f"{prepared.method} {prepared.url} returned {view.status} {response.reason}"
                + (f": {shown}" if shown else ""),
                status=view.status,
            )
        return view

    # -- mapping the reply --------------------------------------------------------------------

    def _output(
        self, inputs: dict[str, Any], response: ResponseView, deadline: float
    ) -> dict[str, Any]:
        spec = self.spec
        if spec.output is not None:
            context = {"inputs": inputs, "response": response}
            return {
                name: template.render(context, deadline=deadline) for name, template in spec.output
            }
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
        return {name: data[name] for name in spec.output_names if name in data}


def _chunks(response: requests.Response) -> Iterator[bytes]:
    """The decoded body, a socket read at a time.

    ``read1`` returns after one receive: a server trickling a byte at a time
    cannot keep a read blocked inside the read timeout while the call's deadline
    passes -- the caller checks the deadline between chunks.
    """
    import requests
    import urllib3

    raw = response.raw
    try:
        while chunk := raw.read1(_CHUNK, decode_content=True):
            yield chunk
    except urllib3.exceptions.ProtocolError as exc:
        raise requests.ConnectionError(exc) from exc
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise requests.ReadTimeout(exc) from exc
    except urllib3.exceptions.DecodeError as exc:
        raise requests.ConnectionError(f"the body could not be decoded: {exc}") from exc


def _is_latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def _reason(exc: Exception) -> str:
    """The innermost reason of a requests/urllib3 error, without the object reprs."""
    text = str(exc.args[0] if exc.args else exc)
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    if reason is not None:
        text = str(reason)
    return text.split(": ", 1)[-1] if "object at 0x" in text else text


def _render(value: Any, context: Mapping[str, Any], deadline: float) -> Any:
    """A request template's value; one rendered from a credential joins the call's redactor.

    Such text is a form derived from a secret (``token=abc; v=2``, a value a
    filter changed) that the credential's own spellings may not match.
    """
    if not isinstance(value, Template):
        return value
    rendered = value.render(context, deadline=deadline)
    if isinstance(rendered, str) and any(root == "credentials" for root, _ in value.references):
        redact_also(rendered)
    return rendered


def _render_json(node: Any, context: Mapping[str, Any], deadline: float) -> Any:
    if isinstance(node, Template):
        return _render(node, context, deadline)
    kind, content = node
    if kind == "map":
        rendered = ((key, _render_json(value, context, deadline)) for key, value in content)
        return {key: value for key, value in rendered if value is not None}
    if kind == "list":
        return [_render_json(item, context, deadline) for item in content]
    return content
