"""A basic-auth username: a credential like any other, or -- when not secret -- written out.

Against a loopback server that checks the ``Authorization`` header and answers
with the user it found: a username given as a credential is held to the same
minimum and found in the answer like every credential (the call fails); one
given as ``{value: TEXT}`` or ``${VAR}`` is no secret, so an answer naming it is
given unaltered, and the password stays the only credential.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from agentkit import (
    CredentialError,
    DefinitionError,
    SecretInOutputError,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    load_tools,
)
from tests.declarative.conftest import WriteFile
from tests.support import loopback
from tests.support.leaks import leaked_in_any_case

PASSWORD = "pw-Correct-Horse-9"

TOOL = """\
name: whoami
version: 1.0.0
credentials: {credentials}
output_schema:
  parameters:
    - {{name: user, type: string}}
backend:
  http:
    url: {origin}/whoami
    auth: {{basic: {{username: {username}, password: api-password}}}}
    output:
      user: "{{{{ response.json.user }}}}"
"""


def whoami(handler: loopback.Handler) -> None:
    """The user of a Basic header, when its password is PASSWORD; 401 otherwise."""
    scheme, _, encoded = (handler.headers.get("Authorization") or "").partition(" ")
    user, _, password = base64.b64decode(encoded).decode().partition(":")
    if scheme != "Basic" or password != PASSWORD:
        handler.reply(401, {"error": "who are you?"})
    else:
        handler.reply(200, {"user": user})


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with loopback.serve({"/whoami": whoami}) as served:
        yield served


def _tool(write: WriteFile, origin: str, username: str, credentials: str, **environ: str) -> Any:
    text = TOOL.format(origin=origin, username=username, credentials=credentials)
    registry = ToolRegistry()
    load_tools(write(text), registry=registry, environ=environ)
    return registry["whoami"]


@pytest.mark.parametrize(
    ("username", "environ", "sent"),
    [
        ("{value: bob}", {}, "bob"),
        ("{value: svc-reports}", {}, "svc-reports"),
        ("'${REPORTS_USER}'", {"REPORTS_USER": "bob"}, "bob"),
        ("'${REPORTS_USER:-ann}'", {}, "ann"),
        ("{value: '${REPORTS_USER}'}", {"REPORTS_USER": "bob"}, "bob"),
    ],
    ids=["literal-short", "literal", "variable", "variable-default", "value-of-a-variable"],
)
def test_a_username_that_is_not_secret_is_sent_and_may_be_answered(
    write: WriteFile, origin: str, username: str, environ: dict[str, str], sent: str
) -> None:
    tool = _tool(write, origin, username, "[api-password]", **environ)
    assert tool.credential_names == ("api-password",)
    executor = ToolExecutor(credentials={"api-password": PASSWORD})
    result = executor.execute(tool, {}, raise_on_failure=False)
    assert result.error is None
    assert result.output == {"user": sent}


def test_a_username_given_as_a_credential_is_found_in_the_answer_like_any_credential(
    write: WriteFile, origin: str
) -> None:
    tool = _tool(write, origin, "api-user", "[api-user, api-password]")
    user = "svc-reports-bot"
    executor = ToolExecutor(credentials={"api-user": user, "api-password": PASSWORD})
    result = executor.execute(tool, {}, raise_on_failure=False)
    assert isinstance(result.error, ToolExecutionError)
    cause = result.error.cause
    assert isinstance(cause, SecretInOutputError)
    assert (cause.credentials, cause.where) == (("api-user",), "output.user")
    assert leaked_in_any_case(repr(result) + str(result.error), [user, PASSWORD]) == []


@pytest.mark.parametrize("user", ["bob", "root", "admin12"])
def test_a_short_username_given_as_a_credential_is_refused_like_any_credential(
    write: WriteFile, origin: str, user: str
) -> None:
    tool = _tool(write, origin, "api-user", "[api-user, api-password]")
    executor = ToolExecutor(credentials={"api-user": user, "api-password": PASSWORD})
    result = executor.execute(tool, {}, raise_on_failure=False)
    assert isinstance(result.error, ToolExecutionError)
    cause = result.error.cause
    assert isinstance(cause, CredentialError)
    assert cause.credential == "api-user"
    assert "shorter than 8 characters" in str(cause)
    assert "basic-auth username" in str(cause)  # and how to write one that is not secret


def test_the_password_stays_a_secret_with_a_written_username(write: WriteFile, origin: str) -> None:
    # The server answers with the whole header: the pair made with the password.
    def echo_header(handler: loopback.Handler) -> None:
        handler.reply(200, {"user": handler.headers.get("Authorization")})

    with loopback.serve({"/whoami": echo_header}) as echoing:
        tool = _tool(write, echoing, "{value: bob}", "[api-password]")
        result = ToolExecutor(credentials={"api-password": PASSWORD}).execute(
            tool, {}, raise_on_failure=False
        )
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert result.error.cause.credentials == ("api-password",)


@pytest.mark.parametrize(
    ("username", "environ", "problem"),
    [
        (
            "bob",
            {},
            "credential 'bob' is used but not declared; add it under 'credentials:', "
            "or write a username that is not secret as {value: bob} (or ${VAR})",
        ),
        ("{value: 'a:b'}", {}, "a basic-auth username cannot hold ':'"),
        ("{value: ''}", {}, "expected a username, got an empty one"),
        ("{value: 7}", {}, "expected the username as text"),
        ("'${NOBODY}'", {}, "environment variable 'NOBODY' is not set and has no default"),
        ("'${USERS}'", {"USERS": "a\nb"}, "cannot hold a control character"),
        ("{value: bob, other: 1}", {}, "username"),
    ],
    ids=["undeclared", "colon", "empty", "number", "unset-variable", "line-break", "extra-key"],
)
def test_a_username_that_cannot_be_sent_is_a_located_problem(
    write: WriteFile, origin: str, username: str, environ: dict[str, str], problem: str
) -> None:
    with pytest.raises(DefinitionError) as info:
        _tool(write, origin, username, "[api-password]", **environ)
    assert problem in str(info.value)
    assert "auth.basic.username" in str(info.value)


# -- an OAuth2 client id is sent as a basic-auth username: the same two ways -------------------

OAUTH2_TOOL = """\
name: items
version: 1.0.0
credentials: [client-secret]
output_schema:
  parameters:
    - {{name: user, type: string}}
backend:
  http:
    url: {origin}/items
    auth:
      oauth2:
        token_url: {token_url}
        client_id: {client_id}
        client_secret: client-secret
    output:
      user: "{{{{ response.json.user }}}}"
"""


@pytest.mark.parametrize(
    ("client_id", "environ"),
    [
        ("{value: agent-7}", {}),
        ("'${CLIENT:-agent-7}'", {}),
        ("'${CLIENT}'", {"CLIENT": "agent-7"}),
    ],
    ids=["literal", "variable-default", "variable"],
)
def test_an_oauth2_client_id_that_is_not_secret_is_written(
    write: WriteFile, client_id: str, environ: dict[str, str]
) -> None:
    from tests.declarative.backends.http.token_endpoint import serving

    def items(handler: loopback.Handler) -> None:
        handler.reply(200, {"user": "agent-7"})  # the client id may be answered

    with serving() as endpoint, loopback.serve({"/items": items}) as origin:
        endpoint.issue("token-for-agent-7", expires_in=3600)
        text = OAUTH2_TOOL.format(origin=origin, token_url=endpoint.url, client_id=client_id)
        registry = ToolRegistry()
        load_tools(write(text), registry=registry, environ=environ)
        tool = registry["items"]
        result = ToolExecutor(credentials={"client-secret": PASSWORD}).execute(tool, {})
        [request] = endpoint.seen
    assert tool.credential_names == ("client-secret",)
    assert result.output == {"user": "agent-7"}
    user = base64.b64decode(request.headers["Authorization"].split()[1]).decode()
    assert user.split(":")[0] == "agent-7"
