"""Asking the user of an MCP 2026-07-28 client (``input_required`` round trips), end to end:
a real server over streamable HTTP (stateful and stateless) and stdio, the SDK's own
``Client`` answering with its elicitation callback, a loopback upstream counting what
reached it; and what a client sends back, tried as an attacker would."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import mcp_types as types
from mcp import Client

from tests.mcp.test_confirm import CLOSE, CLOSE_ARGS, SECRET, WIPE, Upstream, User
from tests.mcp.test_confirm import upstream as upstream  # the fixture, shared
from tests.mcp.test_elicitation import _asking
from tests.support.serving import Served, serving, start, stdio_parameters

ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 60
ENV = {"API_TOKEN": SECRET}
KEY = "agentkit/question"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, upstream: tuple[str, Upstream]) -> Path:
    tools = tmp_path_factory.mktemp("rounds")
    (tools / "close.yaml").write_text(CLOSE.replace("{origin}", upstream[0]))
    (tools / "wipe.yaml").write_text(WIPE)
    (tools / "ask.yaml").write_text(_asking("ask", "ask", "credentials: [api-token]"))
    (tools / "ask_async.yaml").write_text(_asking("ask_async", "ask_async"))
    (tools / "ask_twice.yaml").write_text(_asking("ask_twice", "ask_twice"))
    (tools / "ask_then_log.yaml").write_text(_asking("ask_then_log", "ask_then_log"))
    return tools


@pytest.fixture(scope="module", params=[False, True], ids=["stateful", "stateless"])
def server(request: pytest.FixtureRequest, folder: Path) -> Iterator[Served]:
    args = ["--tools", str(folder), *(["--stateless"] if request.param else [])]
    with serving(args, env=ENV) as served:
        yield served


@pytest.fixture(scope="module")
def one_server(folder: Path) -> Iterator[Served]:
    with serving(["--tools", str(folder), "--stateless"], env=ENV) as served:
        yield served


def _run(scenario: Any, *args: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            return await scenario(*args)

    return anyio.run(bounded)


async def _call(target: Any, user: Any, name: str, arguments: dict[str, Any]) -> Any:
    async with Client(target, elicitation_callback=user) as client:
        assert client.protocol_version == "2026-07-28"
        return await client.call_tool(name, arguments)


def test_accepted_the_request_shown_is_sent_once(
    server: Served, upstream: tuple[str, Upstream]
) -> None:
    origin, recorder = upstream
    before = len(recorder.bodies)
    user = User("accept")
    result = _run(_call, server.url, user, "close_issue", CLOSE_ARGS)
    assert result.is_error is False
    assert result.structured_content == {"closed": True}
    assert recorder.bodies[before:] == [{"number": 7, "reason": "spam", "signed": f"by {SECRET}"}]
    [asked] = user.asked
    assert asked.startswith(
        f"Tool 'close_issue' wants to send this request:\nPOST {origin}/issues/close?key=***\n"
    )
    assert SECRET not in asked


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declined_nothing_is_sent(
    server: Served, upstream: tuple[str, Upstream], action: str
) -> None:
    recorder = upstream[1]
    before = len(recorder.bodies)
    result = _run(_call, server.url, User(action), "close_issue", CLOSE_ARGS)
    assert result.is_error is True
    assert result.content[0].text.startswith(
        "Error: Tool 'close_issue' was not run: declined by the user"
    )
    assert result.content[0].text.endswith("nothing was done")
    assert len(recorder.bodies) == before


def test_a_client_without_the_elicitation_capability_is_refused(
    server: Served, upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]
    before = len(recorder.bodies)
    result = _run(_call, server.url, None, "close_issue", CLOSE_ARGS)
    assert result.is_error is True
    assert "this client cannot be asked" in result.content[0].text
    assert len(recorder.bodies) == before


def test_a_python_tool_is_asked_about_with_its_arguments(server: Served) -> None:
    user = User("accept")
    result = _run(_call, server.url, user, "wipe", {"seconds": 0})
    assert result.structured_content == {"slept": 0.0}
    assert user.asked == [
        "Tool 'wipe' wants to run with these arguments:\n{\n  \"seconds\": 0.0\n}\n\nAllow it?"
    ]


class Naming:
    """Answers a tool's own question with a name; keeps the questions."""

    def __init__(self) -> None:
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})


@pytest.mark.parametrize("tool", ["ask", "ask_async"])
def test_a_tools_own_question_is_answered(server: Served, tool: str) -> None:
    user = Naming()
    result = _run(_call, server.url, user, tool, {"question": "Name?"})
    assert result.structured_content == {"action": "accept", "name": "Ada"}
    [asked] = user.asked
    assert asked.message.startswith("Name?")
    assert SECRET not in repr(asked)  # the sync one quotes its credential: redacted


def test_confirm_over_stdio(folder: Path, upstream: tuple[str, Upstream]) -> None:
    recorder = upstream[1]
    params = stdio_parameters(["--tools", str(folder)], ENV)
    before = len(recorder.bodies)
    user = User("accept")
    result = _run(_call, params, user, "close_issue", CLOSE_ARGS)
    assert result.structured_content == {"closed": True}
    assert len(recorder.bodies) == before + 1
    assert SECRET not in repr(user.asked)


# -- what the client sends back is untrusted -----------------------------------------------------

ACCEPT = {KEY: types.ElicitResult(action="accept")}


async def _by_hand(url: str, rounds: Any) -> list[Any]:
    """The first round of close_issue, then ``rounds(session, first)``'s own rounds."""
    async with Client(url, elicitation_callback=User("accept")) as client:
        first = await client.session.call_tool("close_issue", CLOSE_ARGS, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert set(first.input_requests or {}) == {KEY}
        return [first, *await rounds(client.session, first)]


def test_an_answer_sent_again_runs_nothing_twice(
    one_server: Served, upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]

    async def twice(session: Any, first: Any) -> list[Any]:
        answer = {"input_responses": ACCEPT, "request_state": first.request_state}
        return [
            await session.call_tool("close_issue", CLOSE_ARGS, **answer),
            await session.call_tool("close_issue", CLOSE_ARGS, **answer),
        ]

    before = len(recorder.bodies)
    _, done, again = _run(_by_hand, one_server.url, twice)
    assert done.structured_content == {"closed": True}
    assert again.is_error is True
    assert again.content[0].text == (
        "Error: Tool 'close_issue': no call waits for this answer (it was answered "
        "already, its time ran out, or another server process asked); nothing was done "
        "with it. Call the tool again."
    )
    assert len(recorder.bodies) == before + 1


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        pytest.param("close_issue", {"number": 8, "reason": "spam"}, id="other-arguments"),
        pytest.param("close_issue", {**CLOSE_ARGS, "extra": 1}, id="an-argument-more"),
        pytest.param("wipe", {"seconds": 0}, id="another-tool"),
    ],
)
def test_an_answer_for_other_arguments_runs_nothing(
    one_server: Served, upstream: tuple[str, Upstream], name: str, arguments: dict[str, Any]
) -> None:
    recorder = upstream[1]

    async def swapped(session: Any, first: Any) -> list[Any]:
        answer = {"input_responses": ACCEPT, "request_state": first.request_state}
        return [
            await session.call_tool(name, arguments, **answer),
            # The question was withdrawn: the right arguments find nothing now either.
            await session.call_tool("close_issue", CLOSE_ARGS, **answer),
        ]

    before = len(recorder.bodies)
    _, refused, after = _run(_by_hand, one_server.url, swapped)
    assert refused.is_error is True
    assert "the call that asked ended and nothing was done" in refused.content[0].text
    assert after.is_error is True
    assert "no call waits for this answer" in after.content[0].text
    assert len(recorder.bodies) == before


@pytest.mark.parametrize(
    "state",
    [
        pytest.param("made-up", id="made-up"),
        pytest.param("", id="empty"),
        pytest.param("v1." + "A" * 60, id="sdk-shaped"),
    ],
)
def test_a_forged_token_runs_nothing(
    one_server: Served, upstream: tuple[str, Upstream], state: str
) -> None:
    recorder = upstream[1]

    async def forged(session: Any, first: Any) -> list[Any]:
        return [
            await session.call_tool(
                "close_issue", CLOSE_ARGS, input_responses=ACCEPT, request_state=state
            )
        ]

    before = len(recorder.bodies)
    _, refused = _run(_by_hand, one_server.url, forged)
    assert refused.is_error is True
    assert "no call waits for this answer" in refused.content[0].text
    assert len(recorder.bodies) == before


def test_no_answer_in_the_round_is_no_consent(
    one_server: Served, upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]

    async def unanswered(session: Any, first: Any) -> list[Any]:
        return [
            await session.call_tool("close_issue", CLOSE_ARGS, request_state=first.request_state)
        ]

    before = len(recorder.bodies)
    _, result = _run(_by_hand, one_server.url, unanswered)
    assert result.is_error is True
    assert "declined by the user" in result.content[0].text
    assert len(recorder.bodies) == before


def test_an_answer_after_the_deadline_lets_nothing_happen(
    folder: Path, upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]

    async def late(session: Any, first: Any) -> list[Any]:
        await anyio.sleep(2)  # past --call-timeout: the call gave up waiting
        answer = {"input_responses": ACCEPT, "request_state": first.request_state}
        return [await session.call_tool("close_issue", CLOSE_ARGS, **answer)]

    args = ["--tools", str(folder), "--stateless", "--call-timeout", "0.5"]
    with serving(args, env=ENV) as served:
        before = len(recorder.bodies)
        _, result = _run(_by_hand, served.url, late)
    assert result.is_error is True
    assert "no call waits for this answer" in result.content[0].text
    assert len(recorder.bodies) == before


def test_sigterm_ends_a_waiting_call_without_acting(
    folder: Path, upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]

    async def asked(session: Any, first: Any) -> list[Any]:
        return []

    served = start(["--tools", str(folder), "--drain-seconds", "300"], env=ENV)
    try:
        before = len(recorder.bodies)
        [first] = _run(_by_hand, served.url, asked)
    finally:
        # No answer can reach a server that stops: the call waits in vain, so it ends at
        # once instead of holding the drain for its 300 seconds.
        status = served.stop(timeout=60)
    assert isinstance(first, types.InputRequiredResult)
    assert status == 0
    assert "still running after" not in served.stderr
    assert len(recorder.bodies) == before


class Answers:
    """Answers each question with the next name; keeps the questions."""

    def __init__(self, *names: str) -> None:
        self.names = list(names)
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": self.names.pop(0)})


def test_a_call_asks_twice_in_two_rounds(server: Served) -> None:
    user = Answers("Ada", "Lovelace")
    result = _run(_call, server.url, user, "ask_twice", {"question": "Name?"})
    assert result.structured_content == {"action": "accept", "name": "Ada Lovelace"}
    assert user.asked == ["Name?", "And Ada's surname?"]


def test_past_max_waiting_a_call_is_refused_not_kept() -> None:
    from agentkit.mcp.input_required import InputRequiredCalls
    from agentkit.mcp.server import build_server
    from agentkit.toolregistry import ToolRegistry
    from tests.mcp.test_confirm import Purge

    tool = Purge()
    awaiting_input = InputRequiredCalls(max_waiting=1)

    async def scenario() -> list[Any]:
        server = build_server(ToolRegistry([tool]), awaiting_input=awaiting_input)
        async with Client(server, elicitation_callback=User("accept")) as client:
            first = await client.session.call_tool(
                "purge", {"bucket": "a"}, allow_input_required=True
            )
            second = await client.session.call_tool(
                "purge", {"bucket": "b"}, allow_input_required=True
            )
            waiting = len(awaiting_input)
            awaiting_input.close()
            return [first, second, waiting]

    first, second, waiting = _run(scenario)
    assert isinstance(first, types.InputRequiredResult)
    assert waiting == 1
    assert second.is_error is True
    assert second.content[0].text == (
        "Error: Tool 'purge' was not run: too many calls wait for their users' answers "
        "already (at most 1); try again later"
    )
    assert tool.ran == []


def test_what_a_call_says_after_its_question_goes_with_the_answering_round(
    server: Served,
) -> None:
    heard: list[Any] = []

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(params.data)

    async def scenario(url: str) -> Any:
        async with Client(
            url, elicitation_callback=Naming(), log_level="info", logging_callback=logged
        ) as client:
            return await client.call_tool("ask_then_log", {"question": "Name?"})

    result = _run(scenario, server.url)
    assert result.structured_content == {"action": "accept", "name": "Ada"}
    assert heard == ["heard Ada"]


def test_a_tools_own_question_over_stdio(folder: Path) -> None:
    params = stdio_parameters(["--tools", str(folder)], ENV)
    user = Naming()
    result = _run(_call, params, user, "ask", {"question": "Name?"})
    assert result.structured_content == {"action": "accept", "name": "Ada"}
    assert SECRET not in repr(user.asked)


@pytest.mark.parametrize("stateless", [True, False], ids=["stateless", "stateful"])
def test_another_users_credential_header_cannot_answer(
    folder: Path, upstream: tuple[str, Upstream], stateless: bool
) -> None:
    """With ``--credential-header``, the header's value is part of the caller: bob's
    round carrying alice's token ends her call without acting (R2)."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    recorder = upstream[1]
    args = [
        "--tools", str(folder),
        "--credential-header", "X-User-Token=api-token",
        *(["--stateless"] if stateless else []),
    ]  # fmt: skip

    async def scenario(url: str, answerer: str) -> Any:
        async with (
            create_mcp_http_client(headers={"X-User-Token": "alice-token"}) as alice_http,
            create_mcp_http_client(headers={"X-User-Token": answerer}) as other_http,
            Client(
                streamable_http_client(url, http_client=alice_http),
                elicitation_callback=User("accept"),
            ) as alice,
            Client(
                streamable_http_client(url, http_client=other_http),
                elicitation_callback=User("accept"),
            ) as other,
        ):
            first = await alice.session.call_tool(
                "close_issue", CLOSE_ARGS, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            # Stateful, the round must come on alice's session: only the header differs.
            session = alice.session if not stateless else other.session
            if not stateless:
                alice_http.headers["X-User-Token"] = answerer
            answer: dict[str, Any] = {"input_responses": ACCEPT}
            return await session.call_tool(
                "close_issue", CLOSE_ARGS, request_state=first.request_state, **answer
            )

    with serving(args, env=ENV) as served:
        before = len(recorder.bodies)
        refused = _run(scenario, served.url, "bob-token")
        assert refused.is_error is True
        assert "another caller" in refused.content[0].text
        assert "bob-token" not in refused.content[0].text
        assert len(recorder.bodies) == before
        done = _run(scenario, served.url, "alice-token")
        assert done.structured_content == {"closed": True}
        assert recorder.bodies[before:] == [
            {"number": 7, "reason": "spam", "signed": "by alice-token"}
        ]
