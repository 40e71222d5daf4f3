"""Running the HTTP server (``agentkit serve --http``): the port bound, uvicorn
configured and run, and draining on SIGTERM (``agentkit.mcp.serve`` with
``HttpOptions``). The app it serves is ``agentkit.mcp.http_app.build_app``.

Draining: new calls refused with 503 (nothing run), the calls in flight finished,
every answer meanwhile closing its connection, and the process exits 0.

Needs ``pip install 'agentkit[serve]'``.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import signal
import socket
import sys
from collections.abc import Iterator, Mapping
from typing import Final, final

import uvicorn
from sse_starlette.sse import AppStatus

from agentkit.credentials import CredentialsManager
from agentkit.mcp import heap
from agentkit.mcp.admission import worker_threads
from agentkit.mcp.connections import (
    accept_backlog,
    default_max_connections,
    guarded_protocol,
    raise_open_file_limit,
)
from agentkit.mcp.http_app import AppState, build_app
from agentkit.mcp.options import HttpOptions
from agentkit.mcp.reload import Reloader
from agentkit.mcp.served_tools import ServedTools
from agentkit.mcp.user_credentials import HeaderCredentials, HeaderFirstCredentials
from agentkit.toolerrors import SemanticError
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry

__all__ = ["exposure_warnings", "serve_http"]


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

    def __init__(self, config: uvicorn.Config, state: AppState, drain_seconds: float) -> None:
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
        heap.freeze()
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
        try:
            server.run(sockets=[sock])
        finally:
            heap.thaw()
