"""Serving a registry to MCP clients over stdio, with the official MCP Python SDK.

- ``tools/list`` gives each tool's ``inputSchema``, ``outputSchema`` and annotations
  (``agentkit.adapters.export.mcp_tool``, the same shape ``agentkit export --format mcp``
  prints), less the deferred tools and plus ``search_tools``, which finds them; a
  session's search adds what it found to its listing (``agentkit.mcp.listing``);
- ``tools/call`` runs through ``ToolExecutor.aexecute`` (async tools on the
  server's event loop, sync ones in the executor's thread pool): the output comes back as
  ``structuredContent`` and as the same JSON in a text block; a tool's content blocks
  (``agentkit.content``: text, images, audio, embedded resources) and a binary output
  (``agentkit.binary``) as MCP content of their kinds (``agentkit.mcp.content``);
- a validation or execution failure is a result with ``isError: true`` and text
  the model can read (the problems listed, no secret); an unknown tool is a
  protocol error (``-32602``), as the MCP specification has it;
- what a tool reports with ``agentkit.progress`` (a paginated HTTP tool: ``page N
  fetched``) goes to the client as ``notifications/progress`` when its call
  carried a progress token;
- the logging capability: ``logging/setLevel`` sets the least severe
  ``notifications/message`` a client gets; a tool's ``agentkit.context.log`` (an HTTP
  tool's retries, a deprecated tool's warning) rides its call's stream, a reload's
  report goes to every client;
- a tool's ``agentkit.context.elicit`` (and a ``confirm: true`` tool's question) is an
  ``elicitation/create`` to its client, on the call's own stream; to a 2026-07-28
  client, which has no such stream, an ``input_required`` result it answers by calling
  again (``agentkit.mcp.input_required``). While it waits for the answer the call holds no
  ``--max-calls`` slot (``agentkit.mcp.admission.Admission.asking``), and it ends when its
  client leaves (its HTTP stream closes, stdin ends) or the answer does not come in time.

Needs ``pip install 'agentkit[mcp]'``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import logging
import math
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Final, TypeVar, final

import anyio
import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from agentkit import __version__
from agentkit.audit import (
    audit_record,
    masked_arguments,
    note_declined,
    note_failure,
    note_limited,
    noting,
)
from agentkit.callers import ANONYMOUS, Caller, calling_as
from agentkit.context import (
    CallContext,
    Elicited,
    LogLevel,
    aconfirm,
    arguments_shown,
    at_least,
    question_time_left,
    question_timed_out,
    serving,
)
from agentkit.credentials import CredentialsManager
from agentkit.forms import Form
from agentkit.mcp.admission import (
    DEFAULT_ANSWER_SECONDS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_MAX_QUEUED,
    DEFAULT_MAX_WAITING,
    Admission,
    Busy,
    CallInterrupted,
    CallLimits,
    ClientLeft,
    client_left,
    worker_threads,
)
from agentkit.mcp.audit_sinks import open_audit
from agentkit.mcp.content import call_result, encodable, error_result
from agentkit.mcp.input_required import Asking, InputRequiredCalls, Question
from agentkit.mcp.options import ServeOptions
from agentkit.mcp.reload import EarlyHangups, Reloader, ServedTools
from agentkit.mcp.request_ids import InFlightIds, in_use_error
from agentkit.mcp.stdio import ReadLines, loop_stdio, lost_answer, refusal
from agentkit.mcp.stdio_claim import StdioWire, claim_stdio
from agentkit.paging import caller_scope
from agentkit.progress import Progress, ProgressReporter, reporting_progress
from agentkit.redaction import Redactor
from agentkit.tool import Tool
from agentkit.toolerrors import (
    AnswerError,
    DeclinedError,
    ElicitationError,
    LimitedError,
    Problem,
    ToolExecutionError,
    UnknownToolError,
)
from agentkit.toolexamples import failure_kind
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry

__all__ = ["Audit", "CallScope", "Identify", "build_server", "serve_on_stdio"]

logger = logging.getLogger("agentkit.serve")
#: The server's name in ``initialize``'s ``serverInfo``.
SERVER_NAME: Final = "agentkit"
_T = TypeVar("_T")

#: How long a call's last messages to its client may take to go out before its answer does.
FLUSH_SECONDS: Final = 5.0
#: The name of stdio's one client connection.
STDIO: Final = "stdio"
#: How long a 2026-07-28 client may keep a ``tools/list`` answer (``ttlMs``): it hears of
#: a reload on its ``subscriptions/listen`` stream, and a call of a tool gone since is
#: an error that says to list again.
LIST_TTL_MS: Final = 60_000

#: Enters the scope one ``tools/call`` runs in, given the SDK's request context (the HTTP
#: server binds the caller's own credentials there, from its request headers).
CallScope = Callable[[Any], AbstractContextManager[None]]
#: Who a call is made for, given the SDK's request context (``CallerIdentity`` over HTTP).
Identify = Callable[[Any], Caller]
#: Takes each call's audit record (``agentkit.audit``) once it is answered.
Audit = Callable[[Mapping[str, Any]], object]


def concurrency(tool: Tool) -> int | None:
    """How many calls of ``tool`` may run at once: its ``CONCURRENCY`` (a definition's
    ``concurrency:``), ``None`` for no limit of its own."""
    limit = tool.CONCURRENCY
    # A hand-written class may set anything; only a positive whole number limits.
    return limit if type(limit) is int and limit > 0 else None


@final
class _Server(Server[Any]):
    """The SDK's server, announcing ``tools.listChanged`` to handshake-era clients when a
    reload can reach them (``tools_changed``); 2026-07-28 clients are told it whenever
    ``subscriptions/listen`` is served, which it always is."""

    tools_changed = True

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=self.tools_changed),
            experimental_capabilities,
            extensions,
        )


@final
class _Encodable:
    """Server middleware: every answer (a result, a protocol error's message) is made
    ``encodable`` before the SDK writes it, whatever string a tool or a client put in it:
    one the wire cannot carry would end the stdio server, or leave an HTTP call unanswered."""

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        try:
            return encodable(await call_next(ctx))
        except MCPError as exc:
            error = encodable(exc.error)
            if error is exc.error:
                raise
            raise MCPError(error.code, error.message, error.data) from exc


@final
class _SessionsSeen:
    """Server middleware: every session that sends a request is one to announce changes to."""

    def __init__(self, served: ServedTools) -> None:
        self._served = served

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        connection = _connection(ctx)
        if connection:
            self._served.seen(connection, ctx.session)
        return await call_next(ctx)


def _connection(ctx: Any) -> str:
    """The name of the client connection a request came on: its HTTP session id ("" for
    stateless HTTP, which has none), or "stdio" for the one client of stdin/stdout."""
    headers = getattr(ctx.request, "headers", None)  # a Starlette request over HTTP
    return str(headers.get("mcp-session-id", "")) if headers is not None else STDIO


def _caller(ctx: Any, owner_headers: tuple[str, ...] = ()) -> str:
    """Whose pages a call's are (``agentkit.paging.caller_scope``): its connection, and
    over HTTP the credentials it sent (a digest of its Authorization header and of the
    ``owner_headers``, the per-user credential headers), so that a stateless server's
    clients, which have no session, do not share them when they authenticate apart."""
    headers = getattr(ctx.request, "headers", None)
    if headers is None:
        return STDIO
    sent = [str(headers.get(name, "")) for name in ("authorization", *owner_headers)]
    digest = hashlib.sha256("\n".join(sent).encode()).hexdigest() if any(sent) else ""
    return f"{headers.get('mcp-session-id', '')}/{digest}"


@final
class _IdsHeld:
    """Server middleware: a request's id stays held while its handler runs
    (``InFlightIds.held``), even once its client has left."""

    def __init__(self, ids: InFlightIds) -> None:
        self._ids = ids

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        connection = _connection(ctx)
        if not connection or ctx.request_id is None:
            return await call_next(ctx)
        with self._ids.held(connection, ctx.request_id):
            return await call_next(ctx)


@final
class _ServedCall(CallContext):
    """One ``tools/call``'s context (``agentkit.context``): its log messages go to the
    client on the call's own stream, in order, at or above the level the client asked
    for; its questions are ``elicitation/create`` requests on that stream, or, to a
    2026-07-28 client that can be asked, go on ``questions`` for ``InputRequiredCalls`` to ask.

    Methods are called on the server's loop (async tools) or a worker thread (sync
    tools); what they send is handed to the loop and not waited for, so a slow client
    never holds the tool up. ``flush`` waits (bounded) for what is still being sent.
    """

    bounds_questions = True  # the call is admitted again after a question that timed out

    def __init__(
        self, ctx: Any, log_level: LogLevel, tool: str, left: ClientLeft | None = None
    ) -> None:
        self._loop = self.loop = asyncio.get_running_loop()
        self._log_level = log_level
        self._modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        self._tool = tool
        self.attach(ctx)
        self._sending: list[concurrent.futures.Future[None]] = []
        #: Where a 2026-07-28 client's questions go (``InputRequiredCalls``); None: asked directly.
        self.questions: asyncio.Queue[Question] | None = (
            asyncio.Queue() if self._modern and _declared_elicitation(ctx) else None
        )
        #: Set when the client that would answer a question has gone: its HTTP request's
        #: connection closed (``admission.watching``), or stdin ended.
        self._left = client_left(getattr(ctx.request, "scope", None)) or left
        #: The call's hold on its slots (``run`` sets it once the call is admitted).
        self.admission: Admission | None = None
        #: The answer that did not fit its form, once one came: the call ends in it.
        self.refused: AnswerError | None = None

    @property
    def ctx(self) -> Any:
        """The request the call answers now (a 2026-07-28 call's latest round)."""
        return self._ctx

    def attach(self, ctx: Any) -> None:
        """Send what the call says from now on on ``ctx``'s stream (a new round's)."""
        self._ctx = ctx
        # 2026-07-28 connections opt in per request (``_meta``); earlier ones by
        # logging/setLevel, which the server keeps per connection.
        self._allowed = allowed_log_levels(ctx.protocol_version, ctx.meta) if self._modern else ()

    def wants(self, level: LogLevel) -> bool:
        if self._modern:
            return level in self._allowed
        return at_least(level, self._log_level)

    def log(self, level: LogLevel, message: str, logger: str | None) -> None:
        if not self.wants(level):
            return
        notification = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level=level, data=encodable(message), logger=encodable(logger)
            )
        )
        self._send(self._ctx.session.send_notification(notification, self._ctx.request_id))

    def _send(self, sending: Awaitable[None]) -> None:
        previous = self._sending[-1] if self._sending else None
        self._sending = [future for future in self._sending if not future.done()]

        async def in_order() -> None:
            if previous is not None:  # each message after the one before it
                with contextlib.suppress(Exception):
                    await asyncio.wrap_future(previous)
            await sending

        self._sending.append(asyncio.run_coroutine_threadsafe(in_order(), self._loop))

    async def aelicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        """``elicitation/create`` (form mode) on this call's own stream, or in an
        ``input_required`` result to a 2026-07-28 client. The client is trusted no more
        than the model: an accepted answer reaches the tool only if it fits the form
        (``agentkit.forms``), else ``AnswerError``, which the call ends in; a form no
        answer could be checked against is not asked (``ElicitationError``)."""
        form = Form.read(schema)
        try:
            answer = await self._answered(message, schema)
        except ValidationError as exc:  # the SDK's: no elicitation result at all
            self.refused = AnswerError(_unreadable(exc))
            raise self.refused from None  # its message shows the values: not kept
        if not answer.accepted:
            return answer
        content, problems = form.check(answer.content)
        if problems:
            self.refused = AnswerError(problems)
            raise self.refused
        return Elicited(action="accept", content=content)

    async def _answered(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        """The client's answer, as it sent it. While the call waits for it it holds no
        slot (``Admission.asking``); it waits at most the server's answer timeout, and
        not once its client has left."""
        if self.questions is None and not can_elicit(self._ctx):
            raise ElicitationError(
                "the client cannot be asked: it did not declare the elicitation capability, "
                "or the connection has no way back to it (a stateless server's session)"
            )
        # The tool's own timeout= (or its call's deadline) ends the question here, as an
        # answer would, so that the call is admitted again before it goes on; cancelled
        # from outside, it could not wait for room (``bounds_questions``; review s17 R3).
        left = question_time_left()
        # A call ``run`` did not admit has no slot to give back, nor the server's timeout.
        admission = self.admission
        timeout = math.inf if admission is None else admission.answer_timeout
        bound = min(timeout, math.inf if left is None else left)
        async with nullcontext() if admission is None else admission.asking():
            try:
                return await asyncio.wait_for(
                    self._asked(message, schema), None if bound == math.inf else bound
                )
            except asyncio.TimeoutError:
                if left is not None and left < timeout:
                    raise question_timed_out(self) from None
                logger.warning(
                    "agentkit: a call of tool '%s' ended: its user did not answer within "
                    "%g s (--answer-timeout)",
                    self._tool,
                    timeout,
                )
                raise ElicitationError(
                    f"the user did not answer within {timeout:g} s (the server's "
                    "--answer-timeout): the question was withdrawn and nothing was done "
                    "past it"
                ) from None

    async def _asked(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        if self.questions is not None:
            question = Question(message=message, schema=schema, answer=self._loop.create_future())
            self.questions.put_nowait(question)
            return await question.answer
        try:
            answer = await self._unless_left(
                self._ctx.session.elicit_form(
                    encodable(message),
                    encodable(dict(schema)),
                    related_request_id=self._ctx.request_id,
                )
            )
        except NoBackChannelError as exc:
            raise ElicitationError(
                "the client cannot be asked: this connection has no way back to it "
                "(a stateless server's session)"
            ) from exc
        except MCPError as exc:
            raise ElicitationError(f"the client did not ask the user: {exc}") from exc
        return Elicited(action=answer.action, content=dict(answer.content or {}))

    async def _unless_left(self, asking: Awaitable[_T]) -> _T:
        """``asking``'s answer; ``ElicitationError`` (the question withdrawn) if the
        client leaves first: nobody is there to answer it any more."""
        if self._left is None:
            return await asking
        task = asyncio.ensure_future(asking)
        gone = asyncio.ensure_future(self._left.wait())
        try:
            await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not task.done():
                task.cancel()
                await _withdrawn([task])
        if task.cancelled():
            logger.warning(
                "agentkit: a call of tool '%s' ended: its client left while it waited for "
                "its user's answer",
                self._tool,
            )
            raise ElicitationError(
                "the client left before the user answered: the question was withdrawn and "
                "nothing was done past it"
            )
        return task.result()

    async def flush(self) -> None:
        """Wait until what the call sent has gone out (at most ``FLUSH_SECONDS``)."""
        if self._sending:
            pending = [asyncio.wrap_future(future) for future in self._sending]
            await asyncio.wait(pending, timeout=FLUSH_SECONDS)


def _unreadable(exc: ValidationError) -> list[Problem]:
    """What the SDK found wrong with an answer that is no elicitation result: each field
    of its content at fault (``content.age``), or the answer as a whole; never the
    values the SDK's message quotes."""
    at = (error["loc"] for error in exc.errors(include_url=False, include_input=False))
    fields = dict.fromkeys(
        str(loc[1]) if len(loc) > 1 and loc[0] == "content" else "" for loc in at
    )
    return [
        Problem(
            path=name,
            message=f"Field '{name}': expected a string, a number, a boolean or a list of strings",
        )
        if name
        else Problem(
            path="",
            message="The answer is no elicitation result (an action of 'accept', 'decline' "
            "or 'cancel', and a content of fields)",
        )
        for name in fields
    ]


def _deadline(call_timeout: float | None) -> float | None:
    return None if call_timeout is None else time.monotonic() + call_timeout


async def _withdrawn(questions: list[asyncio.Future[Any]]) -> None:
    """Let the withdrawn ``questions`` finish cancelling (the SDK tells the client with
    ``notifications/cancelled``), at most ``FLUSH_SECONDS``, shielded: a cancelled call
    withdraws its questions too."""
    if questions:
        with anyio.CancelScope(shield=True), anyio.move_on_after(FLUSH_SECONDS):
            await asyncio.wait(questions)


def can_elicit(ctx: Any) -> bool:
    """Whether the client of this request can be asked: it declared the elicitation
    capability, and it is a 2026-07-28 client (asked in ``input_required`` results) or
    the request has a way back to it (not a stateless server's handshake-era session)."""
    if not _declared_elicitation(ctx):
        return False
    return bool(ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session.can_send_request)


def _declared_elicitation(ctx: Any) -> bool:
    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    return bool(ctx.session.check_client_capability(wanted))


def _cannot_confirm(tool: str) -> str:
    return (
        f"Tool '{tool}' was not run: it asks the user before it acts (confirm: true), and "
        "this client cannot be asked (it did not declare the elicitation capability, or "
        "the connection has no way back to it). Use a client that supports elicitation, "
        "or start the server with --allow-unconfirmed to run such tools without asking."
    )


def _progress_to(call: _ServedCall) -> ProgressReporter:
    """A progress reporter that sends each step to the client of the call's request
    (a 2026-07-28 call's latest round).

    It is called on the server's loop (async tools) or on a worker thread (sync
    tools): from a thread, the notification is handed to the loop and not waited
    for, so a slow client never holds the tool up. The SDK sends nothing when
    the request carried no progress token.
    """
    loop = asyncio.get_running_loop()
    sending: set[concurrent.futures.Future[None]] = set()  # held until sent

    def report(step: Progress) -> None:
        ctx = call.ctx
        notify = ctx.session.report_progress(step.done, step.total, encodable(step.message))
        # Thread-safe from the loop's own thread too; the result is never awaited.
        future = asyncio.run_coroutine_threadsafe(notify, loop)
        sending.add(future)
        future.add_done_callback(sending.discard)

    return report


def build_server(
    tools: ToolRegistry | ServedTools,
    executor: ToolExecutor | None = None,
    *,
    call_timeout: float | None = None,
    call_scope: CallScope | None = None,
    limits: CallLimits | None = None,
    announce: bool = True,
    allow_unconfirmed: bool = False,
    awaiting_input: InputRequiredCalls | None = None,
    stdin_closed: ClientLeft | None = None,
    ids: InFlightIds | None = None,
    identify: Identify | None = None,
    audit: Audit | None = None,
    toolset: str | None = None,
    owner_headers: tuple[str, ...] = (),
) -> Server[Any]:
    """An MCP server answering ``tools/list`` and ``tools/call`` from ``tools``.

    ``tools`` is a registry, or a ``ServedTools`` a reload may swap: each call uses the
    set current when it arrives, to its end. ``call_timeout`` (seconds) is every call's
    deadline (``ToolExecutor.aexecute``'s ``timeout``); ``call_scope`` wraps each call
    (see ``CallScope``); ``limits`` admits calls (default: ``CallLimits()``), and a call
    it refuses is an ``isError`` result. With ``announce`` the sessions are remembered
    so that ``ServedTools.announce`` reaches them (not for stateless HTTP, where a
    session lasts one request).

    A tool with ``CONFIRM`` (``confirm: true``) asks its client's user before it acts;
    a client that cannot be asked gets an ``isError`` refusal, unless
    ``allow_unconfirmed``: then the tool runs without asking. A 2026-07-28 client is
    asked in ``input_required`` results; ``awaiting_input`` keeps the calls waiting for its
    answers (the caller's, to ``close`` when the server stops; default: a new one).
    ``stdin_closed`` is set when a stdio server's client has gone: a question waiting
    for its answer is withdrawn then (an HTTP request's own connection says so itself).
    ``ids``: the request ids in flight, which the transport claims as requests come and
    gives back as their answers go; each stays held while its request's handler runs.
    Each call runs as the caller ``identify`` finds in its request (``calling_as``;
    default ``ANONYMOUS``); once answered, its record goes to ``audit``, naming
    ``toolset`` as the set it was served from (``agentkit.audit``). A paged answer's
    further pages are for the connection and the credentials that asked for it: its
    Authorization header and the ``owner_headers`` (per-user credential headers).
    """
    served = tools if isinstance(tools, ServedTools) else ServedTools(tools)
    runner = executor or ToolExecutor()
    scope = call_scope or (lambda ctx: nullcontext())
    gate = limits or CallLimits(queue_timeout=call_timeout)
    served.redact = _redacting_credentials(served, runner)
    awaiting_input = awaiting_input if awaiting_input is not None else InputRequiredCalls()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        # The SDK leaves ttlMs and cacheScope out for a handshake-era client, whose
        # protocol has no such fields. "private": a listing never goes to another
        # caller's cache, whatever a bearer token or a session's searches made of it.
        return types.ListToolsResult(
            tools=list(served.listed_for(_discovering(ctx))),
            ttl_ms=LIST_TTL_MS,
            cache_scope="private",
        )

    async def set_log_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        served.set_log_level(_connection(ctx), params.level)
        return types.EmptyResult()

    async def call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        with calling_as(identify(ctx) if identify is not None else ANONYMOUS) as caller:
            if audit is None:
                return await _call_tool(ctx, params)
            return await _audited(ctx, params, caller, audit)

    async def _audited(
        ctx: Any, params: types.CallToolRequestParams, caller: Caller, audit: Audit
    ) -> types.CallToolResult | types.InputRequiredResult:
        started, clock = time.time(), time.perf_counter()
        answer: types.CallToolResult | types.InputRequiredResult | None = None
        with noting() as notes:
            try:
                answer = await _call_tool(ctx, params)
            except MCPError:  # a protocol error: no such tool, or an answer to no question
                note_failure("unknown_tool" if served.lookup(params.name) is None else "execution")
                raise
            finally:
                # A call asking its 2026-07-28 client goes on in the request answering it.
                if not isinstance(answer, types.InputRequiredResult):
                    tool = served.lookup(params.name)
                    if answer is None and notes.outcome is None:
                        note_failure("interrupted")  # cancelled, or the server broke
                    elif answer is not None and answer.is_error and notes.outcome is None:
                        note_failure("execution")  # an error result no step above named
                    with scope(ctx):  # a user's own credentials are bound there
                        redactor = _known_secrets(tool, runner)
                    audit(
                        audit_record(
                            started=started,
                            duration=time.perf_counter() - clock,
                            caller=caller,
                            tool=params.name,
                            version=tool.version if tool is not None else None,
                            toolset=toolset,
                            # A tool no one has: nothing says which of its arguments to mask.
                            arguments=masked_arguments(
                                params.arguments or {}, tool.input_schema, redactor
                            )
                            if tool is not None
                            else {},
                            notes=notes,
                        )
                    )
        return answer

    async def _call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.request_state is not None:  # a 2026-07-28 client's answer to a question
            return await awaiting_input.resume(ctx, params)
        registry = served.registry  # this call's set, whatever a reload does meanwhile
        tool = served.lookup(params.name)  # listed or deferred alike
        if tool is None:
            unknown = UnknownToolError(params.name, registry.names())
            # A client's listing may predate a reload it could not hear of (a stateless
            # server's handshake-era client): the way out is listing again.
            raise MCPError(
                INVALID_PARAMS,
                f"{unknown} The tools may have changed since you listed them: call tools/list.",
            )
        arguments = dict(params.arguments or {})
        call = _ServedCall(ctx, served.log_level(_connection(ctx)), tool.name, stdin_closed)
        if isinstance(tool.DEPRECATED, str):
            call.log("warning", f"Tool '{tool.name}' is deprecated: {tool.DEPRECATED}", "agentkit")
        if tool.CONFIRM:
            if can_elicit(ctx):
                call.confirming = tool.name
            elif not allow_unconfirmed:
                note_declined()
                return error_result(_cannot_confirm(tool.name))
        if call.questions is not None:  # asked in input_required results, round by round
            asking = Asking(questions=call.questions, attach=call.attach)
            return await awaiting_input.first(
                ctx, params, asking, lambda: run(tool, arguments, call)
            )
        result = await run(tool, arguments, call)
        if served.is_search(tool) and not result.is_error:
            await _found(ctx, result.structured_content)
        return result

    async def _found(ctx: Any, answer: dict[str, Any] | None) -> None:
        """A session's search found ``answer``'s tools: they are listed to it from now
        on, and it is told so (``notifications/tools/list_changed``, on the call's own
        stream, before the answer), to list again."""
        connection = _discovering(ctx)
        names = [str(match.get("name")) for match in (answer or {}).get("tools", ())]
        if not announce or not served.discover(connection, names):
            return
        told = ctx.session.send_notification(types.ToolListChangedNotification(), ctx.request_id)
        with contextlib.suppress(Exception), anyio.move_on_after(FLUSH_SECONDS):
            await told

    async def run(tool: Tool, arguments: dict[str, Any], call: _ServedCall) -> types.CallToolResult:
        ctx = call.ctx  # the request that started the call
        # Async tools run on the server's loop; sync ones (HTTP, files) in the
        # executor's bounded thread pool, so a slow tool never blocks the loop.
        try:
            async with gate.admitted(tool.name, concurrency(tool)) as call.admission:
                with (
                    scope(ctx),
                    caller_scope(_caller(ctx, owner_headers)),
                    reporting_progress(_progress_to(call)),
                    serving(call),
                ):
                    if call.confirming and tool.definition is None:
                        # A hand-written tool does not say what it sends: its arguments, as
                        # it would get them. Arguments the executor refuses run nothing, so
                        # the user is not asked about them (nor shown a padding of them).
                        checked = tool.input_schema.check(arguments)
                        if not checked.problems:
                            call.deadline = _deadline(call_timeout)
                            shown = arguments_shown(checked.values, redact=served.redact)
                            await aconfirm(served.redact(shown))
                    # The executor's own deadline, or a moment before it: a question the
                    # tool asks waits no longer, and an answer after it is ignored.
                    call.deadline = _deadline(call_timeout)
                    result = await runner.aexecute(
                        tool, arguments, raise_on_failure=False, timeout=call_timeout
                    )
        except Busy as exc:
            note_failure("busy")
            return error_result(f"Tool '{tool.name}' was not run: {exc}")
        except CallInterrupted as exc:
            note_failure("interrupted")
            return error_result(
                f"Tool '{tool.name}' did not finish: {exc}; what it did before is not known, "
                "so retry only if it is safe to"
            )
        except (DeclinedError, ElicitationError) as exc:
            note_declined()
            return error_result(f"Tool '{tool.name}' was not run: {exc}")
        finally:
            # Answered, abandoned or cancelled: a question still waiting is withdrawn,
            # so that an abandoned sync tool's thread stops waiting, and an answer that
            # comes later (a confirmation accepted too late) lets nothing happen.
            await _withdrawn(call.end())
        await call.flush()  # what the tool logged reaches the client before its answer
        kind = failure_kind(result.error)
        if kind is not None:
            note_failure(kind)
        cause = result.error.cause if isinstance(result.error, ToolExecutionError) else None
        if isinstance(cause, (DeclinedError, LimitedError)) or (
            isinstance(cause, ElicitationError) and call.confirming
        ):  # not allowed, or the question about it never answered: nothing was done
            if isinstance(cause, LimitedError):
                note_limited()
            else:
                note_declined()
            return error_result(f"Tool '{tool.name}' was not run: {cause}")
        if call.refused is not None:  # whatever the tool did when told, the call ends in it
            note_failure("execution")
            return error_result(served.redact(str(ToolExecutionError(tool.name, call.refused))))
        if isinstance(cause, Busy):  # answered, but no room to go on (Admission.asking)
            return error_result(
                f"Tool '{tool.name}' stopped after its question was answered: {cause}; "
                "nothing was done past the question"
            )
        return call_result(tool, result, call_timeout=call_timeout)

    server = _Server(
        SERVER_NAME,
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        # A 2026-07-28 client hears of a reload on a subscriptions/listen stream: a
        # request of its own, so stateless servers reach it too.
        on_subscriptions_listen=served.listen,
    )
    # A handshake-era client hears of a reload only outside its requests (a GET
    # stream), which a stateless session does not have: it is not promised one.
    server.tools_changed = announce
    # logging/setLevel exists through protocol 2025-11-25 (the SDK routes it to no
    # 2026-07-28 connection, whose requests opt in to log levels by ``_meta``): served
    # with add_request_handler, as the SDK's Server(on_set_logging_level=...) would, but
    # without its warning that the 2026-07-28 protocol dropped the method -- the
    # messages are sent by era above (_ServedCall, ServedTools.log), not unconditionally.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_log_level)
    server.middleware.append(_Encodable())
    if announce:
        server.middleware.append(_SessionsSeen(served))
    if ids is not None:
        server.middleware.append(_IdsHeld(ids))
    return server


def _discovering(ctx: Any) -> str:
    """The client connection whose searches add to its listing: a handshake-era
    session's, or stdio's; "" for a 2026-07-28 request, which no session ties to the
    next one (its search answer carries the schemas), and for stateless HTTP."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return ""
    return _connection(ctx)


def _known_secrets(tool: Tool | None, executor: ToolExecutor) -> Redactor | None:
    """A redactor of the values of ``tool``'s credentials the executor resolves now."""
    names = tool.credential_names if tool is not None else ()
    values = [value for name in names if (value := executor.credentials.get(name))]
    return Redactor(values) if values else None


def _redacting_credentials(served: ServedTools, executor: ToolExecutor) -> Callable[[str], str]:
    """Redacts, from a message to every client (a reload's report), the value of every
    credential the served tools name that the executor can resolve now; the text is
    made ``encodable`` too (a file name in it may not be)."""

    def redact(text: str) -> str:
        names = {name for tool in served.registry for name in tool.credential_names}
        values = (value for name in names if (value := executor.credentials.get(name)))
        return encodable(Redactor(values).redact(text))

    return redact


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
        await _serve_answering_to_the_end(
            server, stdin, stdout, drain_seconds, ended=ended, lines=lines, ids=ids
        )
        group.cancel_scope.cancel()


@final
class _Unanswered:
    """The ids of the requests read from the client that have no answer yet, each held
    in ``in_flight`` (the SDK cannot tell ``1`` from ``"1"``) until it is answered."""

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
