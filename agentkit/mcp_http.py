"""Serving a registry to MCP clients over streamable HTTP (``agentkit serve --http``).

The official SDK's ``StreamableHTTPSessionManager`` speaks the protocol; Starlette routes
and uvicorn serves. Around it:

- ``POST/GET/DELETE {path}`` (default ``/mcp``): the MCP endpoint, behind bearer-token
  auth when tokens are given (the SDK's auth hooks with ``StaticTokens`` as the
  verifier: constant-time comparison, 401 with ``WWW-Authenticate``) and DNS-rebinding
  protection (the ``Host`` and ``Origin`` headers checked against allow-lists);
- ``GET /healthz``: 200 while the process serves; ``GET /readyz``: 200 once the tools
  are loaded and the MCP endpoint is up, 503 before and while shutting down;
- ``HeaderCredentials``: allow-listed request headers become named credentials for that
  call alone (``--credential-header X-GitHub-Token=github-token``), ahead of the
  environment and the secrets file, and redacted like any credential. The transport's
  own ``Authorization`` header is never one of them: it is not passed to tools.

Needs ``pip install 'agentkit[serve]'``.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import hmac
import ipaddress
import logging
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, final

import anyio
import uvicorn
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentkit.credentials import CredentialsManager, read_user_file
from agentkit.mcp_conn import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    accept_backlog,
    default_max_connections,
    guarded_protocol,
    raise_open_file_limit,
)
from agentkit.mcp_fast import FastPath
from agentkit.mcp_ids import InFlightIds, guard_post
from agentkit.mcp_limits import (
    DEFAULT_ANSWER_SECONDS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_MAX_QUEUED,
    DEFAULT_MAX_WAITING,
    CallLimits,
    watching,
    worker_threads,
)
from agentkit.mcp_reload import Reloader, ServedTools
from agentkit.mcp_rounds import Rounds
from agentkit.mcp_server import build_server
from agentkit.toolerrors import CredentialError, SemanticError
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry

__all__ = [
    "HeaderCredentials",
    "HeaderFirstCredentials",
    "HttpOptions",
    "StaticTokens",
    "build_app",
    "exposure_warnings",
    "parse_address",
    "read_tokens",
    "rebinding_refusal",
    "serve_http",
]

logger = logging.getLogger("agentkit.serve")

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8000
DEFAULT_MAX_REQUEST_BYTES: Final = 4 * 1024 * 1024
#: How long SIGTERM waits for the calls in flight before it cancels them.
DEFAULT_DRAIN_SECONDS: Final = 30.0
#: A bearer token shorter than this is a password, not a secret worth the name.
MIN_TOKEN_LENGTH: Final = 16
_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
_LOOPBACK_HOSTS: Final = tuple(f"{name}:*" for name in _LOOPBACK_NAMES)
_LOOPBACK_ORIGINS: Final = tuple(f"http://{name}:*" for name in _LOOPBACK_NAMES)


# -- options -------------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOptions:
    """How ``serve_http`` listens and what it lets through.

    ``tokens`` empty means no transport auth. ``credential_headers`` maps request
    header names to credential names; with ``require_credential_headers`` a mapped
    credential comes from its header only. ``allowed_hosts`` and ``allowed_origins`` add
    to the loopback defaults (``127.0.0.1:*``, ``localhost:*``, ``[::1]:*``); an entry
    ending in ``:*`` allows any port.
    """

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    path: str = "/mcp"
    stateless: bool = False
    #: Answer plain requests on the fast path (``--no-fast-path``: every one via the SDK).
    fast_path: bool = True
    tokens: tuple[str, ...] = ()
    credential_headers: Mapping[str, str] = field(default_factory=dict)
    #: A call whose request lacks a mapped header fails (no fallback to the server's value).
    require_credential_headers: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    call_timeout: float | None = None
    max_calls: int | None = DEFAULT_MAX_IN_FLIGHT
    max_queued: int = DEFAULT_MAX_QUEUED
    #: How many calls may wait for their users' answers at once, and how long each may.
    max_waiting: int = DEFAULT_MAX_WAITING
    answer_timeout: float = DEFAULT_ANSWER_SECONDS
    drain_seconds: float = DEFAULT_DRAIN_SECONDS
    #: Run a ``confirm: true`` tool without asking when its client cannot be asked.
    allow_unconfirmed: bool = False
    #: Seconds a request's head may take (``agentkit.mcp_conn``), and an idle
    #: keep-alive connection may stay open between requests.
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    idle_timeout: int = DEFAULT_IDLE_TIMEOUT
    #: Seconds a request's body may take once its head came (``agentkit.mcp_conn``).
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    #: Open connections at most (None: sized from the open-file limit, raised at start).
    max_connections: int | None = None


def _split_address(text: str) -> tuple[str, str | None]:
    """``[IPv6]:PORT``, ``HOST:PORT`` or ``HOST`` -> ``(host, port text or None)``.

    Raises ``ValueError`` saying what is wrong with a bracketed address.
    """
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise ValueError("an IPv6 address needs its closing ']'")
        host, rest = text[1:end], text[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError("expected ':PORT' after ']'")
        return host, rest[1:] if rest else None
    if ":" in text:
        host, port = text.rsplit(":", 1)
        return host, port
    return text, None


def _is_port(text: str) -> bool:
    """ASCII digits naming a port, 0 to 65535.

    ``isdigit`` alone also takes superscript and Arabic-Indic digits, which ``int``
    refuses or reads as another number.
    """
    return text.isascii() and text.isdigit() and int(text) <= 65535


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST``, ``:PORT`` or ``[IPv6]:PORT`` -> ``(host, port)``."""
    rest = text.strip()
    try:
        host, port = _split_address(rest)
    except ValueError as exc:
        raise SemanticError(f"--http {text!r}: {exc}") from None
    if not rest.startswith("["):
        host = host or DEFAULT_HOST
    if not port:
        return host, DEFAULT_PORT
    if not _is_port(port):
        raise SemanticError(
            f"--http {text!r}: the port must be a number from 0 to 65535, got {port!r}"
        )
    return host, int(port)


def read_tokens(*, file: str | None = None, env: str | None = None) -> tuple[str, ...]:
    """The bearer tokens in ``file`` (one a line, ``#`` comments) and ``$env`` (comma-separated).

    A problem names the file and line or the variable, never a token's text.
    """
    tokens: list[str] = []
    if file:
        text = read_user_file(file, "the token file")
        for number, line in enumerate(text.splitlines(), start=1):
            token = line.strip()
            if token and not token.startswith("#"):
                tokens.append(_checked_token(token, f"{file}:{number}"))
    if env:
        value = os.environ.get(env, "")
        if not value.strip():
            raise SemanticError(f"--auth-token-env {env}: the environment variable is not set")
        tokens.extend(
            _checked_token(part.strip(), f"environment variable {env}, token {index}")
            for index, part in enumerate(value.split(","), start=1)
        )
    if (file or env) and not tokens:
        raise SemanticError(f"The token file {file} has no token (one a line)")
    return tuple(tokens)


def _checked_token(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_LENGTH:
        raise SemanticError(
            f"{where}: a bearer token needs at least {MIN_TOKEN_LENGTH} characters "
            f"(got {len(token)}); generate one with: python -c "
            "'import secrets; print(secrets.token_urlsafe(32))'"
        )
    if any(char.isspace() or not char.isprintable() for char in token):
        raise SemanticError(f"{where}: a bearer token cannot hold spaces or control characters")
    return token


def parse_credential_header(text: str) -> tuple[str, str]:
    """``X-GitHub-Token=github-token`` -> ``("x-github-token", "github-token")``."""
    header, sep, credential = (part.strip() for part in text.partition("="))
    if not sep or not header or not credential:
        raise SemanticError(
            f"--credential-header takes HEADER=CREDENTIAL (X-GitHub-Token=github-token), "
            f"got {text!r}"
        )
    if not all(char.isalnum() or char in "-_" for char in header):
        raise SemanticError(
            f"--credential-header {text!r}: a header name holds letters, digits, '-' and '_'"
        )
    if header.lower() in ("authorization", "cookie", "proxy-authorization"):
        raise SemanticError(
            f"--credential-header {text!r}: the {header} header belongs to the transport and "
            "is never passed to a tool; send the user's token in a header of its own"
        )
    return header.lower(), credential


def parse_credential_headers(items: Iterable[str]) -> dict[str, str]:
    """Every ``--credential-header``; a header mapped twice (in any case) is refused,
    naming both options: the later one would silently replace the first."""
    mapped: dict[str, tuple[str, str]] = {}
    for item in items:
        header, credential = parse_credential_header(item)
        if header in mapped:
            first = mapped[header][0]
            raise SemanticError(
                f"--credential-header {item!r}: the header {header} is already mapped by "
                f"--credential-header {first!r}; map each header once"
            )
        mapped[header] = (item, credential)
    return {header: credential for header, (_, credential) in mapped.items()}


_RESERVED_PATHS: Final = ("/healthz", "/readyz")


def parse_endpoint_path(text: str) -> str:
    """``--path``: where the MCP endpoint answers, such as ``/mcp`` or ``/tools/v1``."""
    if not text.startswith("/") or any(char in text for char in "?#% \t\r\n"):
        raise SemanticError(
            f"--path {text!r}: expected a path starting with '/', such as /mcp or /tools/v1, "
            "with no query, fragment, escapes or spaces"
        )
    if any(part in (".", "..") for part in text.split("/")):
        raise SemanticError(
            f"--path {text!r}: '.' and '..' segments are resolved away by clients, which "
            "would ask for another path; write the path they lead to"
        )
    if text.rstrip("/") in _RESERVED_PATHS or text == "/":
        raise SemanticError(
            f"--path {text!r}: {', '.join(_RESERVED_PATHS)} answer health checks and '/' "
            "is too broad; choose another path, such as /mcp"
        )
    return text


def _is_host_and_port(text: str) -> bool:
    """``HOST``, ``HOST:PORT``, ``HOST:*``, ``[IPv6]`` or ``[IPv6]:PORT``."""
    try:
        host, port = _split_address(text)
    except ValueError:
        return False
    if text.startswith("["):
        valid_host = bool(host) and all(char in "0123456789abcdefABCDEF:." for char in host)
    else:
        valid_host = bool(host) and all(char.isalnum() or char in ".-" for char in host)
    if port is None:
        return valid_host
    return valid_host and (port == "*" or _is_port(port))


def parse_allowed_host(text: str) -> str:
    """``--allowed-host``: ``HOST``, ``HOST:PORT`` or ``HOST:*`` as a Host header holds it."""
    if not _is_host_and_port(text):
        raise SemanticError(
            f"--allowed-host {text!r}: expected HOST, HOST:PORT or HOST:* as clients send it "
            "in the Host header, such as tools.example.com or tools.example.com:8443"
        )
    return text


def parse_allowed_origin(text: str) -> str:
    """``--allowed-origin``: ``scheme://host[:port]`` (or ``:*``), as browsers send it."""
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in ("http", "https") or not _is_host_and_port(rest):
        raise SemanticError(
            f"--allowed-origin {text!r}: expected an origin as browsers send it, "
            "scheme://host[:port] (port may be *), such as https://app.example.com"
        )
    return text


# -- DNS rebinding -------------------------------------------------------------------------------

# A parsed Host or Origin: (scheme, host, port). The scheme is "" for a Host header; the
# host is lowercase, without brackets; the port is None for the scheme's default (80 or
# 443, also for a Host header, whose scheme a proxy may have changed), "*" for any.
_Place = tuple[str, str, "int | str | None"]
_DEFAULT_PORTS: Final = {"": (80, 443), "http": (80,), "https": (443,)}


def _place(text: str, scheme: str = "") -> _Place | None:
    """``HOST[:PORT]`` (``[IPv6]``, ``:*``) as compared; ``None`` when it is no such thing."""
    try:
        host, port = _split_address(text)
    except ValueError:
        return None
    allowed = ".-:" if text.startswith("[") else ".-"  # a colon only inside brackets
    if not host or not all(char.isascii() and (char.isalnum() or char in allowed) for char in host):
        return None
    if port is None or port == "*":
        return scheme, host.lower(), port
    if not _is_port(port):  # digits only: '127.0.0.1:evil.com' is no port
        return None
    number = int(port)
    return scheme, host.lower(), None if number in _DEFAULT_PORTS[scheme] else number


def _origin_place(text: str) -> _Place | None:
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        return None
    return _place(rest, scheme)


def _matches(given: _Place, allowed: _Place) -> bool:
    return given[:2] == allowed[:2] and allowed[2] in ("*", given[2])


@functools.lru_cache(maxsize=32)
def _allowed_places(
    texts: tuple[str, ...], parse: Callable[[str], _Place | None]
) -> tuple[_Place, ...]:
    """``texts`` parsed once per server, not once per request."""
    return tuple(place for text in texts if (place := parse(text)) is not None)


def _admitted(given: _Place | None, allowed: tuple[_Place, ...]) -> bool:
    return given is not None and any(_matches(given, place) for place in allowed)


def rebinding_refusal(
    host: str | None,
    origin: str | None,
    *,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
) -> tuple[int, str] | None:
    """DNS-rebinding protection for one request: ``None`` when its ``Host`` and
    ``Origin`` header values (``None`` when absent) may reach the tools, otherwise the
    status (421 for the Host, 403 for the Origin) and a one-line reason to answer with.

    The loopback names (any port) and ``allowed_hosts``/``allowed_origins`` (as
    ``--allowed-host``/``--allowed-origin`` take them) are allowed. Names compare
    case-insensitively, a default port (80, 443) is the same as none, ``:*`` allows
    any port, and a port must be digits. A request without ``Origin`` (not a browser's,
    or same-origin) passes that check.
    """
    hosts = _allowed_places((*_LOOPBACK_HOSTS, *allowed_hosts), _place)
    if not _admitted(_place(host) if host else None, hosts):
        return 421, (
            "Invalid Host header: only loopback names and the server's --allowed-host "
            "names are accepted; a server reached by another name needs --allowed-host NAME"
        )
    if not origin:
        return None
    origins = _allowed_places((*_LOOPBACK_ORIGINS, *allowed_origins), _origin_place)
    if not _admitted(_origin_place(origin), origins):
        return 403, (
            "Invalid Origin header: only loopback origins and the server's "
            "--allowed-origin origins are accepted"
        )
    return None


# -- auth ------------------------------------------------------------------------------------------


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


@final
class StaticTokens:
    """A ``TokenVerifier`` (the SDK's auth seam) accepting a fixed set of bearer tokens.

    Tokens are compared as SHA-256 digests with ``hmac.compare_digest``, each against
    every known token, so neither the time taken nor an early exit tells a caller how
    close a guess came. An OAuth deployment passes the SDK a verifier of its own instead.
    """

    def __init__(self, tokens: Sequence[str]) -> None:
        self._digests = tuple(_digest(token) for token in tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        offered = _digest(token)
        matched = -1
        for index, known in enumerate(self._digests):
            if hmac.compare_digest(offered, known):
                matched = index
        if matched < 0:
            return None
        # The token itself stays out of the request's scope (and so out of anything
        # that logs it): the principal is the token's position in the list.
        return AccessToken(token="[redacted]", client_id=f"token-{matched + 1}", scopes=[])


# -- per-user credentials ------------------------------------------------------------------------

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})
# A credential's value, or ``_SentTwice`` for a header the request repeated.
_REQUEST_CREDENTIALS: ContextVar[Mapping[str, Any]] = ContextVar(
    "agentkit_request_credentials", default=_EMPTY
)


@final
class HeaderCredentials:
    """A ``CredentialProvider`` of the values the current call's request headers carry.

    ``headers`` maps an allow-listed header name to the credential it holds. ``bound``
    makes one request's values current for the calls it runs (a context variable, so
    concurrent calls never see each other's). An empty value is no value; a header sent
    more than once is refused (a proxy that appends rather than replaces would let the
    client's own value through), and with ``required`` a missing one is too: ``refusal``
    says why, and ``HeaderFirstCredentials`` fails the call with it.
    """

    def __init__(self, headers: Mapping[str, str], *, required: bool = False) -> None:
        self._headers = {name.lower(): credential for name, credential in headers.items()}
        self._required = required
        self._by_credential: dict[str, list[str]] = {}
        for name, credential in self._headers.items():
            self._by_credential.setdefault(credential, []).append(name)

    def get(self, name: str) -> str | None:
        value = _REQUEST_CREDENTIALS.get().get(name)
        return value if isinstance(value, str) and value else None

    def describe(self, name: str) -> str:
        headers = self._by_credential.get(name)
        if not headers:
            return f"no request header (none is mapped to '{name}')"
        return "request header " + " or ".join(headers)

    def refusal(self, name: str) -> str | None:
        """Why credential ``name`` cannot be taken for this call, naming the header and
        never a value; ``None`` when the header (or, not required, a fallback) may serve."""
        given = _REQUEST_CREDENTIALS.get().get(name)
        if isinstance(given, _SentTwice):
            return (
                f"the request header {given.header} was sent {given.count} times; a call "
                "takes it from one header line, sent once"
            )
        if self._required and name in self._by_credential and not given:
            return (
                f"the request has no {self.describe(name)} (or it is empty), and the server "
                "requires it (--require-credential-headers); send the header with the call"
            )
        return None

    @contextlib.contextmanager
    def bound(self, ctx: Any) -> Iterator[None]:
        """The scope of one call: the values its HTTP request brought (none on stdio)."""
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        values: dict[str, str | _SentTwice] = {}
        if headers is not None:
            for header, credential in self._headers.items():
                sent = _header_values(headers, header)
                if len(sent) > 1:
                    values[credential] = _SentTwice(header, len(sent))
                elif sent and sent[0].strip() and credential not in values:
                    values[credential] = sent[0].strip()
        token = _REQUEST_CREDENTIALS.set(MappingProxyType(values) if values else _EMPTY)
        try:
            yield
        finally:
            _REQUEST_CREDENTIALS.reset(token)


@final
@dataclass(frozen=True, slots=True)
class _SentTwice:
    """A mapped header the request carries more than once (its values are not kept)."""

    header: str
    count: int


def _header_values(headers: Any, name: str) -> list[str]:
    getlist = getattr(headers, "getlist", None)
    if getlist is not None:
        return list(getlist(name))
    value = headers.get(name)
    return [] if value is None else [value]


@final
class HeaderFirstCredentials(CredentialsManager):
    """The server's credentials with ``headers`` asked first, and its refusals (a header
    sent twice; a required header missing) failing the call instead of falling back to
    the server's own value."""

    def __init__(self, headers: HeaderCredentials, fallback: CredentialsManager) -> None:
        super().__init__((headers, *fallback.providers))
        self._header_credentials = headers

    def get(self, name: str) -> str | None:
        if self._header_credentials.refusal(name) is not None:
            return None
        return super().get(name)

    def resolve(self, tool_name: str, names: Sequence[str]) -> dict[str, str]:
        for name in names:
            refused = self._header_credentials.refusal(name)
            if refused is not None:
                raise CredentialError(
                    tool_name,
                    name,
                    [self._header_credentials.describe(name)],
                    refused=refused,
                )
        return super().resolve(tool_name, names)


# -- the app -------------------------------------------------------------------------------------


def _security() -> TransportSecuritySettings:
    # The SDK's Host/Origin check compares strings exactly or by prefix: ours
    # (``rebinding_refusal``, in ``_Endpoint``) replaces it.
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


@final
class _State:
    """What /readyz reports (ready once the tools are loaded and the endpoint runs, not
    while draining) and the calls' admission, which draining closes."""

    def __init__(
        self, tools: ServedTools, limits: CallLimits, rounds: Rounds, fast: FastPath
    ) -> None:
        self.tools = tools
        self.limits = limits
        self.rounds = rounds
        self.fast = fast
        self.ready = False


def build_app(
    tools: ToolRegistry | ServedTools,
    executor: ToolExecutor,
    options: HttpOptions,
    *,
    reloader: Reloader | None = None,
    on_ready: Callable[[], None] | None = None,
) -> Starlette:
    """The ASGI app ``serve_http`` runs: the MCP endpoint, /healthz and /readyz.

    ``reloader`` (made on the same ``ServedTools``) reloads the tools while it runs;
    ``on_ready`` is called once the app is ready (its lifespan has started).

    ``executor`` should ask ``HeaderCredentials(options.credential_headers)`` first for
    per-user credentials (``serve_http`` sets that up). The app's ``state.agentkit``
    is what ``serve_http`` drains on SIGTERM.
    """
    provider = next(
        (p for p in executor.credentials.providers if isinstance(p, HeaderCredentials)), None
    )
    limits = CallLimits(
        max_in_flight=options.max_calls,
        max_queued=options.max_queued,
        queue_timeout=options.call_timeout,
        max_waiting=options.max_waiting,
        answer_timeout=options.answer_timeout,
    )
    served = tools if isinstance(tools, ServedTools) else ServedTools(tools)
    rounds = Rounds(identity_headers=options.credential_headers)
    # A stateless session lasts one request: no two requests share its ids.
    ids = None if options.stateless else InFlightIds()
    server = build_server(
        served,
        executor,
        call_timeout=options.call_timeout,
        call_scope=provider.bound if provider is not None else None,
        limits=limits,
        # A stateless session lasts one request: there is no one to tell of a reload.
        announce=not options.stateless,
        allow_unconfirmed=options.allow_unconfirmed,
        rounds=rounds,
        ids=ids,
    )
    security = _security()
    manager = StreamableHTTPSessionManager(
        app=server,
        stateless=options.stateless,
        security_settings=security,
        max_request_body_size=options.max_request_bytes,
    )
    fast = FastPath(server, manager, security=security, max_request_bytes=options.max_request_bytes)
    state = _State(served, limits, rounds, fast)
    endpoint: ASGIApp = _Endpoint(manager, state, fast, options, ids)
    # Outermost, so that every answer gets the header while draining: 401, 421, /readyz too.
    middleware = [Middleware(_ClosingWhileDraining, state=state)]
    if options.tokens:
        endpoint = RequireAuthMiddleware(endpoint, required_scopes=[])
        middleware += [
            Middleware(
                AuthenticationMiddleware, backend=BearerAuthBackend(StaticTokens(options.tokens))
            ),
            Middleware(AuthContextMiddleware),
        ]

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "alive"})

    async def readyz(request: Request) -> JSONResponse:
        if not state.ready:
            return JSONResponse({"status": "not ready"}, status_code=503)
        return JSONResponse({"status": "ready", "tools": len(state.tools)})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as group:
            if reloader is not None:
                await group.start(reloader.run)
            state.ready = True
            if on_ready is not None:
                on_ready()
            try:
                yield
            finally:
                state.ready = False
                group.cancel_scope.cancel()

    app = Starlette(
        routes=[
            Route(options.path, endpoint=endpoint, methods=["GET", "POST", "DELETE"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
        ],
        middleware=middleware,
        lifespan=lifespan,
    )
    app.state.agentkit = state
    return app


_CLOSE: Final = (b"connection", b"close")


@final
class _ClosingWhileDraining:
    """The app with ``Connection: close`` on every answer that starts while the server
    drains (the draining 503s, and the answers of the calls in flight that had sent
    nothing yet), so no client or proxy sends another request down a connection to an
    instance that is stopping: it opens a new connection, to an instance that is not.

    An answer whose headers went out before the drain (a stream) cannot take the header
    back; a request on its connection afterwards gets the draining 503, with it.
    """

    def __init__(self, app: ASGIApp, *, state: _State) -> None:
        self._app = app
        self._state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        limits = self._state.limits

        async def closing(message: Message) -> None:
            if message["type"] == "http.response.start" and limits.closed:
                headers = [
                    each for each in message.get("headers", ()) if each[0].lower() != _CLOSE[0]
                ]
                message = {**message, "headers": [*headers, _CLOSE]}
            await send(message)

        await self._app(scope, receive, closing)


@final
class _Endpoint:
    """The MCP endpoint as a plain ASGI app (Starlette routes it without a wrapper).

    While the server drains, a new message (POST) gets 503 with ``Retry-After``, so a
    load balancer or client sends it to another instance; a client may still end its
    session (DELETE). The 503 is answered before the request is read or anything runs,
    so a proxy may send the same request to another instance (``retry-on 503``).
    A request whose id is in flight on its session (``ids``) is refused before the
    fast path or the SDK reads it (``agentkit.mcp_ids``).
    """

    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        state: _State,
        fast: FastPath,
        options: HttpOptions,
        ids: InFlightIds | None = None,
    ) -> None:
        self._manager = manager
        self._state = state
        self._fast = fast
        self._options = options
        self._ids = ids

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        refused = rebinding_refusal(
            headers.get("host"),
            headers.get("origin"),
            allowed_hosts=self._options.allowed_hosts,
            allowed_origins=self._options.allowed_origins,
        )
        if refused is not None:
            status, reason = refused
            # The header's value is the client's: shown clipped and escaped, once per request.
            sent = headers.get("host" if status == 421 else "origin", "")
            logger.warning("%s (got %s)", reason, ascii(sent[:200]))
            await PlainTextResponse(reason, status_code=status)(scope, receive, send)
            return
        if scope.get("method") == "POST":
            # Whoever reads the connection (the SDK's reply stream, the fast path's call
            # that asks) notes there when the client leaves: its question is withdrawn.
            receive = watching(scope, receive)
            if self._state.limits.closed:
                refusal = JSONResponse(
                    {"error": "shutting down, retry on another instance"},
                    status_code=503,
                    headers={"Retry-After": "1"},
                )
                await refusal(scope, receive, send)
                return
            if self._ids is None:
                await self._post(scope, receive, send)
                return
            max_bytes = self._options.max_request_bytes
            await guard_post(self._ids, scope, receive, send, self._post, max_bytes=max_bytes)
            return
        await self._manager.handle_request(scope, receive, send)

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._options.fast_path:
            rest = await self._fast.handle(scope, receive, send)
            if rest is None:
                return
            receive = rest
        await self._manager.handle_request(scope, receive, send)


# -- running ---------------------------------------------------------------------------------------


def exposure_warnings(options: HttpOptions) -> list[str]:
    """What ``serve_http`` warns of before it listens on a host that is not loopback:
    no transport auth, and no ``--allowed-host`` (so a client that reaches the server
    by any name but a loopback one gets 421)."""
    if _is_loopback(options.host):
        return []
    warnings = []
    if not options.tokens:
        warnings.append(
            f"serving on {options.host} without --auth-token-file or --auth-token-env: "
            "anyone who reaches the port can call the tools"
        )
    if not options.allowed_hosts:
        warnings.append(
            f"serving on {options.host} without --allowed-host: only requests whose Host "
            "is a loopback name (127.0.0.1, localhost, [::1]) are answered, others get "
            "421; add --allowed-host NAME for each name clients use to reach the server"
        )
    return warnings


def _warn_credential_fallbacks(headers: Mapping[str, str], server: CredentialsManager) -> None:
    """Say which header-mapped credentials the server also has a value of: a call
    without the header runs with that value, the operator's (never shown here)."""
    for header, credential in headers.items():
        source = next((p for p in server.providers if p.get(credential)), None)
        if source is not None:
            print(
                f"agentkit: warning: --credential-header {header}={credential}: "
                f"'{credential}' also resolves from {source.describe(credential)}, so a "
                f"call without the {header} header runs with the server's own value; "
                "--require-credential-headers makes such a call fail instead",
                file=sys.stderr,
            )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY only on sockets that
    # say they are TCP, and without it every answer written in two parts (headers,
    # body) waits out the client's delayed ACK, some 40 ms a call.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if isinstance(exc, socket.gaierror):
            hint = "the host is not an address of this machine; try 127.0.0.1 or 0.0.0.0"
        elif exc.errno == errno.EADDRINUSE:
            hint = "another server uses the port; --http HOST:PORT picks another, port 0 any"
        else:
            hint = "--http HOST:PORT picks another address"
        raise SemanticError(
            f"Cannot listen on {host}:{port}: {exc.strerror or exc} ({hint})"
        ) from exc
    sock.listen(socket.SOMAXCONN)
    sock.set_inheritable(True)
    return sock


#: How long calls cut at the end of a drain have to send their "shut down" answer.
_CUT_ANSWER_SECONDS: Final = 2.0


@final
class _DrainingServer(uvicorn.Server):
    """uvicorn's server, draining on SIGTERM and then exiting 0.

    uvicorn alone closes the connections after ``timeout_graceful_shutdown`` and then
    raises the signal again, so the process dies of it. This one stops accepting,
    marks itself not ready, refuses new calls (busy), waits up to ``drain_seconds``
    for the calls in flight, gives their answers a moment to be written, and returns.
    Every answer sent meanwhile closes its connection (``_ClosingWhileDraining``).
    """

    def __init__(self, config: uvicorn.Config, state: _State, drain_seconds: float) -> None:
        super().__init__(config)
        self._agentkit = state
        self._drain_seconds = drain_seconds

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        state = self._agentkit
        state.ready = False
        for listener in self.servers:
            listener.close()
        await state.limits.close()
        # Listen streams (2026-07-28 clients waiting to hear of reloads) end gracefully:
        # each gets its final answer now, not a dropped connection later.
        state.tools.listen.close()
        # A call waiting for a 2026-07-28 client's answer would wait in vain: no round
        # reaches a closed listener. It ends now, having done nothing.
        state.rounds.close()
        running = state.limits.in_flight
        if running:
            print(f"agentkit: draining {running} calls in flight", file=sys.stderr, flush=True)
        if not await state.limits.drained(self._drain_seconds):
            print(
                f"agentkit: {state.limits.in_flight} calls still running after "
                f"{self._drain_seconds} s; cancelling them",
                file=sys.stderr,
                flush=True,
            )
            # Each cut call answers "the server shut down" while its stream is open.
            state.limits.cut()
            await state.limits.drained(_CUT_ANSWER_SECONDS)
        # Now the SSE streams may end (see serve_http): the answers are written.
        AppStatus.should_exit = True
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        with super().capture_signals():
            yield
            # A drained SIGTERM is a clean exit, not a death by signal (uvicorn would
            # raise it again once it has shut down). Ctrl-C still is one.
            self._captured_signals = [
                sig for sig in self._captured_signals if sig != signal.SIGTERM
            ]


def serve_http(
    tools: ToolRegistry | ServedTools,
    options: HttpOptions,
    *,
    credentials_file: str | None = None,
    reloader: Reloader | None = None,
) -> None:
    """Serve ``tools`` over streamable HTTP until interrupted (SIGINT or SIGTERM).

    Prints ``agentkit: serving N tools on http://HOST:PORT/PATH`` on stderr once it
    is ready (with the port the system chose for port 0).
    """
    credentials = CredentialsManager.from_env(credentials_file)
    if options.credential_headers:
        if not options.require_credential_headers:
            _warn_credential_fallbacks(options.credential_headers, credentials)
        credentials = HeaderFirstCredentials(
            HeaderCredentials(
                options.credential_headers, required=options.require_credential_headers
            ),
            credentials,
        )
    for warning in exposure_warnings(options):
        print(f"agentkit: warning: {warning}", file=sys.stderr)
    sock = _bind(options.host, options.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    executor = ToolExecutor(
        credentials=credentials,
        max_workers=worker_threads(options.max_calls, options.max_waiting),
    )
    served = tools if isinstance(tools, ServedTools) else ServedTools(tools)

    def ready() -> None:
        print(
            f"agentkit: serving {len(served)} tools on http://{shown}:{port}{options.path}",
            file=sys.stderr,
            flush=True,
        )

    app = build_app(served, executor, options, reloader=reloader, on_ready=ready)
    open_files = raise_open_file_limit()
    max_connections = options.max_connections
    if max_connections is None:
        max_connections = default_max_connections(open_files)
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        # MCP has no WebSocket transport: uvicorn need not import a WebSocket library.
        ws="none",
        # The access log would show paths only, but a proxy may put tokens in query strings.
        access_log=False,
        # The calls in flight are drained before this; what is left is answers being
        # written and idle streams, which need only a moment.
        timeout_graceful_shutdown=2,
        # uvicorn times the idle time between requests, not a request head or body
        # that never ends, and does not cap connections: its own protocol class, guarded.
        http=guarded_protocol(
            AutoHTTPProtocol,
            header_timeout=options.header_timeout,
            body_timeout=options.body_timeout,
            max_connections=max_connections,
        ),
        timeout_keep_alive=options.idle_timeout,
        backlog=accept_backlog(open_files),
    )
    server = _DrainingServer(config, app.state.agentkit, options.drain_seconds)
    # sse-starlette ends every SSE stream the moment uvicorn sees SIGTERM, the answers
    # of the calls in flight with them; _DrainingServer ends them once they are drained.
    AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]
    with executor, sock:
        server.run(sockets=[sock])
