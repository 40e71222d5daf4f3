"""Running tools: validate inputs, resolve credentials, execute, validate outputs, report."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType
from typing import Any

from agentkit.credentials import CredentialsManager
from agentkit.jsonvalues import MAX_DEPTH, checked_copy
from agentkit.observability import (
    EVENT_COMPLETED,
    EVENT_FAILED,
    EVENT_STARTED,
    InMemoryHistogram,
    Listener,
    Metrics,
    Span,
    ToolEvent,
    Tracer,
    emit,
)
from agentkit.recording import ReplaySource
from agentkit.redaction import Redactor, active_redactor, redacting
from agentkit.tool import Tool
from agentkit.toolerrors import (
    AgentKitError,
    CredentialError,
    SemanticError,
    ToolExecutionError,
    ToolValidationError,
)
from agentkit.toolresult import (
    STATUS_FAILURE,
    STATUS_SUCCESS,
    ToolResult,
    describe_error,
    make_result,
)
from agentkit.toolschema import ToolSchema

__all__ = ["ToolExecutor"]

_perf_counter = time.perf_counter
# Read-only: one shared empty mapping must not carry one tool's writes to the next.
_NO_CREDENTIALS: Mapping[str, str] = MappingProxyType({})
_CallError = ToolValidationError | ToolExecutionError


def _new_call_id() -> str:
    return "call_" + os.urandom(12).hex()


class ToolExecutor:
    """Runs tools through the five steps of a call and reports each outcome.

    1. validate the inputs against the tool's input schema (defaults applied to
       a copy: the caller's dict is never changed);
    2. resolve the tool's named credentials;
    3. run ``tool.execute`` (any exception becomes ``ToolExecutionError``);
    4. validate the output against the output schema;
    5. return a ``ToolResult`` -- or, in strict mode, raise the failure.

    Credential values are redacted from every error message, event, span and
    output the call produces. ``credentials`` is a ``CredentialsManager`` or a
    plain mapping (default: environment variables). ``replay`` answers calls
    from a recording instead of running the tools (no credentials are resolved).
    """

    def __init__(
        self,
        *,
        credentials: CredentialsManager | Mapping[str, str] | None = None,
        listeners: Iterable[Listener] = (),
        tracer: Tracer | None = None,
        metrics: Metrics | None = None,
        replay: ReplaySource | None = None,
    ) -> None:
        if credentials is None:
            credentials = CredentialsManager.from_env()
        elif not isinstance(credentials, CredentialsManager):
            credentials = CredentialsManager.from_mapping(credentials)
        self._credentials = credentials
        self._listeners: tuple[Listener, ...] = tuple(listeners)
        self._tracer = tracer
        self._metrics: Metrics = metrics if metrics is not None else InMemoryHistogram()
        self._record_duration = self._metrics.record_duration
        self._replay = replay

    @property
    def credentials(self) -> CredentialsManager:
        return self._credentials

    @property
    def metrics(self) -> Metrics:
        return self._metrics

    def subscribe(self, listener: Listener) -> Listener:
        """Send this executor's events to ``listener`` too; returns it."""
        # Replacing the tuple is atomic, so a call in flight sees the old or new set, whole.
        self._listeners = (*self._listeners, listener)
        return listener

    def unsubscribe(self, listener: Listener) -> None:
        # Equality, not identity: each `events.append` is a new bound-method object.
        self._listeners = tuple(known for known in self._listeners if known != listener)

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
        """
        start = _perf_counter()
        try:
            spec = tool._spec
        except AttributeError:
            raise SemanticError(
                f"execute() takes a Tool instance, got {type(tool).__name__}"
            ) from None
        if spec is None:
            raise SemanticError("A Tool name is required.  Set TOOL_NAME on the class.")
        name = spec.name
        listeners = self._listeners
        tracer = self._tracer
        span: Span | None = None
        if listeners or tracer is not None:
            call_id = call_id or _new_call_id()
            if listeners:
                shown = _shallow(inputs)
                if spec.credential_names:
                    shown = self._known_secrets(spec.credential_names).redact_value(shown)
                emit(listeners, self._event(EVENT_STARTED, tool, call_id, inputs=shown))
            if tracer is not None:
                span = tracer.start_span(name, call_id, spec.description)

        validated: dict[str, Any] | None = None  # for events: the inputs as validated
        output: dict[str, Any] | None = None
        redactor: Redactor | None = None
        error: _CallError | None = None
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
            problems: list[str] = []
            # The schema's compiled check, called directly (validate() is the same
            # check, made to work in place): it returns the caller's dict when
            # nothing had to change, else a changed copy.
            values = spec.input_schema._check(inputs, "", problems)  # type: ignore[arg-type]
            if problems:
                raise ToolValidationError(name, "input", problems)
            if values is inputs:
                values = dict(inputs)  # the tool gets its own dict, never the caller's
            if listeners:
                validated = dict(values)
            schema = spec.output_schema
            if self._replay is not None:
                output = self._checked(name, schema, self._replay_call(tool, values))
            elif not spec.credential_names:
                output = self._checked(name, schema, self._run(tool, values, _NO_CREDENTIALS, None))
            else:
                credentials = self._resolve(name, spec.credential_names)
                redactor = Redactor(credentials.values())
                # Active while the tool runs and its output is checked: a backend
                # adds the forms it derives (redact_also), a validation message
                # redacts the value it quotes before cutting it short.
                with redacting(redactor):
                    raw = self._run(tool, values, credentials, redactor)
                    output = redactor.redact_value(self._checked(name, schema, raw))
        except (ToolValidationError, ToolExecutionError) as exc:
            error = exc
            output = None
        except RecursionError as exc:
            # The last line of defence: values are checked to MAX_DEPTH levels,
            # but a call must fail cleanly, never raise, should a walk still recurse.
            error = ToolExecutionError(
                name, exc, detail=f"a value nested too deeply (the limit is {MAX_DEPTH} levels)"
            )
            output = None

        duration = _perf_counter() - start
        error_type = type(error).__name__ if error is not None else None
        self._record_duration(name, duration, error_type)
        if span is not None:
            span.end(error_type, str(error) if error is not None else None)
        if listeners:
            assert call_id is not None  # set above whenever there are listeners
            seen = validated if validated is not None else _bounded(inputs)
            if redactor:
                seen = redactor.redact_value(seen)
            self._finish_event(listeners, tool, call_id, duration, seen, output, error)

        if error is not None:
            if raise_on_failure:
                raise error
            return make_result(name, STATUS_FAILURE, None, duration, error)
        return make_result(name, STATUS_SUCCESS, output, duration, None)

    def execute_many(
        self,
        calls: Iterable[tuple[Tool, Mapping[str, Any]] | tuple[Tool, Mapping[str, Any], str]],
        max_workers: int | None = None,
    ) -> list[ToolResult]:
        """Run independent calls concurrently; the results come back in call order.

        Each call is ``(tool, inputs)`` or ``(tool, inputs, call_id)``. Always in
        result mode: one call failing does not affect the others.
        """
        pending = [(call[0], call[1], call[2] if len(call) > 2 else None) for call in calls]
        if len(pending) <= 1:
            return [
                self.execute(tool, inputs, raise_on_failure=False, call_id=call_id)
                for tool, inputs, call_id in pending
            ]
        workers = max_workers or min(len(pending), 32)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agentkit-tool") as pool:
            futures = [
                pool.submit(self.execute, tool, inputs, False, call_id=call_id)
                for tool, inputs, call_id in pending
            ]
            return [future.result() for future in futures]

    # -- the steps' helpers --------------------------------------------------------------------

    def _resolve(self, name: str, credential_names: tuple[str, ...]) -> Mapping[str, str]:
        try:
            return self._credentials.resolve(name, credential_names)
        except CredentialError as exc:
            raise ToolExecutionError(name, exc) from exc

    def _known_secrets(self, names: Iterable[str]) -> Redactor:
        """A redactor of the credentials found so far (missing ones fail the call later)."""
        return Redactor(value for name in names if (value := self._credentials.get(name)))

    def _run(
        self,
        tool: Tool,
        values: dict[str, Any],
        credentials: Mapping[str, str],
        redactor: Redactor | None,
    ) -> Any:
        """``tool.execute``; what it raises becomes a ``ToolExecutionError`` without secrets."""
        try:
            return tool.execute(values, credentials)
        except Exception as exc:
            if not redactor:
                raise ToolExecutionError(tool.name, exc) from exc
            failure = exc
        # Raised here, outside the handler, so that Python does not chain the
        # original (secret-bearing) exception as the new one's __context__.
        cause = redactor.clean_exception(failure)
        del failure
        raise ToolExecutionError(tool.name, cause, detail=redactor.redact(str(cause)))

    @staticmethod
    def _checked(name: str, schema: ToolSchema, raw: Any) -> dict[str, Any]:
        """``raw`` checked against the output schema (defaults applied)."""
        if type(raw) is not dict and not isinstance(raw, dict):
            raise ToolValidationError(
                name,
                "output",
                [f"Expected the tool to return a dictionary, got '{type(raw).__name__}'"],
            )
        problems: list[str] = []
        output: dict[str, Any] = schema._check(raw, "", problems)
        if problems:
            redactor = active_redactor()
            if redactor:
                problems = [redactor.redact(problem) for problem in problems]
            raise ToolValidationError(name, "output", problems)
        return output

    def _replay_call(self, tool: Tool, values: dict[str, Any]) -> Any:
        assert self._replay is not None
        try:
            recorded = self._replay.lookup(tool.name, tool.version, values)
        except AgentKitError as exc:
            raise ToolExecutionError(tool.name, exc) from exc
        return recorded.replay()

    def _event(self, kind: str, tool: Tool, call_id: str, **fields: Any) -> ToolEvent:
        return ToolEvent(
            name=kind,
            tool_name=tool.name,
            tool_version=tool.version,
            call_id=call_id,
            timestamp=time.time(),
            **fields,
        )

    def _finish_event(
        self,
        listeners: tuple[Listener, ...],
        tool: Tool,
        call_id: str,
        duration: float,
        seen: dict[str, Any],
        output: dict[str, Any] | None,
        error: _CallError | None,
    ) -> None:
        if error is None:
            event = self._event(
                EVENT_COMPLETED,
                tool,
                call_id,
                duration=duration,
                status=STATUS_SUCCESS,
                inputs=seen,
                output=output,
            )
        else:
            event = self._event(
                EVENT_FAILED,
                tool,
                call_id,
                duration=duration,
                status=STATUS_FAILURE,
                error_type=type(error).__name__,
                error=describe_error(error),
                inputs=seen,
            )
        emit(listeners, event)


def _bounded(inputs: object) -> dict[str, Any]:
    """Inputs that failed validation, as a listener may walk them: nesting past MAX_DEPTH cut."""
    try:
        return checked_copy(_shallow(inputs), "", [])  # type: ignore[no-any-return]
    except Exception:  # a Mapping of the caller's that fails even to be read
        return {}


def _shallow(inputs: object) -> dict[str, Any]:
    return dict(inputs) if isinstance(inputs, Mapping) else {}
