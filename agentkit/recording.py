"""Recording tool calls, and replaying them without running the tools.

``ExecutionRecorder`` listens to an executor and keeps every finished call:
tool, version, validated inputs, output or error, and duration. It saves and
loads them as JSON Lines. Given to ``ToolExecutor(replay=...)``, a recording
answers calls instead of the tools: the same tool, version and inputs give the
recorded result (identical calls are replayed in the order they were recorded,
the last one repeating), and a call it has no record of fails with
``ReplayMissError``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, final

from agentkit.content import Output, block_from_json
from agentkit.observability import EVENT_COMPLETED, EVENT_FAILED, Listener, ToolEvent
from agentkit.problem import did_you_mean
from agentkit.toolerrors import (
    Direction,
    ReplayedFailure,
    ReplayMissError,
    SemanticError,
    ToolExecutionError,
    ToolValidationError,
)
from agentkit.toolresult import STATUS_FAILURE, STATUS_SUCCESS

__all__ = [
    "EventSource",
    "ExecutionRecorder",
    "RecordedCall",
    "ReplayMissError",
    "ReplaySource",
    "ReplayedFailure",
]


def _canonical(inputs: Mapping[str, Any]) -> str:
    return json.dumps(inputs, sort_keys=True, separators=(",", ":"), default=repr)


def _plain(value: Any) -> Any:
    """A JSON-safe deep copy (anything JSON cannot hold becomes its repr)."""
    return json.loads(json.dumps(value, default=repr))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedCall:
    """One finished call as recorded."""

    tool_name: str
    tool_version: str
    call_id: str
    timestamp: float
    duration: float
    status: str
    inputs: Mapping[str, Any]
    output: Mapping[str, Any] | None
    error: Mapping[str, Any] | None
    #: The call's content blocks (``agentkit.content``) as JSON, bytes in base64.
    content: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def from_event(cls, event: ToolEvent) -> RecordedCall:
        return cls(
            tool_name=event.tool_name,
            tool_version=event.tool_version,
            call_id=event.call_id,
            timestamp=event.timestamp,
            duration=event.duration or 0.0,
            status=event.status
            or (STATUS_SUCCESS if event.name == EVENT_COMPLETED else STATUS_FAILURE),
            inputs=_plain(dict(event.inputs or {})),
            output=_plain(dict(event.output)) if event.output is not None else None,
            error=_plain(dict(event.error)) if event.error is not None else None,
            content=tuple(block.to_json() for block in event.content),
        )

    def to_json(self) -> dict[str, Any]:
        recorded = {
            "tool": self.tool_name,
            "version": self.tool_version,
            "call_id": self.call_id,
            "timestamp": self.timestamp,
            "duration": self.duration,
            "status": self.status,
            "inputs": self.inputs,
            "output": self.output,
            "error": self.error,
        }
        if self.content:  # only then: a recording without content reads as it always has
            recorded["content"] = [dict(block) for block in self.content]
        return recorded

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecordedCall:
        """The inverse of ``to_json``; bad data raises KeyError, TypeError or ValueError."""
        tool_name, version, inputs, status = (
            data["tool"],
            data["version"],
            data["inputs"],
            data["status"],
        )
        if status not in (STATUS_SUCCESS, STATUS_FAILURE):
            raise ValueError(f"status must be '{STATUS_SUCCESS}' or '{STATUS_FAILURE}'")
        output = data.get("output")
        if status == STATUS_SUCCESS and not isinstance(output, dict):
            raise ValueError("a successful call needs an 'output' object")
        error = data.get("error")
        if status == STATUS_FAILURE and not isinstance(error, dict):
            raise ValueError("a failed call needs an 'error' object")
        if not isinstance(inputs, dict):
            raise TypeError("'inputs' must be an object")
        content = data.get("content", [])
        if not isinstance(content, list):
            raise TypeError("'content' must be a list of content blocks")
        for position, block in enumerate(content):
            try:
                block_from_json(block)
            except ValueError as exc:
                raise ValueError(f"content[{position}]: {exc}") from exc
        return cls(
            tool_name=str(tool_name),
            tool_version=str(version),
            call_id=str(data.get("call_id", "")),
            timestamp=float(data.get("timestamp", 0.0)),
            duration=float(data.get("duration", 0.0)),
            status=status,
            inputs=inputs,
            output=output,
            error=error,
            content=tuple(content),
        )

    def replay(self) -> dict[str, Any] | Output:
        """The recorded output (an ``Output`` when the call had content blocks), or raise
        the recorded failure as the executor would."""
        if self.status == STATUS_SUCCESS and self.output is not None:
            output: dict[str, Any] = _plain(dict(self.output))
            if self.content:
                blocks = (block_from_json(block) for block in self.content)
                return Output(*blocks, structured=output)
            return output
        error = dict(self.error or {})
        if error.get("type") == ToolValidationError.__name__:
            direction: Direction = "output" if error.get("direction") == "output" else "input"
            raise ToolValidationError(self.tool_name, direction, list(error.get("errors", [])))
        cause = ReplayedFailure(str(error.get("cause", "Exception")), str(error.get("detail", "")))
        raise ToolExecutionError(self.tool_name, cause)


class ReplaySource(Protocol):
    """What ``ToolExecutor(replay=...)`` asks for each call's result."""

    def lookup(self, tool_name: str, tool_version: str, inputs: Mapping[str, Any]) -> RecordedCall:
        """The recorded call to answer with; raises ``ReplayMissError`` when there is none."""


class EventSource(Protocol):
    """What a recorder listens to: a ``ToolExecutor``, seen only through its subscriptions.

    The executor reads recordings (``ReplaySource``), so this module names it
    by this protocol rather than importing it.
    """

    def subscribe(self, listener: Listener) -> Listener: ...

    def unsubscribe(self, listener: Listener) -> None: ...


class ExecutionRecorder:
    """Keeps every finished call of the executors it listens to; a replay source too."""

    def __init__(
        self, executor: EventSource | None = None, *, calls: Iterable[RecordedCall] = ()
    ) -> None:
        self._lock = threading.Lock()
        self._calls: list[RecordedCall] = []
        # (tool, version, canonical inputs) -> the calls replay may answer with, in order
        self._index: dict[tuple[str, str, str], list[RecordedCall]] = {}
        self._cursor: dict[tuple[str, str, str], int] = {}
        for call in calls:
            self._add(call)
        if executor is not None:
            self.attach(executor)

    def _add(self, call: RecordedCall) -> None:
        self._calls.append(call)
        if not _is_input_failure(call):
            key = (call.tool_name, call.tool_version, _canonical(call.inputs))
            self._index.setdefault(key, []).append(call)

    def attach(self, executor: EventSource) -> None:
        """Start recording ``executor``'s calls."""
        executor.subscribe(self)

    def detach(self, executor: EventSource) -> None:
        executor.unsubscribe(self)

    def __call__(self, event: ToolEvent) -> None:
        if event.name in (EVENT_COMPLETED, EVENT_FAILED):
            call = RecordedCall.from_event(event)
            with self._lock:
                self._add(call)

    @property
    def calls(self) -> tuple[RecordedCall, ...]:
        with self._lock:
            return tuple(self._calls)

    def __len__(self) -> int:
        with self._lock:
            return len(self._calls)

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()
            self._index.clear()
            self._cursor.clear()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write every call as one JSON object per line."""
        lines = [json.dumps(call.to_json(), sort_keys=True) for call in self.calls]
        Path(path).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ExecutionRecorder:
        """Read a recording saved by ``save``; a bad line raises ``SemanticError`` naming it."""
        source = Path(path)
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise SemanticError(f"Cannot read recording {source}: {exc.strerror or exc}") from exc
        calls = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                calls.append(RecordedCall.from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                reason = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
                raise SemanticError(f"{source}:{number}: not a recorded call: {reason}") from exc
        return cls(calls=calls)

    def lookup(self, tool_name: str, tool_version: str, inputs: Mapping[str, Any]) -> RecordedCall:
        key = (tool_name, tool_version, _canonical(inputs))
        with self._lock:
            matches = self._index.get(key)
            if matches:
                position = self._cursor.get(key, 0)
                self._cursor[key] = position + 1
                return matches[min(position, len(matches) - 1)]
            others = sum(1 for call in self._calls if call.tool_name == tool_name)
            recorded = {call.tool_name for call in self._calls}
        hint = (
            f"; the recording has {others} other call(s) of '{tool_name}'"
            if others
            else f"; the recording has no call of '{tool_name}'{did_you_mean(tool_name, recorded)}"
        )
        raise ReplayMissError(
            f"No recorded call of tool '{tool_name}' version {tool_version} with inputs "
            f"{_canonical(inputs)}{hint}. Record this call first."
        )


def _is_input_failure(call: RecordedCall) -> bool:
    error = call.error or {}
    return error.get("type") == ToolValidationError.__name__ and error.get("direction") == "input"
