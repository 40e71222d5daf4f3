"""A token endpoint's reply in any shape: the token never shows, whatever fails to parse.

A real token endpoint and API on 127.0.0.1, and a declarative source with
``auth: {oauth2: ...}``: each reply below either gives a usable token (read
leniently where RFC 6749's JSON is bent in ways real endpoints bend it) or a
clear error. Either way the token is in none of the call's result, its error's
whole exception chain, the events a listener saw, or the MCP ``isError`` text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import ToolEvent, ToolExecutor, ToolRegistry, load_tools
from agentkit.jsonvalues import MAX_DEPTH
from tests.declarative.backends.http.token_endpoint import Reply, TokenEndpoint, serving
from tests.support.leaks import SECRETS, chain_text, leaked, logged_exception

CLIENT_ID = "agent-7-client"
SECRET = SECRETS[1]
#: The token the endpoint hands out, in every reply below.
TOKEN = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
#: A token with characters JSON and forms spell differently (ASCII: it is sent in a header).
ODD_TOKEN = 'tok"en\\x/+=zz9Q'
FORM = "application/x-www-form-urlencoded; charset=utf-8"

SOURCE = """\
source: api
base_url: {api}
credentials: [client-id, client-secret]
auth:
  oauth2:
    token_url: {token_url}
    client_id: client-id
    client_secret: client-secret
timeout: {{total: 10}}
retry: {{attempts: 1}}
"""
TOOL = """\
name: get_item
version: 1.0.0
output_schema:
  parameters:
    - {name: seen, type: boolean}
backend:
  http: {source: api, path: /items/1}
"""


def _json(token: str, **fields: Any) -> bytes:
    return json.dumps({"access_token": token, "token_type": "Bearer", **fields}).encode()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


#: Replies that give a token: (reply, token).
ACCEPTED = [
    pytest.param(
        Reply(body=f"access_token={TOKEN}&scope=&token_type=bearer".encode(), content_type=FORM),
        TOKEN,
        id="form-encoded-like-github",
    ),
    pytest.param(
        Reply(body=b"access_token=tok%22en%5Cx%2F%2B%3Dzz9Q&token_type=bearer&expires_in=60"),
        ODD_TOKEN,
        id="form-encoded-escaped-under-a-json-content-type",
    ),
    pytest.param(Reply(body=b"\xef\xbb\xbf" + _json(TOKEN)), TOKEN, id="utf8-bom"),
    pytest.param(Reply(body=_json(ODD_TOKEN)), ODD_TOKEN, id="escaped-json"),
    pytest.param(
        Reply(body=_json(TOKEN)[:-1] + b', "expires_in": ' + b"9" * 5000 + b"}"),
        TOKEN,
        id="5000-digit-expires_in",
    ),
    pytest.param(
        Reply(body=_json(TOKEN, expires_in="9" * 5000)), TOKEN, id="5000-digit-string-expires_in"
    ),
]

#: Replies that are refused: (reply, what the error says).
REFUSED = [
    pytest.param(
        Reply(body=_json(TOKEN) + b" trailing words"), r"not JSON: Extra data", id="trailing-text"
    ),
    pytest.param(
        Reply(body=_json(TOKEN) + b'{"access_token": "' + TOKEN.encode() + b'"}'),
        r"not JSON: Extra data",
        id="two-json-objects",
    ),
    pytest.param(
        Reply(body=_json(TOKEN) + b"&access_token=" + TOKEN.encode()),
        r"not JSON: Extra data",
        id="json-then-form",
    ),
    pytest.param(
        Reply(body=_json(TOKEN)[:-1] + f', "x": {_nested(MAX_DEPTH + 1)}}}'.encode()),
        rf"nested more than {MAX_DEPTH} levels deep",
        id="nested-past-max-depth",
    ),
    pytest.param(
        Reply(body=_json(TOKEN)[:-1] + f', "x": {_nested(20_000)}}}'.encode()),
        rf"nested more than {MAX_DEPTH} levels deep",
        id="nested-past-pythons-recursion-limit",
    ),
    pytest.param(
        Reply(body=_json(TOKEN)[:-1] + b', "expires_in": NaN}'),
        r"NaN is not a number JSON allows",
        id="nan-expires_in",
    ),
    pytest.param(Reply(body=_json(TOKEN)[:-8]), r"not JSON: ", id="cut-short"),
    pytest.param(
        Reply(body=_json(ODD_TOKEN)[:-20]), r"not JSON: ", id="cut-inside-an-escaped-token"
    ),
    pytest.param(
        Reply(body=TOKEN.encode(), content_type="text/plain"),
        r"Content-Type 'text/plain', 40 bytes: not JSON",
        id="bare-token",
    ),
    pytest.param(
        Reply(body=f"access_token={TOKEN}&token_type=mac".encode(), content_type=FORM),
        r"'token_type' is 'mac'",
        id="form-encoded-mac-token",
    ),
    pytest.param(
        Reply(body=f"access_token={TOKEN}&access_token=other".encode(), content_type=FORM),
        r"not JSON",
        id="form-encoded-token-twice",
    ),
    pytest.param(
        Reply(body=f'{{"accessToken": "{TOKEN}"}}'.encode()),
        r"no 'access_token' string \(its fields: accessToken\)",
        id="token-under-another-name",
    ),
    pytest.param(
        Reply(500, f"upstream said access_token={TOKEN}; retry".encode(), "text/plain"),
        r"HTTP 500; no OAuth2 error in the reply \(Content-Type 'text/plain', [0-9]+ bytes; not "
        r"shown, as it may hold a token\)",
        id="refusal-with-a-form-token",
    ),
    pytest.param(
        Reply(400, f'{{"error": "invalid_scope", "id_token": "{TOKEN}"'.encode()),
        r"HTTP 400; no OAuth2 error in the reply \(Content-Type 'application/json', 81 bytes",
        id="cut-refusal-with-a-token",
    ),
]


@pytest.fixture
def endpoint() -> Iterator[TokenEndpoint]:
    with serving() as state:
        yield state


@pytest.fixture
def folder(tmp_path: Path, endpoint: TokenEndpoint, oauth2_api: str) -> Path:
    (tmp_path / "source.yaml").write_text(SOURCE.format(api=oauth2_api, token_url=endpoint.url))
    (tmp_path / "tools.yaml").write_text(TOOL)
    return tmp_path


def call_get_item(folder: Path) -> tuple[Any, list[ToolEvent]]:
    """Call the tool of ``folder`` (``SOURCE`` and ``TOOL``) with the client's credentials."""
    registry = ToolRegistry()
    load_tools(folder, registry=registry)
    events: list[ToolEvent] = []
    executor = ToolExecutor(
        credentials={"client-id": CLIENT_ID, "client-secret": SECRET}, listeners=[events.append]
    )
    result = executor.execute(registry["get_item"], {}, raise_on_failure=False)
    return result, events


def everything_shown(result: Any, events: list[ToolEvent]) -> str:
    """Every way a call's result can be seen, as one text."""
    texts = [repr(result), json.dumps(result.to_dict(), ensure_ascii=False)]
    texts += [repr(event) for event in events]
    if result.error is not None:
        texts += [chain_text(result.error), logged_exception(result.error)]
    return "\n".join(texts)


@pytest.mark.parametrize(("reply", "token"), ACCEPTED)
def test_a_lenient_reply_gives_a_token_that_never_shows(
    folder: Path, endpoint: TokenEndpoint, reply: Reply, token: str
) -> None:
    endpoint.script = lambda n: reply
    result, events = call_get_item(folder)
    assert result.succeeded, result.error
    assert result.output == {"seen": True}
    assert endpoint.seen[0].headers["Accept"] == "application/json"
    assert leaked(everything_shown(result, events), [token, SECRET]) == []


@pytest.mark.parametrize(("reply", "message"), REFUSED)
def test_a_malformed_reply_is_a_clear_error_that_never_shows_the_token(
    folder: Path, endpoint: TokenEndpoint, reply: Reply, message: str
) -> None:
    endpoint.script = lambda n: reply
    result, events = call_get_item(folder)
    assert not result.succeeded
    assert result.error is not None
    text = str(result.error)
    assert f"OAuth2 token request to {endpoint.url}: HTTP " in text
    assert re.search(message, text), text
    assert not isinstance(result.error, RecursionError)
    assert leaked(everything_shown(result, events), [TOKEN, ODD_TOKEN, SECRET]) == []


async def _mcp_call(folder: Path) -> Any:
    from tests.support.serving import stdio_session

    env = {"CLIENT_ID": CLIENT_ID, "CLIENT_SECRET": SECRET}
    with anyio.fail_after(60):
        async with stdio_session(["--tools", str(folder)], env) as client:
            return await client.call_tool("get_item", {})


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(Reply(body=_json(TOKEN) + b" trailing"), id="trailing-text"),
        pytest.param(
            Reply(body=_json(TOKEN)[:-1] + b', "expires_in": NaN}', content_type=FORM),
            id="nan-expires_in",
        ),
    ],
)
def test_the_mcp_error_result_never_shows_the_token(
    folder: Path, endpoint: TokenEndpoint, reply: Reply
) -> None:
    pytest.importorskip("mcp")
    endpoint.script = lambda n: reply
    answer = anyio.run(_mcp_call, folder)
    assert answer.is_error is True
    text = json.dumps(answer.model_dump(mode="json"), ensure_ascii=False)
    assert "OAuth2 token request to" in text
    assert leaked(text, [TOKEN, SECRET]) == []
