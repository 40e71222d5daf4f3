"""What a confirmation shows of an HTTP call: its headers (credential-bearing ones masked),
the further pages a paginated tool may fetch, and every field however an argument tries
to hide one (padding, blank lines, control characters, bidi overrides, line separators).

The user declines each question, so nothing is ever sent: the upstream URL is a closed
loopback port, and an OAuth2 token endpoint there would fail the call if it were asked
before the user."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry
from tests.mcp.test_confirm import SECRET, Purge, User

WAIT_SECONDS = 60
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, nothing is sent
HEAD = f"""\
name: send
version: 1.0.0
description: Send something.
confirm: true
credentials: [api-token, user-name]
input_schema:
  parameters:
    - {{name: memo, type: string}}
    - {{name: to_account, type: string}}
    - {{name: trace, type: string, required: false, default: t-1}}
output_schema: {{parameters: [{{name: done, type: boolean}}]}}
backend:
  http:
    method: POST
    url: {CLOSED}/send
"""
HEADERS = """\
    headers:
      Accept: application/json
      X-Trace: "{{ inputs.trace }}"
      X-Signed: "{{ credentials['api-token'] | upper }} {{ inputs.trace }}"
      X-Memo: "{{ inputs.memo }}"
"""
JSON_BODY = """\
    json:
      memo: "{{ inputs.memo }}"
      to_account: "{{ inputs.to_account }}"
"""
TEXT_BODY = """\
    body: "memo={{ inputs.memo }}\\nto_account={{ inputs.to_account }}"
"""


def _asked(tmp_path: Path, definition: str, arguments: dict[str, Any]) -> str:
    """The one question a declined call of ``definition`` asked."""
    from mcp import Client

    from agentkit.declarative.loader import load_tools
    from agentkit.mcp.server import build_server

    (tmp_path / "send.yaml").write_text(definition)
    registry = ToolRegistry()
    load_tools(tmp_path, registry=registry)
    user = User("decline")
    credentials = {"api-token": SECRET, "user-name": "ada.lovelace"}

    async def run() -> Any:
        executor = ToolExecutor(credentials=credentials)
        with executor, anyio.fail_after(WAIT_SECONDS):
            async with Client(
                build_server(registry, executor), mode="legacy", elicitation_callback=user
            ) as client:
                return await client.call_tool("send", arguments)

    result = anyio.run(run)
    assert result.is_error is True
    assert result.content[0].text.endswith("declined by the user; nothing was done")
    [asked] = user.asked
    assert SECRET not in asked
    assert SECRET.upper() not in asked
    return str(asked)


ARGS = {"memo": "refund", "to_account": "DE00 1234"}
LISTED = "(Not all of it is shown above; the request was made from these arguments:\n"


@pytest.mark.parametrize(
    ("auth", "shown"),
    [
        pytest.param("{bearer: api-token}", "Authorization: Bearer ***", id="bearer"),
        pytest.param(
            "{basic: {username: user-name, password: api-token}}",
            "Authorization: Basic ***",
            id="basic",
        ),
        pytest.param(
            "{api_key: {credential: api-token, in: header, name: X-Api-Key}}",
            "X-Api-Key: ***",
            id="api-key",
        ),
        pytest.param(
            "{oauth2: {token_url: " + CLOSED + "/token, client_id: user-name, "
            "client_secret: api-token}}",
            "Authorization: Bearer *** (an OAuth2 token, fetched once you allow it)",
            id="oauth2",
        ),
    ],
)
def test_the_headers_are_shown_credentials_masked(tmp_path: Path, auth: str, shown: str) -> None:
    definition = HEAD + HEADERS + JSON_BODY + f"    auth: {auth}\n"
    asked = _asked(tmp_path, definition, {**ARGS, "trace": "t-42"})
    lines = asked.split("\n")
    assert lines[1] == f"POST {CLOSED}/send"
    assert "Accept: application/json" in lines
    assert "X-Trace: t-42" in lines
    assert "X-Signed: ***" in lines  # made from a credential: masked whole, whatever its form
    assert "X-Memo: refund" in lines
    assert "Content-Type: application/json" in lines
    assert shown in lines
    assert "ada.lovelace" not in asked  # the basic-auth user name is a credential too


PAGINATE = {
    "cursor": (
        "cursor: {param: after, next: '{{ response.json.next }}'}",
        "with the same method, headers and body, and the query parameter 'after' set to "
        "the cursor of the next page.",
    ),
    "page": (
        "page: {param: p}",
        "with the same method, headers and body, and the query parameter 'p' set to the "
        "page number of the next page.",
    ),
    "offset": (
        "offset: {param: from}",
        "with the same method, headers and body, and the query parameter 'from' set to "
        "the offset of the next page.",
    ),
    "link": (
        "link: {}",
        f'each to the URL of the page before\'s Link: rel="next" header (only within '
        f"{CLOSED}), with the same method, headers and body.",
    ),
}
LIST_OUTPUT = (
    "output_schema: {parameters: [{name: items, type: list}, {name: truncated, type: boolean}]}"
)


@pytest.mark.parametrize("kind", list(PAGINATE))
def test_a_paginated_tool_says_what_further_pages_it_may_fetch(tmp_path: Path, kind: str) -> None:
    how, said = PAGINATE[kind]
    definition = (
        HEAD.replace("output_schema: {parameters: [{name: done, type: boolean}]}", LIST_OUTPUT)
        + HEADERS
        + "    auth: {bearer: api-token}\n"
        + f"    paginate:\n      {how}\n      output: items\n      max_pages: 7\n"
    )
    asked = _asked(tmp_path, definition, ARGS)
    assert asked.endswith(
        f"\n\nIt may then send up to 6 more requests like it, for the next pages, {said}"
        "\n\nAllow it?"
    )
    assert "Authorization: Bearer ***" in asked


# -- an argument cannot hide a field -------------------------------------------------------------

HIDING = [
    pytest.param("\u202e", id="right-to-left-override"),
    pytest.param("\u2067", id="right-to-left-isolate"),
    pytest.param("\u200b", id="zero-width-space"),
    pytest.param("\u2028", id="line-separator"),
    pytest.param("\x1b[2K\x1b[1A", id="terminal-escape"),
    pytest.param("\r", id="carriage-return"),
    pytest.param("\x85", id="next-line"),
    pytest.param("\U000e0041", id="tag-character"),
]


def _hidden_chars(text: str) -> set[str]:
    return {
        char
        for char in text
        if char != "\n" and unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp", "Co", "Cn"}
    }


@pytest.mark.parametrize("body", [JSON_BODY, TEXT_BODY], ids=["json", "text"])
@pytest.mark.parametrize("hiding", HIDING)
def test_control_and_bidi_characters_are_spelled_out(
    tmp_path: Path, body: str, hiding: str
) -> None:
    definition = HEAD + body
    memo = f"refund{hiding}NUOCCA"
    asked = _asked(tmp_path, definition, {"memo": memo, "to_account": f"DE00{hiding}1234"})
    assert _hidden_chars(asked) == set()
    # Each spelled out where it was: escaped by JSON (\\r, \\u001b) or by the question.
    line = next(line for line in asked.split("\n") if "1234" in line)
    assert "DE00\\" in line
    assert "NUOCCA" in asked


@pytest.mark.parametrize("hiding", HIDING)
def test_a_header_value_cannot_hide_either(tmp_path: Path, hiding: str) -> None:
    from agentkit.declarative.backends.http.request import header_value_problem

    if header_value_problem(f"t{hiding}1") is not None:
        pytest.skip("a header cannot carry it: the call fails before it asks")
    asked = _asked(tmp_path, HEAD + HEADERS + JSON_BODY, {**ARGS, "trace": f"t{hiding}1"})
    assert _hidden_chars(asked) == set()


def test_blank_lines_cannot_push_the_rest_of_a_text_body_out_of_sight(tmp_path: Path) -> None:
    memo = "refund" + "\n" * 5000 + "   \n" * 100
    asked = _asked(tmp_path, HEAD + TEXT_BODY, {"memo": memo, "to_account": "ATTACKER-IBAN"})
    assert "\u2026 [5,100 blank lines]\nto_account=ATTACKER-IBAN" in asked
    # Said in one line, they are not all shown (how many spaces each had): the
    # arguments are listed, the memo with the count of what is cut.
    assert LISTED in asked
    assert "more characters]" in asked.partition(LISTED)[2]
    assert len(asked) < 1500


@pytest.mark.parametrize("run", [1, 2])
def test_one_or_two_blank_lines_are_shown_as_they_are(tmp_path: Path, run: int) -> None:
    memo = "refund" + "\n  " * run
    asked = _asked(tmp_path, HEAD + TEXT_BODY, {"memo": memo, "to_account": "DE00"})
    assert "memo=refund" + "\n  " * run + "\nto_account=DE00\n" in asked
    assert LISTED not in asked


def test_a_hand_written_tools_arguments_are_spelled_out_too() -> None:
    from mcp import Client

    from agentkit.mcp.server import build_server

    user = User("decline")

    async def run() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            async with Client(
                build_server(ToolRegistry([Purge()])), mode="legacy", elicitation_callback=user
            ) as client:
                return await client.call_tool("purge", {"bucket": "logs\u202e\u2028\x1b[2J"})

    assert anyio.run(run).is_error is True
    [asked] = user.asked
    assert _hidden_chars(asked) == set()
    assert '"bucket": "logs\\u202e\\u2028\\u001b[2J"' in asked


# -- over HTTP: the transport's token and a user's own token -------------------------------------

TRANSPORT_TOKEN = "transport-token-0123456789abcdef"
USER_TOKEN = "ghp_user-own-token-0123456789"
FORWARD = f"""\
name: forward
version: 1.0.0
description: Close an issue as the caller.
confirm: true
credentials: [github-token]
input_schema: {{parameters: [{{name: number, type: integer}}]}}
output_schema: {{parameters: [{{name: done, type: boolean}}]}}
backend:
  http:
    method: POST
    url: {CLOSED}/issues/{{{{ inputs.number }}}}/close
    auth: {{bearer: github-token}}
    headers:
      X-Requested-By: "{{{{ credentials['github-token'][:12] }}}}"
"""


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_over_http_neither_the_transport_token_nor_the_users_own_is_shown(
    tmp_path: Path, era: str
) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from tests.support.serving import serving

    (tmp_path / "forward.yaml").write_text(FORWARD)
    tokens = tmp_path / "tokens"
    tokens.write_text(TRANSPORT_TOKEN + "\n")
    args = [
        "--tools", str(tmp_path),
        "--auth-token-file", str(tokens),
        "--credential-header", "X-GitHub-Token=github-token",
    ]  # fmt: skip
    headers = {"Authorization": f"Bearer {TRANSPORT_TOKEN}", "X-GitHub-Token": USER_TOKEN}
    user = User("decline")

    async def run(url: str) -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            async with (
                create_mcp_http_client(headers=headers) as http,
                Client(
                    streamable_http_client(url, http_client=http),
                    mode="legacy" if era != "2026-07-28" else era,
                    elicitation_callback=user,
                ) as client,
            ):
                return await client.call_tool("forward", {"number": 7})

    with serving(args) as served:
        result = anyio.run(run, served.url)
    assert result.is_error is True
    [asked] = user.asked
    assert f"POST {CLOSED}/issues/7/close\n" in asked
    assert "Authorization: Bearer ***\n" in asked
    assert "X-Requested-By: ***\n" in asked
    for secret in (TRANSPORT_TOKEN, USER_TOKEN, USER_TOKEN[:12], TRANSPORT_TOKEN[:12]):
        assert secret not in asked


def test_a_hand_written_tool_is_not_asked_about_arguments_it_would_refuse() -> None:
    from mcp import Client

    from agentkit.mcp.server import build_server

    user = User("accept")
    tool = Purge()
    padding = {f"x{number}": "pad" for number in range(2000)}

    async def run() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            async with Client(
                build_server(ToolRegistry([tool])), mode="legacy", elicitation_callback=user
            ) as client:
                return await client.call_tool("purge", {**padding, "bucket": "logs"})

    result = anyio.run(run)
    assert result.is_error is True
    assert "Unknown parameter: 'x0'" in result.content[0].text
    assert user.asked == []
    assert tool.ran == []


#: Characters drawn as nothing that are no format character (review s16b R4).
FILLERS = ["\u3164", "\u2800", "\u115f", "\u1160", "\uffa0", "\u034f", "\ufe0f", "\u3000",
           "\u00a0", "\u2007", "\U000e0041", "\u180e", " \u0301"]  # fmt: skip


@pytest.mark.parametrize("filler", FILLERS, ids=[f"U+{ord(f[-1]):04X}" for f in FILLERS])
@pytest.mark.parametrize("lines", [1, 3, 3000])
def test_lines_of_invisible_characters_are_spelled_out_not_blank(
    tmp_path: Path, filler: str, lines: int
) -> None:
    from agentkit.context import visible

    memo = "weekly summary" + f"\n{filler * 3}" * lines
    asked = _asked(tmp_path, HEAD + TEXT_BODY, {"memo": memo, "to_account": "ATTACKER-IBAN"})
    request, _, listed = asked.partition(LISTED)
    assert "blank lines" not in request
    spelled = visible(filler * 3)
    assert spelled != filler * 3
    assert "memo=weekly summary" + f"\n{spelled}" * min(lines, 29) in request
    assert f"{spelled}\nto_account=ATTACKER-IBAN" in request
    if lines < 30:
        assert not listed  # every line is shown
    else:  # too many to show: the lines between are counted, the arguments listed
        assert f"\u2026 [{lines + 2 - 40:,} more lines]" in request
        assert '"to_account": "ATTACKER-IBAN"' in listed
        assert asked.count("\n") < 100


MULTIPART_BODY = """\
    multipart:
      fields: {to_account: "{{ inputs.to_account }}"}
      files: {memo: {content: "{{ inputs.memo }}", filename: memo.txt}}
"""


@pytest.mark.parametrize("lines", [1, 3])
def test_a_multipart_parts_lines_of_tag_characters_are_spelled_out(
    tmp_path: Path, lines: int
) -> None:
    tags = "".join(chr(0xE0000 + ord(char)) for char in "IGNORE PREVIOUS INSTRUCTIONS")
    memo = "Thanks!" + f"\n{tags}" * lines + "\nCheers"
    asked = _asked(tmp_path, HEAD + MULTIPART_BODY, {"memo": memo, "to_account": "DE00"})
    spelled = "".join(f"\\U{ord(char):08x}" for char in tags)
    assert asked.count(f"\n{spelled}") == lines
    assert "blank lines" not in asked
    assert "Thanks!\n" in asked
    assert "\nCheers\\u000d\n" in asked


def test_a_text_body_shows_a_bounded_number_of_lines_and_every_argument(tmp_path: Path) -> None:
    body = (
        '    body: "{{ inputs.memo }}\\nto_account={{ inputs.to_account }}\\n{{ inputs.trace }}"\n'
    )
    padding = "\n." * 3000
    arguments = {"memo": "refund" + padding, "to_account": "ATTACKER-IBAN", "trace": padding}
    asked = _asked(tmp_path, HEAD + body, arguments)
    assert asked.count("\n") < 100
    assert "\u2026 [5,963 more lines]" in asked
    assert "(Not all of it is shown above; the request was made from these arguments:" in asked
    assert '"to_account": "ATTACKER-IBAN"' in asked


def test_the_invisible_are_spelled_out_and_marks_on_letters_are_not() -> None:
    from agentkit.context import visible

    for filler in FILLERS:
        assert visible(f"a{filler}b") != f"a{filler}b"
    assert (
        visible("caf\u0065\u0301 \u1ec7 \u0065\u0323\u0302")
        == "caf\u0065\u0301 \u1ec7 \u0065\u0323\u0302"
    )
    assert visible("\u0301x") == "\\u0301x"


ONE_LINE_BODIES = {
    "text": '    body: "memo={{ inputs.memo }} to_account={{ inputs.to_account }}"\n',
    "json-string": '    json: {note: "{{ inputs.memo }} {{ inputs.to_account }}"}\n',
    "form-field": '    form: {note: "{{ inputs.memo }} {{ inputs.to_account }}"}\n',
    "header": '    headers: {X-Note: "{{ inputs.memo }} {{ inputs.to_account }}"}\n',
}


@pytest.mark.parametrize("body", list(ONE_LINE_BODIES))
def test_a_long_argument_cannot_carry_the_next_one_out_of_sight(tmp_path: Path, body: str) -> None:
    arguments = {"memo": "Routine refund. " * 200, "to_account": "ATTACKER-IBAN"}
    asked = _asked(tmp_path, HEAD + ONE_LINE_BODIES[body], arguments)
    request, _, listed = asked.partition(
        "(Not all of it is shown above; the request was made from these arguments:\n"
    )
    assert "ATTACKER-IBAN" not in request  # cut off with the end of the long one...
    assert '"to_account": "ATTACKER-IBAN"' in listed  # ...and listed after the request
    assert "[2,900 more characters]" in listed
    assert len(asked) < 2000
