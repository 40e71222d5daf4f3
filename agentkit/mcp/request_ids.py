"""JSON-RPC request ids in flight, one request to an id, as the MCP SDK tells ids apart.

The SDK keys a connection's requests in flight by their id with a string of digits read
as the number it spells (``coerce_request_id``: ``"1"`` is ``1``), and over streamable HTTP
routes each answer to the POST that waits for it by the id as text: two requests in
flight with ids ``1`` and ``"1"`` (or twice the same id) share one slot, and one of them
would never be answered over HTTP, or be cancelled in the other's place. A server cannot
serve both without rewriting ids inside the SDK's transport, so it refuses the second at
once: ``InFlightIds.claim`` holds an id for a request from its arrival, or says why not
(the message of a ``-32600`` error, ``in_use_error``). The request's handler takes the id
over (``held``) and gives it back as it ends, just before its answer is written, even
when its client has left; the id of a request no handler took is given back just
before its answer is sent, or when it is cancelled (``release``). A client that reuses an
id once it has its answer always finds it free.

``guard_post`` is the same rule for one POST of a handshake-era HTTP session, before the
fast path (``agentkit.mcp.fastpath``) or the SDK reads it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, final

import pydantic_core
from mcp.shared.dispatcher import coerce_request_id
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import Message, Receive, Scope, Send

__all__ = ["INVALID_REQUEST", "InFlightIds", "guard_post", "in_use_error", "replaying"]

#: JSON-RPC's code for a request the server will not take as sent.
INVALID_REQUEST: Final = -32600
_SESSION_HEADER: Final = b"mcp-session-id"
_VERSION_HEADER: Final = b"mcp-protocol-version"
RequestId = int | str


def _shown(request_id: RequestId) -> str:
    """The id as JSON spells it (``1``, ``"1"``), cut short if long."""
    text = json.dumps(request_id, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _same(one: RequestId, other: RequestId) -> bool:
    """The very same JSON value: ``1`` and ``"1"`` are not."""
    return type(one) is type(other) and one == other


@final
@dataclass(slots=True)
class _Holder:
    request_id: RequestId
    #: Its handler runs: the handler's end gives the id back, nothing else does.
    taken: bool = False


@final
class InFlightIds:
    """The ids of the requests in flight on each connection (an HTTP session id, or one
    name for stdio's single client), as the SDK tells them apart."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, RequestId], _Holder] = {}

    def claim(self, connection: str, request_id: RequestId) -> str | None:
        """Hold ``request_id`` for a request that has just come on ``connection``:
        ``None`` when it is held now, else why the request is refused (an id the SDK
        cannot tell from one in flight)."""
        key = (connection, coerce_request_id(request_id))
        holder = self._held.get(key)
        if holder is None:
            self._held[key] = _Holder(request_id)
            return None
        shown, held = _shown(request_id), _shown(holder.request_id)
        alike = "" if shown == held else f" (ids {held} and {shown} are the same to this server)"
        return f"request id {shown} is in use by a request in flight{alike}; use another id"

    def release(self, connection: str, request_id: RequestId) -> None:
        """The request of ``request_id`` is about to be answered, or was cancelled, or
        its client left: its id is free, unless its handler still runs (``held``). A
        refused request's id, held by another, stays held."""
        key = (connection, coerce_request_id(request_id))
        holder = self._held.get(key)
        if holder is not None and not holder.taken and _same(holder.request_id, request_id):
            del self._held[key]

    @contextlib.contextmanager
    def held(self, connection: str, request_id: RequestId) -> Iterator[None]:
        """Keep ``request_id`` held while its handler runs, and free it as the handler
        ends: its answer is written after, so a client that reuses the id once it has
        the answer finds it free, and one whose client left does not give its id to
        another request the SDK would mistake for it meanwhile."""
        key = (connection, coerce_request_id(request_id))
        holder = self._held.get(key)
        if holder is None:  # released already (its client left first): held again
            holder = self._held[key] = _Holder(request_id)
        elif not _same(holder.request_id, request_id):  # not this request's to keep
            yield
            return
        holder.taken = True
        try:
            yield
        finally:
            if self._held.get(key) is holder:
                del self._held[key]

    def __len__(self) -> int:
        return len(self._held)


def in_use_error(request_id: RequestId, message: str) -> dict[str, Any]:
    """The JSON-RPC error answering a request refused for its id."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": INVALID_REQUEST, "message": message},
    }


# -- one POST --------------------------------------------------------------------------------


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


async def _body(receive: Receive, max_bytes: int) -> tuple[bytes | None, list[Message]]:
    """The request's body if it is whole and at most ``max_bytes`` (else ``None``),
    and the messages read to find out."""
    consumed: list[Message] = []
    size = 0
    more = True
    while more:
        message = await receive()
        consumed.append(message)
        size += len(message.get("body", b""))
        if message["type"] != "http.request" or size > max_bytes:
            return None, consumed
        more = message.get("more_body", False)
    return b"".join(part.get("body", b"") for part in consumed), consumed


def _request_id(body: bytes) -> RequestId | None:
    """The id of the one JSON-RPC request ``body`` holds; ``None`` for anything else."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    return request_id if type(request_id) in (int, str) else None


async def guard_post(
    ids: InFlightIds,
    scope: Scope,
    receive: Receive,
    send: Send,
    serve: Callable[[Scope, Receive, Send], Awaitable[None]],
    *,
    max_bytes: int,
) -> None:
    """``serve`` this POST of a handshake-era session holding its request's id until
    it is answered (``InFlightIds``), or refuse it at once (HTTP 200, a ``-32600`` error of its
    id) when the id is in flight. Whatever is no such request (no session yet, the
    2026-07-28 protocol, a notification, a body too large or unreadable) is served as
    it came: its refusal, if any, stays the SDK's."""
    session = _header(scope, _SESSION_HEADER)
    version = _header(scope, _VERSION_HEADER)
    if not session or (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS):
        await serve(scope, receive, send)
        return
    declared = _header(scope, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        await serve(scope, receive, send)
        return
    body, consumed = await _body(receive, max_bytes)
    replay = replaying(consumed, receive)
    request_id = _request_id(body) if body is not None else None
    if request_id is None:
        await serve(scope, replay, send)
        return
    refused = ids.claim(session, request_id)
    if refused is not None:
        await _answer(send, session, in_use_error(request_id, refused))
        return

    async def answering(message: Message) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            ids.release(session, request_id)  # before the client can have the answer
        await send(message)

    try:
        await serve(scope, replay, answering)
    finally:
        ids.release(session, request_id)


def replaying(consumed: list[Message], receive: Receive) -> Receive:
    """A ``Receive`` that gives back the messages already read before the rest."""
    pending = list(reversed(consumed))

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay


async def _answer(send: Send, session: str, message: dict[str, Any]) -> None:
    body = json.dumps(message, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (_SESSION_HEADER, session.encode("latin-1")),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
