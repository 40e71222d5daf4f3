"""The audit trail of tool calls: one record per call, made where the call is served.

A server opens a record for each call (``noting``); what happens below it is noted on
the record through this module's functions, without an argument threaded through
every layer: the HTTP backend notes each status its upstream answered
(``note_upstream_status``), a limit notes a refusal (``note_limited``), a cache its
hit (``note_cache_hit``). Outside a noted call each of them does nothing.

``audit_record`` makes the record a JSON line holds:

- ``time``: when the call came, RFC 3339 in UTC;
- ``caller``: who it was made for (``agentkit.callers``), and ``via``, how the server
  knows it;
- ``tool`` and ``version``; ``toolset``: the set whose endpoint served it, or null;
- ``arguments``: as the client sent them, each parameter the schema marks
  ``sensitive: true`` replaced by ``MASK``, and credential values redacted;
- ``outcome``: ``success``, ``failure``, ``limited`` (a limit refused it, nothing
  sent) or ``declined`` (its user, or the server for want of a user to ask, did not
  let it run); ``failure``: for a failure, its kind (``FAILURE_KINDS``), else null;
  ``cache_hit``: whether a cache answered;
- ``duration``: seconds from the call's arrival to its answer;
- ``upstream_status``: each HTTP status its upstream answered, in order (retries and
  redirects included), empty for a call that reached none.

A record never holds a credential, a bearer token, or a result.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Final, final

from agentkit.callers import Caller
from agentkit.toolexamples import FAILURE_KINDS as CALL_FAILURE_KINDS

if TYPE_CHECKING:
    from agentkit.redaction import Redactor
    from agentkit.toolschema import ToolSchema

__all__ = [
    "FAILURE_KINDS",
    "MASK",
    "OUTCOMES",
    "CallNotes",
    "audit_record",
    "masked_arguments",
    "note_cache_hit",
    "note_declined",
    "note_failure",
    "note_limited",
    "note_upstream_status",
    "noting",
]

#: What a ``sensitive: true`` parameter's value is replaced by in the trail.
MASK: Final = "[sensitive]"
OUTCOMES: Final = ("success", "failure", "limited", "declined")
#: How a failed call failed: as a ``ToolResult`` has it (``agentkit.toolexamples``'
#: ``failure_kind``: ``validation``, ``output``, ``credential``, ``timeout``,
#: ``execution``), or as only its server knows: the tool does not exist
#: (``unknown_tool``), the server had no room for it (``busy``), or it was cut off
#: before its end (``interrupted``).
FAILURE_KINDS: Final = (*CALL_FAILURE_KINDS, "unknown_tool", "busy", "interrupted")
#: Statuses kept per call at most: a paginated call may make many requests.
MAX_STATUSES: Final = 100


@final
class CallNotes:
    """What is noted of one call while it runs (mutable, the call's alone)."""

    __slots__ = ("cache_hit", "failure", "outcome", "upstream_status")

    def __init__(self) -> None:
        self.upstream_status: list[int] = []
        self.outcome: str | None = None
        self.failure: str | None = None
        self.cache_hit = False


_NOTES: ContextVar[CallNotes | None] = ContextVar("agentkit_call_notes", default=None)


@contextmanager
def noting() -> Iterator[CallNotes]:
    """Open the notes of one call for the block (and the threads and tasks it starts)."""
    notes = CallNotes()
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def note_upstream_status(status: int) -> None:
    """The current call's upstream answered ``status`` (an HTTP backend's seam)."""
    notes = _NOTES.get()
    if notes is not None and len(notes.upstream_status) < MAX_STATUSES:
        notes.upstream_status.append(status)


def note_limited() -> None:
    """A limit refused the current call before anything was sent."""
    notes = _NOTES.get()
    if notes is not None:
        notes.outcome = "limited"


def note_cache_hit() -> None:
    """A cache answered the current call."""
    notes = _NOTES.get()
    if notes is not None:
        notes.cache_hit = True


def note_declined() -> None:
    """The current call was not let run: its user declined, or could not be asked."""
    notes = _NOTES.get()
    if notes is not None:
        notes.outcome = "declined"


def note_failure(kind: str) -> None:
    """The current call failed in a way only its server knows (``FAILURE_KINDS``); an
    outcome noted already (``limited``, ``declined``) stands."""
    notes = _NOTES.get()
    if notes is not None and notes.outcome is None:
        notes.outcome, notes.failure = "failure", kind


def masked_arguments(
    arguments: Mapping[str, Any], schema: ToolSchema | None, redactor: Redactor | None
) -> dict[str, Any]:
    """``arguments`` with each ``sensitive`` parameter's value (at any depth the schema
    declares), and the value of each name it does not declare, replaced by ``MASK``,
    then credential values redacted by ``redactor``."""
    shown = _masked(arguments, schema) if schema is not None else dict(arguments)
    return redactor.redact_value(shown) if redactor is not None else shown


def _masked(arguments: Mapping[str, Any], schema: ToolSchema) -> dict[str, Any]:
    declared = {parameter.name: parameter for parameter in schema.parameters}
    shown: dict[str, Any] = {}
    for name, value in arguments.items():
        parameter = declared.get(name)
        if parameter is None:
            # A name the schema does not declare (``Password`` for ``password``): the
            # call is refused, and nothing says the value is not a secret. Its name is
            # kept; a free-form schema declares nothing and masks nothing.
            shown[name] = value if schema.free_form else MASK
        elif parameter.sensitive:
            shown[name] = MASK
        else:
            shown[name] = _masked_value(value, parameter.parameters, parameter.items)
    return shown


def _masked_value(value: Any, nested: ToolSchema | None, items: Any) -> Any:
    if nested is not None and isinstance(value, Mapping):
        return _masked(value, nested)
    if items is not None and isinstance(value, list):
        return [_masked_value(each, items.parameters, items.items) for each in value]
    return value


def audit_record(
    *,
    started: float,
    duration: float,
    caller: Caller,
    tool: str,
    version: str | None,
    toolset: str | None,
    arguments: Mapping[str, Any],
    notes: CallNotes,
) -> dict[str, Any]:
    """The record of one call (see the module's docstring); ``started`` as ``time.time()``."""
    outcome = notes.outcome or "success"
    return {
        "time": _rfc3339(started),
        "caller": caller.name,
        "via": caller.via,
        "tool": tool,
        "version": version,
        "toolset": toolset,
        "arguments": dict(arguments),
        "outcome": outcome,
        "failure": notes.failure if outcome == "failure" else None,
        "cache_hit": notes.cache_hit,
        "duration": round(duration, 6),
        "upstream_status": list(notes.upstream_status),
    }


def _rfc3339(when: float) -> str:
    moment = datetime.fromtimestamp(when, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
