"""Request shapes: a literal query string in the URL, repeated query and form fields,
a path argument spanning several segments."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import responses

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools
from tests.declarative.conftest import WriteFile, refused_before_sending, sent_path

TOOL = """\
name: shapes
version: 1.0.0
input_schema:
  parameters:
    - {{name: q, type: string, required: false}}
    - {{name: tags, type: list, items: string, required: false}}
    - {{name: path, type: string, required: false}}
output_schema:
  parameters:
    - {{name: ok, type: boolean}}
backend:
  http:
{http}
"""


def tool_from(write: WriteFile, http: str) -> Any:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(http=http)), registry=registry)
    (tool,) = list(registry)
    return tool


def load_problems(write: WriteFile, http: str) -> list[str]:
    path: Path = write(TOOL.format(http=http))
    with pytest.raises(DefinitionError) as info:
        load_tools(path)
    return [str(problem) for problem in info.value.problems]


def sent_query() -> list[tuple[str, str]]:
    url = responses.calls[0].request.url
    assert url is not None
    return parse_qsl(urlsplit(url).query, keep_blank_values=True)


# -- a literal query string in the URL ----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "query", "expected"),
    [
        pytest.param(
            "https://api.example.com/items?per_page=50",
            '{q: "{{ inputs.q }}"}',
            [("per_page", "50"), ("q", "x y")],
            id="url-then-query",
        ),
        pytest.param(
            "https://api.example.com/items?a=1&a=2&empty=",
            "{}",
            [("a", "1"), ("a", "2"), ("empty", "")],
            id="repeated-and-empty",
        ),
        pytest.param(
            "https://api.example.com/items?state=open%20now&sort=a%2Bb",
            "{}",
            [("state", "open now"), ("sort", "a+b")],
            id="percent-encoded",
        ),
    ],
)
@responses.activate
def test_the_url_query_string_is_sent_with_query(
    write: WriteFile, url: str, query: str, expected: list[tuple[str, str]]
) -> None:
    responses.get("https://api.example.com/items", json={"ok": True})
    tool = tool_from(write, f"    url: {url}\n    query: {query}")
    assert ToolExecutor().execute(tool, {"q": "x y"}).output == {"ok": True}
    assert sent_query() == expected


@responses.activate
def test_a_query_string_right_after_the_host(write: WriteFile) -> None:
    responses.get("https://api.example.com/", json={"ok": True})
    tool = tool_from(write, "    url: https://api.example.com?x=1")
    assert ToolExecutor().execute(tool, {}).succeeded
    assert sent_query() == [("x", "1")]


# -- repeated query and form fields -------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "arguments", "expected"),
    [
        pytest.param('"{{ inputs.tags }}"', {"tags": ["a", "b c"]}, ["a", "b c"], id="argument"),
        pytest.param("[x, 2, true]", {}, ["x", "2", "true"], id="literal-list"),
        pytest.param(
            '[fixed, "{{ inputs.tags }}", "{{ inputs.q }}"]',
            {"tags": ["a", "b"]},
            ["fixed", "a", "b"],
            id="mixed-absent-left-out",
        ),
        pytest.param('"{{ inputs.tags }}"', {"tags": []}, [], id="empty-list"),
    ],
)
@responses.activate
def test_list_values_repeat_query_and_form_fields(
    write: WriteFile, values: str, arguments: dict[str, Any], expected: list[str]
) -> None:
    responses.get("https://api.example.com/q", json={"ok": True})
    responses.post("https://api.example.com/f", json={"ok": True})
    query_tool = tool_from(
        write, f"    url: https://api.example.com/q\n    query: {{tag: {values}}}"
    )
    ToolExecutor().execute(query_tool, arguments)
    assert sent_query() == [("tag", value) for value in expected]
    form_tool = tool_from(
        write, f"    method: POST\n    url: https://api.example.com/f\n    form: {{tag: {values}}}"
    )
    ToolExecutor().execute(form_tool, arguments)
    body = responses.calls[1].request.body
    text = body.decode() if isinstance(body, bytes) else body or ""
    assert parse_qsl(text, keep_blank_values=True) == [("tag", value) for value in expected]


@responses.activate
def test_a_list_item_that_is_not_a_scalar_fails_the_call(write: WriteFile) -> None:
    tool = tool_from(
        write,
        '    method: POST\n    url: https://api.example.com/f\n    form: {tag: "{{ [[1]] }}"}',
    )
    refused_before_sending(tool, {}, "form field 'tag': cannot send a list here")


# -- a path argument: one segment, or several with '| segments' ----------------------------------

ONE_SEGMENT = "    url: https://api.example.com/repos/{{ inputs.path }}/raw"
SEGMENTS = "    url: https://api.example.com/repos/{{ inputs.path | segments }}/raw"


@pytest.mark.parametrize(
    ("url", "argument", "path"),
    [
        pytest.param(ONE_SEGMENT, "a/b", "/repos/a%2Fb/raw", id="slash"),
        pytest.param(ONE_SEGMENT, "x?admin=1", "/repos/x%3Fadmin%3D1/raw", id="query"),
        pytest.param(ONE_SEGMENT, "x#frag", "/repos/x%23frag/raw", id="fragment"),
        pytest.param(ONE_SEGMENT, "%2e%2e", "/repos/%252e%252e/raw", id="percent"),
        pytest.param(
            ONE_SEGMENT, "{{ 7*7 }}", "/repos/%7B%7B%207%2A7%20%7D%7D/raw", id="template-looking"
        ),
        pytest.param(ONE_SEGMENT, "../../admin", "/repos/..%2F..%2Fadmin/raw", id="traversal"),
        pytest.param(SEGMENTS, "docs/README.md", "/repos/docs/README.md/raw", id="two"),
        pytest.param(SEGMENTS, "one", "/repos/one/raw", id="one"),
        pytest.param(SEGMENTS, "a b/c?d#e", "/repos/a%20b/c%3Fd%23e/raw", id="each-encoded"),
        pytest.param(SEGMENTS, "%2e%2e/x", "/repos/%252e%252e/x/raw", id="percent-dots-stay-data"),
        pytest.param(SEGMENTS, "a\\b/c", "/repos/a%5Cb/c/raw", id="backslash"),
    ],
)
@responses.activate
def test_a_path_argument_is_encoded_segment_by_segment(
    write: WriteFile, url: str, argument: str, path: str
) -> None:
    """One segment: a '/' in it is data (%2F); with '| segments' each part is one."""
    responses.get(f"https://api.example.com{path}", json={"ok": True})
    assert sent_path(tool_from(write, url), {"path": argument}) == path


@pytest.mark.parametrize(
    ("url", "argument", "problem"),
    [
        pytest.param(ONE_SEGMENT, "", "rendered to ''", id="one-empty"),
        pytest.param(ONE_SEGMENT, ".", "rendered to '.'", id="one-dot"),
        pytest.param(ONE_SEGMENT, "..", "rendered to '..'", id="one-dotdot"),
        pytest.param(SEGMENTS, "", "part 1 of 1 is ''", id="empty"),
        pytest.param(SEGMENTS, "../etc/passwd", "part 1 of 3 is '..'", id="dotdot-first"),
        pytest.param(SEGMENTS, "a/./b", "part 2 of 3 is '.'", id="dot"),
        pytest.param(SEGMENTS, "a/../../b", "part 2 of 4 is '..'", id="dotdot"),
        pytest.param(SEGMENTS, "/abs", "part 1 of 2 is ''", id="leading-slash"),
        pytest.param(SEGMENTS, "a/", "part 2 of 2 is ''", id="trailing-slash"),
        pytest.param(SEGMENTS, "a//b", "part 2 of 3 is ''", id="double-slash"),
    ],
)
@responses.activate
def test_a_path_argument_with_empty_or_dot_parts_fails_before_sending(
    write: WriteFile, url: str, argument: str, problem: str
) -> None:
    segments = " ({{ inputs.path | segments }}): " if url == SEGMENTS else " "
    expected = f"URL path segment 2{segments}{problem}"
    refused_before_sending(tool_from(write, url), {"path": argument}, expected)


@responses.activate
def test_a_source_tool_path_takes_a_query_string_and_segments(write: WriteFile) -> None:
    write("source: api\nbase_url: https://api.example.com/v1\nquery: {per_page: 50}\n", "s.yaml")
    path = write(
        TOOL.format(
            http="    source: api\n"
            "    path: /repos/{{ inputs.path | segments }}?state=open\n"
            '    query: {q: "{{ inputs.q }}"}'
        ),
        "t.yaml",
    )
    registry = ToolRegistry()
    load_tools(path.parent, registry=registry)
    responses.get("https://api.example.com/v1/repos/a/b.md", json={"ok": True})
    assert ToolExecutor().execute(registry["shapes"], {"path": "a/b.md", "q": "x"}).succeeded
    assert sorted(sent_query()) == [("per_page", "50"), ("q", "x"), ("state", "open")]


# -- located definition problems, of all three shapes -------------------------------------------


@pytest.mark.parametrize(
    ("http", "expected"),
    [
        # a literal query string in the URL
        pytest.param(
            '    url: https://api.example.com/items?q=1\n    query: {q: "{{ inputs.q }}"}',
            "14:16: backend.http.query.q: 'q' is also in the URL's query string; "
            "give it in one place",
            id="name-in-both",
        ),
        pytest.param(
            "    url: https://api.example.com/items?q={{ inputs.q }}",
            "13:10: backend.http.url: templates may not reach the URL's query string; "
            "put templated parameters under 'query:'",
            id="template-in-query-string",
        ),
        pytest.param(
            "    url: https://api.example.com?q={% if true %}1{% endif %}",
            "13:10: backend.http.url: templates may not reach the URL's query string",
            id="statement-in-query-string",
        ),
        pytest.param(
            "    url: https://api.example.com/items#top",
            "13:10: backend.http.url: a URL sent to a server has no '#fragment'",
            id="fragment",
        ),
        # list values
        pytest.param(
            "    url: https://api.example.com/\n    headers: {X-A: [a, b]}",
            "backend.http.headers.X-A: expected a string or number, got a list",
            id="header-list",
        ),
        pytest.param(
            "    url: https://api.example.com/\n    query: {a: [[1]]}",
            "backend.http.query.a[0]: expected a string or number, got a list",
            id="nested-list",
        ),
        pytest.param(
            '    url: https://api.example.com/\n    method: POST\n    form: {a: ["{{ inputs.qq }}"]}',
            "backend.http.form.a[0]: 'inputs.qq' is not a declared input",
            id="template-in-list-checked",
        ),
        # '| segments'
        pytest.param(
            "    url: https://api.example.com/x-{{ inputs.path | segments }}",
            "backend.http.url: '| segments' must fill a whole path segment",
            id="part-of-a-segment",
        ),
        pytest.param(
            "    url: https://api.example.com/{{ inputs.pth | segments }}",
            "backend.http.url: 'inputs.pth' is not a declared input (did you mean 'inputs.path'?)",
            id="unknown-input",
        ),
        pytest.param(
            '    url: https://api.example.com/\n    query: {a: "{{ inputs.path | segments }}"}',
            "backend.http.query.a: template syntax error",
            id="not-in-a-query",
        ),
    ],
)
def test_definition_problems_are_located(write: WriteFile, http: str, expected: str) -> None:
    (found,) = load_problems(write, http)
    assert expected in found, found
