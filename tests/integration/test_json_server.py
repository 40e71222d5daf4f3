"""YAML HTTP tools against json-server, a real third-party REST server (from npm)."""

from __future__ import annotations

import pytest

from agentkit import ToolExecutor
from tests.integration.conftest import MakeTool

pytestmark = pytest.mark.usefixtures("json_server")

POSTS = """\
name: list_posts
version: 1.0.0
input_schema:
  parameters:
    - {{name: author, type: string, required: false}}
output_schema:
  parameters:
    - {{name: titles, type: list, items: string}}
    - {{name: count, type: integer}}
backend:
  http:
    url: {origin}/posts
    query: {{author: "{{{{ inputs.author }}}}", _sort: id}}
    output:
      titles: "{{{{ response.json | map(attribute='title') | list }}}}"
      count: "{{{{ response.json | length }}}}"
"""

POST = """\
name: get_post
version: 1.0.0
input_schema:
  parameters:
    - {{name: id, type: integer}}
output_schema:
  parameters:
    - {{name: id, type: integer}}
    - {{name: title, type: string}}
    - {{name: author, type: string}}
backend:
  http:
    url: {origin}/posts/{{{{ inputs.id }}}}
{extra}"""

CREATE = """\
name: create_post
version: 1.0.0
input_schema:
  parameters:
    - {{name: title, type: string}}
    - {{name: author, type: string}}
output_schema:
  parameters:
    - {{name: id, type: integer}}
    - {{name: status, type: integer}}
backend:
  http:
    method: POST
    url: {origin}/posts
    json: {{title: "{{{{ inputs.title }}}}", author: "{{{{ inputs.author }}}}"}}
    output:
      id: "{{{{ response.json.id }}}}"
      status: "{{{{ response.status }}}}"
"""


@pytest.mark.parametrize(
    ("arguments", "titles"),
    [
        pytest.param({}, ["json-server", "agentkit", "YAML tools"], id="all"),
        pytest.param({"author": "maintainers"}, ["agentkit", "YAML tools"], id="filtered"),
        pytest.param({"author": "nobody"}, [], id="none-match"),
    ],
)
def test_get_a_list(
    make_tool: MakeTool, json_server: str, arguments: dict[str, str], titles: list[str]
) -> None:
    tool = make_tool(POSTS.format(origin=json_server))
    result = ToolExecutor().execute(tool, arguments)
    # Records created by other tests come later in id order: the seeded ones come first.
    assert result.output is not None
    assert result.output["titles"][: len(titles)] == titles
    assert result.output["count"] >= len(titles)


def test_get_one_record_by_a_templated_path_segment(make_tool: MakeTool, json_server: str) -> None:
    tool = make_tool(POST.format(origin=json_server, extra=""))
    result = ToolExecutor().execute(tool, {"id": 2})
    assert result.output == {"id": 2, "title": "agentkit", "author": "maintainers"}


def test_post_creates_a_record_that_can_then_be_read(make_tool: MakeTool, json_server: str) -> None:
    created = ToolExecutor().execute(
        make_tool(CREATE.format(origin=json_server)),
        {"title": "made by a test", "author": "pytest"},
    )
    assert created.output is not None
    assert created.output["status"] == 201
    read = ToolExecutor().execute(
        make_tool(POST.format(origin=json_server, extra="")), {"id": created.output["id"]}
    )
    assert read.output == {
        "id": created.output["id"],
        "title": "made by a test",
        "author": "pytest",
    }


def test_a_missing_record_fails_the_call_naming_the_status_and_url(
    make_tool: MakeTool, json_server: str
) -> None:
    tool = make_tool(POST.format(origin=json_server, extra=""))
    result = ToolExecutor().execute(tool, {"id": 99999}, raise_on_failure=False)
    assert result.error is not None
    assert f"GET {json_server}/posts/99999 returned 404 Not Found" in str(result.error)


def test_an_accepted_404_goes_to_the_output(make_tool: MakeTool, json_server: str) -> None:
    extra = """\
    accept_status: [404]
    output:
      id: "{{ inputs.id }}"
      title: "{{ response.json.title if response.status == 200 else '' }}"
      author: "{{ 'status ' ~ response.status }}"
"""
    tool = make_tool(POST.format(origin=json_server, extra=extra))
    result = ToolExecutor().execute(tool, {"id": 99999})
    assert result.output == {"id": 99999, "title": "", "author": "status 404"}
