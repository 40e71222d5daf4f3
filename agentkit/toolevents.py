"""The events of a tool call: ``ToolEvent``, and ``emit`` to the executor's listeners.

The executor sends ``tool.execution.started``, ``.completed`` and ``.failed`` events
to its listeners (any callable taking one event). A listener that raises is logged
and skipped; it never breaks a call. ``agentkit.observability`` exports these names
too, beside the metrics and traces.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, final

from agentkit.callers import current_caller
from agentkit.toolresult import describe_error

if TYPE_CHECKING:
    from agentkit.content import Block

__all__ = ["EVENT_COMPLETED", "EVENT_FAILED", "EVENT_STARTED", "Listener", "ToolEvent", "emit"]

logger = logging.getLogger("agentkit")

EVENT_STARTED: Final = "tool.execution.started"
EVENT_COMPLETED: Final = "tool.execution.completed"
EVENT_FAILED: Final = "tool.execution.failed"


_FIELDS: Final = (
    "name",
    "tool_name",
    "tool_version",
    "call_id",
    "timestamp",
    "duration",
    "status",
    "error_type",
    "error",
    "inputs",
    "output",
    "content",
    "caller",
    "cached",
)


@final
class ToolEvent:
    """One moment of a tool call, as listeners receive it (immutable).

    ``inputs`` are the caller's on ``started`` and the validated ones (defaults
    applied) afterwards; ``output`` is set on ``completed``, and ``content``
    (the call's ``agentkit.content`` blocks, if any) with it; ``error`` (the
    failure as data: type, message and the fields its type carries) on
    ``failed``. ``caller`` is the name of who the call was made for
    (``agentkit.callers``: the current caller when the event is made, unless given).
    Messages and output have credential values redacted; events never carry
    credentials.

    Built once per moment and shared by every listener. ``error`` may be given
    as the exception itself: it is then described (``describe_error``) when
    first read, so a call whose listeners never look pays nothing for it.
    """

    # Private slots behind read-only properties: plain stores are the cheapest way
    # to build an object (a frozen dataclass's object.__setattr__ per field cost
    # ~2 us an event), and the properties keep every field read-only.
    __slots__ = (
        "_cached",
        "_call_id",
        "_caller",
        "_content",
        "_duration",
        "_error",
        "_error_type",
        "_inputs",
        "_name",
        "_output",
        "_status",
        "_timestamp",
        "_tool_name",
        "_tool_version",
    )
    __match_args__ = _FIELDS

    def __init__(
        self,
        name: str,
        tool_name: str,
        tool_version: str,
        call_id: str,
        timestamp: float,
        duration: float | None = None,
        status: str | None = None,
        error_type: str | None = None,
        error: Mapping[str, Any] | BaseException | None = None,
        inputs: Mapping[str, Any] | None = None,
        output: Mapping[str, Any] | None = None,
        content: tuple[Block, ...] = (),
        caller: str | None = None,
        cached: bool = False,
    ) -> None:
        self._cached = cached
        self._name = name
        self._tool_name = tool_name
        self._tool_version = tool_version
        self._call_id = call_id
        self._timestamp = timestamp
        self._duration = duration
        self._status = status
        self._error_type = error_type
        self._error = error
        self._inputs = inputs
        self._output = output
        self._content = content
        self._caller = current_caller().name if caller is None else caller

    @property
    def name(self) -> str:
        """``tool.execution.started``, ``.completed`` or ``.failed``."""
        return self._name

    @property
    def tool_name(self) -> str:
        return self._tool_name

    @property
    def tool_version(self) -> str:
        return self._tool_version

    @property
    def call_id(self) -> str:
        return self._call_id

    @property
    def timestamp(self) -> float:
        """When it happened, as ``time.time()``."""
        return self._timestamp

    @property
    def duration(self) -> float | None:
        """The call's wall-clock seconds (``completed`` and ``failed``)."""
        return self._duration

    @property
    def status(self) -> str | None:
        return self._status

    @property
    def error_type(self) -> str | None:
        return self._error_type

    @property
    def error(self) -> Mapping[str, Any] | None:
        """The failure as data: type, message and the fields its type carries."""
        error = self._error
        if isinstance(error, BaseException):
            # Idempotent, so two threads reading at once store equal values.
            error = self._error = describe_error(error)
        return error

    @property
    def inputs(self) -> Mapping[str, Any] | None:
        return self._inputs

    @property
    def output(self) -> Mapping[str, Any] | None:
        return self._output

    @property
    def content(self) -> tuple[Block, ...]:
        """The content blocks of ``completed`` (see ``agentkit.content``); their repr
        names each media block's type and size, never its bytes."""
        return self._content

    @property
    def caller(self) -> str:
        """Who the call was made for: a caller's name, ``anonymous`` when not known."""
        return self._caller

    @property
    def cached(self) -> bool:
        """``completed`` from a kept answer (``cache:``): the tool did not run."""
        return self._cached

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field) for field in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not ToolEvent:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __reduce__(self) -> tuple[type[ToolEvent], tuple[Any, ...]]:
        # Pickled and copied as its fields, the error described: an event sent
        # to another process never needs the exception itself to pickle.
        return ToolEvent, self._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{field}={getattr(self, field)!r}" for field in _FIELDS)
        return f"ToolEvent({shown})"

    def to_dict(self) -> dict[str, Any]:
        error = self.error
        return {
            "event": self._name,
            "tool": self._tool_name,
            "version": self._tool_version,
            "call_id": self._call_id,
            "timestamp": self._timestamp,
            "duration": self._duration,
            "status": self._status,
            "error_type": self._error_type,
            "error": dict(error) if error is not None else None,
            "caller": self._caller,
            **({"cached": True} if self._cached else {}),
        }


Listener = Callable[[ToolEvent], object]


def emit(listeners: Sequence[Listener], event: ToolEvent) -> None:
    """Send ``event`` to each listener; one that raises is logged and the rest still run."""
    for listener in listeners:
        try:
            listener(event)
        except Exception as exc:
            logger.warning(
                "agentkit: listener %r failed on %s for tool '%s': %s: %s",
                listener,
                event.name,
                event.tool_name,
                type(exc).__name__,
                exc,
            )


# -- metrics -------------------------------------------------------------------------------------
