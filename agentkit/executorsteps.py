"""The executor's steps that need none of its state: checking a tool's answer (step 4),
the errors a failed step raises, a batch's calls read, and an async tool awaited
within its timeout. ``ToolExecutor`` in ``agentkit.toolexecutor`` runs them.
"""

from __future__ import annotations

import contextvars
import reprlib
from collections.abc import Callable, Coroutine, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from types import CoroutineType
from typing import TYPE_CHECKING, Any, final

from agentkit.jsonvalues import MAX_DEPTH, checked_copy, checked_object
from agentkit.paging import (
    Page,
)
from agentkit.redaction import Redactor, activate, deactivate
from agentkit.tool import Tool, ToolSpec, spec_of
from agentkit.toolerrors import (
    AgentKitError,
    Problem,
    SemanticError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolValidationError,
)
from agentkit.toolresult import (
    STATUS_FAILURE,
    ToolResult,
    make_result,
)
from agentkit.toolschema import ToolSchema

if TYPE_CHECKING:
    # asyncio is imported where it is used: only asyncio callers, who have it
    # loaded already, pay for it (the CLI's start-up does not).
    import asyncio


__all__ = [
    "BatchCall",
    "TakenPage",
    "belongs_to_the_process",
    "bounded_inputs",
    "cancelled_by_the_tool",
    "check_timeout",
    "checked_output",
    "contained",
    "contained_call",
    "execution_error",
    "pending_calls",
    "raised_result",
    "refused",
    "run_to_completion",
    "shallow_inputs",
    "too_deep",
    "within_timeout",
]

#: One call of a batch: (tool, inputs) or (tool, inputs, call id).
BatchCall = tuple[Tool, Mapping[str, Any]] | tuple[Tool, Mapping[str, Any], str]


@final
class TakenPage:
    """A kept page, standing for a tool's answer in step 4 (nothing was run)."""

    __slots__ = ("output", "page")

    def __init__(self, output: dict[str, Any], page: Page) -> None:
        self.output = output
        self.page = page


def bounded_inputs(inputs: object) -> dict[str, Any]:
    """Inputs that failed validation, as a listener may walk them: nesting past MAX_DEPTH cut."""
    try:
        return checked_copy(shallow_inputs(inputs), "", [])  # type: ignore[no-any-return]
    except Exception:  # a Mapping of the caller's that fails even to be read
        return {}


def shallow_inputs(inputs: object) -> dict[str, Any]:
    """``inputs`` as a new dict when a mapping, else empty."""
    return dict(inputs) if isinstance(inputs, Mapping) else {}


def pending_calls(calls: Iterable[BatchCall]) -> list[tuple[Tool, Mapping[str, Any], str | None]]:
    """The batch as (tool, inputs, call id); a malformed entry stops it before any call runs."""
    pending = []
    for position, call in enumerate(calls):
        if not isinstance(call, (tuple, list)) or len(call) not in (2, 3):
            raise SemanticError(
                f"calls[{position}]: each call is (tool, inputs) or (tool, inputs, call_id), "
                f"got {reprlib.repr(call)}"
            )
        pending.append((call[0], call[1], call[2] if len(call) == 3 else None))
    return pending


def raised_result(tool: object, exc: BaseException) -> ToolResult:
    """A call of a batch that raised (a misuse, a failing listener) as a failed result."""
    name = (
        tool.name if isinstance(tool, Tool) and type(tool.spec) is ToolSpec else type(tool).__name__
    )
    return make_result(name, STATUS_FAILURE, None, 0.0, ToolExecutionError(name, exc))


def refused(tool: object) -> ToolSpec:
    """Why ``tool`` cannot be called: not a tool, no ``TOOL_NAME``, ``spec`` replaced."""
    if not isinstance(tool, Tool):
        raise SemanticError(f"execute() takes a Tool instance, got {type(tool).__name__}")
    return spec_of(tool)  # raises, saying which


def execution_error(name: str, exc: BaseException, redactor: Redactor | None) -> ToolExecutionError:
    """Step 3's failure: what the tool raised -- for a tool with credentials, a copy of
    it and its chain without their values.

    A ``BaseException`` that is not an ``Exception`` (``sys.exit()``, ``GeneratorExit``,
    a class of the tool's own) fails the call the same way, its message saying so
    and what to raise instead; what belongs to the process (``belongs_to_the_process``:
    the user's Ctrl-C, a signal handler's exit) never comes here.
    Made inside the ``except`` block but raised (by ``_finish``) outside it, so
    Python never chains the original, secret-bearing exception as ``__context__``.
    """
    if type(exc) is _Stopped:
        exc = exc.raised
    detail = None if isinstance(exc, Exception) else _not_an_exception(exc)
    if not redactor:
        return ToolExecutionError(name, exc, detail=detail)
    cause = redactor.clean_exception(exc)
    shown = str(cause) if detail is None else detail
    return ToolExecutionError(name, cause, detail=redactor.redact(shown))


def _not_an_exception(exc: BaseException) -> str:
    """What a tool that exited, or raised what only stops a process or a generator, did."""
    instead = "a tool should raise an exception instead (that fails only its call)"
    if isinstance(exc, SystemExit):
        code = exc.code
        if code is None or isinstance(code, int):
            return f"the tool called sys.exit() with exit code {code or 0}; {instead}"
        return f'the tool called sys.exit() with exit code 1 and the message "{code}"; {instead}'
    text = str(exc)
    said = f"{text}; " if text else ""
    return (
        f"{said}the tool raised {type(exc).__name__}, a BaseException that is not an "
        f"Exception (such are meant to stop a process or a generator); {instead}"
    )


def too_deep(name: str, exc: RecursionError) -> ToolExecutionError:
    """A call's failure when a walk of its values recursed too deeply."""
    # The last line of defence: values are checked to MAX_DEPTH levels, but a
    # call must fail cleanly, never raise, should a walk still recurse.
    return ToolExecutionError(
        name, exc, detail=f"a value nested too deeply (the limit is {MAX_DEPTH} levels)"
    )


def checked_output(
    name: str, schema: ToolSchema, raw: Any, redactor: Redactor | None
) -> dict[str, Any]:
    """Step 4: ``raw`` checked against the output schema (defaults applied): a copy
    of it, or ``ToolValidationError``. A free-form schema's output is held to JSON
    values alone (``checked_object``), as a free-form parameter's is."""
    if type(raw) is not dict and not isinstance(raw, dict):
        got = f"'{type(raw).__name__}'"
        if isinstance(raw, CoroutineType):  # an async execute the class does not declare
            raw.close()  # never awaited, on purpose: no "never awaited" warning
            got += (
                ": a coroutine, from an execute() that is not 'async def' on the class; "
                "declare it 'async def execute' (or subclass AsyncTool) to have it awaited"
            )
        raise ToolValidationError(
            name, "output", [f"Expected the tool to return a dictionary, got {got}"]
        )
    if schema.free_form:
        # Not checked against parameters, but sent as JSON all the same (printed,
        # served): a value JSON has no form for is refused here, not where it is sent.
        found: list[Problem] = []
        output = checked_object(raw, found)
        problems: tuple[Problem, ...] = tuple(found)
    elif redactor is None:
        output, problems = schema.check(raw)
    else:
        # Checked with the redactor active, so that a message quotes the value
        # redacted before it is cut short (see excerpt): one check, whatever comes.
        active = activate(redactor)
        try:
            output, problems = schema.check(raw)
        finally:
            deactivate(active)
    if problems:
        if redactor:
            problems = tuple(
                Problem(
                    path=redactor.redact(problem.path), message=redactor.redact(problem.message)
                )
                for problem in problems
            )
        raise ToolValidationError(name, "output", problems)
    return output


def check_timeout(timeout: object) -> None:
    """Refuse a ``timeout=`` that is not a positive, finite number of seconds (None: none)."""
    if timeout is None:
        return
    # bool is an int, NaN compares false with everything, inf never fires: all refused.
    if (
        not isinstance(timeout, (int, float))
        or isinstance(timeout, bool)
        or not 0 < timeout < float("inf")
    ):
        raise SemanticError(
            f"timeout= must be a positive number of seconds or None, got {timeout!r}"
        )


def run_to_completion(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """An async tool's result, for the sync ``execute``."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop in this thread: the usual case of a sync caller
        return asyncio.run(coroutine)
    # Called from a coroutine: this thread's loop cannot run the tool while it
    # waits for it, so a thread of its own runs it on a loop of its own.
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentkit-async-tool") as one:
        return one.submit(context.run, asyncio.run, coroutine).result()


@final
class _Stopped(AgentKitError):
    """What a tool raised that is not an ``Exception`` of its call (``sys.exit()``,
    ``GeneratorExit``, a ``CancelledError`` nobody asked for...), carried out of the
    task or thread the tool ran in as an exception: asyncio raises a task's
    ``SystemExit`` out of the event loop itself, past every caller (a server would
    stop), throws a ``GeneratorExit`` it is handed into the awaiting coroutine, which
    Python takes as closing it, and turns a thread's ``CancelledError`` into a
    cancellation of the caller. ``execution_error`` reports the exception carried."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__()
        self.raised = raised


def belongs_to_the_process(exc: BaseException) -> bool:
    """Whether ``exc``, raised while a tool ran on the caller's own thread, is the
    process's rather than the call's: the user's Ctrl-C (``KeyboardInterrupt``), or a
    ``SystemExit`` raised by one of the program's signal handlers (``sys.exit()`` on
    SIGTERM, say), which Python runs in whatever code is running when the signal
    comes. Either goes on; anything else a tool raises fails its call alone."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, SystemExit) and _raised_in_a_signal_handler(exc)


def _raised_in_a_signal_handler(exc: BaseException) -> bool:
    """Whether a frame of ``exc``'s traceback runs a signal handler installed now."""
    import signal

    handlers = set()
    for signum in signal.valid_signals():
        try:
            handler = signal.getsignal(signum)
        except (OSError, ValueError):  # a signal this platform lists but cannot query
            continue
        code = getattr(handler, "__code__", None)  # a function, or a bound method's
        if code is not None:
            handlers.add(code)
    trace = exc.__traceback__
    while trace is not None:  # the traceback's frames, each once
        if trace.tb_frame.f_code in handlers:
            return True
        trace = trace.tb_next
    return False


def cancelled_by_the_tool(exc: BaseException) -> bool:
    """Whether ``exc``, a ``CancelledError`` raised on the event loop, is the tool's own
    rather than a cancellation of the running task (Python 3.11's ``cancelling``; on
    3.10, which cannot tell, it is taken for a cancellation)."""
    import asyncio

    if not isinstance(exc, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return cancelling is not None and cancelling() == 0


async def contained(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """``coroutine``'s result, for a task of its own: what the tool raises that is not
    an ``Exception`` of its call leaves the task as one (see ``_Stopped``), but for the
    process's own (``belongs_to_the_process``) and a cancellation of the task."""
    import asyncio

    try:
        return await coroutine
    except Exception:
        raise
    except BaseException as exc:
        if belongs_to_the_process(exc) or (
            isinstance(exc, asyncio.CancelledError) and not cancelled_by_the_tool(exc)
        ):
            raise
        raise _Stopped(exc) from None


def contained_call(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)``, for a thread of a pool: what it raises that is not an
    ``Exception`` of its call -- any ``BaseException``, and a ``CancelledError`` of
    either kind, which asyncio would take for a cancellation of the caller -- leaves
    the thread as one (see ``_Stopped``). Nothing raised there is the process's:
    Python runs signal handlers, and raises Ctrl-C's ``KeyboardInterrupt``, in the
    main thread alone."""
    import concurrent.futures

    try:
        return function(*args)
    except concurrent.futures.CancelledError as exc:  # an Exception asyncio converts
        raise _Stopped(exc) from None
    except Exception:
        raise
    except BaseException as exc:  # asyncio's CancelledError among them
        raise _Stopped(exc) from None


async def within_timeout(
    future: asyncio.Future[Any], name: str, timeout: float, *, abandoned: bool
) -> Any:
    """``future``'s result, or ``ToolTimeoutError`` after ``timeout`` seconds.

    Not ``asyncio.wait_for``: a ``TimeoutError`` the tool raises itself must stay
    the tool's own failure, not pass for the executor's timeout.
    """
    import asyncio

    try:
        done, _ = await asyncio.wait((future,), timeout=timeout)
    except asyncio.CancelledError:  # the caller was cancelled: so is the tool
        await stop_tool(future, abandoned=abandoned)
        raise
    if done:
        return future.result()
    await stop_tool(future, abandoned=abandoned)
    raise ToolTimeoutError(name, timeout, abandoned=abandoned)


async def stop_tool(future: asyncio.Future[Any], *, abandoned: bool) -> None:
    """Cancel an async tool and wait for its cleanup (``finally``, ``async with``) to
    run, as ``asyncio.wait_for`` does; a sync tool's thread runs on, its result unread."""
    import asyncio

    future.cancel()
    if not abandoned:
        await asyncio.wait((future,))
        if not future.cancelled():
            future.exception()  # retrieved: a failure while cancelling is not logged as lost
