"""A call's result as MCP ``tools/call`` content.

- a plain output: ``structuredContent`` and the same JSON in a text block;
- an output with content blocks (``agentkit.content.Output``): each block as the
  MCP block of its kind (text, image, audio, an embedded text or blob resource),
  in order; then the structured output as ``structuredContent`` and, when it is
  not empty, as JSON in a text block;
- a binary output (``agentkit.binary``): image, audio or an embedded resource by
  its media type, then a text block naming its media type and size;
- a failure: ``isError: true`` and the error as text.

Text blocks carry UTF-8 JSON, not ``\\u`` escapes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types

from agentkit import binary
from agentkit.content import Audio, Block, Image, Resource, Text
from agentkit.tool import Tool
from agentkit.toolresult import ToolResult

__all__ = ["call_result", "error_result", "json_text", "mcp_block"]


def json_text(value: Any) -> str:
    # UTF-8 as it is, not \u-escaped: "Zürich" is 6 characters to the model, not 11.
    return json.dumps(value, ensure_ascii=False)


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"Error: {message}")],
        is_error=True,
    )


def mcp_block(block: Block) -> types.ContentBlock:
    """One content block as MCP's."""
    if isinstance(block, Text):
        return types.TextContent(type="text", text=block.text)
    if isinstance(block, Image):
        return types.ImageContent(type="image", data=block.base64, mime_type=block.media_type)
    if isinstance(block, Audio):
        return types.AudioContent(type="audio", data=block.base64, mime_type=block.media_type)
    return types.EmbeddedResource(type="resource", resource=_resource(block))


def _resource(block: Resource) -> types.TextResourceContents | types.BlobResourceContents:
    if block.text is not None:
        return types.TextResourceContents(
            uri=block.uri, mime_type=block.media_type, text=block.text
        )
    blob = block.to_json()["data"]
    return types.BlobResourceContents(uri=block.uri, mime_type=block.media_type, blob=blob)


def call_result(tool: Tool, result: ToolResult) -> types.CallToolResult:
    """``result`` of a call of ``tool`` as MCP's ``CallToolResult``."""
    if not result.succeeded:
        return error_result(str(result.error))
    output = result.output if result.output is not None else {}
    if binary.is_binary(tool):
        return types.CallToolResult(content=_binary_content(tool, output))
    content = [mcp_block(block) for block in result.content]
    # A tool that gave blocks and an empty structured output: its blocks say it all.
    if output or not result.content:
        content.append(types.TextContent(type="text", text=json_text(output)))
    return types.CallToolResult(content=content, structured_content=output)


def _binary_content(tool: Tool, output: Mapping[str, Any]) -> list[types.ContentBlock]:
    """A binary output as MCP content: image, audio or an embedded resource by its media
    type, then a text block saying what it is, for text-only clients."""
    media_type, data = output["media_type"], output["data"]
    block: types.ContentBlock
    if media_type.startswith("image/"):
        block = types.ImageContent(type="image", data=data, mime_type=media_type)
    elif media_type.startswith("audio/"):
        block = types.AudioContent(type="audio", data=data, mime_type=media_type)
    else:
        resource = types.BlobResourceContents(
            uri=f"agentkit://tools/{tool.name}/output", mime_type=media_type, blob=data
        )
        block = types.EmbeddedResource(type="resource", resource=resource)
    summary = {"media_type": media_type, "size": output["size"]}
    return [block, types.TextContent(type="text", text=json_text(summary))]
