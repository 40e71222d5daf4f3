"""Serving a registry to MCP clients over stdin and stdout (``agentkit.mcp.serve``
without ``HttpOptions``), to the end: the tools loaded, the executor and the audit
trail opened, stdout claimed for the wire, and every request read before stdin
closed answered (within ``drain_seconds``), a request whose id is in flight refused.

Needs ``pip install 'agentkit[mcp]'``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import Any, final

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from agentkit.credentials import CredentialsManager
from agentkit.mcp import heap
from agentkit.mcp.admission import (
    DEFAULT_ANSWER_SECONDS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_MAX_QUEUED,
    DEFAULT_MAX_WAITING,
    CallLimits,
    ClientLeft,
    worker_threads,
)
from agentkit.mcp.audit_sinks import open_audit
from agentkit.mcp.input_required import InputRequiredCalls
from agentkit.mcp.options import ServeOptions
from agentkit.mcp.reload import EarlyHangups, Reloader
from agentkit.mcp.request_ids import InFlightIds, in_use_error
from agentkit.mcp.served_tools import ServedTools
from agentkit.mcp.server import STDIO, Audit, build_server
from agentkit.mcp.stdio import ReadLines, loop_stdio, lost_answer, refusal
from agentkit.mcp.stdio_claim import StdioWire, claim_stdio
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry

__all__ = ["serve_on_stdio", "serve_stdio"]


def serve_on_stdio(
    tools: ToolRegistry | ServedTools,
    options: ServeOptions,
    *,
    credentials_file: str | None = None,
    reloader: Reloader | None = None,
    wire: StdioWire | None = None,
    hangups: EarlyHangups | None = None,
) -> None:
    """Serve ``tools`` on stdin/stdout until the client disconnects (``agentkit.mcp.serve``
    without ``HttpOptions``).

    A call still running when stdin closes gets its answer, within
    ``options.drain_seconds``. ``reloader`` (made on the same ``ServedTools``) reloads
    them while serving. While serving, stdout is the wire's alone: what else would write
    to it writes to stderr (``agentkit.mcp.stdio_claim``); stdin and stdout are given
    back on return. ``wire``: stdin and stdout as a caller claimed them already
    (``claim_stdio``), kept as they are on return. ``hangups``: the SIGHUPs noted before
    the reloader listens (while the tools loaded), for a reload once it does.
    """
    max_calls, max_waiting = options.max_calls, options.max_waiting
    served = tools if isinstance(tools, ServedTools) else ServedTools(tools)
    if options.deferred:
        served.defer(options.deferred)
    executor = ToolExecutor(
        credentials=CredentialsManager.from_env(credentials_file),
        max_workers=worker_threads(max_calls, max_waiting),
    )

    async def run(wire: StdioWire) -> None:
        async with loop_stdio(wire) as (wire_in, wire_out):
            await serve_stdio(
                served,
                executor,
                wire_in,
                wire_out,
                call_timeout=options.call_timeout,
                max_calls=max_calls,
                max_queued=options.max_queued,
                max_waiting=max_waiting,
                answer_timeout=options.answer_timeout,
                drain_seconds=options.drain_seconds,
                reloader=reloader,
                reload_now=hangups,
                allow_unconfirmed=options.allow_unconfirmed,
                audit=trail,
            )

    trail = None
    if options.audit is not None:
        if options.audit == "stdout":
            print(
                "agentkit: --audit stdout: over stdio, stdout carries the protocol; the "
                "audit trail goes to stderr",
                file=sys.stderr,
                flush=True,
            )
        trail = open_audit(
            options.audit,
            max_bytes=options.audit_max_bytes,
            backups=options.audit_backups,
            stdio=True,
        )
    # The thread pool goes when the client does.
    with contextlib.ExitStack() as stack, executor:
        if trail is not None:
            stack.callback(trail.close)
        claimed = wire if wire is not None else stack.enter_context(claim_stdio())
        anyio.run(run, claimed)


async def serve_stdio(
    tools: ToolRegistry | ServedTools,
    executor: ToolExecutor,
    wire_in: Any,
    wire_out: Any,
    *,
    call_timeout: float | None = None,
    max_calls: int | None = DEFAULT_MAX_IN_FLIGHT,
    max_queued: int = DEFAULT_MAX_QUEUED,
    max_waiting: int = DEFAULT_MAX_WAITING,
    answer_timeout: float = DEFAULT_ANSWER_SECONDS,
    drain_seconds: float = 30.0,
    reloader: Reloader | None = None,
    reload_now: EarlyHangups | None = None,
    allow_unconfirmed: bool = False,
    audit: Audit | None = None,
) -> None:
    """``serve``'s work on the running loop, reading lines from ``wire_in`` and writing
    to ``wire_out`` (``loop_stdio``'s). ``reload_now``: the SIGHUPs that came before the
    reloader was listening. ``audit`` takes each call's record (the caller: anonymous)."""
    gate = CallLimits(
        max_in_flight=max_calls,
        max_queued=max_queued,
        queue_timeout=call_timeout,
        max_waiting=max_waiting,
        answer_timeout=answer_timeout,
    )
    served = tools if isinstance(tools, ServedTools) else ServedTools(tools)
    awaiting_input = InputRequiredCalls()
    stdin_closed = ClientLeft()
    ids = InFlightIds()
    server = build_server(
        served,
        executor,
        call_timeout=call_timeout,
        limits=gate,
        allow_unconfirmed=allow_unconfirmed,
        awaiting_input=awaiting_input,
        stdin_closed=stdin_closed,
        ids=ids,
        audit=audit,
    )

    def ended() -> None:  # stdin closed: no answer to a question can come any more
        served.listen.close()
        awaiting_input.close()
        stdin_closed.set()

    # A line the SDK cannot read is answered here (``refusal``): the SDK would drop it.
    lines = ReadLines(wire_in)
    # The SDK types its streams as anyio files; it only iterates lines and awaits
    # write and flush, which loop_stdio's pipes do on the loop, without a thread each.
    async with (
        stdio_server(lines, wire_out) as (stdin, stdout),  # type: ignore[arg-type]
        anyio.create_task_group() as group,
    ):
        if reloader is not None:
            await group.start(reloader.run)
            if reload_now is not None and reload_now.seen:
                group.start_soon(reloader.reload, "SIGHUP")
        heap.freeze()
        try:
            await _serve_answering_to_the_end(
                server, stdin, stdout, drain_seconds, ended=ended, lines=lines, ids=ids
            )
        finally:
            heap.thaw()
        group.cancel_scope.cancel()


@final
class _Unanswered:
    """The ids of the requests read from the client that have no answer yet, each held
    in ``in_flight`` (the SDK cannot tell ``1`` from ``"1"``) until it is answered."""

    __slots__ = ("_changed", "_ids", "_in_flight")

    def __init__(self, in_flight: InFlightIds) -> None:
        self._ids: set[Any] = set()
        self._in_flight = in_flight
        self._changed = anyio.Condition()

    def asked(self, message: Any) -> Any:
        """Note ``message``, read from the client; the error refusing it when it is a
        request whose id is in flight (it does not reach the server), else ``None``."""
        if isinstance(message, types.JSONRPCRequest):
            refused = self._in_flight.claim(STDIO, message.id)
            if refused is not None:
                return types.JSONRPCError.model_validate(in_use_error(message.id, refused))
            self._ids.add(message.id)
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and isinstance(message.params, dict)
        ):
            # A cancelled request is never answered: nothing to wait for.
            cancelled = message.params.get("requestId")
            if isinstance(cancelled, (int, str)) and cancelled in self._ids:
                self._ids.discard(cancelled)
                self._in_flight.release(STDIO, cancelled)
        return None

    def answering(self, message: Any) -> None:
        """``message`` is about to be written: an answer's id is free from now on."""
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)) and isinstance(
            message.id, (int, str)
        ):
            self._in_flight.release(STDIO, message.id)

    async def answered(self, message: Any) -> None:
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self._ids.discard(message.id)
            async with self._changed:
                self._changed.notify_all()

    async def all_answered(self, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            async with self._changed:
                while self._ids:
                    await self._changed.wait()


async def _serve_answering_to_the_end(
    server: Server[Any],
    stdin: Any,
    stdout: Any,
    drain_seconds: float,
    *,
    ended: Callable[[], None] = lambda: None,
    lines: ReadLines | None = None,
    ids: InFlightIds | None = None,
) -> None:
    """``server.run`` on stdin/stdout, except that stdin closing does not cut short the
    requests already read: the server sees the end of its input only once each has its
    answer (or ``drain_seconds`` have passed). ``ended`` is called when stdin closes, to
    end the requests that would never end by themselves (``subscriptions/listen``).
    ``lines`` (the lines stdin's stream is read from): a line the SDK could not read is
    answered with its ``refusal``. ``ids``: the request ids in flight (``build_server``'s):
    a request whose id is one of them is refused at once, and never reaches the server."""
    unanswered = _Unanswered(ids if ids is not None else InFlightIds())
    to_server, server_in = anyio.create_memory_object_stream[Any](0)
    server_out, from_server = anyio.create_memory_object_stream[Any](0)
    refusals = server_out.clone()  # written in order with the server's answers

    async def read() -> None:
        # Closing stdin's stream too: nothing is left unclosed.
        async with to_server, stdin, refusals:
            async for message in stdin:
                line = lines.taken() if lines is not None else None
                if isinstance(message, SessionMessage):
                    refused = unanswered.asked(message.message)
                    if refused is not None:
                        await refusals.send(SessionMessage(refused))
                        continue
                elif line is not None and (error := refusal(line)) is not None:
                    await refusals.send(SessionMessage(types.JSONRPCError.model_validate(error)))
                elif line is not None and (lost := lost_answer(line)) is not None:
                    # The server's question ends with this error, not at its timeout.
                    message = SessionMessage(types.JSONRPCError.model_validate(lost))
                await to_server.send(message)
            ended()
            await unanswered.all_answered(drain_seconds)

    async def write() -> None:
        async with from_server, stdout:  # closing stdout's stream lets stdio_server end
            async for message in from_server:
                unanswered.answering(message.message)
                await stdout.send(message)
                await unanswered.answered(message.message)

    async with anyio.create_task_group() as group:
        group.start_soon(write)
        reading = anyio.CancelScope()
        group.start_soon(_cancelled_by, reading, read)
        await server.run(server_in, server_out, server.create_initialization_options())
        reading.cancel()  # the server ended on its own: stop reading stdin


async def _cancelled_by(scope: anyio.CancelScope, work: Callable[[], Awaitable[None]]) -> None:
    with scope:
        await work()
