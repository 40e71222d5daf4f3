"""Outputs against real servers: lists of objects projected, per-status outputs, binary."""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest

from agentkit import ToolExecutor, ToolRegistry
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


IMAGE = """\
name: image
version: 1.0.0
backend:
  http:
    url: {origin}/image/png
    binary: true
{extra}"""


def test_a_binary_reply_is_base64_with_its_media_type(
    make_tool: MakeTool, httpbin_url: str
) -> None:
    result = ToolExecutor().execute(make_tool(IMAGE.format(origin=httpbin_url, extra="")), {})
    assert result.output is not None
    content = base64.b64decode(result.output["data"])
    assert content.startswith(b"\x89PNG\r\n\x1a\n")
    assert result.output["media_type"] == "image/png"
    assert result.output["size"] == len(content)


def test_the_size_cap_applies_to_a_binary_reply(make_tool: MakeTool, httpbin_url: str) -> None:
    tool = make_tool(IMAGE.format(origin=httpbin_url, extra="    max_response_bytes: 1000\n"))
    result = ToolExecutor().execute(tool, {}, raise_on_failure=False)
    assert result.error is not None
    assert "over max_response_bytes (1000 bytes)" in str(result.error)


def test_an_mcp_client_gets_the_image(make_tool: MakeTool, httpbin_url: str) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from agentkit.mcp.server import build_server

    registry = ToolRegistry([make_tool(IMAGE.format(origin=httpbin_url, extra=""))])

    async def main() -> Any:
        with anyio.fail_after(30):
            async with Client(build_server(registry)) as client:
                return await client.call_tool("image", {})

    result = anyio.run(main)
    image = result.content[0]
    assert image.type == "image"
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG")
