"""Running tools: validate inputs, resolve credentials, execute, validate outputs, report.

Over 500 lines on purpose: ``ToolExecutor`` is the one call pipeline, and its path
(``execute``, ``_open``, ``_finish``) stays in one class reading its own state, since
splitting it would add calls and attribute lookups to every call; the steps that need
none of that state are ``agentkit.executorsteps``.
"""

from __future__ import annotations

import contextvars
import itertools
import os
import threading
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from agentkit.callcache import CachedAnswer
from agentkit.content import Block, Output, secret_in_answer
from agentkit.credentials import CredentialsManager
from agentkit.executorsteps import (
    BatchCall,
    TakenPage,
    belongs_to_the_process,
    bounded_inputs,
    cancelled_by_the_tool,
    check_timeout,
    checked_output,
    contained,
    contained_call,
    execution_error,
    pending_calls,
    raised_result,
    refused,
    run_to_completion,
    shallow_inputs,
    too_deep,
    within_timeout,
)
from agentkit.jsonvalues import containers_copied
from agentkit.observability import InMemoryHistogram, Metrics, Span, Tracer
from agentkit.paging import (
    CONTINUATION,
    DEFAULT_STORE,
    ContinuationError,
    Page,
    PageStore,
    continuation_of,
    fits,
    paged,
)
from agentkit.recording import ReplaySource
from agentkit.redaction import Redactor, activate, deactivate
from agentkit.tool import Tool, ToolSpec
from agentkit.toolerrors import (
    AgentKitError,
    CredentialError,
    Problem,
    SemanticError,
    ToolExecutionError,
    ToolValidationError,
)
from agentkit.toolevents import (
    EVENT_COMPLETED,
    EVENT_FAILED,
    EVENT_STARTED,
    Listener,
    ToolEvent,
    emit,
)
from agentkit.toolresult import (
    STATUS_FAILURE,
    STATUS_SUCCESS,
    ToolResult,
    make_result,
)

__all__ = ["ToolExecutor"]

_perf_counter = time.perf_counter
_now = time.time
# Read-only: one shared empty mapping must not carry one tool's writes to the next.
_NO_CREDENTIALS: Mapping[str, str] = MappingProxyType({})
_CallError = ToolValidationError | ToolExecutionError

if TYPE_CHECKING:
    # asyncio is imported where it is used: only asyncio callers, who have it
    # loaded already, pay for it (the CLI's start-up does not).

    # What _open hands to step 3 and _finish (see there).
    _Opened = tuple[
        ToolSpec,
        tuple[Listener, ...],
        str | None,
        Span | None,
        dict[str, Any],
        Mapping[str, str] | None,
        Redactor | None,
        dict[str, Any] | None,
        Any,
        _CallError | None,
    ]


# Call ids: a random prefix per process and a counter -- unique, and ~0.1 us where
# a fresh random id cost ~0.4 us. A forked child draws its own prefix, so parent
# and child never hand out the same id.
_call_numbers = itertools.count(1)
_call_prefix = ""


def _new_process() -> None:
    global _call_numbers, _call_prefix
    _call_prefix = f"call_{os.urandom(8).hex()}_"
    _call_numbers = itertools.count(1)


_new_process()
if hasattr(os, "register_at_fork"):  # POSIX only
    os.register_at_fork(after_in_child=_new_process)


def _new_call_id() -> str:
    return f"{_call_prefix}{next(_call_numbers):x}"


class ToolExecutor:
    """Runs tools through the five steps of a call and reports each outcome.

    1. validate the inputs against the tool's input schema (defaults applied to
       a copy: the caller's dict is never changed);
    2. resolve the tool's named credentials;
    3. run ``tool.execute`` (any exception becomes ``ToolExecutionError``, and so
       does a ``sys.exit()`` or another ``BaseException``: a tool cannot end the
       process that runs it; only what is the process's propagates: the user's
       ``KeyboardInterrupt``, a ``SystemExit`` from a signal handler of the program,
       and in ``aexecute`` a cancellation of the calling task);
    4. validate the output against the output schema;
    5. return a ``ToolResult`` -- or, in strict mode, raise the failure.

    Credential values are redacted from every error message, event and span the
    call produces; an answer (output and content blocks) that holds one is not
    given: the call fails with a ``ToolExecutionError`` whose cause is a
    ``SecretInOutputError`` saying where. ``credentials`` is a ``CredentialsManager`` or a
    plain mapping (default: environment variables). ``replay`` answers calls
    from a recording instead of running the tools (no credentials are resolved).

    ``aexecute`` and ``aexecute_many`` are the same for asyncio callers. Sync
    tools they run go to a thread pool of ``max_workers`` threads (default: the
    ``ThreadPoolExecutor`` default), made on first use and released by
    ``close()`` or by using the executor as a context manager.

    A tool with a ``MAX_OUTPUT`` gives an answer over it as its first page
    (``ToolResult.page`` says so); a call with a ``continuation`` argument gets the
    next page from ``pages`` (default: the process's ``agentkit.paging.DEFAULT_STORE``)
    without running the tool. See ``agentkit.paging``.
    """

    def __init__(
        self,
        *,
        credentials: CredentialsManager | Mapping[str, str] | None = None,
        listeners: Iterable[Listener] = (),
        tracer: Tracer | None = None,
        metrics: Metrics | None = None,
        replay: ReplaySource | None = None,
        max_workers: int | None = None,
        pages: PageStore | None = None,
    ) -> None:
        if max_workers is not None and (type(max_workers) is not int or max_workers < 1):
            raise SemanticError(
                f"ToolExecutor(max_workers=...) must be a positive integer or None, "
                f"got {max_workers!r}"
            )
        if credentials is None:
            credentials = CredentialsManager.from_env()
        elif not isinstance(credentials, CredentialsManager):
            credentials = CredentialsManager.from_mapping(credentials)
        self._credentials = credentials
        self._tracer = tracer
        self._metrics: Metrics = metrics if metrics is not None else InMemoryHistogram()
        self._record_duration = self._metrics.record_duration
        self._replay = replay
        self._listen(tuple(listeners))
        self._max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._pages = pages if pages is not None else DEFAULT_STORE

    @property
    def credentials(self) -> CredentialsManager:
        return self._credentials

    @property
    def metrics(self) -> Metrics:
        return self._metrics

    def subscribe(self, listener: Listener) -> Listener:
        """Send this executor's events to ``listener`` too; returns it."""
        self._listen((*self._listeners, listener))
        return listener

    def unsubscribe(self, listener: Listener) -> None:
        # Equality, not identity: each `events.append` is a new bound-method object.
        self._listen(tuple(known for known in self._listeners if known != listener))

    def _listen(self, listeners: tuple[Listener, ...]) -> None:
        # Replacing the tuple is atomic, so a call in flight sees the old or new set, whole.
        self._listeners = listeners
        # Nothing observes a call but the metrics: the condition of execute's one stretch.
        self._unobserved = not listeners and self._tracer is None and self._replay is None

    def execute(
        self,
        tool: Tool,
        inputs: Mapping[str, Any],
        raise_on_failure: bool = True,
        *,
        call_id: str | None = None,
    ) -> ToolResult:
        """Call ``tool`` with ``inputs``.

        Strict mode (the default) raises ``ToolValidationError`` or
        ``ToolExecutionError`` on failure. With ``raise_on_failure=False`` every
        failure comes back as a ``ToolResult`` with ``status == STATUS_FAILURE``
        and the exception in ``error``. ``call_id`` (for events and spans) is
        generated when not given, for example from a provider's tool-call id.

        An async tool (``async def execute``) is run to completion: with
        ``asyncio.run`` when no event loop runs in this thread, else -- called from
        inside a running loop -- on a new loop in a worker thread, which blocks
        the calling loop until the tool is done (``await aexecute(...)`` does not).
        """
        start = _perf_counter()
        # The usual call -- nobody listening, tracing or replaying, a sync tool
        # without credentials, values its schemas' fast tier takes whole -- runs
        # here in one stretch: no Python call but the tool's and the two checks'.
        # Anything else, and every failure, goes through the steps below.
        try:
            spec = tool.spec
        except AttributeError:  # not a tool: the steps say so
            spec = None
        if (
            type(spec) is ToolSpec
            and self._unobserved
            and not spec.credential_names
            and not spec.is_async
        ):
            budget = spec.max_output
            # Each check is a function held in a slot: read, then called (~10 ns
            # less than the method lookup ``schema.fast_check(...)`` compiles to).
            check_inputs = spec.input_schema.fast_check
            values = check_inputs(inputs)  # a copy: never the caller's
            # A call for the next page of an answer takes the steps: nothing is run.
            if values is not None and (budget is None or values.get(CONTINUATION) is None):
                returned = failure = None
                try:
                    returned = tool.execute(values, _NO_CREDENTIALS)
                except BaseException as exc:  # sys.exit() too: this call's failure alone
                    if belongs_to_the_process(exc):  # Ctrl-C, a signal handler's exit
                        raise
                    failure = execution_error(spec.name, exc, None)
                else:
                    check_output = spec.output_schema.fast_check
                    output = check_output(returned)  # a copy: never the tool's
                    # An answer over the tool's budget is paged by step 4.
                    if output is not None and (budget is None or fits(output, budget)):
                        duration = _perf_counter() - start
                        self._record_duration(spec.name, duration, None)
                        return make_result(spec.name, STATUS_SUCCESS, output, duration, None)
                # The output needs the full check (or the tool failed): step 4 says why.
                return self._finish(
                    tool, spec, (), None, None, start, inputs, None, None, returned, failure,
                    raise_on_failure,
                )  # fmt: skip
        # The steps live in _open and _finish, shared with aexecute; only step 3,
        # "call the tool", is written for each. Two helpers, not one per step: each
        # Python call costs ~0.1 us of the ~2.5 us this takes (benchmarks/).
        spec, listeners, call_id, span, values, credentials, redactor, validated, raw, error = (
            self._open(tool, inputs, call_id)
        )
        if credentials is not None:
            try:
                if redactor is None:  # no credentials: nothing to redact, the hot path
                    raw = tool.execute(values, credentials)
                    if spec.is_async:
                        raw = run_to_completion(raw)  # type: ignore[arg-type]
                else:
                    # Active while the tool runs: a backend adds the forms it
                    # derives from a credential (redact_also).
                    active = activate(redactor)
                    try:
                        raw = tool.execute(values, credentials)
                        if spec.is_async:
                            raw = run_to_completion(raw)  # type: ignore[arg-type]
                    finally:
                        deactivate(active)
            except BaseException as exc:
                if belongs_to_the_process(exc):
                    raise
                error = execution_error(spec.name, exc, redactor)
        return self._finish(
            tool, spec, listeners, call_id, span, start, inputs, validated, redactor, raw, error,
            raise_on_failure,
        )  # fmt: skip

    async def aexecute(
        self,
        tool: Tool,
        inputs: Mapping[str, Any],
        raise_on_failure: bool = True,
        *,
        call_id: str | None = None,
        timeout: float | None = None,
    ) -> ToolResult:
        """``execute`` for asyncio callers: the same steps, events, metrics, spans and replay.

        An async tool is awaited on the running loop; a sync tool runs in this
        executor's thread pool (``max_workers``), so the loop is never blocked.
        ``timeout`` (seconds) bounds the tool's run: an async tool is cancelled
        (its ``finally`` blocks run before this returns); a sync tool's thread
        cannot be stopped, so its result is abandoned. Either way the call fails
        with a ``ToolExecutionError`` whose cause is a ``ToolTimeoutError``.

        Cancelling the task awaiting this cancels an async tool too; the call is
        reported as failed (event, metric, span) and ``CancelledError`` propagates.
        """
        import asyncio

        check_timeout(timeout)
        start = _perf_counter()
        spec, listeners, call_id, span, values, credentials, redactor, validated, raw, error = (
            self._open(tool, inputs, call_id)
        )
        if credentials is not None:
            try:
                if redactor is None:
                    raw = await self._run_on_loop(tool, spec, values, credentials, timeout)
                else:
                    # A context variable, so it is this call's alone, in its own task
                    # and in the copy of the context the pool thread runs under.
                    active = activate(redactor)
                    try:
                        raw = await self._run_on_loop(tool, spec, values, credentials, timeout)
                    finally:
                        deactivate(active)
            except Exception as exc:
                error = execution_error(spec.name, exc, redactor)
            except asyncio.CancelledError as exc:
                if cancelled_by_the_tool(exc):  # raised, not a cancellation: a failure
                    error = execution_error(spec.name, exc, redactor)
                else:
                    # Report the call that was cut short, then let the cancellation go on.
                    self._finish(
                        tool, spec, listeners, call_id, span, start, inputs, validated,
                        redactor, None, ToolExecutionError(spec.name, exc), False,
                    )  # fmt: skip
                    raise
            except BaseException as exc:  # sys.exit() too: the server goes on serving
                if belongs_to_the_process(exc):
                    raise
                error = execution_error(spec.name, exc, redactor)
        return self._finish(
            tool, spec, listeners, call_id, span, start, inputs, validated, redactor, raw, error,
            raise_on_failure,
        )  # fmt: skip

    def execute_many(
        self,
        calls: Iterable[BatchCall],
        max_workers: int | None = None,
    ) -> list[ToolResult]:
        """Run independent calls concurrently; the results come back in call order.

        Each call is ``(tool, inputs)`` or ``(tool, inputs, call_id)``. Always in
        result mode: one call failing -- or raising, say for an object that is not
        a tool -- does not affect the others (it becomes a failed result).
        """
        pending = pending_calls(calls)
        if len(pending) <= 1:
            return [self._execute_isolated(*call) for call in pending]
        workers = max_workers or min(len(pending), 32)
        # A pool of its own, not the executor's: a tool that calls execute_many
        # from a worker thread must not wait for a thread of its own full pool.
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agentkit-tool") as pool:
            futures = [pool.submit(self._execute_isolated, *call) for call in pending]
            return [future.result() for future in futures]

    async def aexecute_many(
        self,
        calls: Iterable[BatchCall],
        *,
        max_concurrency: int | None = None,
        timeout: float | None = None,
    ) -> list[ToolResult]:
        """Run independent calls concurrently on the loop; the results come back in call order.

        ``execute_many`` for asyncio callers: each call goes through ``aexecute``
        in result mode (``timeout`` applies to each call). One call failing or
        raising never loses the others' results. ``max_concurrency`` caps how many
        calls run at once (default: all; sync tools are further capped by the
        thread pool's ``max_workers``).
        """
        import asyncio

        pending = pending_calls(calls)
        check_timeout(timeout)
        if max_concurrency is not None and (
            type(max_concurrency) is not int or max_concurrency < 1
        ):
            raise SemanticError(
                "aexecute_many(max_concurrency=...) must be a positive integer or None, "
                f"got {max_concurrency!r}"
            )
        limit = asyncio.Semaphore(max_concurrency) if max_concurrency else nullcontext()

        async def one(tool: Tool, inputs: Mapping[str, Any], call_id: str | None) -> ToolResult:
            async with limit:
                return await self.aexecute(tool, inputs, False, call_id=call_id, timeout=timeout)

        # return_exceptions: a call that raises -- even CancelledError, from a tool
        # that lets an inner cancellation out -- is its own failed result. The
        # caller's own cancellation still cancels the whole batch.
        outcomes = await asyncio.gather(*(one(*call) for call in pending), return_exceptions=True)
        return [
            outcome if isinstance(outcome, ToolResult) else raised_result(call[0], outcome)
            for outcome, call in zip(outcomes, pending, strict=True)
        ]

    # -- the thread pool -----------------------------------------------------------------------

    def close(self) -> None:
        """Release the thread pool ``aexecute`` runs sync tools in (idempotent).

        Calls already running finish; a later ``aexecute`` starts a new pool. A
        thread still running a tool abandoned after a timeout runs on until the
        tool returns (Python cannot stop a thread).
        """
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def __enter__(self) -> ToolExecutor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _thread_pool(self) -> ThreadPoolExecutor:
        pool = self._pool
        if pool is None:
            with self._pool_lock:  # two loops in two threads may ask at once
                pool = self._pool
                if pool is None:
                    pool = self._pool = ThreadPoolExecutor(
                        max_workers=self._max_workers, thread_name_prefix="agentkit-tool"
                    )
        return pool

    # -- the steps, shared by execute and aexecute ---------------------------------------------

    def _open(self, tool: Tool, inputs: Mapping[str, Any], call_id: str | None) -> _Opened:
        """Steps 1 and 2, after the started event and the span (when anyone listens).

        Returns ``(spec, listeners, call_id, span, values, credentials, redactor,
        validated, raw, error)``: step 3 calls the tool when ``credentials`` is not
        ``None`` -- else the call already failed (``error``) or replay answered it
        (``raw``). ``validated`` is the events' copy of ``values`` (the tool may
        change its own dict). A tuple, not an object: this is the hot path.
        """
        try:
            spec = tool.spec  # one read: everything this call needs of the tool
        except AttributeError:
            spec = None
        if type(spec) is not ToolSpec:
            spec = refused(tool)
        name = spec.name
        # One snapshot of the listeners for the whole call: a listener subscribed
        # meanwhile never sees a call end that it did not see start.
        listeners = self._listeners
        tracer = self._tracer
        span: Span | None = None
        if listeners or tracer is not None:
            call_id = call_id or _new_call_id()
            if listeners:
                shown = shallow_inputs(inputs)
                if spec.credential_names:
                    shown = self._known_secrets(spec.credential_names).redact_value(shown)
                event = ToolEvent(
                    EVENT_STARTED, name, spec.version, call_id, _now(), None, None, None, None,
                    shown,
                )  # fmt: skip
                emit(listeners, event)
            if tracer is not None:
                span = tracer.start_span(name, call_id, spec.description)

        validated: dict[str, Any] | None = None
        try:
            if type(inputs) is not dict and not isinstance(inputs, Mapping):
                raise ToolValidationError(
                    name,
                    "input",
                    [
                        "Expected a mapping of parameter names to values, "
                        f"got '{type(inputs).__name__}'"
                    ],
                )
            if spec.max_output is not None and continuation_of(inputs) is not None:
                # The next page of an answer, from the store: nothing to run.
                taken = self._taken(name, inputs)
                return spec, listeners, call_id, span, {}, None, None, None, taken, None
            # check() changes nothing: its values are a fresh copy, except
            # FREE_FORM's, which are the caller's mapping itself.
            values, problems = spec.input_schema.check(inputs)
            if problems:
                raise ToolValidationError(name, "input", problems)
            if values is inputs:
                # The tool gets its own dict, and its own lists and dicts within,
                # never the caller's (the fast tier's copy of plain JSON is as deep).
                values = containers_copied(inputs)
            if listeners:
                validated = dict(values)
            if self._replay is not None:
                raw = self._replay_call(tool, values)
                return spec, listeners, call_id, span, values, None, None, validated, raw, None
            if spec.credential_names:  # the instance's own, when it was given some
                credentials = self._resolve(name, spec.credential_names)
                redactor = Redactor(named=credentials)
                return (
                    spec, listeners, call_id, span, values, credentials, redactor, validated,
                    None, None,
                )  # fmt: skip
        except (ToolValidationError, ToolExecutionError) as exc:
            return spec, listeners, call_id, span, {}, None, None, validated, None, exc
        except RecursionError as exc:
            return (
                spec,
                listeners,
                call_id,
                span,
                {},
                None,
                None,
                validated,
                None,
                too_deep(name, exc),
            )
        return spec, listeners, call_id, span, values, _NO_CREDENTIALS, None, validated, None, None

    def _finish(
        self,
        tool: Tool,
        spec: ToolSpec,
        listeners: tuple[Listener, ...],
        call_id: str | None,
        span: Span | None,
        start: float,
        inputs: Mapping[str, Any],
        validated: dict[str, Any] | None,
        redactor: Redactor | None,
        raw: Any,
        error: _CallError | None,
        raise_on_failure: bool,
    ) -> ToolResult:
        """Steps 4 and 5: check ``raw`` against the output schema (unless the call
        already failed with ``error``), report the outcome, return or raise it."""
        name = spec.name
        output: dict[str, Any] | None = None
        blocks: tuple[Block, ...] = ()
        page: Page | None = None
        cached = False
        if error is None:
            try:
                if type(raw) is not dict and isinstance(raw, TakenPage):
                    # A page kept from an answer checked and paged when it was given.
                    output, page = raw.output, raw.page
                else:
                    if type(raw) is not dict:
                        if isinstance(raw, Output):
                            # Content blocks beside the structured output, checked as usual.
                            blocks = raw.blocks
                            raw = raw.structured
                        elif type(raw) is CachedAnswer:  # a kept answer: checked as usual
                            raw, cached = raw.structured, True
                    output = checked_output(name, spec.output_schema, raw, redactor)
                    if redactor is not None:
                        # An answer is given as the tool made it, or not at all: one that
                        # holds a credential fails the call, never altered to hide it.
                        leak = secret_in_answer(name, output, blocks, redactor)
                        if leak is not None:
                            output, blocks = None, ()
                            error = ToolExecutionError(name, leak)
                    if spec.max_output is not None and output is not None:
                        # After the check for credentials: a withheld answer is never
                        # kept, and a page (parts of an answer that holds none) holds none.
                        output, page = paged(
                            name, output, spec.output_schema, spec.max_output, self._pages
                        )
            except ToolValidationError as exc:
                error = exc
            except RecursionError as exc:
                error = too_deep(name, exc)

        duration = _perf_counter() - start
        error_type = type(error).__name__ if error is not None else None
        self._record_duration(name, duration, error_type)
        if span is not None:
            span.end(error_type, str(error) if error is not None else None)
        if listeners:
            assert call_id is not None  # set by _open whenever there are listeners
            seen = validated if validated is not None else bounded_inputs(inputs)
            if redactor:
                seen = redactor.redact_value(seen)
            self._finish_event(
                listeners, spec, call_id, duration, seen, output, blocks, error, cached
            )

        if error is not None:
            if raise_on_failure:
                raise error
            return make_result(name, STATUS_FAILURE, None, duration, error)
        return make_result(name, STATUS_SUCCESS, output, duration, None, blocks, page)

    def _taken(self, name: str, inputs: Mapping[str, Any]) -> TakenPage:
        """The page a call's ``continuation`` names, for this tool and caller."""
        try:
            output, page = self._pages.take(name, continuation_of(inputs))
        except ContinuationError as exc:
            problem = Problem(path=CONTINUATION, message=f"Parameter '{CONTINUATION}': {exc}")
            raise ToolValidationError(name, "input", [problem]) from None
        return TakenPage(output, page)

    async def _run_on_loop(
        self,
        tool: Tool,
        spec: ToolSpec,
        values: dict[str, Any],
        credentials: Mapping[str, str],
        timeout: float | None,
    ) -> Any:
        """Step 3 of ``aexecute``: await an async tool; run a sync one in the pool."""
        import asyncio

        if spec.is_async:
            # Tool types execute as sync; an async tool's (see AsyncTool) returns a coroutine.
            coroutine: Any = tool.execute(values, credentials)
            if timeout is None:
                return await coroutine
            return await within_timeout(
                asyncio.ensure_future(contained(coroutine)), spec.name, timeout, abandoned=False
            )
        # The caller's context (an OpenTelemetry parent span) goes with the call, as
        # asyncio.to_thread does it.
        context = contextvars.copy_context()
        future = asyncio.get_running_loop().run_in_executor(
            self._thread_pool(), context.run, contained_call, tool.execute, values, credentials
        )
        if timeout is None:
            return await future
        return await within_timeout(future, spec.name, timeout, abandoned=True)

    # -- the steps' helpers ---------------------------------------------------------------------

    def _execute_isolated(
        self, tool: Tool, inputs: Mapping[str, Any], call_id: str | None = None
    ) -> ToolResult:
        try:
            return self.execute(tool, inputs, raise_on_failure=False, call_id=call_id)
        except Exception as exc:
            return raised_result(tool, exc)

    def _resolve(self, name: str, credential_names: tuple[str, ...]) -> Mapping[str, str]:
        try:
            return self._credentials.resolve(name, credential_names)
        except CredentialError as exc:
            raise ToolExecutionError(name, exc) from exc

    def _known_secrets(self, names: Iterable[str]) -> Redactor:
        """A redactor of the credentials found so far (missing ones fail the call later)."""
        return Redactor(value for name in names if (value := self._credentials.get(name)))

    def _replay_call(self, tool: Tool, values: dict[str, Any]) -> Any:
        assert self._replay is not None
        try:
            recorded = self._replay.lookup(tool.name, tool.version, values)
        except AgentKitError as exc:
            raise ToolExecutionError(tool.name, exc) from exc
        return recorded.replay()

    def _finish_event(
        self,
        listeners: tuple[Listener, ...],
        spec: ToolSpec,
        call_id: str,
        duration: float,
        seen: dict[str, Any],
        output: dict[str, Any] | None,
        blocks: tuple[Block, ...],
        error: _CallError | None,
        cached: bool,
    ) -> None:
        if error is None:
            event = ToolEvent(
                EVENT_COMPLETED, spec.name, spec.version, call_id, _now(), duration,
                STATUS_SUCCESS, None, None, seen, output, blocks, cached=cached,
            )  # fmt: skip
        else:
            # The error itself: the event describes it only if a listener reads it.
            event = ToolEvent(
                EVENT_FAILED, spec.name, spec.version, call_id, _now(), duration,
                STATUS_FAILURE, type(error).__name__, error, seen, None,
            )  # fmt: skip
        emit(listeners, event)
