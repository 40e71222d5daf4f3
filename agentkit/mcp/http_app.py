"""The ASGI app that serves a registry to MCP clients over streamable HTTP (``build_app``).

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
- while the server drains (``agentkit.mcp.http_serving``, on SIGTERM): new calls
  refused with 503 (nothing run), every answer closing its connection.

Needs ``pip install 'agentkit[serve]'``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, final

import anyio
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentkit.mcp.admission import (
    CallLimits,
    watching,
)
from agentkit.mcp.audit_sinks import AuditTrail, open_audit
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
from agentkit.mcp.user_credentials import HeaderCredentials
from agentkit.toolerrors import SemanticError
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry

if TYPE_CHECKING:
    from agentkit.mcp.metrics import CallMetrics

__all__ = ["AppState", "build_app"]

logger = logging.getLogger("agentkit.serve")


def _security() -> TransportSecuritySettings:
    # The SDK's Host/Origin check compares strings exactly or by prefix: ours
    # (``rebinding_refusal``, in ``_Endpoint``) replaces it.
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


@final
class _Served:
    """One MCP endpoint's own parts: the tools it serves, its SDK session manager, its
    fast path, and the calls waiting for its 2026-07-28 clients' answers."""

    __slots__ = ("awaiting_input", "fast", "manager", "path", "tools")

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
class AppState:
    """What /readyz reports (ready once the tools are loaded and the endpoints run, not
    while draining) and the calls' admission, which draining closes; ``tools`` and
    ``fast`` are the first endpoint's (the whole registry's, when it is served)."""

    __slots__ = ("endpoints", "fast", "limits", "ready", "tools")

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
    state = AppState([endpoint for (endpoint, _), _ in mounted], limits)
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

    __slots__ = ("_endpoint",)

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

    __slots__ = ("_app", "_state")

    def __init__(self, app: ASGIApp, *, state: AppState) -> None:
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

    __slots__ = ("_fast", "_ids", "_limits", "_manager", "_options")

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
