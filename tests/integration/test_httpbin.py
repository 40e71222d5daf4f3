"""YAML HTTP tools against httpbin, a real third-party HTTP test server (from PyPI).

Auth, retries, the total deadline, redirects, secret redaction of an echoing
server, and binary replies -- each as agentkit behaves today.
"""

from __future__ import annotations

import json

import pytest

from agentkit import SecretInOutputError, Tool, ToolExecutionError, ToolExecutor
from tests.integration.conftest import Httpbin, MakeTool
from tests.support.leaks import SECRETS, chain_text, leaked

USER, PASSWORD = "ann.user", SECRETS[0]
TOKEN = SECRETS[3]

BASIC = """\
name: whoami
version: 1.0.0
credentials: [user, password]
output_schema:
  parameters:
    - {{name: authenticated, type: boolean}}
    - {{name: user, type: string}}
backend:
  http:
    url: {origin}/basic-auth/{user}/{password}
    auth: {{basic: {{username: user, password: password}}}}
"""

BEARER = """\
name: bearer
version: 1.0.0
credentials: [token]
output_schema:
  parameters:
    - {{name: authenticated, type: boolean}}
    - {{name: token, type: string}}
backend:
  http:
    url: {origin}/bearer
    auth: {{bearer: token}}
"""

STATUS = """\
name: status
version: 1.0.0
input_schema:
  parameters:
    - {{name: code, type: integer}}
output_schema:
  parameters:
    - {{name: status, type: integer}}
backend:
  http:
    method: {method}
    url: {origin}/status/{{{{ inputs.code }}}}
    retry: {{attempts: 3, backoff: 0, on_status: [503]}}
    output:
      status: "{{{{ response.status }}}}"
"""

FETCH = """\
name: fetch
version: 1.0.0
input_schema:
  parameters:
    - {{name: path, type: string}}
output_schema:
  parameters:
    - {{name: url, type: string}}
backend:
  http:
    url: {origin}/{{{{ inputs.path }}}}{rest}
    query: {query}
    timeout: {{total: 0.5}}
    follow_redirects: {follow}
    output:
      url: "{{{{ response.json.url }}}}"
"""


def test_basic_auth_is_accepted(make_tool: MakeTool, httpbin_url: str) -> None:
    executor = ToolExecutor(credentials={"user": USER, "password": "expected-pw"})
    tool = make_tool(BASIC.format(origin=httpbin_url, user=USER, password="expected-pw"))
    # The user name is a credential too: httpbin's answer holds it, so it is withheld.
    result = executor.execute(tool, {}, raise_on_failure=False)
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert result.error.cause.credentials == ("user",)


def test_basic_auth_with_a_written_username_answers_with_it(
    make_tool: MakeTool, httpbin_url: str
) -> None:
    text = BASIC.format(origin=httpbin_url, user="ann", password="expected-pw")
    text = text.replace("username: user", "username: {value: ann}")
    text = text.replace("credentials: [user, password]", "credentials: [password]")
    result = ToolExecutor(credentials={"password": "expected-pw"}).execute(make_tool(text), {})
    assert result.output == {"authenticated": True, "user": "ann"}


@pytest.mark.parametrize("password", SECRETS, ids=range(len(SECRETS)))
def test_a_wrong_basic_password_fails_with_401_and_never_shows_it(
    make_tool: MakeTool, httpbin_url: str, password: str
) -> None:
    executor = ToolExecutor(credentials={"user": USER, "password": password})
    tool = make_tool(BASIC.format(origin=httpbin_url, user=USER, password="expected"))
    result = executor.execute(tool, {}, raise_on_failure=False)
    assert result.error is not None
    assert f"GET {httpbin_url}/basic-auth/***/expected returned 401" in str(result.error)
    assert leaked(chain_text(result.error), [password]) == []


def test_a_bearer_token_echoed_back_withholds_the_answer(
    make_tool: MakeTool, httpbin_url: str
) -> None:
    executor = ToolExecutor(credentials={"token": TOKEN})
    tool = make_tool(BEARER.format(origin=httpbin_url))
    result = executor.execute(tool, {}, raise_on_failure=False)
    # httpbin answers {"authenticated": true, "token": <what it was sent>}.
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert result.error.cause.where == "output.token"


def test_without_the_bearer_token_httpbin_answers_401(
    make_tool: MakeTool, httpbin_url: str
) -> None:
    text = BEARER.format(origin=httpbin_url).replace("    auth: {bearer: token}\n", "")
    result = ToolExecutor(credentials={"token": TOKEN}).execute(
        make_tool(text), {}, raise_on_failure=False
    )
    assert result.error is not None
    assert f"GET {httpbin_url}/bearer returned 401 UNAUTHORIZED" in str(result.error)


@pytest.mark.parametrize(
    ("method", "sent"),
    [
        pytest.param("GET", 3, id="idempotent-GET-retried"),
        pytest.param("PUT", 3, id="idempotent-PUT-retried"),
        pytest.param("POST", 1, id="POST-not-retried"),
    ],
)
def test_a_503_is_retried_only_for_idempotent_methods(
    make_tool: MakeTool, httpbin: Httpbin, method: str, sent: int
) -> None:
    code = 503
    path = f"/status/{code}"
    before = httpbin.hits(path)
    tool = make_tool(STATUS.format(origin=httpbin.url, method=method))
    result = ToolExecutor().execute(tool, {"code": code}, raise_on_failure=False)
    assert result.error is not None
    assert f"{method} {httpbin.url}{path} returned 503" in str(result.error)
    assert httpbin.hits(path) - before == sent


def fetch_tool(
    make_tool: MakeTool, origin: str, *, rest: str = "", query: str = "{}", follow: str = "true"
) -> Tool:
    return make_tool(FETCH.format(origin=origin, rest=rest, query=query, follow=follow))


def test_a_slow_reply_fails_at_the_total_deadline(make_tool: MakeTool, httpbin_url: str) -> None:
    tool = fetch_tool(make_tool, httpbin_url, rest="/2")
    result = ToolExecutor().execute(tool, {"path": "delay"}, raise_on_failure=False)
    assert result.error is not None
    assert "timed out after 0.5 s (timeout.total)" in str(result.error)


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("redirect", id="relative-redirects"),
        pytest.param("absolute-redirect", id="absolute-same-origin-redirects"),
    ],
)
def test_same_origin_redirects_are_followed(
    make_tool: MakeTool, httpbin_url: str, path: str
) -> None:
    tool = fetch_tool(make_tool, httpbin_url, rest="/3")
    result = ToolExecutor().execute(tool, {"path": path})
    assert result.output == {"url": f"{httpbin_url}/get"}


def test_more_than_five_redirects_fail(make_tool: MakeTool, httpbin_url: str) -> None:
    tool = fetch_tool(make_tool, httpbin_url, rest="/6")
    result = ToolExecutor().execute(tool, {"path": "redirect"}, raise_on_failure=False)
    assert result.error is not None
    assert "redirected more than 5 times" in str(result.error)


def test_a_redirect_to_another_origin_is_refused(make_tool: MakeTool, httpbin_url: str) -> None:
    # 'localhost' is another origin than '127.0.0.1', though the same server.
    other = httpbin_url.replace("127.0.0.1", "localhost") + "/get"
    tool = fetch_tool(make_tool, httpbin_url, query=json.dumps({"url": other}))
    result = ToolExecutor().execute(tool, {"path": "redirect-to"}, raise_on_failure=False)
    assert result.error is not None
    assert "redirected to another origin (http://localhost:" in str(result.error)


def test_with_follow_redirects_off_a_redirect_is_a_failed_status(
    make_tool: MakeTool, httpbin_url: str
) -> None:
    tool = fetch_tool(make_tool, httpbin_url, rest="/1", follow="false")
    result = ToolExecutor().execute(tool, {"path": "redirect"}, raise_on_failure=False)
    assert result.error is not None
    assert f"GET {httpbin_url}/redirect/1 returned 302 FOUND" in str(result.error)


ANYTHING = """\
name: anything
version: 1.0.0
credentials: [token]
output_schema:
  parameters:
    - {{name: echo, type: string}}
    - {{name: headers, type: dictionary}}
backend:
  http:
    method: POST
    url: {origin}/anything
    auth: {{api_key: {{credential: token, in: header, name: X-Api-Key}}}}
    query: {{sig: "{{{{ credentials.token }}}}"}}
    json: {{note: "sent {{{{ credentials.token }}}}"}}
    output:
      echo: "{{{{ response.text }}}}"
      headers: "{{{{ response.json.headers }}}}"
"""


@pytest.mark.parametrize("token", [SECRETS[0], SECRETS[3]], ids=["symbols", "alphanumeric"])
def test_an_echo_of_the_request_shows_no_secret(
    make_tool: MakeTool, httpbin_url: str, token: str
) -> None:
    # httpbin's /anything echoes the query, headers and body back: the token in all three.
    result = ToolExecutor(credentials={"token": token}).execute(
        make_tool(ANYTHING.format(origin=httpbin_url)), {}, raise_on_failure=False
    )
    assert result.output is None
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert leaked(json.dumps(result.to_dict(), ensure_ascii=False), [token]) == []


BINARY = """\
name: image
version: 1.0.0
output_schema:
  parameters:
    - {{name: content_type, type: string}}
    - {{name: size, type: integer}}
    - {{name: signature, type: string}}
backend:
  http:
    url: {origin}/image/png
{output}"""


def test_a_binary_reply_without_output_mapping_fails_clearly(
    make_tool: MakeTool, httpbin_url: str
) -> None:
    tool = make_tool(BINARY.format(origin=httpbin_url, output=""))
    result = ToolExecutor().execute(tool, {}, raise_on_failure=False)
    assert result.error is not None
    assert "the response (status 200) is not a JSON object" in str(result.error)
    assert "add an 'output' mapping to extract the output fields" in str(result.error)


def test_a_binary_reply_is_seen_as_headers_and_lossy_text(
    make_tool: MakeTool, httpbin_url: str
) -> None:
    # Today templates see no bytes: `response.text` is the body decoded as UTF-8
    # with U+FFFD for each invalid byte, so only headers describe binary data faithfully.
    output = """\
    output:
      content_type: "{{ response.headers['Content-Type'] }}"
      size: "{{ response.headers['Content-Length'] | int }}"
      signature: "{{ response.text[1:4] }}"
"""
    result = ToolExecutor().execute(make_tool(BINARY.format(origin=httpbin_url, output=output)), {})
    assert result.output is not None
    assert result.output["content_type"] == "image/png"
    assert result.output["size"] > 1000
    assert result.output["signature"] == "PNG"  # after the replaced \x89
