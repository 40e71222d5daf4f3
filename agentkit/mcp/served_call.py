"""One ``tools/call`` as it runs on the server (``ServedCall``, its ``agentkit.context``):
what the tool logs and reports as progress goes to its client on the call's own stream,
and what it asks (``elicitation/create``, or an ``input_required`` result to a 2026-07-28
client) is answered by the client's user, checked against the form, within the server's
answer timeout and not once the client has left.

Needs ``pip install 'agentkit[mcp]'``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import math
from collections.abc import Awaitable, Mapping
from contextlib import nullcontext
from typing import Any, Final, TypeVar, final

import anyio
import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from agentkit.context import (
    CallContext,
    Elicited,
    LogLevel,
    at_least,
    question_time_left,
    question_timed_out,
)
from agentkit.forms import Form
from agentkit.mcp.admission import Admission, ClientLeft, client_left
from agentkit.mcp.content import encodable
from agentkit.mcp.input_required import Question
from agentkit.progress import Progress, ProgressReporter
from agentkit.toolerrors import AnswerError, ElicitationError, Problem

__all__ = ["FLUSH_SECONDS", "ServedCall", "can_elicit", "progress_to", "withdrawn"]

logger = logging.getLogger("agentkit.serve")
_T = TypeVar("_T")

#: How long a call's last messages to its client may take to go out before its answer does.
FLUSH_SECONDS: Final = 5.0


@final
class ServedCall(CallContext):
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
                await withdrawn([task])
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


async def withdrawn(questions: list[asyncio.Future[Any]]) -> None:
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


def progress_to(call: ServedCall) -> ProgressReporter:
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
