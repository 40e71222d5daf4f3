"""The audit record of a call: masking, failure kinds, the notes below a server."""

from __future__ import annotations

import contextvars
import json
import threading
from datetime import datetime

import pytest

from agentkit.audit import (
    FAILURE_KINDS,
    MASK,
    audit_record,
    masked_arguments,
    note_cache_hit,
    note_declined,
    note_failure,
    note_limited,
    note_upstream_status,
    noting,
)
from agentkit.callers import ANONYMOUS, Caller
from agentkit.redaction import Redactor
from agentkit.toolerrors import (
    CredentialError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolValidationError,
)
from agentkit.toolexamples import failure_kind
from agentkit.toolschema import FREE_FORM, ToolSchema

SCHEMA = ToolSchema.from_dict(
    {
        "parameters": [
            {"name": "query", "type": "string"},
            {"name": "ssn", "type": "string", "required": False, "sensitive": True},
            {
                "name": "people",
                "type": "list",
                "required": False,
                "items": {
                    "type": "dictionary",
                    "parameters": [
                        {"name": "name", "type": "string"},
                        {"name": "phone", "type": "string", "sensitive": True},
                    ],
                },
            },
        ]
    }
)


def test_sensitive_values_are_masked_in_lists_of_objects_too() -> None:
    shown = masked_arguments(
        {
            "query": "q",
            "ssn": {"not": "even a string"},
            "people": [{"name": "a", "phone": "1"}, "not an object", {"name": "b"}],
            "extra": "undeclared: masked",
        },
        SCHEMA,
        None,
    )
    assert shown == {
        "query": "q",
        "ssn": MASK,
        "people": [{"name": "a", "phone": MASK}, "not an object", {"name": "b"}],
        "extra": MASK,
    }


def test_masking_copies_and_never_changes_the_arguments() -> None:
    arguments = {"query": "q", "ssn": "078-05-1120"}
    masked_arguments(arguments, SCHEMA, None)
    assert arguments == {"query": "q", "ssn": "078-05-1120"}


def test_a_credential_is_redacted_wherever_it_is_in_the_arguments() -> None:
    secret = "s3cr3t-value-0123456789"
    shown = masked_arguments(
        {"query": f"token={secret}", "people": [{"name": secret.upper(), "phone": secret}]},
        SCHEMA,
        Redactor([secret]),
    )
    assert secret not in repr(shown)
    assert secret.upper() not in repr(shown)
    assert shown["people"][0]["phone"] == MASK


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param(ToolValidationError("t", "input", ["bad"]), "validation", id="input"),
        pytest.param(ToolValidationError("t", "output", ["bad"]), "output", id="output"),
        pytest.param(
            ToolExecutionError("t", CredentialError("t", "api-token", [])),
            "credential",
            id="credential",
        ),
        pytest.param(
            ToolExecutionError("t", ToolTimeoutError("t", 1.0, abandoned=False)),
            "timeout",
            id="timeout",
        ),
        pytest.param(ToolExecutionError("t", ValueError("boom")), "execution", id="raised"),
    ],
)
def test_failure_kinds(error: Exception, kind: str) -> None:
    assert failure_kind(error) == kind
    assert kind in FAILURE_KINDS


def test_notes_outside_a_call_do_nothing() -> None:
    note_upstream_status(200)
    note_limited()
    note_cache_hit()
    note_declined()
    note_failure("busy")
    with noting() as notes:
        pass
    assert (notes.outcome, notes.upstream_status, notes.cache_hit) == (None, [], False)


def test_statuses_noted_in_a_thread_started_with_the_calls_context_reach_it() -> None:
    with noting() as notes:
        context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(note_upstream_status, 503))
        worker.start()
        worker.join(timeout=10)
        note_upstream_status(200)
    assert notes.upstream_status == [503, 200]


def test_limited_and_declined_stand_over_a_later_failure() -> None:
    with noting() as notes:
        note_limited()
        note_failure("execution")
    assert (notes.outcome, notes.failure) == ("limited", None)


def test_a_record_has_every_field_in_json_types() -> None:
    with noting() as notes:
        note_upstream_status(429)
        note_cache_hit()
        note_failure("execution")
    record = audit_record(
        started=0.0,
        duration=0.1234567,
        caller=Caller(name="triage-bot", via="token"),
        tool="t",
        version="1.0.0",
        toolset="triage",
        arguments={"a": 1},
        notes=notes,
    )
    assert record == {
        "time": "1970-01-01T00:00:00.000Z",
        "caller": "triage-bot",
        "via": "token",
        "tool": "t",
        "version": "1.0.0",
        "toolset": "triage",
        "arguments": {"a": 1},
        "outcome": "failure",
        "failure": "execution",
        "cache_hit": True,
        "duration": 0.123457,
        "upstream_status": [429],
    }
    assert datetime.fromisoformat(record["time"].replace("Z", "+00:00")).tzinfo is not None


def test_an_anonymous_success() -> None:
    with noting() as notes:
        pass
    record = audit_record(
        started=1_700_000_000.5,
        duration=0,
        caller=ANONYMOUS,
        tool="t",
        version=None,
        toolset=None,
        arguments={},
        notes=notes,
    )
    assert (record["caller"], record["outcome"], record["failure"]) == (
        "anonymous",
        "success",
        None,
    )
    assert record["time"] == "2023-11-14T22:13:20.500Z"


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"query": "q", "SSN": "123-45-6789"}, id="other-case"),
        pytest.param({"query": "q", "sn": "123-45-6789"}, id="misspelt"),
        pytest.param(
            {"query": "q", "people": [{"name": "a", "Phone": "123-45-6789"}]}, id="nested"
        ),
    ],
)
def test_a_name_the_schema_does_not_declare_keeps_its_name_and_loses_its_value(
    arguments: dict[str, object],
) -> None:
    # A model that writes SSN for ssn sends the secret all the same: the call is
    # refused, and the audit line must not hold it.
    shown = masked_arguments(arguments, SCHEMA, None)
    assert "123-45-6789" not in json.dumps(shown)
    assert set(shown) == set(arguments)


def test_a_free_form_schema_masks_nothing_it_was_not_told_to() -> None:
    shown = masked_arguments({"anything": "goes"}, FREE_FORM, None)
    assert shown == {"anything": "goes"}
