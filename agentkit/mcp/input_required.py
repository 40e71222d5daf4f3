"""Asking the user of an MCP 2026-07-28 client: the "input required" round trips.

A 2026-07-28 connection has no server-to-client request on a call's stream. A call that
must ask its user (a ``confirm: true`` tool, a tool's ``agentkit.context.elicit``) answers
its ``tools/call`` with an ``input_required`` result instead: the question (an
``elicitation/create`` in ``inputRequests``) and a ``requestState`` token. The client
asks its user and sends the same ``tools/call`` again, with the answer
(``inputResponses``) and the token.

The call does not end in between: it waits where it asked (an HTTP tool with its request
built and not sent), in this process, until the round that carries its token. What the
client sends back is untrusted, so:

- a token is 256 random bits, good for one answer: it is forgotten when used, and when
  the call ends, so a round sent again finds nothing to resume and runs nothing;
- the round must name the same tool with the same arguments, and come from the same
  caller (the same ``Authorization`` header, HTTP session and ``--credential-header``
  header values, if any), else the call ends without acting;
- the call waits no longer than a question does (the server's ``--answer-timeout``,
  or its ``--call-timeout`` if that comes first); a round after that finds nothing to
  resume. Meanwhile it holds no ``--max-calls`` slot, only one of ``--max-waiting``
  places (``agentkit.mcp.admission.Admission.asking``); past those it is refused with an
  error, as it is past ``MAX_WAITING`` here.

Since the call waits in the process that asked, the round that answers must reach the
same process (one instance, or a load balancer keeping a client on one instance).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import secrets
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, final

import anyio
import mcp_types as types

from agentkit.context import Elicited
from agentkit.mcp.admission import MAX_WAITING
from agentkit.mcp.content import encodable, error_result
from agentkit.toolerrors import ElicitationError

__all__ = ["MAX_WAITING", "Asking", "InputRequiredCalls", "Question"]

#: The key of the one question a round asks (``inputRequests``/``inputResponses``).
KEY: Final = "agentkit/question"
#: How long a call that is given up on may take to end (withdraw its question).
_ENDING_SECONDS: Final = 5.0


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """One question a call asks: ``message`` with a form of ``schema``; its ``answer``
    is set when the round that answers it comes (cancelled when the call gives up)."""

    message: str
    schema: Mapping[str, Any]
    answer: asyncio.Future[Elicited]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Asking:
    """A call that may ask: its questions arrive on ``questions``; ``attach`` hands it
    the request of the round in progress (where its logs and progress go from then on)."""

    questions: asyncio.Queue[Question]
    attach: Callable[[Any], None]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _Waiting:
    tool: str
    arguments: str
    caller: str
    call: Asking
    task: asyncio.Task[types.CallToolResult]
    question: Question


def caller(ctx: Any, identity_headers: Iterable[str] = ()) -> str:
    """Who sends this request, as far as a round must match it: a digest (never the
    values) of its HTTP ``Authorization`` header, its session id and each of
    ``identity_headers`` (the ``--credential-header`` headers: the credential a call
    runs with is its caller's identity); "stdio" on stdio."""
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    if headers is None:
        return "stdio"
    names = ["authorization", "mcp-session-id", *sorted({h.lower() for h in identity_headers})]
    seen = json.dumps([[name, headers.get(name, "").strip()] for name in names])
    return hashlib.sha256(seen.encode("utf-8", "surrogatepass")).hexdigest()


def _arguments(arguments: Mapping[str, Any] | None) -> str:
    return json.dumps(arguments or {}, sort_keys=True, separators=(",", ":"), default=str)


@final
class InputRequiredCalls:
    """The calls that wait for their 2026-07-28 clients' answers, by token."""

    def __init__(
        self, *, max_waiting: int = MAX_WAITING, identity_headers: Iterable[str] = ()
    ) -> None:
        self._waiting: dict[str, _Waiting] = {}
        self._max_waiting = max_waiting
        self._identity_headers = tuple(identity_headers)

    def __len__(self) -> int:
        return len(self._waiting)

    def close(self) -> None:
        """No round can come any more (the server stops): end every waiting call, without
        acting; each withdraws its question as it ends."""
        for waiting in list(self._waiting.values()):
            waiting.task.cancel()

    async def first(
        self,
        ctx: Any,
        params: types.CallToolRequestParams,
        call: Asking,
        run: Callable[[], Coroutine[Any, Any, types.CallToolResult]],
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Start the call (``run()``, a coroutine giving its result) and answer this
        round: its result, or its first question."""
        task: asyncio.Task[types.CallToolResult] = asyncio.ensure_future(run())
        return await self._next(ctx, params, call, task)

    async def resume(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        """A round carrying ``requestState``: the answer goes to the call waiting for it,
        and this round answers with its result or its next question."""
        token = params.request_state
        waiting = self._waiting.pop(token, None) if token else None
        if waiting is None:
            return error_result(
                f"Tool '{params.name}': no call waits for this answer (it was answered "
                "already, its time ran out, or another server process asked); nothing was "
                "done with it. Call the tool again."
            )
        answer = waiting.question.answer
        if (
            waiting.tool != params.name
            or waiting.arguments != _arguments(params.arguments)
            or waiting.caller != caller(ctx, self._identity_headers)
        ):
            await self._ended(waiting.task)
            return error_result(
                f"Tool '{params.name}' was not run with this answer: it names another tool, "
                "other arguments or another caller than the question was about; the call "
                "that asked ended and nothing was done."
            )
        response = (params.input_responses or {}).get(KEY)
        if not answer.done():
            if isinstance(response, types.ElicitResult):
                answer.set_result(
                    Elicited(action=response.action, content=dict(response.content or {}))
                )
            else:  # no answer to the question: the user was not asked, so not allowed
                answer.set_result(Elicited(action="cancel"))
        waiting.call.attach(ctx)
        return await self._next(ctx, params, waiting.call, waiting.task)

    async def _next(
        self,
        ctx: Any,
        params: types.CallToolRequestParams,
        call: Asking,
        task: asyncio.Task[types.CallToolResult],
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Wait for the call's result or its next question, whichever comes first."""
        while True:
            asked = asyncio.ensure_future(call.questions.get())
            try:
                await asyncio.wait({task, asked}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:  # the client gave this round up: the call ends
                asked.cancel()
                await self._ended(task)
                raise
            if task.done():
                asked.cancel()
                return task.result()
            question = asked.result()
            if len(self._waiting) >= self._max_waiting:
                question.answer.set_exception(
                    ElicitationError(
                        f"too many calls wait for their users' answers already (at most "
                        f"{self._max_waiting:,}); try again later"
                    )
                )
                continue
            token = secrets.token_urlsafe(32)
            self._waiting[token] = _Waiting(
                tool=params.name,
                arguments=_arguments(params.arguments),
                caller=caller(ctx, self._identity_headers),
                call=call,
                task=task,
                question=question,
            )
            # However the call ends (its time ran out, cancelled), its token goes with it.
            task.add_done_callback(functools.partial(self._forget, token))
            return types.InputRequiredResult(
                input_requests={
                    KEY: types.ElicitRequest(
                        params=types.ElicitRequestFormParams(
                            message=encodable(question.message),
                            requested_schema=encodable(dict(question.schema)),
                        )
                    )
                },
                request_state=token,
            )

    def _forget(self, token: str, task: asyncio.Task[Any]) -> None:
        self._waiting.pop(token, None)

    @staticmethod
    async def _ended(task: asyncio.Task[Any]) -> None:
        """Cancel the call and let it end (withdraw its question), bounded and shielded."""
        task.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(_ENDING_SECONDS):
            await asyncio.wait({task})
