"""A tool's secrets stay out of what the executor reports, in every spelling and at every cut."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentkit import (
    EVENT_FAILED,
    EVENT_STARTED,
    CredentialError,
    SecretInOutputError,
    ToolEvent,
    ToolExecutionError,
    ToolExecutor,
    ToolValidationError,
)
from agentkit.credentials import CredentialsManager, EnvironmentProvider, SecretsFileProvider
from agentkit.redaction import redact_also
from tests.support.helpers import Scripted
from tests.support.leaks import SECRETS, leaked


class Enum(Scripted):
    TOOL_NAME = "enum"
    OUTPUT_SCHEMA = {"parameters": [{"name": "answer", "type": "string", "enum": ["ok"]}]}


class Pattern(Scripted):
    TOOL_NAME = "pattern"
    OUTPUT_SCHEMA = {"parameters": [{"name": "answer", "type": "string", "pattern": "^[0-9]+$"}]}


def _returning(answer: str) -> Callable[[dict[str, Any], Mapping[str, str]], dict[str, Any]]:
    return lambda inputs, credentials: {"answer": answer}


@pytest.mark.parametrize("tool", [Enum, Pattern], ids=["enum", "pattern"])
@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_a_quoted_output_value_is_redacted_before_it_is_cut(
    tool: type[Scripted], secret: str
) -> None:
    executor = ToolExecutor(credentials={"api-key": secret})
    # Slide the secret across the 60-character cut of a quoted value, and past it.
    for pad in range(0, 70, 3):
        answer = "x" * pad + secret + "y" * 30
        result = executor.execute(tool(_returning(answer)), {}, raise_on_failure=False)
        assert isinstance(result.error, ToolValidationError)
        shown = str(result.error) + repr(result.error.errors)
        assert leaked(shown, [secret]) == [], pad
        assert secret[:3] not in shown.replace("x", "").replace("y", ""), pad


def test_a_form_the_tool_derives_is_redacted_everywhere() -> None:
    secret = SECRETS[0]
    derived = f"sig={secret[::-1]}:{len(secret)}"

    def sign(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        form = f"sig={credentials['api-key'][::-1]}:{len(credentials['api-key'])}"
        redact_also(form)
        if inputs.get("q") == "fail":
            raise RuntimeError(f"the server refused {form}")
        return {"answer": f"sent {form}"}

    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": secret}, listeners=[events.append])
    answered = executor.execute(Scripted(sign), {"q": "go"}, raise_on_failure=False)
    failed = executor.execute(Scripted(sign), {"q": "fail"}, raise_on_failure=False)
    assert isinstance(answered.error, ToolExecutionError)
    assert isinstance(answered.error.cause, SecretInOutputError)  # withheld, not altered
    assert str(failed.error) == "Tool 'scripted' failed: RuntimeError: the server refused ***"
    seen = [repr(answered), repr(failed), json.dumps(failed.to_dict()), str(failed.error)]
    seen += [repr(event) for event in events]
    assert leaked("\n".join(seen), [secret, derived]) == []


def test_inputs_holding_a_secret_are_redacted_in_every_event() -> None:
    secret = SECRETS[1]
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": secret}, listeners=[events.append])
    executor.execute(Scripted(lambda i, c: {"answer": "ok"}), {"q": f"key {secret}"})
    assert [event.inputs for event in events] == [{"q": "key ***"}] * 2


# -- the fast path: clean values pass uncopied, deep ones never break a call --------------------


def test_a_clean_output_passes_whole_and_one_holding_a_secret_is_withheld() -> None:
    secret = SECRETS[0]
    clean = {"answer": "nothing to hide"}
    executor = ToolExecutor(credentials={"api-key": secret})
    output = executor.execute(Scripted(lambda i, c: clean), {}).output
    # The output check's copy (never the tool's own dict), unredacted; that the
    # redactor hands a clean value back uncopied is tests/test_redaction.py's.
    assert output == clean
    assert output is not clean
    derived = base64.b64encode(f"user:{secret}".encode()).decode()
    result = executor.execute(
        Scripted(lambda i, c: {"answer": f"Basic {derived}"}), {}, raise_on_failure=False
    )
    assert result.output is None
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert leaked(repr(result) + str(result.error), [secret]) == []


@pytest.mark.parametrize("depth", [70, 900, 5_000], ids=["past-limit", "near-recursion", "deep"])
def test_deep_inputs_with_credentials_and_a_listener_fail_cleanly(depth: int) -> None:
    secret = SECRETS[1]
    nested: Any = f"key {secret}"
    for _ in range(depth):
        nested = {"q": [nested]}
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={"api-key": secret}, listeners=[events.append])
    tool = Scripted(lambda i, c: {"answer": "ok"})
    result = executor.execute(tool, {"q": nested}, raise_on_failure=False)  # no RecursionError
    assert not result.succeeded
    assert isinstance(result.error, ToolValidationError)
    assert tool.calls == 0
    assert [event.name for event in events] == [EVENT_STARTED, EVENT_FAILED]
    shown = repr(events) + json.dumps(events[-1].to_dict())
    assert leaked(shown, [secret]) == []


# -- a credential too short to keep out of text is refused when it is resolved -----------------


def _providers(tmp_path: Path, value: str) -> dict[str, tuple[CredentialsManager, str]]:
    secrets = tmp_path / "secrets.env"
    secrets.write_text(f"API_KEY={value}\n")
    return {
        "mapping": (
            CredentialsManager.from_mapping({"api-key": value}),
            "the mapping given in code",
        ),
        "environment": (
            CredentialsManager([EnvironmentProvider({"API_KEY": value})]),
            "environment variable API_KEY",
        ),
        "secrets file": (
            CredentialsManager([SecretsFileProvider(secrets)]),
            f"secrets file {secrets}",
        ),
    }


@pytest.mark.parametrize("source", ["mapping", "environment", "secrets file"])
@pytest.mark.parametrize("value", ["s", "ab", "hunter2", "é" * 7, "  x  "])
def test_a_short_credential_fails_the_call_before_the_tool_runs(
    tmp_path: Path, source: str, value: str
) -> None:
    credentials, where = _providers(tmp_path, value)[source]
    events: list[ToolEvent] = []
    tool = Scripted(lambda i, c: {"answer": "open, assigned to sam"})
    executor = ToolExecutor(credentials=credentials, listeners=[events.append])
    result = executor.execute(tool, {"q": "state"}, raise_on_failure=False)
    assert tool.calls == 0
    assert isinstance(result.error, ToolExecutionError)
    cause = result.error.cause
    assert isinstance(cause, CredentialError)
    assert (cause.tool_name, cause.credential) == ("scripted", "api-key")
    message = str(result.error)
    assert where in message
    assert "shorter than 8 characters" in message
    # Nothing rewritten for want of a longer secret: the inputs are shown as they were.
    assert [event.inputs for event in events] == [{"q": "state"}] * 2
    # The message says nothing of the value, not even its length: another one gives it too.
    other, _ = _providers(tmp_path, "q")[source]  # the file read already is written again
    again = ToolExecutor(credentials=other).execute(tool, {}, raise_on_failure=False)
    assert str(again.error) == message
