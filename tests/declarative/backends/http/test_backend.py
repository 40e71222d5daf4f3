"""The HTTP backend against `responses`: requests built safely, replies mapped, secrets kept out."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest
import responses
from responses import matchers

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.declarative.backends.http.request import header_value_problem
from tests.declarative.conftest import HTTP_TOOL, WriteFile, refused_before_sending

SECRET = "k3y/with+odd=chars"


def tool_from(write: WriteFile, text: str = HTTP_TOOL) -> Any:
    registry = ToolRegistry()
    load_tools(write(text), registry=registry)
    (tool,) = list(registry)
    return tool


@pytest.fixture
def executor() -> ToolExecutor:
    return ToolExecutor(
        credentials={"api-key": SECRET, "user": "ann.user", "password": "pw-" + SECRET}
    )


@responses.activate
def test_get_with_path_query_and_api_key(write: WriteFile, executor: ToolExecutor) -> None:
    responses.get(
        "https://api.example.com/items/42",
        match=[matchers.query_param_matcher({"verbose": "true", "key": SECRET})],
        json={"title": "The answer"},
    )
    result = executor.execute(tool_from(write), {"id": "42", "verbose": True})
    assert result.output == {"title": "The answer"}


@responses.activate
def test_an_absent_optional_leaves_the_query_entry_out(
    write: WriteFile, executor: ToolExecutor
) -> None:
    responses.get(
        "https://api.example.com/items/7",
        match=[matchers.query_param_matcher({"key": SECRET})],
        json={"title": "t"},
    )
    assert executor.execute(tool_from(write), {"id": "7"}).succeeded


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        pytest.param("https://api.example.com/", "https://api.example.com/", id="root"),
        pytest.param(
            "https://api.example.com/items/", "https://api.example.com/items/", id="slash"
        ),
    ],
)
@responses.activate
def test_a_path_that_ends_in_a_slash_keeps_it(
    write: WriteFile, executor: ToolExecutor, url: str, sent: str
) -> None:
    responses.get(sent, json={"title": "root"})
    text = HTTP_TOOL.replace("https://api.example.com/items/{{ inputs.id }}", url)
    assert executor.execute(tool_from(write, text), {"id": "1"}).output == {"title": "root"}
    called = responses.calls[0].request.url
    assert called is not None
    assert called.split("?")[0] == sent


HEADER_TOOL = HTTP_TOOL.replace(
    '    query: {verbose: "{{ inputs.verbose }}"}\n',
    '    headers: {X-Trace: "{{ inputs.verbose }}-{{ inputs.id }}"}\n',
)


@pytest.mark.parametrize(
    ("argument", "problem"),
    [
        pytest.param("Evil ", "would start or end with whitespace", id="trailing-space"),
        pytest.param("Evil\t", "would start or end with whitespace", id="trailing-tab"),
        pytest.param("a\x0bEvil", "would contain the control character U+000B", id="vertical-tab"),
        pytest.param("a\x0cEvil", "would contain the control character U+000C", id="form-feed"),
        pytest.param("a\x1b[2JEvil", "would contain the control character U+001B", id="escape"),
        pytest.param("a\x7fEvil", "would contain the control character U+007F", id="delete"),
        pytest.param("a\x85Evil", "would contain the control character U+0085", id="c1-next-line"),
        pytest.param("a\x9fEvil", "would contain the control character U+009F", id="c1-last"),
    ],
)
@responses.activate
def test_a_header_value_http_cannot_carry_fails_before_sending_naming_the_header(
    write: WriteFile, executor: ToolExecutor, argument: str, problem: str
) -> None:
    tool = tool_from(write, HEADER_TOOL)
    message = refused_before_sending(
        tool, {"id": argument}, f"header 'X-Trace' {problem}", executor
    )
    assert "refusing to send (the value is not shown)" in message
    assert "Evil" not in message


@pytest.mark.parametrize("value", ["a\tb", "café", "a b", "x\xa0y\xa0"], ids=str)
def test_a_header_value_with_inner_tabs_spaces_and_latin_1_is_sent(value: str) -> None:
    assert header_value_problem(value) is None


@pytest.mark.parametrize("value", [" lead", "\tlead", "\xa0lead"], ids=ascii)
def test_a_header_value_with_leading_whitespace_is_refused(value: str) -> None:
    assert header_value_problem(value) == (
        "would start or end with whitespace, which HTTP drops or refuses"
    )


@pytest.mark.parametrize("argument", ["a\r\nX-Evil: 1", "a\nb", "a\0b"], ids=["crlf", "lf", "nul"])
@responses.activate
def test_header_injection_fails_before_sending_and_is_not_echoed(
    write: WriteFile, executor: ToolExecutor, argument: str
) -> None:
    expected = "header 'X-Trace' would contain a line break or NUL"
    message = refused_before_sending(
        tool_from(write, HEADER_TOOL), {"id": argument}, expected, executor
    )
    assert "Evil" not in message


@responses.activate
def test_template_looking_inputs_are_sent_as_data(write: WriteFile, executor: ToolExecutor) -> None:
    responses.get("https://api.example.com/items/x", json={"title": "ok"})
    executor.execute(tool_from(write, HEADER_TOOL), {"id": "x", "verbose": False})
    assert responses.calls[0].request.headers["X-Trace"] == "False-x"
    responses.get("https://api.example.com/items/y", json={"title": "ok"})
    text_tool = HEADER_TOOL.replace('"{{ inputs.verbose }}-{{ inputs.id }}"', '"{{ inputs.id }}"')
    executor.execute(
        tool_from(write, text_tool.replace("name: lookup", "name: other")), {"id": "y"}
    )


@responses.activate
def test_template_source_in_an_argument_is_never_evaluated(
    write: WriteFile, executor: ToolExecutor
) -> None:
    text = HEADER_TOOL.replace('"{{ inputs.verbose }}-{{ inputs.id }}"', '"id={{ inputs.id }}"')
    responses.get("https://api.example.com/items/v", json={"title": "ok"})
    tool = tool_from(write, text)
    executor.execute(tool, {"id": "v"})
    # The path takes the argument through the template engine only as a value:
    responses.get("https://api.example.com/items/%7B%7B%20config%20%7D%7D", json={"title": "ok"})
    result = executor.execute(tool, {"id": "{{ config }}"})
    assert result.succeeded
    assert responses.calls[1].request.headers["X-Trace"] == "id={{ config }}"


POST_TOOL = """\
name: create
version: 1.0.0
credentials: [user, password]
input_schema:
  parameters:
    - {name: title, type: string}
    - {name: labels, type: list, items: string, required: false}
    - {name: count, type: integer, required: false, default: 1}
output_schema:
  parameters:
    - {name: id, type: integer}
backend:
  http:
    method: POST
    url: https://api.example.com/issues
    auth: {basic: {username: user, password: password}}
    json:
      title: "{{ inputs.title }}"
      labels: "{{ inputs.labels }}"
      meta: {count: "{{ inputs.count }}", fixed: [1, "two"], note: "made by {{ inputs.title }}"}
    accept_status: [409]
"""


@responses.activate
def test_post_json_body_native_values_and_basic_auth(
    write: WriteFile, executor: ToolExecutor
) -> None:
    responses.post("https://api.example.com/issues", json={"id": 5, "extra": "dropped"})
    result = executor.execute(tool_from(write, POST_TOOL), {"title": "Bug"})
    assert result.output == {"id": 5}
    request = responses.calls[0].request
    assert json.loads(request.body or b"") == {
        "title": "Bug",
        "meta": {"count": 1, "fixed": [1, "two"], "note": "made by Bug"},
    }
    expected = base64.b64encode(f"ann.user:pw-{SECRET}".encode()).decode()
    assert request.headers["Authorization"] == f"Basic {expected}"


@responses.activate
def test_accept_status_hands_the_reply_to_the_mapping(
    write: WriteFile, executor: ToolExecutor
) -> None:
    responses.post("https://api.example.com/issues", status=409, json={"id": 9})
    assert executor.execute(tool_from(write, POST_TOOL), {"title": "Dup"}).output == {"id": 9}


@responses.activate
def test_a_failed_status_names_status_method_url_and_excerpt_without_secrets(
    write: WriteFile, executor: ToolExecutor
) -> None:
    responses.get(
        "https://api.example.com/items/1",
        status=404,
        body=f"no item here; your key {SECRET} is fine",
    )
    result = executor.execute(tool_from(write), {"id": "1"}, raise_on_failure=False)
    message = str(result.error)
    assert "GET https://api.example.com/items/1?key=***" in message
    assert "returned 404 Not Found: no item here; your key *** is fine" in message
    assert SECRET not in message
    assert SECRET not in json.dumps(result.to_dict())


@responses.activate
def test_a_non_json_reply_to_an_output_template(write: WriteFile, executor: ToolExecutor) -> None:
    responses.get("https://api.example.com/items/1", body="<html>")
    result = executor.execute(tool_from(write), {"id": "1"}, raise_on_failure=False)
    assert "the response body is not JSON" in str(result.error)


@responses.activate
def test_without_output_a_json_object_is_projected(
    write: WriteFile, executor: ToolExecutor
) -> None:
    text = HTTP_TOOL.split("    output:")[0]
    responses.get("https://api.example.com/items/1", json={"title": "t", "secret_field": 1})
    assert executor.execute(tool_from(write, text), {"id": "1"}).output == {"title": "t"}
    responses.get("https://api.example.com/items/2", json=[1, 2])
    result = executor.execute(
        tool_from(write, text.replace("name: lookup", "name: l2")),
        {"id": "2"},
        raise_on_failure=False,
    )
    assert "is not a JSON object; add an 'output' mapping" in str(result.error)


@responses.activate
def test_response_headers_are_case_insensitive(write: WriteFile, executor: ToolExecutor) -> None:
    text = HTTP_TOOL.replace(
        'title: "{{ response.json.title }}"', "title: \"{{ response.headers['x-title'] }}\""
    )
    responses.get("https://api.example.com/items/1", headers={"X-Title": "from header"}, json={})
    assert executor.execute(tool_from(write, text), {"id": "1"}).output == {"title": "from header"}


@responses.activate
def test_a_redirect_to_another_origin_fails(write: WriteFile, executor: ToolExecutor) -> None:
    responses.get(
        "https://api.example.com/items/1",
        status=302,
        headers={"Location": "https://evil.example.net/steal"},
    )
    result = executor.execute(tool_from(write), {"id": "1"}, raise_on_failure=False)
    assert "redirected to another origin (https://evil.example.net)" in str(result.error)
    assert len(responses.calls) == 1


@responses.activate
def test_urllib3_debug_lines_carry_no_secret(
    write: WriteFile, executor: ToolExecutor, caplog: pytest.LogCaptureFixture
) -> None:
    responses.get("https://api.example.com/items/1", json={"title": "t"})
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("urllib3.connectionpool").debug(
            '%s://%s:%s "GET /items/1?key=%s HTTP/1.1" 200',
            "https",
            "api.example.com",
            443,
            "placeholder",
        )
        tool = tool_from(write)
        from agentkit.declarative.backends.http import transport as http_transport  # noqa: F401 -- installs the log filter
        from agentkit.redaction import Redactor, redacting

        with redacting(Redactor([SECRET])):
            logging.getLogger("urllib3.connectionpool").debug("GET /items/1?key=%s", SECRET)
        executor.execute(tool, {"id": "1"})
    assert SECRET not in caplog.text
    assert "GET /items/1?key=***" in caplog.text
