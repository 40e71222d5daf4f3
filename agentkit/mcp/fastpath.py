"""The fast path of ``agentkit serve --http``: common calls answered without the SDK's transport.

The SDK's streamable HTTP transport runs every message through pydantic envelopes,
memory streams, a task per request and an SSE reply (sse-starlette); that costs more
than the tool call itself. ``FastPath`` sits in front of it and answers the POSTs that
carry one JSON-RPC request ``tools/call``, ``tools/list`` or ``ping`` on a session the
SDK created (or any in stateless mode), for clients of the handshake era (protocol up
to 2025-11-25): it parses the body with the SDK's own JSON parser, hands the request to the SDK's
own per-connection kernel (``ServerRunner``: the same validation, middleware and
handlers ``build_server`` registers, so one call pipeline serves both paths), and
writes the answer itself.

The reply is "lazy SSE": nothing is sent until the call produces its first message.
A result that comes first is an ``application/json`` reply (allowed by the
specification, and the connection stays reusable); a notification (progress, a log
message) or a request to the client (``elicitation/create``) that comes first turns
the reply into ``text/event-stream``, as the SDK's would be. A call that says nothing
for ``KEEPALIVE_SECONDS`` turns it into a stream too, and gets a comment line as a
keep-alive every ``KEEPALIVE_SECONDS``, so no client's read timeout takes it for dead.
The client's answer to such a request (a JSON-RPC response) and its
``notifications/cancelled`` for a call in flight come as POSTs of their own: they are
routed here when they belong to a fast-path call, to the SDK otherwise.

Everything else falls through to the SDK, unread or replayed byte for byte: the session
lifecycle (``initialize``, GET streams, DELETE), the 2026-07-28 protocol, batches, other
methods, and every request the SDK would refuse (a bad header, an unknown session, a body
too large, malformed JSON), so that each refusal stays the SDK's own.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, final

import pydantic_core
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.runner import ServerRunner
from mcp.server.streamable_http import REQUEST_CANCELLED, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp.shared.jsonrpc_dispatcher import (
    handler_exception_to_error_data,
)
from mcp_types import DEFAULT_NEGOTIATED_VERSION, ErrorData
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from agentkit.mcp.fastpath_channel import FastPathSession, RequestChannel, owner_of
from agentkit.mcp.request_ids import replaying
from agentkit.mcp.sdk import (
    contract,
    lifespan_state,
    session_connection,
    session_transport,
)

__all__ = ["KEEPALIVE_SECONDS", "FastPath"]

logger = logging.getLogger("agentkit.serve")

#: The requests the fast path answers; every other method goes to the SDK.
FAST_METHODS: Final = frozenset({"tools/call", "tools/list", "ping"})
#: How long a reply may stay silent before it becomes a stream with keep-alive comments.
KEEPALIVE_SECONDS: Final = 15.0
_SESSION_HEADER: Final = b"mcp-session-id"
_VERSION_HEADER: Final = b"mcp-protocol-version"
_JSON: Final = "application/json"
#: ``Receive`` for a request that falls through: the original, or a replay of what was read.
Fallthrough = Receive


def _encode(message: Mapping[str, Any]) -> bytes:
    """One JSON-RPC message as UTF-8 JSON (non-ASCII as is), as the SDK's pydantic dump."""
    try:
        return pydantic_core.to_json(message)
    except pydantic_core.PydanticSerializationError:
        # A lone surrogate (``encodable`` replaces those in what agentkit sends; this
        # is the last resort): escaped, which JSON can carry and UTF-8 cannot.
        return json.dumps(message, separators=(",", ":")).encode("ascii")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _content_type_is_json(request: Request) -> bool:
    """The transport's own Content-Type rule: one of the listed types is exactly JSON."""
    content_type = request.headers.get("content-type", "")
    return any(part.strip() == _JSON for part in content_type.split(";")[0].split(","))


# -- one POST's reply --------------------------------------------------------------------------


@final
class _Reply:
    """The HTTP answer of one fast-path POST: JSON if the result is its first message,
    an SSE stream from the first notification or request on (see the module's docstring)."""

    __slots__ = ("_done", "_keepalive", "_lock", "_pinging", "_send", "_session_id", "_streaming")

    def __init__(self, send: Send, session_id: str | None) -> None:
        self._send = send
        self._session_id = session_id
        self._streaming = False
        self._done = False
        self._lock = asyncio.Lock()
        self._pinging: asyncio.Task[None] | None = None
        self._keepalive: asyncio.TimerHandle | None = asyncio.get_running_loop().call_later(
            KEEPALIVE_SECONDS, self._start_pinging
        )

    def _headers(self, content_type: bytes) -> list[tuple[bytes, bytes]]:
        headers = [(b"content-type", content_type)]
        if self._session_id is not None:
            headers.append((_SESSION_HEADER, self._session_id.encode("latin-1")))
        return headers

    async def _start_stream(self) -> None:
        headers = self._headers(b"text/event-stream")
        headers += [(b"cache-control", b"no-cache, no-transform"), (b"x-accel-buffering", b"no")]
        await self._send({"type": "http.response.start", "status": 200, "headers": headers})
        self._streaming = True

    async def message(self, message: Mapping[str, Any]) -> None:
        """Send a notification or request on this POST's stream (starting it if need be)."""
        data = _encode(message)
        async with self._lock:
            if self._done:
                return  # late (a progress report after the answer): the SDK drops it too
            if not self._streaming:
                await self._start_stream()
            event = b"event: message\r\ndata: " + data + b"\r\n\r\n"
            await self._send({"type": "http.response.body", "body": event, "more_body": True})

    async def answer(self, message: Mapping[str, Any]) -> None:
        """Send the request's answer and end the reply."""
        data = _encode(message)
        self._stop_pinging()
        async with self._lock:
            self._done = True
            if self._streaming:
                event = b"event: message\r\ndata: " + data + b"\r\n\r\n"
                await self._send({"type": "http.response.body", "body": event})
                return
            headers = self._headers(b"application/json")
            headers.append((b"content-length", str(len(data)).encode("ascii")))
            await self._send({"type": "http.response.start", "status": 200, "headers": headers})
            await self._send({"type": "http.response.body", "body": data})

    async def end(self) -> None:
        """End a stream that gets no answer (the call was cancelled and answered so)."""
        self._stop_pinging()
        async with self._lock:
            if self._streaming and not self._done:
                await self._send({"type": "http.response.body", "body": b""})
            self._done = True

    def _start_pinging(self) -> None:
        self._keepalive = None
        self._pinging = asyncio.get_running_loop().create_task(self._ping())

    async def _ping(self) -> None:
        while True:
            async with self._lock:
                if self._done:
                    return
                if not self._streaming:
                    await self._start_stream()
                await self._send(
                    {"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True}
                )
            await asyncio.sleep(KEEPALIVE_SECONDS)

    def _stop_pinging(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None
        if self._pinging is not None:
            self._pinging.cancel()
            self._pinging = None


# -- the fast path ---------------------------------------------------------------------------


@final
class FastPath:
    """Answers the common POSTs of ``agentkit serve --http`` in front of ``manager``
    (see the module's docstring). ``server`` is the one ``manager`` serves; ``seen``
    is put in its middleware to learn the sessions the SDK opens."""

    __slots__ = (
        "_manager",
        "_max_bytes",
        "_question_ids",
        "_security",
        "_server",
        "_sessions",
        "answered",
        "enabled",
    )

    def __init__(
        self,
        server: Server[Any],
        manager: StreamableHTTPSessionManager,
        *,
        security: TransportSecuritySettings,
        max_request_bytes: int,
    ) -> None:
        self._server = server
        self._manager = manager
        self._security = TransportSecurityMiddleware(security)
        self._max_bytes = max_request_bytes
        self._sessions: dict[str, FastPathSession] = {}
        self._question_ids = itertools.count(1)
        #: How many requests of each method the fast path answered (for tests and curiosity).
        self.answered: collections.Counter[str] = collections.Counter()
        #: Off where the installed SDK breaks the contract ``agentkit.mcp.sdk`` checks.
        self.enabled = contract() is None
        server.middleware.insert(0, self._learn_session)

    def next_question_id(self) -> str:
        # Strings, so they never meet the SDK's own numeric ids on the same session.
        return f"agentkit-{next(self._question_ids)}"

    async def _learn_session(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        """Server middleware: remember each session the SDK serves, from its first
        message on (``initialize``, before its answer leaves)."""
        connection = session_connection(ctx.session)
        session_id = connection.session_id if connection is not None else None
        if connection is not None and session_id and session_id not in self._sessions:
            self._remember(session_id, connection, ctx)
        return await call_next(ctx)

    def _remember(self, session_id: str, connection: Connection, ctx: Any) -> None:
        transport = self._transport(session_id)
        if transport is None:
            return
        runner: ServerRunner[Any] = ServerRunner(
            self._server, connection, lifespan_state(self._manager)
        )
        request = ctx.request
        owner = owner_of(request.scope) if isinstance(request, Request) else None
        self._sessions[session_id] = FastPathSession(connection, runner, owner, transport)
        connection.exit_stack.callback(self._forget, session_id)

    def _transport(self, session_id: str) -> Any:
        """The SDK's transport of a session it serves now."""
        return session_transport(self._manager, session_id)

    def _forget(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            for exchange in list(session.calls.values()):
                exchange.scope.cancel()

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> Fallthrough | None:
        """Answer this POST, and return ``None``; or return the ``Receive`` the SDK
        should read it with (the body not read, or replayed)."""
        if not self.enabled:
            return receive
        version = _header(scope, _VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return receive  # the 2026-07-28 protocol (or a version to refuse): the SDK's
        request = Request(scope, receive)
        if await self._security.validate_request(request, is_post=True) is not None:
            return receive
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse) or not _content_type_is_json(request):
            return receive
        session_id = _header(scope, _SESSION_HEADER)
        session: FastPathSession | None = None
        if not self._manager.stateless:
            session = self._sessions.get(session_id) if session_id else None
            if (
                session is None
                or session_id is None
                or self._transport(session_id) is not session.transport
                or session.transport.is_terminated
                or session.owner != owner_of(scope)
                or not session.connection.initialize_accepted
            ):
                return receive
        body, consumed = await self._read(scope, receive)
        replay = replaying(consumed, receive)
        if body is None:
            return replay  # too large (the SDK refuses it), or the client left
        try:
            # The SDK's own parser: what it refuses (NaN, a lone surrogate, bytes that
            # are not UTF-8) falls through to its refusal.
            message = pydantic_core.from_json(body)
        except ValueError:
            return replay
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return replay
        method = message.get("method")
        if method is None:
            if session is not None and self._answered_question(session, message):
                await self._accepted(send, session_id)
                return None
            return replay
        if method == "notifications/cancelled" and "id" not in message:
            if session is not None and self._cancelled(session, message.get("params")):
                await self._accepted(send, session_id)
                return None
            return replay
        request_id = as_request_id(message.get("id"))
        params = message.get("params")
        if (
            method not in FAST_METHODS
            or request_id is None
            or not (params is None or isinstance(params, dict))
        ):
            return replay
        if session is None:  # stateless: a connection of one request, as the SDK makes it
            connection = Connection.from_envelope(version or DEFAULT_NEGOTIATED_VERSION, None, None)
            runner: ServerRunner[Any] = ServerRunner(
                self._server, connection, lifespan_state(self._manager)
            )
            await self._answer(runner, None, request, request_id, method, params, send, None)
            return None
        with session.held():
            await self._answer(
                session.runner, session, request, request_id, method, params, send, session_id
            )
        return None

    async def _read(self, scope: Scope, receive: Receive) -> tuple[bytes | None, list[Message]]:
        """The body if it is whole and within the size cap (else ``None``), and the
        messages read to find out, for the SDK to read again."""
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._max_bytes:
            return None, []
        consumed: list[Message] = []
        size = 0
        while True:
            message = await receive()
            consumed.append(message)
            if message["type"] != "http.request":
                return None, consumed  # the client left
            size += len(message.get("body", b""))
            if size > self._max_bytes:
                return None, consumed
            if not message.get("more_body", False):
                break
        return b"".join(part.get("body", b"") for part in consumed), consumed

    async def _answer(
        self,
        runner: ServerRunner[Any],
        session: FastPathSession | None,
        request: Request,
        request_id: Any,
        method: str,
        params: dict[str, Any] | None,
        send: Send,
        session_id: str | None,
    ) -> None:
        """Run one request through the SDK's kernel and write its answer."""
        reply = _Reply(send, session_id)
        exchange = RequestChannel(
            self.next_question_id, session, request_id, request, reply, params
        )
        key = coerce_request_id(request_id)
        if session is not None:
            session.calls[key] = exchange
        else:
            exchange.stop_when_client_leaves()
        answer: dict[str, Any] | None = None
        try:
            with exchange.scope:
                try:
                    result = await runner.on_request(exchange, method, params)
                except Exception as exc:
                    error = handler_exception_to_error_data(exc)
                    if error is None:
                        logger.exception("handler for %r raised", method)
                        error = ErrorData(code=0, message=str(exc))
                    answer = _error(request_id, error)
                else:
                    answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
        finally:
            exchange.close()
            if session is not None and session.calls.get(key) is exchange:
                del session.calls[key]
        self.answered[method] += 1
        if exchange.cancel_requested.is_set() or answer is None:
            # The 2025 wire ends a request's stream only with an answer: the SDK's own.
            cancelled = ErrorData(code=REQUEST_CANCELLED, message="Request cancelled")
            answer = _error(request_id, cancelled)
        await reply.answer(answer)

    def _answered_question(self, session: FastPathSession, message: dict[str, Any]) -> bool:
        """A client's answer to a question a fast-path call asked: hand it over."""
        question = as_request_id(message.get("id"))
        waiting = session.questions.get(question) if question is not None else None
        if waiting is None or waiting.done():
            return False
        if isinstance(message.get("result"), dict):
            waiting.set_result(message["result"])
            return True
        error = message.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            text = error.get("message")
            waiting.set_result(
                ErrorData(
                    code=code if isinstance(code, int) and not isinstance(code, bool) else -32603,
                    message=text if isinstance(text, str) else "error",
                    data=error.get("data"),
                )
            )
            return True
        return False

    @staticmethod
    def _cancelled(session: FastPathSession, params: Any) -> bool:
        """``notifications/cancelled`` for a fast-path call in flight: cancel it."""
        if not isinstance(params, dict):
            return False
        request_id = as_request_id(params.get("requestId"))
        exchange = (
            session.calls.get(coerce_request_id(request_id)) if request_id is not None else None
        )
        if exchange is None:
            return False
        exchange.cancel()
        return True

    @staticmethod
    async def _accepted(send: Send, session_id: str | None) -> None:
        headers = [(b"content-type", b"application/json")]
        if session_id is not None:
            headers.append((_SESSION_HEADER, session_id.encode("latin-1")))
        await send({"type": "http.response.start", "status": 202, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


def _error(request_id: Any, error: ErrorData) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": error.model_dump(by_alias=True, mode="json", exclude_none=True),
    }
