"""A fast-path request's ways back to its client (``agentkit.mcp.fastpath``).

``RequestChannel`` is the SDK's ``DispatchContext`` for one request the fast path
answers: what the SDK's kernel and ``ServerSession`` use to reach the client while the
request runs (its notifications and requests ride the POST's reply), and the request's
cancellation. ``FastPathSession`` is what the fast path knows of one SDK session: the
calls and the questions in flight on it, which a client's later POSTs reach.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol, final

import anyio
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    AuthorizationContext,
    authorization_context,
)
from mcp.server.connection import Connection
from mcp.server.runner import ServerRunner
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import REQUEST_TIMEOUT, ErrorData
from starlette.requests import Request
from starlette.types import Message, Receive, Scope

from agentkit.mcp.sdk import holding_session

__all__ = ["FastPathSession", "Reply", "RequestChannel", "owner_of"]


class Reply(Protocol):
    """The HTTP answer of one fast-path POST, as its request's channel writes to it."""

    async def message(self, message: Mapping[str, Any]) -> None:
        """Send a notification or request to the client on this POST's reply."""


@final
class FastPathSession:
    """What the fast path knows of one SDK session: its connection (the client's
    capabilities, the protocol it negotiated), its owner, its transport's idle clock,
    and the fast-path calls and questions in flight on it."""

    __slots__ = ("calls", "connection", "owner", "questions", "runner", "transport")

    def __init__(
        self,
        connection: Connection,
        runner: ServerRunner[Any],
        owner: AuthorizationContext | None,
        transport: Any,
    ) -> None:
        self.connection = connection
        self.runner = runner
        self.owner = owner
        self.transport = transport
        self.calls: dict[Any, RequestChannel] = {}
        self.questions: dict[Any, asyncio.Future[Message | ErrorData]] = {}

    def held(self) -> contextlib.AbstractContextManager[None]:
        """Keep the session from idling out while a fast-path request runs, as the
        SDK's transport does for the requests it serves (the same counter and clock)."""
        return holding_session(self.transport)


def owner_of(scope: Scope) -> AuthorizationContext | None:
    user = scope.get("user")
    return authorization_context(user) if isinstance(user, AuthenticatedUser) else None


@final
class RequestChannel:
    """The SDK's ``DispatchContext`` for one fast-path request: what the kernel and
    ``ServerSession`` use to reach the client while the request runs (its notifications
    and requests ride this POST's reply), and the request's cancellation."""

    __slots__ = (
        "_closed",
        "_listening",
        "_next_question_id",
        "_progress_token",
        "_receive",
        "_reply",
        "_request_id",
        "_session",
        "cancel_requested",
        "message_metadata",
        "scope",
        "transport",
    )

    def __init__(
        self,
        next_question_id: Callable[[], str],
        session: FastPathSession | None,
        request_id: Any,
        request: Request,
        reply: Reply,
        params: Mapping[str, Any] | None,
    ) -> None:
        self._next_question_id = next_question_id
        self._session = session
        self._request_id = request_id
        self._reply = reply
        self._receive = request.receive
        self._listening: asyncio.Task[None] | None = None
        self._closed = False
        self._progress_token = progress_token_from_params(params)
        # Stateless: no session for the client's answer to come back to.
        self.transport = TransportContext(
            kind="streamable-http", can_send_request=session is not None
        )
        self.message_metadata = ServerMessageMetadata(
            request_context=request, can_send_request=session is not None
        )
        self.cancel_requested = anyio.Event()
        self.scope = anyio.CancelScope()

    @property
    def request_id(self) -> Any:
        return self._request_id

    @property
    def can_send_request(self) -> bool:
        return self.transport.can_send_request and not self._closed

    def close(self) -> None:
        self._closed = True
        if self._listening is not None:
            self._listening.cancel()

    def _listen(self) -> None:
        """Read this POST's connection from now on (once a question waits), so that the
        client's leaving is seen: ``admission.watching`` notes it for the call."""
        if self._listening is None:
            self._listening = asyncio.ensure_future(_until_disconnect(self._receive))

    def stop_when_client_leaves(self) -> None:
        """Cancel the request when its client closes this POST's connection. For a
        stateless server: its client's ``notifications/cancelled`` comes in a POST of
        its own, with no session to find the request by (and maybe to another
        instance), so leaving is how it stops a call, as on the SDK's path, where the
        request's transport ends with its connection."""
        self._listen()
        assert self._listening is not None
        self._listening.add_done_callback(self._left)

    def _left(self, listening: asyncio.Task[None]) -> None:
        if not listening.cancelled() and listening.exception() is None and not self._closed:
            self.scope.cancel()

    def cancel(self) -> None:
        """The client sent ``notifications/cancelled`` for this request."""
        self.cancel_requested.set()
        self.scope.cancel()

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        if self._closed:
            return
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._reply.message(message)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        if self._progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self._progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        """A request to the client on this POST's stream; its answer comes in a POST of its own."""
        session = self._session
        if session is None or not self.can_send_request:
            raise NoBackChannelError(method)
        question = self._next_question_id()
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        session.questions[question] = answer
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": question, "method": method}
        if params:
            message["params"] = params
        timeout = (opts or {}).get("timeout")
        self._listen()
        try:
            await self._reply.message(message)
            with anyio.fail_after(timeout):
                outcome = await answer
        except TimeoutError:
            await self._withdraw(question, "timed out")
            raise MCPError(
                code=REQUEST_TIMEOUT, message=f"Timed out waiting for {method}"
            ) from None
        except anyio.get_cancelled_exc_class():
            await self._withdraw(question, "cancelled")
            raise
        finally:
            session.questions.pop(question, None)
        if isinstance(outcome, ErrorData):
            raise MCPError.from_error_data(outcome)
        return dict(outcome)

    async def _withdraw(self, question: str, reason: str) -> None:
        """Tell the client a question is no longer waited for (best effort, shielded)."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
            params = {"requestId": question, "reason": reason}
            await self._reply.message(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
            )


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
