"""The MCP SDK's internals that the HTTP fast path (``agentkit.mcp.fastpath``) relies on, in
one place, checked once before serving.

The fast path uses the SDK's public API where it has one (its JSON parser, its
per-connection kernel ``ServerRunner``, its transport security, its Accept check). Four
things it needs have no public API in the SDK versions tested (``TESTED_SDK``):

- a request's ``Connection`` (the client's capabilities and protocol), kept by the SDK
  behind ``ServerSession._connection``;
- the transport of a session, kept in ``StreamableHTTPSessionManager._server_instances``;
- the lifespan state the manager hands each ``ServerRunner``, ``_lifespan_state``;
- a transport's idle clock, which a fast-path call must hold as the SDK's own requests
  do (``_requests_in_flight`` and ``_idle_timeout`` beside the public ``idle_scope``).

``contract()`` checks, once a process, that the installed SDK is a tested version and
still has each of them in the shape used here, on objects the SDK itself builds. Where
it does not, the server logs why, once, and serves every request through the SDK's
transport (``--no-fast-path``'s path): nothing silently stops working. The functions
below are the only readers and writers of those internals.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import logging
import math
from collections.abc import Iterator
from typing import Any, Final

import anyio
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = [
    "TESTED_SDK",
    "contract",
    "holding_session",
    "lifespan_state",
    "session_connection",
    "session_transport",
]

#: The ``mcp`` releases (major.minor) the fast path is tested with; ``pyproject.toml``
#: pins the same range.
TESTED_SDK: Final = ("2.3",)
logger = logging.getLogger("agentkit.serve")


@functools.cache
def contract() -> str | None:
    """Why the fast path cannot use the installed SDK, or ``None`` when it can. Checked
    once a process; a reason is logged once, as a warning."""
    reason = _broken()
    if reason is not None:
        logger.warning(
            "the HTTP fast path is off: %s; every request goes through the MCP SDK's "
            "transport, as with --no-fast-path",
            reason,
        )
    return reason


def _broken() -> str | None:
    try:
        version = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return "the installed MCP SDK has no package metadata to tell its version"
    if ".".join(version.split(".")[:2]) not in TESTED_SDK:
        return f"mcp {version} is not a version it was tested with ({', '.join(TESTED_SDK)}.x)"
    manager = StreamableHTTPSessionManager(app=Server("agentkit-probe"))
    if not isinstance(getattr(manager, "_server_instances", None), dict):
        return "StreamableHTTPSessionManager no longer keeps its sessions' transports"
    if not hasattr(manager, "_lifespan_state"):
        return "StreamableHTTPSessionManager no longer keeps its lifespan state"
    transport = StreamableHTTPServerTransport(mcp_session_id="probe", idle_timeout=1.0)
    if getattr(transport, "_idle_timeout", None) != 1.0 or not isinstance(
        getattr(transport, "_requests_in_flight", None), int
    ):
        return "StreamableHTTPServerTransport no longer counts its requests in flight"
    if not hasattr(transport, "idle_scope"):
        return "StreamableHTTPServerTransport no longer has an idle scope"
    probe = object.__new__(Connection)
    probe.protocol_version = "2025-11-25"
    session = object.__new__(ServerSession)
    try:
        ServerSession.__init__(session, None, probe)  # type: ignore[arg-type]
    except Exception:
        return "ServerSession is built differently"
    if session_connection(session) is not probe:
        return "ServerSession no longer keeps its Connection"
    return None


def session_connection(session: ServerSession) -> Connection | None:
    """The ``Connection`` behind a request's ``ServerSession`` (``None`` if it has none)."""
    connection = getattr(session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


def session_transport(manager: StreamableHTTPSessionManager, session_id: str) -> Any:
    """The transport the SDK serves session ``session_id`` on now, or ``None``."""
    instances = getattr(manager, "_server_instances", None)
    return instances.get(session_id) if isinstance(instances, dict) else None


def lifespan_state(manager: StreamableHTTPSessionManager) -> Any:
    """What the manager's lifespan gave, as it hands it to each ``ServerRunner``."""
    return getattr(manager, "_lifespan_state", None)


@contextlib.contextmanager
def holding_session(transport: Any) -> Iterator[None]:
    """Keep a session from idling out while a fast-path request runs, as the SDK's
    transport does for the requests it serves (the same counter and clock)."""
    scope = getattr(transport, "idle_scope", None)
    timeout = getattr(transport, "_idle_timeout", None)
    if scope is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1
    scope.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            scope.deadline = anyio.current_time() + timeout
