"""The ``http`` backend kind: parse a definition's ``backend.http``, run a call.

A call builds the request (``request``: literal origin, one encoded segment per path
template, no line break or NUL in a header), asks the user first for a ``confirm:
true`` tool showing exactly that request, sends it (``sending``: retries, redirects
and the body read, all within ``timeout.total``), with an OAuth2 token when the auth
says so (one resend after a 401), follows ``paginate:``, and maps the reply onto the
outputs (``responses``). Credential values, and every form the call derives from them
(basic auth's pair, a header or query value rendered from ``credentials``), join the
call's redactor: they are redacted from every error and from urllib3's log lines while
the call runs (``transport``); an error is raised outside its handler, cleaned, so no
chain keeps a secret.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

from agentkit import binary
from agentkit.context import confirm
from agentkit.declarative.backends.base import BackendContext
from agentkit.declarative.backends.http import failures as failures
from agentkit.declarative.backends.http.multipart import MultipartError
from agentkit.declarative.backends.http.oauth2 import OAuth2Error
from agentkit.declarative.backends.http.pagination import Pagination, PaginationError, collect
from agentkit.declarative.backends.http.preview import preview
from agentkit.declarative.backends.http.request import build_request
from agentkit.declarative.backends.http.responses import ResponseView
from agentkit.declarative.backends.http.sending import Sender
from agentkit.declarative.backends.http.source_use import use_source
from agentkit.declarative.backends.http.sources import (
    Source,
    substitute_auth,
    substitute_pairs,
)
from agentkit.declarative.backends.http.spec import (
    IDEMPOTENT,
    HttpSpec,
    is_plain_remote,
    parse_http_spec,
)
from agentkit.declarative.backends.http.values import (
    OAuth2Auth,
)
from agentkit.declarative.templates import TemplateRenderError
from agentkit.redaction import Redactor, active_redactor, redacting
from agentkit.toolerrors import HttpCallError

if TYPE_CHECKING:
    import requests


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
        self._sender = Sender(spec)

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
        """The tool's session: its proxies decided now, once (``transport.proxies``)."""
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
        return self._sender.send(session, deadline, *request, limit, allowed=allowed)

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
            return self._sender.send(
                session, deadline, url, params, headers, body, limit, allowed=allowed
            )
        except HttpCallError as exc:
            if exc.status != 401 or exc.kind != "status":
                raise
        auth.invalidate(token)
        token = auth.token(credentials, deadline=deadline, session=session)
        headers[auth.name] = f"Bearer {token}"
        return self._sender.send(
            session, deadline, url, params, headers, body, limit, allowed=allowed
        )

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
