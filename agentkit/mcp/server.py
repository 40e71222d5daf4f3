"""The MCP server every transport shares (``build_server``), on the official MCP Python SDK.

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
  client leaves (its HTTP stream closes, stdin ends) or the answer does not come in time
  (``agentkit.mcp.served_call``).

Serving it over stdio is ``agentkit.mcp.stdio_serving``; over HTTP, ``agentkit.mcp.http_app``.
The handlers stay in one module, past 500 lines: each is a few lines over the same
closure (the served tools, the executor, the limits, the audit), and the pieces they
share with nothing else, the checks a request passes before its handler, sit beside
them.

Needs ``pip install 'agentkit[mcp]'``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Final, final

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

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
    aconfirm,
    arguments_shown,
    serving,
)
from agentkit.mcp.admission import (
    Busy,
    CallInterrupted,
    CallLimits,
    ClientLeft,
)
from agentkit.mcp.content import call_result, encodable, error_result
from agentkit.mcp.input_required import Asking, InputRequiredCalls
from agentkit.mcp.request_ids import InFlightIds
from agentkit.mcp.served_call import FLUSH_SECONDS, ServedCall, can_elicit, progress_to, withdrawn
from agentkit.mcp.served_tools import ServedTools
from agentkit.paging import caller_scope
from agentkit.progress import reporting_progress
from agentkit.redaction import Redactor
from agentkit.tool import Tool
from agentkit.toolerrors import (
    DeclinedError,
    ElicitationError,
    LimitedError,
    ToolExecutionError,
    UnknownToolError,
)
from agentkit.toolexamples import failure_kind
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry

__all__ = ["STDIO", "Audit", "CallScope", "Identify", "build_server"]

logger = logging.getLogger("agentkit.serve")
#: The server's name in ``initialize``'s ``serverInfo``.
SERVER_NAME: Final = "agentkit"
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

    __slots__ = ()

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

    __slots__ = ("_served",)

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

    __slots__ = ("_ids",)

    def __init__(self, ids: InFlightIds) -> None:
        self._ids = ids

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        connection = _connection(ctx)
        if not connection or ctx.request_id is None:
            return await call_next(ctx)
        with self._ids.held(connection, ctx.request_id):
            return await call_next(ctx)


def _deadline(call_timeout: float | None) -> float | None:
    return None if call_timeout is None else time.monotonic() + call_timeout


def _cannot_confirm(tool: str) -> str:
    return (
        f"Tool '{tool}' was not run: it asks the user before it acts (confirm: true), and "
        "this client cannot be asked (it did not declare the elicitation capability, or "
        "the connection has no way back to it). Use a client that supports elicitation, "
        "or start the server with --allow-unconfirmed to run such tools without asking."
    )


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
        call = ServedCall(ctx, served.log_level(_connection(ctx)), tool.name, stdin_closed)
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

    async def run(tool: Tool, arguments: dict[str, Any], call: ServedCall) -> types.CallToolResult:
        ctx = call.ctx  # the request that started the call
        # Async tools run on the server's loop; sync ones (HTTP, files) in the
        # executor's bounded thread pool, so a slow tool never blocks the loop.
        try:
            async with gate.admitted(tool.name, concurrency(tool)) as call.admission:
                with (
                    scope(ctx),
                    caller_scope(_caller(ctx, owner_headers)),
                    reporting_progress(progress_to(call)),
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
            await withdrawn(call.end())
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
    # messages are sent by era above (ServedCall, ServedTools.log), not unconditionally.
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
