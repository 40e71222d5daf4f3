"""Serving a registry to MCP clients over streamable HTTP (``agentkit serve --http``).

The official SDK's ``StreamableHTTPSessionManager`` speaks the protocol; Starlette routes
and uvicorn serves. Around it:

- ``POST/GET/DELETE {path}`` (default ``/mcp``): the MCP endpoint, behind bearer-token
  auth when tokens are given (the SDK's auth hooks with ``StaticTokens`` as the
  verifier) and DNS-rebinding protection (``rebinding_refusal``), both in
  ``agentkit.mcp.http_security``; plain requests are answered on the fast path
  (``agentkit.mcp.fastpath``), the rest by the SDK;
- ``{path}/{toolset}``: each toolset served, an endpoint of its own (server, sessions,
  fast path) over its tools alone, reached by the tokens whose scopes name it;
- ``GET /healthz``: 200 while the process serves; ``GET /readyz``: 200 once the tools
  are loaded and the MCP endpoint is up, 503 before and while shutting down;
- ``GET /metrics`` with ``metrics`` on: the calls' counters and durations in
  Prometheus' text format (``agentkit.mcp.metrics``), behind the bearer tokens if any;
- who is calling (``CallerIdentity``: the token's caller, or a trusted proxy's
  header), and each call's audit record (``agentkit.mcp.audit_sinks``);
- per-user credentials from allow-listed request headers
  (``agentkit.mcp.user_credentials``);
- draining on SIGTERM: new calls refused with 503 (nothing run), the calls in flight
  finished, every answer meanwhile closing its connection.

Needs ``pip install 'agentkit[serve]'``.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import logging
import signal
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, final

import anyio
import uvicorn
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentkit.credentials import CredentialsManager
from agentkit.mcp.admission import (
    CallLimits,
    watching,
    worker_threads,
)
from agentkit.mcp.audit_sinks import AuditTrail, open_audit
from agentkit.mcp.connections import (
    accept_backlog,
    default_max_connections,
    guarded_protocol,
    raise_open_file_limit,
)
from agentkit.mcp.fastpath import FastPath
from agentkit.mcp.http_security import (
    ALL_TOOLS_SCOPE,
    CallerIdentity,
    StaticTokens,
    rebinding_refusal,
    toolset_scope,
)
from agentkit.mcp.input_required import InputRequiredCalls
from agentkit.mcp.options import HttpOptions, toolset_path
from agentkit.mcp.reload import Reloader, ServedTools
from agentkit.mcp.request_ids import InFlightIds, guard_post
from agentkit.mcp.server import Audit, build_server
from agentkit.mcp.user_credentials import HeaderCredentials, HeaderFirstCredentials
from agentkit.toolerrors import SemanticError
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry

if TYPE_CHECKING:
    from agentkit.mcp.metrics import CallMetrics

__all__ = ["build_app", "exposure_warnings", "serve_http"]

logger = logging.getLogger("agentkit.serve")


# -- the app -------------------------------------------------------------------------------------


def _security() -> TransportSecuritySettings:
    # The SDK's Host/Origin check compares strings exactly or by prefix: ours
    # (``rebinding_refusal``, in ``_Endpoint``) replaces it.
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


@final
class _Served:
    """One MCP endpoint's own parts: the tools it serves, its SDK session manager, its
    fast path, and the calls waiting for its 2026-07-28 clients' answers."""

    def __init__(
        self,
        path: str,
        tools: ServedTools,
        manager: StreamableHTTPSessionManager,
        fast: FastPath,
        awaiting_input: InputRequiredCalls,
    ) -> None:
        self.path = path
        self.tools = tools
        self.manager = manager
        self.fast = fast
        self.awaiting_input = awaiting_input


@final
class _State:
    """What /readyz reports (ready once the tools are loaded and the endpoints run, not
    while draining) and the calls' admission, which draining closes; ``tools`` and
    ``fast`` are the first endpoint's (the whole registry's, when it is served)."""

    def __init__(self, endpoints: list[_Served], limits: CallLimits) -> None:
        self.endpoints = endpoints
        self.tools = endpoints[0].tools
        self.fast = endpoints[0].fast
        self.limits = limits
        self.ready = False


def build_app(
    tools: ToolRegistry | ServedTools,
    executor: ToolExecutor,
    options: HttpOptions,
    *,
    toolsets: Mapping[str, ToolRegistry | ServedTools] | None = None,
    reloader: Reloader | None = None,
    on_ready: Callable[[], None] | None = None,
) -> Starlette:
    """The ASGI app ``serve_http`` runs: the MCP endpoints, /healthz and /readyz.

    ``tools`` is served at ``options.path`` (unless ``options.whole_registry`` is off),
    each of ``toolsets`` at ``toolset_path(options.path, name)``: an endpoint of its own,
    with its own sessions, that lists and calls its set's tools and no other. With
    toolsets and tokens, a token reaches the endpoints its scopes name
    (``StaticTokens``): 401 without a token the server knows, 403 for one that does not
    reach the endpoint. ``reloader`` (made on the same ``ServedTools``, and sets)
    reloads the tools while it runs; ``on_ready`` is called once the app is ready (its
    lifespan has started).

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
    security = _security()
    sets = {
        name: served if isinstance(served, ServedTools) else ServedTools(served)
        for name, served in (toolsets or {}).items()
    }
    wanted: list[tuple[str, ServedTools, list[str], str | None]] = []
    if options.whole_registry:
        served = tools if isinstance(tools, ServedTools) else ServedTools(tools)
        # What the options defer, unless the served set was given deferring it already.
        if options.deferred and options.deferred != served.deferring:
            served.defer(options.deferred)
        wanted.append((options.path, served, [ALL_TOOLS_SCOPE] if sets else [], None))
    wanted += [
        (toolset_path(options.path, name), served, [toolset_scope(name)], name)
        for name, served in sets.items()
    ]
    if not wanted:
        raise SemanticError(
            "nothing to serve: the whole registry is not served (--no-whole-registry) and "
            "no toolset is given; define a toolset, or serve the whole registry"
        )

    identify = CallerIdentity(header=options.caller_header, trusted_proxies=options.trusted_proxies)
    trail = (
        open_audit(options.audit, max_bytes=options.audit_max_bytes, backups=options.audit_backups)
        if options.audit is not None
        else None
    )
    metrics = _call_metrics() if options.metrics else None
    # The metrics are fed as a sink is: a failure there is logged, never the call's.
    counted = AuditTrail(metrics.observe, describe="metrics") if metrics is not None else None
    audit = _audit_to(trail, counted)

    def mount(path: str, served: ServedTools, toolset: str | None) -> tuple[_Served, ASGIApp]:
        awaiting_input = InputRequiredCalls(identity_headers=options.credential_headers)
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
            awaiting_input=awaiting_input,
            ids=ids,
            identify=identify,
            audit=audit,
            toolset=toolset,
            owner_headers=tuple(options.credential_headers),
        )
        manager = StreamableHTTPSessionManager(
            app=server,
            stateless=options.stateless,
            security_settings=security,
            max_request_body_size=options.max_request_bytes,
        )
        fast = FastPath(
            server, manager, security=security, max_request_bytes=options.max_request_bytes
        )
        endpoint = _Served(path, served, manager, fast, awaiting_input)
        return endpoint, _Endpoint(manager, limits, fast, options, ids)

    mounted = [(mount(path, served, toolset), scopes) for path, served, scopes, toolset in wanted]
    state = _State([endpoint for (endpoint, _), _ in mounted], limits)
    # Outermost, so that every answer gets the header while draining: 401, 421, /readyz too.
    middleware = [Middleware(_ClosingWhileDraining, state=state)]
    routes: list[Route] = []
    for (endpoint, app), scopes in mounted:
        if options.tokens:
            app = RequireAuthMiddleware(app, required_scopes=scopes)
        routes.append(Route(endpoint.path, endpoint=app, methods=["GET", "POST", "DELETE"]))
    if metrics is not None:
        # Behind any token the server accepts, as the endpoints are: call counts per
        # tool are the operator's, not the open internet's.
        scrape: ASGIApp = _Scrape(metrics.endpoint)
        if options.tokens:
            scrape = RequireAuthMiddleware(scrape, required_scopes=[])
        routes.append(Route("/metrics", endpoint=scrape, methods=["GET"]))
    if options.tokens:
        verifier = StaticTokens(options.tokens, toolsets=sets)
        middleware += [
            Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier)),
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
        async with contextlib.AsyncExitStack() as stack:
            for endpoint in state.endpoints:
                await stack.enter_async_context(endpoint.manager.run())
            group = await stack.enter_async_context(anyio.create_task_group())
            if reloader is not None:
                await group.start(reloader.run)
            state.ready = True
            if on_ready is not None:
                on_ready()
            if trail is not None:
                stack.callback(trail.close)
            try:
                yield
            finally:
                state.ready = False
                group.cancel_scope.cancel()

    app = Starlette(
        routes=[
            *routes,
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
        ],
        middleware=middleware,
        lifespan=lifespan,
    )
    app.state.agentkit = state
    return app


def _call_metrics() -> CallMetrics:
    try:
        from agentkit.mcp.metrics import CallMetrics
    except ImportError as exc:
        raise SemanticError(
            f"--metrics needs prometheus-client ({exc}): pip install 'agentkit[serve]'"
        ) from None
    return CallMetrics()


def _audit_to(trail: AuditTrail | None, observe: Audit | None) -> Audit | None:
    """One ``Audit`` feeding the trail and the metrics, whichever there are."""
    if trail is None or observe is None:
        return trail or observe

    def both(record: Mapping[str, Any]) -> None:
        trail(record)
        observe(record)

    return both


@final
class _Scrape:
    """A Starlette endpoint function as a plain ASGI app (for ``RequireAuthMiddleware``)."""

    def __init__(self, endpoint: Callable[[Request], Awaitable[Response]]) -> None:
        self._endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = await self._endpoint(Request(scope, receive))
        await answer(scope, receive, send)


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
    fast path or the SDK reads it (``agentkit.mcp.request_ids``).
    """

    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        limits: CallLimits,
        fast: FastPath,
        options: HttpOptions,
        ids: InFlightIds | None = None,
    ) -> None:
        self._manager = manager
        self._limits = limits
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
            if self._limits.closed:
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
        for endpoint in state.endpoints:
            # Listen streams (2026-07-28 clients waiting to hear of reloads) end
            # gracefully: each gets its final answer now, not a dropped connection later.
            endpoint.tools.listen.close()
            # A call waiting for a 2026-07-28 client's answer would wait in vain: no
            # round reaches a closed listener. It ends now, having done nothing.
            endpoint.awaiting_input.close()
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
    toolsets: Mapping[str, ToolRegistry | ServedTools] | None = None,
    credentials_file: str | None = None,
    reloader: Reloader | None = None,
) -> None:
    """Serve ``tools``, and each of ``toolsets`` at a path of its own (``build_app``),
    over streamable HTTP until interrupted (SIGINT or SIGTERM).

    Prints ``agentkit: serving N tools on http://HOST:PORT/PATH`` on stderr for each
    endpoint once it is ready (with the port the system chose for port 0).
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
    served = tools if isinstance(tools, ServedTools) else ServedTools(tools)
    if options.deferred:  # a mistake in it is told before the port is taken
        served.defer(options.deferred)
    for warning in exposure_warnings(options):
        print(f"agentkit: warning: {warning}", file=sys.stderr)
    sock = _bind(options.host, options.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    executor = ToolExecutor(
        credentials=credentials,
        max_workers=worker_threads(options.max_calls, options.max_waiting),
    )

    def ready() -> None:
        for endpoint in app.state.agentkit.endpoints:
            print(
                f"agentkit: serving {len(endpoint.tools)} tools on "
                f"http://{shown}:{port}{endpoint.path}",
                file=sys.stderr,
                flush=True,
            )

    app = build_app(served, executor, options, toolsets=toolsets, reloader=reloader, on_ready=ready)
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
        # The client's address is the TCP peer's, never what X-Forwarded-For says:
        # uvicorn believes that header from loopback by default, which would let any
        # local client pass as a --trusted-proxy peer and name any caller.
        proxy_headers=False,
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
