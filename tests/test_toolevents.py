"""``toolevents``: a ``ToolEvent`` as a value, and ``emit`` to listeners that may fail.

The events the executor sends during a call, and that none carries a secret, are in
``test_observability.py``; here the value and the fan-out on their own.
"""

from __future__ import annotations

import logging
import pickle

import pytest

from agentkit.callers import Caller, calling_as
from agentkit.toolerrors import ToolExecutionError, ToolValidationError
from agentkit.toolevents import (
    EVENT_COMPLETED,
    EVENT_FAILED,
    EVENT_STARTED,
    ToolEvent,
    emit,
)

FIELDS = (
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


def _completed(**changed: object) -> ToolEvent:
    fields: dict[str, object] = {
        "name": EVENT_COMPLETED,
        "tool_name": "weather",
        "tool_version": "1.2.0",
        "call_id": "call_1",
        "timestamp": 1700000000.5,
        "duration": 0.25,
        "status": "success",
        "inputs": {"city": "Z\u00fcrich"},
        "output": {"temp": 21},
        "caller": "triage-bot",
    }
    fields.update(changed)
    return ToolEvent(**fields)  # type: ignore[arg-type]


def test_the_event_names_are_the_documented_ones() -> None:
    assert (EVENT_STARTED, EVENT_COMPLETED, EVENT_FAILED) == (
        "tool.execution.started",
        "tool.execution.completed",
        "tool.execution.failed",
    )


def test_an_event_has_its_defaults_when_only_the_moment_is_given() -> None:
    event = ToolEvent(EVENT_STARTED, "weather", "1.2.0", "call_1", 1.0)
    assert (event.duration, event.status, event.error_type, event.error) == (None,) * 4
    assert (event.inputs, event.output, event.content, event.cached) == (None, None, (), False)
    assert event.caller == "anonymous"  # no caller outside a call made for one


def test_the_caller_is_the_current_one_when_the_event_is_made() -> None:
    with calling_as(Caller(name="triage-bot", via="token")):
        made_inside = ToolEvent(EVENT_STARTED, "weather", "1.2.0", "call_1", 1.0)
        given = ToolEvent(EVENT_STARTED, "weather", "1.2.0", "call_1", 1.0, caller="other")
    assert made_inside.caller == "triage-bot"  # kept after the block ends
    assert given.caller == "other"


def test_to_dict_names_every_field_a_log_line_carries() -> None:
    assert _completed().to_dict() == {
        "event": "tool.execution.completed",
        "tool": "weather",
        "version": "1.2.0",
        "call_id": "call_1",
        "timestamp": 1700000000.5,
        "duration": 0.25,
        "status": "success",
        "error_type": None,
        "error": None,
        "caller": "triage-bot",
    }


def test_to_dict_says_cached_only_of_a_kept_answer() -> None:
    assert _completed(cached=True).to_dict()["cached"] is True
    assert "cached" not in _completed(cached=False).to_dict()


def test_to_dict_never_carries_inputs_or_output() -> None:
    shown = _completed(inputs={"password": "hunter2"}, output={"token": "t0k"}).to_dict()
    assert "hunter2" not in repr(shown)
    assert "t0k" not in repr(shown)


def test_an_error_given_as_the_exception_is_described_when_read() -> None:
    cause = ValueError("no such city")
    event = ToolEvent(
        EVENT_FAILED,
        "weather",
        "1.2.0",
        "call_1",
        1.0,
        status="failure",
        error_type="ToolExecutionError",
        error=ToolExecutionError("weather", cause, detail="no such city"),
    )
    described = event.error
    assert described == {
        "type": "ToolExecutionError",
        "message": str(ToolExecutionError("weather", cause, detail="no such city")),
        "cause": "ValueError",
        "detail": "no such city",
    }
    assert event.error is described  # described once, then kept
    assert event.to_dict()["error"] == described
    assert event.to_dict()["error"] is not described  # a copy: a log line cannot change it


def test_a_validation_error_is_described_with_its_direction_and_errors() -> None:
    error = ToolValidationError("weather", "input", ["Missing required parameter: 'city'"])
    event = ToolEvent(EVENT_FAILED, "weather", "1.2.0", "call_1", 1.0, error=error)
    assert event.error is not None
    assert event.error["type"] == "ToolValidationError"
    assert event.error["direction"] == "input"
    assert [str(problem) for problem in event.error["errors"]] == [
        "Missing required parameter: 'city'"
    ]


def test_an_error_given_as_data_is_kept_as_given() -> None:
    data = {"type": "ValueError", "message": "bad"}
    event = ToolEvent(EVENT_FAILED, "t", "1", "c", 1.0, error=data)
    assert event.error is data


def test_events_with_equal_fields_are_equal_and_hash_alike() -> None:
    assert _completed() == _completed()
    bare = {"inputs": None, "output": None}  # a dict field leaves an event unhashable
    assert hash(_completed(**bare)) == hash(_completed(**bare))
    assert len({_completed(**bare), _completed(**bare), _completed(**bare, cached=True)}) == 2


@pytest.mark.parametrize("field", ["call_id", "caller", "cached", "duration", "status"])
def test_events_differing_in_one_field_differ(field: str) -> None:
    changed = {
        "call_id": "call_2",
        "caller": "other",
        "cached": True,
        "duration": 0.5,
        "status": "failure",
    }
    assert _completed() != _completed(**{field: changed[field]})


def test_an_event_is_never_equal_to_its_dict_or_another_type() -> None:
    event = _completed()
    assert event != event.to_dict()
    assert event != "ToolEvent"
    assert (event == object()) is False


def test_an_event_matches_a_pattern_by_position_in_field_order() -> None:
    assert ToolEvent.__match_args__ == FIELDS
    match _completed():
        case ToolEvent(name, tool_name, version, call_id):
            assert (name, tool_name, version, call_id) == (
                EVENT_COMPLETED,
                "weather",
                "1.2.0",
                "call_1",
            )
        case _:
            pytest.fail("a ToolEvent did not match its own pattern")


def test_the_repr_names_every_field_in_order() -> None:
    shown = repr(_completed())
    assert shown.startswith("ToolEvent(name='tool.execution.completed', tool_name='weather', ")
    positions = [shown.index(f"{field}=") for field in FIELDS]
    assert positions == sorted(positions)
    assert "inputs={'city': 'Z\u00fcrich'}" in shown


def test_a_pickled_event_keeps_its_caller_outside_the_call() -> None:
    with calling_as(Caller(name="triage-bot", via="token")):
        event = ToolEvent(EVENT_STARTED, "weather", "1.2.0", "call_1", 1.0)
    clone = pickle.loads(pickle.dumps(event))
    assert clone.caller == "triage-bot"  # not the anonymous caller of where it is unpickled
    assert clone == event


def test_no_field_can_be_set_or_added() -> None:
    event = _completed()
    for field in ("caller", "cached", "content", "error_type", "timestamp"):
        with pytest.raises(AttributeError):
            setattr(event, field, "changed")
    with pytest.raises(AttributeError):
        event.extra = 1  # type: ignore[attr-defined]


# -- emit ----------------------------------------------------------------------------------------


def test_emit_sends_the_one_event_to_each_listener_in_order() -> None:
    heard: list[tuple[str, ToolEvent]] = []
    event = _completed()
    emit([lambda e: heard.append(("first", e)), lambda e: heard.append(("second", e))], event)
    assert heard == [("first", event), ("second", event)]
    assert heard[0][1] is heard[1][1]  # shared, not copied per listener


def test_emit_to_no_listener_does_nothing() -> None:
    emit([], _completed())


def test_a_failing_listener_is_logged_naming_the_event_and_tool_and_the_rest_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    heard: list[ToolEvent] = []

    def broken(event: ToolEvent) -> None:
        raise KeyError("missing-field")

    with caplog.at_level(logging.WARNING, logger="agentkit"):
        emit([broken, heard.append, broken, heard.append], _completed())
    assert len(heard) == 2
    warnings = [record for record in caplog.records if record.name == "agentkit"]
    assert len(warnings) == 2
    message = warnings[0].getMessage()
    assert message.startswith(f"agentkit: listener {broken!r} failed on tool.execution.completed")
    assert message.endswith("for tool 'weather': KeyError: 'missing-field'")
    assert warnings[0].levelno == logging.WARNING


def test_an_interrupt_in_a_listener_is_not_swallowed() -> None:
    def interrupted(event: ToolEvent) -> None:
        raise KeyboardInterrupt

    heard: list[ToolEvent] = []
    with pytest.raises(KeyboardInterrupt):
        emit([interrupted, heard.append], _completed())
    assert heard == []
