"""Typed outputs against real servers: lists of objects projected, per-status outputs."""

from __future__ import annotations

from agentkit import ToolExecutor
from tests.integration.conftest import MakeTool

POSTS = """\
name: list_posts
version: 1.0.0
output_schema:
  parameters:
    - name: posts
      type: list
      items:
        type: dictionary
        parameters:
          - {{name: id, type: integer}}
          - {{name: title, type: string}}
          - name: comments
            type: list
            items:
              type: dictionary
              parameters: [{{name: body, type: string}}]
backend:
  http:
    url: {origin}/posts
    query: {{_embed: comments, _sort: id}}
    output:
      posts: "{{{{ response.json }}}}"
"""

POST = """\
name: get_post
version: 1.0.0
input_schema:
  parameters:
    - {{name: id, type: integer}}
output_schema:
  parameters:
    - {{name: found, type: boolean}}
    - {{name: title, type: string, required: false}}
backend:
  http:
    url: {origin}/posts/{{{{ inputs.id }}}}
    output:
      found: true
      title: "{{{{ response.json.title }}}}"
    responses:
      404: {{found: false}}
"""


def test_a_list_of_objects_keeps_only_the_declared_keys_at_every_depth(
    make_tool: MakeTool, json_server: str
) -> None:
    result = ToolExecutor().execute(make_tool(POSTS.format(origin=json_server)), {})
    assert result.output is not None
    posts = result.output["posts"]
    # json-server adds "author" to each post and "id" and "postId" to each comment.
    assert posts[:2] == [
        {"id": 1, "title": "json-server", "comments": []},
        {"id": 2, "title": "agentkit", "comments": [{"body": "one contract for every tool"}]},
    ]
    assert all(set(post) == {"id", "title", "comments"} for post in posts)


def test_a_404_maps_to_its_own_output(make_tool: MakeTool, json_server: str) -> None:
    tool = make_tool(POST.format(origin=json_server))
    assert ToolExecutor().execute(tool, {"id": 999_999}).output == {"found": False}
    assert ToolExecutor().execute(tool, {"id": 2}).output == {"found": True, "title": "agentkit"}
