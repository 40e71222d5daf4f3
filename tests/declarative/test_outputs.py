"""Outputs of HTTP tools: projection at every depth, per-status responses, missing-key errors."""

from __future__ import annotations

from typing import Any

import pytest
import responses

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools
from tests.declarative.conftest import WriteFile

URL = "https://api.example.com/issues"

ISSUES = """\
name: issues
version: 1.0.0
output_schema:
  parameters:
    - {name: total, type: integer, required: false}
    - name: issues
      type: list
      required: false
      items:
        type: dictionary
        parameters:
          - {name: number, type: integer}
          - {name: title, type: string}
          - name: user
            type: dictionary
            parameters:
              - {name: login, type: string}
          - name: labels
            type: list
            required: false
            items:
              type: dictionary
              parameters: [{name: name, type: string}]
          - {name: extra, type: dictionary, required: false}
    - name: grid
      type: list
      required: false
      items: {type: list, items: {type: dictionary, parameters: [{name: v, type: integer}]}}
    - {name: found, type: boolean, required: false}
    - {name: message, type: string, required: false}
backend:
  http:
    url: https://api.example.com/issues
OUTPUT"""


def tool_from(write: WriteFile, output: str = "") -> Any:
    registry = ToolRegistry()
    load_tools(write(ISSUES.replace("OUTPUT", output)), registry=registry)
    (tool,) = list(registry)
    return tool


def run(tool: Any, **reply: Any) -> Any:
    with responses.RequestsMock() as mock:
        mock.get(URL, **reply)
        return ToolExecutor().execute(tool, {}, raise_on_failure=False)


ISSUE = {
    "number": 7,
    "title": "Crash",
    "node_id": "I_kw",
    "user": {"login": "ann", "id": 1, "site_admin": False},
    "labels": [{"name": "bug", "color": "red"}, {"name": "p1", "id": 9}],
    "extra": {"anything": {"goes": [1, 2]}},
}
PROJECTED = {
    "number": 7,
    "title": "Crash",
    "user": {"login": "ann"},
    "labels": [{"name": "bug"}, {"name": "p1"}],
    "extra": {"anything": {"goes": [1, 2]}},
}


# -- projection ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        pytest.param("", id="without-output"),
        pytest.param(
            '    output: {issues: "{{ response.json.issues }}", total: "{{ response.json.total }}"}\n',
            id="template",
        ),
    ],
)
def test_lists_of_objects_are_projected_at_every_depth(write: WriteFile, output: str) -> None:
    result = run(tool_from(write, output), json={"total": 1, "issues": [ISSUE], "page": 1})
    assert result.error is None
    assert result.output == {"total": 1, "issues": [PROJECTED]}


def test_a_free_form_dictionary_inside_a_projected_one_is_kept_whole(write: WriteFile) -> None:
    result = run(tool_from(write), json={"issues": [ISSUE]})
    assert result.output["issues"][0]["extra"] == ISSUE["extra"]


def test_lists_of_lists_of_objects_are_projected(write: WriteFile) -> None:
    result = run(tool_from(write), json={"grid": [[{"v": 1, "w": 2}], [], [{"v": 3, "x": {}}]]})
    assert result.output == {"grid": [[{"v": 1}], [], [{"v": 3}]]}


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        pytest.param(
            {"issues": [{**ISSUE, "user": "ann"}]},
            "Parameter 'issues[0].user': expected type 'dictionary', got 'str'",
            id="wrong-type",
        ),
        pytest.param(
            {"issues": [{"number": 1, "title": "t"}]},
            "Missing required parameter: 'issues[0].user'",
            id="missing-key",
        ),
        pytest.param(
            {"issues": [{**ISSUE, "labels": [{"name": 3}]}]},
            "Parameter 'issues[0].labels[0].name': expected type 'string', got 'int'",
            id="deep-wrong-type",
        ),
        pytest.param(
            {"issues": {"number": 1}},
            "Parameter 'issues': expected type 'list', got 'dict'",
            id="not-a-list",
        ),
    ],
)
def test_declared_keys_are_still_validated(
    write: WriteFile, reply: dict[str, Any], problem: str
) -> None:
    result = run(tool_from(write), json=reply)
    assert result.error is not None
    assert problem in str(result.error)


def test_projection_does_not_change_the_reply_the_templates_see(write: WriteFile) -> None:
    output = (
        "    output:\n"
        '      issues: "{{ response.json.issues }}"\n'
        '      message: "admin: {{ response.json.issues[0].user.site_admin }}"\n'
    )
    result = run(tool_from(write, output), json={"issues": [ISSUE]})
    assert result.output == {"issues": [PROJECTED], "message": "admin: False"}


# -- per-status responses ----------------------------------------------------------------------------

RESPONSES = """\
    output: {issues: "{{ response.json.issues }}"}
    responses:
      404: {found: false}
      4XX: {message: "{{ response.json.message }}", found: false}
      204: {found: true, total: 0}
      5xx: {message: "server said {{ response.status }}"}
"""


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        pytest.param(404, {"message": "no"}, {"found": False}, id="exact"),
        pytest.param(
            422, {"message": "bad"}, {"message": "bad", "found": False}, id="class-template"
        ),
        pytest.param(204, None, {"found": True, "total": 0}, id="exact-2xx"),
        pytest.param(500, {}, {"message": "server said 500"}, id="lower-case-class"),
        pytest.param(200, {"issues": []}, {"issues": []}, id="unlisted-2xx-uses-output"),
    ],
)
def test_a_status_maps_to_its_own_output(
    write: WriteFile, status: int, body: Any, expected: dict[str, Any]
) -> None:
    reply: dict[str, Any] = {"status": status}
    if body is not None:
        reply["json"] = body
    result = run(tool_from(write, RESPONSES), **reply)
    assert result.error is None
    assert result.output == expected


def test_an_unlisted_status_still_fails(write: WriteFile) -> None:
    output = "    responses: {404: {found: false}}\n"
    result = run(tool_from(write, output), status=403, json={"message": "forbidden"})
    assert result.error is not None
    assert "returned 403" in str(result.error)


def test_retry_rules_win_for_a_listed_retryable_status(write: WriteFile) -> None:
    output = (
        "    retry: {attempts: 3, backoff: 0, on_status: [503]}\n"
        '    responses: {503: {message: "busy"}}\n'
    )
    tool = tool_from(write, output)
    with responses.RequestsMock() as mock:
        mock.get(URL, status=503)
        mock.get(URL, status=503)
        mock.get(URL, json={"total": 3})
        result = ToolExecutor().execute(tool, {})
        assert len(mock.calls) == 3
    assert result.output == {"total": 3}


def test_a_retryable_status_left_after_the_last_attempt_is_mapped(write: WriteFile) -> None:
    output = (
        "    retry: {attempts: 2, backoff: 0, on_status: [503]}\n"
        '    responses: {503: {message: "busy"}}\n'
    )
    tool = tool_from(write, output)
    with responses.RequestsMock() as mock:
        mock.get(URL, status=503)
        result = ToolExecutor().execute(tool, {})
        assert len(mock.calls) == 2
    assert result.output == {"message": "busy"}


def test_a_listed_status_output_is_projected_and_validated(write: WriteFile) -> None:
    output = '    responses: {404: {issues: "{{ response.json.issues }}"}}\n'
    result = run(tool_from(write, output), status=404, json={"issues": [ISSUE]})
    assert result.output == {"issues": [PROJECTED]}


@pytest.mark.parametrize(
    ("responses_yaml", "problem"),
    [
        pytest.param("{40: {found: false}}", "40 is not a status", id="short-code"),
        pytest.param("{600: {found: false}}", "600 is not a status", id="too-high"),
        pytest.param("{4xy: {found: false}}", "'4xy' is not a status", id="bad-class"),
        pytest.param("{6XX: {found: false}}", "'6XX' is not a status", id="class-out-of-range"),
        pytest.param("{true: {found: false}}", "True is not a status", id="boolean"),
        pytest.param(
            "{404: {found: false}, '404': {found: true}}",
            "status 404 is listed twice",
            id="twice",
        ),
        pytest.param("{4XX: {}, 4xx: {}}", "status 4XX is listed twice", id="class-twice"),
        pytest.param("[404]", "'responses' must map statuses", id="not-a-mapping"),
        pytest.param("{404: false}", "expected a mapping of output parameters", id="bad-mapping"),
        pytest.param(
            "{404: {fond: false}}",
            "'fond' is not an output parameter (did you mean 'found'?)",
            id="unknown-output",
        ),
        pytest.param(
            "{404: {found: 'no'}}",
            "invalid value: Parameter 'found': expected type 'boolean', got 'str'",
            id="literal-type",
        ),
        pytest.param(
            "{404: {total: 1.5}}",
            "Parameter 'total': expected type 'integer', got 'float'",
            id="literal-number",
        ),
        pytest.param(
            "{404: {found: '{{ response.jsn }}'}}",
            "'response.jsn' does not exist",
            id="template-reference",
        ),
        pytest.param(
            "{404: {found: '{{ credentials.x }}'}}",
            "unknown variable 'credentials'",
            id="no-credentials",
        ),
    ],
)
def test_bad_responses_are_located_load_problems(
    write: WriteFile, responses_yaml: str, problem: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        tool_from(write, f"    responses: {responses_yaml}\n")
    text = str(caught.value)
    assert "backend.http.responses" in text
    assert problem in text


def test_a_responses_mapping_must_give_every_required_output(write: WriteFile) -> None:
    text = ISSUES.replace("OUTPUT", "    responses: {404: {found: false}}\n").replace(
        "{name: total, type: integer, required: false}", "{name: total, type: integer}"
    )
    with pytest.raises(DefinitionError) as caught:
        load_tools(write(text), registry=ToolRegistry())
    assert (
        "backend.http.responses[404]: required output 'total' is not given; map it, or declare "
        "it 'required: false'"
    ) in str(caught.value)


def test_a_responses_mapping_may_not_give_a_required_output_null(write: WriteFile) -> None:
    text = ISSUES.replace("OUTPUT", "    responses: {404: {total: null}}\n").replace(
        "{name: total, type: integer, required: false}", "{name: total, type: integer}"
    )
    with pytest.raises(DefinitionError, match="'total' is a required output; null would fail"):
        load_tools(write(text), registry=ToolRegistry())


# -- a failing output template names the output and what was missing --------------------------------


@pytest.mark.parametrize(
    ("output", "status", "body", "message"),
    [
        pytest.param(
            '    output: {message: "{{ response.json.title }}"}\n',
            200,
            {"name": "x"},
            "output.message: response.json has no key 'title'",
            id="plain-path",
        ),
        pytest.param(
            '    output: {message: "{{ response.json.title | upper }}"}\n',
            200,
            {"name": "x"},
            "output.message: response.json has no key 'title'",
            id="through-jinja",
        ),
        pytest.param(
            "    output: {message: \"#{{ response.json.issues[0].user['login'] }}!\"}\n",
            200,
            {"issues": [{"user": {}}]},
            "output.message: response.json.issues[0].user has no key 'login'",
            id="text-with-nested-path",
        ),
        pytest.param(
            '    output: {message: "{{ response.json.issues[2].title | string }}"}\n',
            200,
            {"issues": [{}]},
            "output.message: response.json.issues has no item [2]",
            id="index-through-jinja",
        ),
        pytest.param(
            '    output: {message: "{{ (response.json.issues | first).title | string }}"}\n',
            200,
            {"issues": [{}]},
            "output.message: a value has no key 'title'",
            id="computed-value",
        ),
        pytest.param(
            '    responses: {404: {message: "{{ response.json.error.text }}"}}\n',
            404,
            {"error": {}},
            "responses.404.message: response.json.error has no key 'text'",
            id="status-mapping",
        ),
        pytest.param(
            '    responses: {4XX: {message: "{{ response.json.error.text }}"}}\n',
            418,
            {"error": {}},
            "responses.4XX.message: response.json.error has no key 'text'",
            id="class-mapping",
        ),
        pytest.param(
            '    output: {message: "{{ response.json.x }}", total: "{{ response.json.x }}"}\n',
            200,
            {"y": 1},
            "output.message: response.json has no key 'x'",
            id="first-of-two-same-templates",
        ),
    ],
)
def test_a_missing_value_names_the_output_and_what_was_missing(
    write: WriteFile, output: str, status: int, body: Any, message: str
) -> None:
    result = run(tool_from(write, output), status=status, json=body)
    assert result.error is not None
    text = str(result.error)
    assert message in text
    assert "undefined" not in text
    assert "dict object" not in text


PAGED = """\
name: paged
version: 1.0.0
output_schema:
  parameters:
    - name: issues
      type: list
      items: {type: dictionary, parameters: [{name: number, type: integer}]}
    - {name: truncated, type: boolean, required: false}
backend:
  http:
    url: https://api.example.com/issues
    paginate:
      page: {param: page}
      items: "{{ response.json }}"
      output: issues
"""


def test_paginated_records_are_projected(write: WriteFile) -> None:
    registry = ToolRegistry()
    load_tools(write(PAGED), registry=registry)
    with responses.RequestsMock() as mock:
        mock.get(URL, json=[{"number": 1, "node_id": "a"}, {"number": 2, "user": {}}])
        mock.get(URL, json=[])
        result = ToolExecutor().execute(registry["paged"], {})
    assert result.output is not None
    assert result.output["issues"] == [{"number": 1}, {"number": 2}]


def test_paginate_and_responses_do_not_mix(write: WriteFile) -> None:
    text = PAGED + "    responses: {404: {truncated: false}}\n"
    with pytest.raises(DefinitionError, match="give 'paginate' or 'responses', not both"):
        load_tools(write(text), registry=ToolRegistry())
