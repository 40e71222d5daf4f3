"""An answer to a question is checked against the form it was asked with, end to end: a
real server over streamable HTTP and stdio, the SDK's own clients of both protocol eras
(2025-11-25's ``elicitation/create``, 2026-07-28's ``input_required`` rounds) answering
badly. The call ends with an ``isError`` naming the tool and the field, and the tool never
runs with the answer; the value given is shown nowhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import mcp_types as types
from mcp import Client

from tests.support.serving import (
    INITIALIZE,
    PROTOCOL_VERSION,
    Served,
    last_data,
    next_data,
    post,
    serving,
    session,
    stdio_parameters,
    stdio_session,
    streaming_post,
)

WAIT_SECONDS = 60
SECRET = "pin-0123456789-secret"
ENV: dict[str, str] = {}

ASKING = """\
name: {name}
version: 1.0.0
description: Asks the user a form.
input_schema: {{parameters: [{{name: marker, type: string}}]}}
output_schema: {{parameters: [{{name: heard, type: dictionary}}]}}
backend: {{python: "tests.support.serve_tools:{function}"}}
"""
CONFIRMING = """\
name: wipe
version: 1.0.0
description: Wipe the scratch space (a Python tool).
confirm: true
input_schema: {parameters: [{name: seconds, type: float}, {name: marker, type: string}]}
output_schema: {parameters: [{name: slept, type: float}]}
backend: {python: "tests.support.serve_tools:doze"}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tools = tmp_path_factory.mktemp("answers")
    (tools / "profile.yaml").write_text(ASKING.format(name="profile", function="profile"))
    (tools / "profile_async.yaml").write_text(
        ASKING.format(name="profile_async", function="profile_async")
    )
    (tools / "swallowing.yaml").write_text(
        ASKING.format(name="swallowing", function="profile_swallowing")
    )
    (tools / "wipe.yaml").write_text(CONFIRMING)
    return tools


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[Served]:
    with serving(["--tools", str(folder)], env=ENV) as served:
        yield served


class User:
    """Accepts every question with ``content``; counts the questions."""

    def __init__(self, content: dict[str, Any] | None) -> None:
        self.content = content
        self.asked = 0

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked += 1
        return types.ElicitResult(action="accept", content=self.content)


async def _handshake_era(target: Any, user: User, name: str, arguments: dict[str, Any]) -> Any:
    if isinstance(target, str):
        async with session(target, elicitation=user) as client:
            return await client.call_tool(name, arguments)
    async with stdio_session(target, ENV, elicitation=user) as client:
        return await client.call_tool(name, arguments)


async def _modern(target: Any, user: User, name: str, arguments: dict[str, Any]) -> Any:
    if not isinstance(target, str):
        target = stdio_parameters(target, ENV)
    async with Client(target, elicitation_callback=user) as client:
        assert client.protocol_version == "2026-07-28"
        return await client.call_tool(name, arguments)


ERAS = {"2025-11-25": _handshake_era, "2026-07-28": _modern}


def _call(era: str, target: Any, user: User, name: str, arguments: dict[str, Any]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            return await ERAS[era](target, user, name, arguments)

    return anyio.run(bounded)


@pytest.fixture(params=["http", "stdio"])
def target(request: pytest.FixtureRequest, folder: Path) -> Any:
    if request.param == "stdio":
        return ["--tools", str(folder)]
    return request.getfixturevalue("server").url


BAD = [
    pytest.param({"pin": SECRET}, "Missing required field: 'age'", id="missing"),
    pytest.param({"age": SECRET}, "Field 'age': expected type 'integer', got 'str'", id="type"),
    pytest.param({"age": 200}, "Field 'age': expected a value of at most 150", id="maximum"),
    pytest.param(
        {"age": 30, "color": SECRET},
        "Field 'color': expected one of 'red', 'green', got another value",
        id="enum",
    ),
    pytest.param(
        {"age": 30, "pin": SECRET * 2}, "Field 'pin': expected at most 30 characters", id="length"
    ),
    pytest.param({"age": 30, "admin": True}, "Unknown field: 'admin'", id="extra"),
]


@pytest.mark.parametrize(("content", "problem"), BAD)
@pytest.mark.parametrize("era", list(ERAS))
def test_a_bad_answer_ends_the_call_and_the_tool_never_gets_it(
    era: str, target: Any, tmp_path: Path, content: dict[str, Any], problem: str
) -> None:
    marker = str(tmp_path / "profile")
    user = User(content)
    result = _call(era, target, user, "profile", {"marker": marker})
    assert user.asked == 1
    assert result.is_error is True
    text = result.content[0].text
    assert text.startswith("Error: Tool 'profile' failed: AnswerError: ")
    assert problem in text
    assert SECRET not in str(result)
    assert not Path(f"{marker}.heard").exists()  # the tool went no further than the question


@pytest.mark.parametrize("era", list(ERAS))
def test_a_good_answer_reaches_the_tool(era: str, target: Any, tmp_path: Path) -> None:
    marker = str(tmp_path / "profile")
    user = User({"age": 36.0, "color": "green", "pin": None})
    result = _call(era, target, user, "profile_async", {"marker": marker})
    assert result.is_error is False
    assert result.structured_content == {"heard": {"age": 36, "color": "green"}}


@pytest.mark.parametrize("era", list(ERAS))
def test_a_tool_that_swallows_the_error_still_ends_in_it(era: str, server: Served) -> None:
    result = _call(era, server.url, User({"age": "old"}), "swallowing", {"marker": ""})
    assert result.is_error is True
    assert result.content[0].text == (
        "Error: Tool 'swallowing' failed: AnswerError: the answer does not fit the form it "
        "was asked with, so it was not used: Field 'age': expected type 'integer', got 'str'"
    )


@pytest.mark.parametrize("era", list(ERAS))
def test_a_confirmation_accepted_with_fields_it_has_not_does_nothing(
    era: str, target: Any, tmp_path: Path
) -> None:
    marker = str(tmp_path / "wipe")
    user = User({"approved": True})
    result = _call(era, target, user, "wipe", {"seconds": 0, "marker": marker})
    assert user.asked == 1
    assert result.is_error is True
    assert "Unknown field: 'approved'" in result.content[0].text
    assert not Path(f"{marker}.started").exists()


@pytest.mark.parametrize("era", list(ERAS))
def test_a_form_mcp_has_no_such_thing_as_is_never_asked(era: str, server: Served) -> None:
    user = User({"age": 1})
    result = _call(era, server.url, user, "profile", {"marker": "nested"})
    assert user.asked == 0
    assert result.is_error is True
    assert "the form cannot be asked" in result.content[0].text
    assert "properties.address.type" in result.content[0].text


def _asking_session(url: str) -> dict[str, str]:
    """A handshake-era session opened with raw HTTP by a client that can be asked."""
    initialize = json.loads(json.dumps(INITIALIZE))
    initialize["params"]["capabilities"] = {"elicitation": {}}
    answer = post(url, initialize, {})[1]
    return {"Mcp-Session-Id": answer["mcp-session-id"], "MCP-Protocol-Version": PROTOCOL_VERSION}


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        pytest.param(
            {"action": "accept", "content": {"age": {"nested": SECRET}}},
            "Field 'age': expected a string, a number, a boolean or a list of strings",
            id="a-nested-field",
        ),
        pytest.param(
            {"action": "accept", "content": [SECRET]},
            "The answer is no elicitation result",
            id="content-a-list",
        ),
        pytest.param(
            {"action": SECRET}, "The answer is no elicitation result", id="an-unknown-action"
        ),
    ],
)
def test_an_answer_that_is_no_elicitation_result_is_refused_unshown(
    server: Served, result: dict[str, Any], problem: str
) -> None:
    # The SDK's clients cannot send one (they check their callback's result): raw HTTP can.
    headers = _asking_session(server.url)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "profile", "arguments": {"marker": ""}}
    with streaming_post(server.url, call, headers) as stream:
        question = next_data(stream)
        assert question["method"] == "elicitation/create"
        answer = {"jsonrpc": "2.0", "id": question["id"], "result": result}
        assert post(server.url, answer, headers)[0] == 202
        rest = stream.read().decode()
    called = last_data(rest)["result"]
    assert called["isError"] is True
    assert problem in called["content"][0]["text"]
    assert SECRET not in rest
