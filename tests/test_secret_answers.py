"""A successful answer is given as the tool made it, or not at all.

An answer that holds one of the call's credentials -- anywhere in the output, a
key included, in a content block, in any letter case or spelling, inside
wrapped base64 -- fails the call with a ``SecretInOutputError`` naming the tool,
the credential and the place, never the value. An answer that holds none is
the tool's own object, unaltered. Each path a call takes is tried: ``execute``,
``aexecute``, the batches, dispatch, ``agentkit call`` and the MCP server.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit import (
    SecretInOutputError,
    Tool,
    ToolEvent,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    ToolResult,
    ToolValidationError,
)
from agentkit.adapters.dispatch import adispatch_openai, dispatch_anthropic, dispatch_openai
from agentkit.content import Audio, Image, Output, Resource, Text
from agentkit.redaction import redact_also
from tests.support.helpers import Scripted
from tests.support.leaks import SECRETS, case_variants, leaked_in_any_case

ROOT = Path(__file__).resolve().parent.parent
TOKEN = SECRETS[3]  # "A1b2C3d4e5F6g7H8": letters of both cases and digits


class Answering(Tool):
    """Returns what a test hands it; takes the credentials 'api-key' and 'other-key'."""

    TOOL_NAME = "answering"
    TOOL_DESCRIPTION = "Returns a given answer."
    CREDENTIAL_NAMES = ("api-key", "other-key")
    OUTPUT_SCHEMA = {
        "parameters": [
            {"name": "state", "type": "string", "required": False},
            {"name": "items", "type": "list", "required": False},
            {"name": "labels", "type": "dictionary", "required": False},
        ]
    }

    def __init__(self, answer: Callable[[Mapping[str, str]], Any]) -> None:
        super().__init__()
        self.answer = answer

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        return self.answer(credentials)


CREDENTIALS = {"api-key": TOKEN, "other-key": SECRETS[0]}


def _run(path: str, tool: Tool, events: list[ToolEvent] | None = None) -> ToolResult:
    executor = ToolExecutor(credentials=CREDENTIALS, listeners=[events.append] if events else [])
    if path == "execute":
        return executor.execute(tool, {}, raise_on_failure=False)
    if path == "aexecute":
        return asyncio.run(executor.aexecute(tool, {}, raise_on_failure=False))
    if path == "execute_many":
        return executor.execute_many([(tool, {}), (tool, {})])[1]
    return asyncio.run(executor.aexecute_many([(tool, {}), (tool, {})]))[1]


PATHS = ["execute", "aexecute", "execute_many", "aexecute_many"]


def _assert_withheld(result: ToolResult, where: str, credentials: tuple[str, ...]) -> None:
    assert not result.succeeded
    assert result.output is None
    assert result.content == ()
    error = result.error
    assert isinstance(error, ToolExecutionError)
    cause = error.cause
    assert isinstance(cause, SecretInOutputError)
    assert (cause.tool_name, cause.where, cause.credentials) == ("answering", where, credentials)
    assert f"at {where}" in str(error)
    shown = repr(result) + json.dumps(result.to_dict()) + str(error)
    assert leaked_in_any_case(shown, [TOKEN, SECRETS[0]]) == []


class _Shows:
    """A Python tool's own object, whose str() (as json.dumps(default=str) shows it) holds ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


# -- where the secret is --------------------------------------------------------------------


PLACES: dict[str, tuple[Callable[[str], Any], str]] = {
    "a value": (lambda token: {"state": f"open, token {token}"}, "output.state"),
    "in a list": (lambda token: {"items": ["a", 2, ["b", token]]}, "output.items[2][1]"),
    "deep in dicts": (
        lambda token: {"labels": {"a": {"b": [{"c": f"x{token}y"}]}}},
        "output.labels.a.b[0].c",
    ),
    "a key": (lambda token: {"labels": {"ok": 1, f"key-{token}": 2}}, "a key of output.labels"),
    "a nested key": (lambda token: {"items": [{token: 1}]}, "a key of output.items[0]"),
    "a text block": (
        lambda token: Output(Text("fine"), Text(f"key: {token}"), structured={}),
        "content[1].text",
    ),
    "a resource's text": (
        lambda token: Output(Resource(uri="memo://a", text=f"{token}\n"), structured={}),
        "content[0].text",
    ),
    "a resource's URI": (
        lambda token: Output(Resource(uri=f"https://x.test/?k={token}", text="t"), structured={}),
        "content[0].uri",
    ),
    "an image's bytes": (
        lambda token: Output(
            Image(data=b"\x89PNG" + token.encode() + b"\0", media_type="image/png")
        ),
        "content[0].data",
    ),
    "a sound's bytes": (
        lambda token: Output(Audio(data=token.lower().encode(), media_type="audio/wav")),
        "content[0].data",
    ),
    "a binary resource": (
        lambda token: Output(Resource(uri="file:///a.bin", data=b"\x01" + token.upper().encode())),
        "content[0].data",
    ),
}

# Values JSON has no form for, which a Python tool may put in a list or a mapping:
# the output check refuses each (naming its place and type, never its value) before
# anything could show it (its bytes, its str, its repr).
NOT_JSON: dict[str, tuple[Callable[[str], Any], str, str]] = {
    "bytes in a list": (
        lambda token: {"items": ["a", token.lower().encode()]},
        "items[1]",
        "bytes",
    ),
    "a set in a list": (lambda token: {"items": [{"x", token}]}, "items[0]", "set"),
    "an object in a mapping": (
        lambda token: {"labels": {"ok": 1, "k": _Shows(f"ref {token}")}},
        "labels.k",
        "_Shows",
    ),
    "an exception in a mapping": (
        lambda token: {"labels": {"error": ValueError(token)}},
        "labels.error",
        "ValueError",
    ),
    "bytes under a key that is the credential": (
        lambda token: {"labels": {token: token.encode()}},
        "labels.***",
        "bytes",
    ),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("place", sorted(NOT_JSON), ids=sorted(NOT_JSON))
def test_an_answer_json_cannot_hold_is_refused_without_showing_it(place: str, path: str) -> None:
    make, where, kind = NOT_JSON[place]
    events: list[ToolEvent] = []
    result = _run(path, Answering(lambda credentials: make(credentials["api-key"])), events)
    assert not result.succeeded
    assert result.output is None
    error = result.error
    assert isinstance(error, ToolValidationError)
    assert [problem.path for problem in error.problems] == [where]
    assert f"Parameter '{where}': expected a JSON value" in str(error)
    assert f"got '{kind}'" in str(error)
    shown = repr(result) + json.dumps(result.to_dict()) + str(error)
    for event in events:
        shown += repr(event) + json.dumps(event.to_dict())
    assert leaked_in_any_case(shown, [TOKEN, SECRETS[0]]) == []


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("place", sorted(PLACES), ids=sorted(PLACES))
def test_an_answer_holding_a_credential_is_withheld(place: str, path: str) -> None:
    make, where = PLACES[place]
    events: list[ToolEvent] = []
    result = _run(path, Answering(lambda credentials: make(credentials["api-key"])), events)
    _assert_withheld(result, where, ("api-key",))
    for event in events:
        assert event.output is None
        assert leaked_in_any_case(repr(event) + json.dumps(event.to_dict()), [TOKEN]) == []


@pytest.mark.parametrize(
    "spell",
    [
        pytest.param(lambda token: token, id="as-is"),
        *(
            pytest.param(lambda token, i=i: sorted(case_variants(token))[i], id=f"case-{i}")
            for i in range(len(case_variants(TOKEN)))
        ),
        pytest.param(lambda token: quote(token.lower(), safe=""), id="percent-lower"),
        pytest.param(lambda token: json.dumps(token.upper()), id="json-upper"),
        pytest.param(lambda token: base64.b64encode(token.encode()).decode(), id="base64"),
        pytest.param(lambda token: _mime(b"\x00" * 50 + token.encode()), id="mime-base64"),
        pytest.param(lambda token: _mime(b"\x00\x01" + token.encode(), 64, "\n"), id="pem"),
    ],
)
def test_every_spelling_and_case_of_a_credential_is_withheld(
    spell: Callable[[str], str],
) -> None:
    text = spell(TOKEN)
    result = _run("execute", Answering(lambda credentials: {"state": f"echo: {text}"}))
    _assert_withheld(result, "output.state", ("api-key",))


def _mime(data: bytes, width: int = 76, line_break: str = "\r\n") -> str:
    encoded = base64.b64encode(data + b"\x01" * 50).decode()
    return line_break.join(encoded[i : i + width] for i in range(0, len(encoded), width))


def test_a_form_derived_from_the_credentials_is_withheld_naming_them_all() -> None:
    def sign(credentials: Mapping[str, str]) -> dict[str, Any]:
        form = f"sig={credentials['api-key'][::-1]}"
        redact_also(form)
        return {"state": f"sent {form}"}

    _assert_withheld(_run("execute", Answering(sign)), "output.state", ("api-key", "other-key"))


def test_the_other_credential_is_named_when_it_is_the_one_found() -> None:
    result = _run("execute", Answering(lambda credentials: {"state": credentials["other-key"]}))
    _assert_withheld(result, "output.state", ("other-key",))


_LEAF = st.one_of(
    st.text(alphabet="abcdef xyz", max_size=12), st.integers(), st.booleans(), st.none()
)
_JSON = st.recursive(
    _LEAF,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet="pqrs", min_size=1, max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=60, deadline=None)
@given(_JSON, st.data())
def test_a_credential_anywhere_in_a_nested_answer_is_withheld(value: Any, data: Any) -> None:
    # Put the credential at a random place of a random value: as a leaf, in a
    # list, as a key; whatever surrounds it, the call fails and says where.
    spelled = data.draw(st.sampled_from(sorted(case_variants(TOKEN) | {TOKEN})))
    planted, where = _plant(value, spelled, data)
    result = _run("execute", Answering(lambda credentials: {"labels": {"v": planted}}))
    _assert_withheld(result, where.replace("$", "output.labels.v"), ("api-key",))


def _plant(value: Any, text: str, data: Any, where: str = "$") -> tuple[Any, str]:
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        inner, place = _plant(value[index], text, data, f"{where}[{index}]")
        return [*value[:index], inner, *value[index + 1 :]], place
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        inner, place = _plant(value[key], text, data, f"{where}.{key}")
        return {**value, key: inner}, place
    if isinstance(value, dict) and data.draw(st.booleans()):
        return {**value, f"k{text}": 1}, f"a key of {where}"
    return [text, value], f"{where}[0]"


# -- what holds no credential is the tool's own answer ---------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_a_clean_answer_is_given_unaltered(path: str) -> None:
    # Letters, words and pieces of the credential are not the credential.
    answer = {
        "state": "open, assigned to sam",
        "items": ["A1b2", "c3D4e5F6g7H", {"state": "s"}],
        "labels": {"state": "s", "sam": ["a", "A1b2"], TOKEN[:-1]: TOKEN[1:]},
    }
    expected = json.loads(json.dumps(answer))
    result = _run(path, Answering(lambda credentials: answer))
    assert result.succeeded
    assert result.output == expected
    assert answer == expected


def test_a_clean_answer_comes_back_as_the_tool_gave_it() -> None:
    answer = {"answer": "open, assigned to sam"}
    before = copy.deepcopy(answer)
    result = ToolExecutor(credentials={"api-key": TOKEN}).execute(Scripted(lambda i, c: answer), {})
    # The output check's copy: equal to what the tool gave, every key and value as it was.
    assert result.output == before
    assert answer == before


def test_clean_content_blocks_are_the_tools_own() -> None:
    blocks = (
        Text("A1b2C3d4 is only half of it"),  # a prefix of the credential is no credential
        Image(data=b"\x89PNG A1b2C3d4e5F6g7H", media_type="image/png"),
    )
    result = _run("execute", Answering(lambda credentials: Output(*blocks)))
    assert result.succeeded
    assert all(a is b for a, b in zip(result.content, blocks, strict=True))


# -- dispatch, the command line, the MCP server ------------------------------------------------


def _leaky_registry() -> ToolRegistry:
    return ToolRegistry([Answering(lambda credentials: {"state": credentials["api-key"].lower()})])


def test_dispatch_replies_with_the_refusal_not_the_answer() -> None:
    executor = ToolExecutor(credentials=CREDENTIALS)
    call = {"id": "c1", "type": "function", "function": {"name": "answering", "arguments": "{}"}}
    replies = dispatch_openai([call], _leaky_registry(), executor)
    replies += asyncio.run(adispatch_openai([call], _leaky_registry(), executor))
    block = {"type": "tool_use", "id": "t1", "name": "answering", "input": {}}
    replies += dispatch_anthropic([block], _leaky_registry(), executor)
    shown = json.dumps(replies)
    assert shown.count("SecretInOutputError") == 3
    assert "credential 'api-key' at output.state" in shown
    assert leaked_in_any_case(shown, [TOKEN]) == []


LEAKY_MODULE = """\
from agentkit.content import Output, Text


def answer(where, credentials):
    token = credentials["api-token"]
    if where == "clean":
        return {"state": "open, assigned to sam"}
    if where == "text":
        return Output(Text("the token is " + token), structured={"state": "ok"})
    return {"state": "echo " + token.upper()}
"""
LEAKY_TOOL = """\
name: leaky
version: 1.0.0
description: Answers with its credential, or not.
credentials: [api-token]
input_schema: {parameters: [{name: where, type: string}]}
output_schema: {parameters: [{name: state, type: string}]}
backend: {python: 'leaky_answers:answer'}
"""
LEAKY_TOKEN = "tok_Live_0123456789abcdef"


@pytest.fixture
def leaky_folder(tmp_path: Path) -> Path:
    (tmp_path / "leaky_answers.py").write_text(LEAKY_MODULE)
    (tmp_path / "leaky.yaml").write_text(LEAKY_TOOL)
    (tmp_path / ".env").write_text(f"API_TOKEN={LEAKY_TOKEN}\n")
    return tmp_path


def test_agentkit_call_prints_the_refusal(
    leaky_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentkit.cli import main

    monkeypatch.chdir(leaky_folder)
    common = ["--tools", "leaky.yaml", "--python-path", ".", "--credentials-file", ".env"]
    codes = [main(["call", "leaky", f"where={where}", *common]) for where in ("upper", "clean")]
    out = capsys.readouterr().out
    assert codes == [1, 0]
    failed, succeeded = (json.loads(part) for part in _json_documents(out))
    assert failed["status"] == "failure"
    assert "SecretInOutputError" in failed["error"]["message"]
    assert "credential 'api-token' at output.state" in failed["error"]["message"]
    assert succeeded["output"] == {"state": "open, assigned to sam"}
    assert leaked_in_any_case(out, [LEAKY_TOKEN]) == []


def _json_documents(text: str) -> list[str]:
    decoder, documents, position = json.JSONDecoder(), [], 0
    while position < len(text):
        if text[position].isspace():
            position += 1
            continue
        _, end = decoder.raw_decode(text, position)
        documents.append(text[position:end])
        position = end
    return documents


def test_the_mcp_server_answers_an_error_result(leaky_folder: Path) -> None:
    pytest.importorskip("mcp")
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "agentkit", "serve", "--tools", "leaky.yaml"),
            *("--python-path", ".", "--credentials-file", ".env"),
        ],
        cwd=str(leaky_folder),
    )
    results: dict[str, Any] = {}

    async def talk() -> None:
        with anyio.fail_after(60):
            async with (
                stdio_client(params) as streams,
                ClientSession(streams[0], streams[1]) as session,
            ):
                await session.initialize()
                for where in ("upper", "text", "clean"):
                    results[where] = await session.call_tool("leaky", {"where": where})

    anyio.run(talk)
    for where, place in (("upper", "output.state"), ("text", "content[0].text")):
        result = results[where]
        assert result.is_error is True
        assert result.structured_content is None
        text = result.content[0].text
        assert (
            f"SecretInOutputError: the answer holds the value of credential 'api-token' at {place}"
            in text
        )
        assert leaked_in_any_case(json.dumps(result.model_dump(mode="json")), [LEAKY_TOKEN]) == []
    assert results["clean"].is_error is False
    assert results["clean"].structured_content == {"state": "open, assigned to sam"}
