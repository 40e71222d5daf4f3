"""A call's result as MCP ``tools/call`` content.

- a plain output: ``structuredContent`` and the same JSON in a text block;
- an output with content blocks (``agentkit.content.Output``): each block as the
  MCP block of its kind (text, image, audio, an embedded text or blob resource),
  in order; then the structured output as ``structuredContent`` and, when it is
  not empty, as JSON in a text block;
- a binary output (``agentkit.binary``): image, audio or an embedded resource by
  its media type, then a text block naming its media type and size;
- a page of a longer answer (a tool's ``max_output``): the page as a plain output,
  then a text block saying which page it is and the ``continuation`` that fetches the
  next (the model reads text; ``structuredContent`` stays the page, valid against the
  output schema), and the same in ``_meta`` under ``PAGE_META`` for programs;
- a failure: ``isError: true`` and the error as text; a call past the server's
  deadline says so, naming ``--call-timeout`` and its value.

Text blocks carry UTF-8 JSON, not ``\\u`` escapes. Whatever goes out to a client passes
``encodable`` first: a string UTF-8 cannot encode would end the stdio server and leave an
HTTP call unanswered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final, TypeVar, cast

import mcp_types as types
from pydantic import BaseModel

from agentkit import binary
from agentkit.content import Audio, Block, Image, Resource, Text
from agentkit.tool import Tool
from agentkit.toolerrors import ToolExecutionError, ToolTimeoutError
from agentkit.toolresult import ToolResult

__all__ = ["PAGE_META", "call_result", "encodable", "error_result", "json_text", "mcp_block"]

#: The ``_meta`` key of a page's description (``agentkit.paging.Page.to_dict``).
PAGE_META: Final = "io.github.agentkit/page"

_T = TypeVar("_T")
# The code points UTF-8 cannot encode: surrogates, which a Python string holds alone
# (os.fsdecode of a non-UTF-8 file name, surrogateescape, a "\\ud800" JSON escape).
_UNENCODABLE: Final = re.compile("[\ud800-\udfff]")


def encodable(value: _T) -> _T:
    """``value`` with every code point UTF-8 cannot encode replaced by U+FFFD, in every
    string it holds: dict keys and values, lists, tuples, and the fields of MCP's models
    (pydantic). The same object when there was nothing to replace, which is the rule."""
    return cast(_T, _encodable(value))


def _encodable(value: Any) -> Any:
    if isinstance(value, str):
        if value.isascii() or _UNENCODABLE.search(value) is None:
            return value
        return _UNENCODABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        pairs = [(_encodable(key), _encodable(item)) for key, item in value.items()]
        if all(
            new[0] is key and new[1] is item
            for new, (key, item) in zip(pairs, value.items(), strict=True)
        ):
            return value
        return dict(pairs)
    if isinstance(value, (list, tuple)):
        items = [_encodable(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, BaseModel):
        changed = {
            name: new
            for name in type(value).model_fields
            if (new := _encodable(old := getattr(value, name))) is not old
        }
        extra = value.model_extra or {}
        changed.update(
            (name, new) for name, old in extra.items() if (new := _encodable(old)) is not old
        )
        return value.model_copy(update=changed) if changed else value
    return value


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


def call_result(
    tool: Tool, result: ToolResult, *, call_timeout: float | None = None
) -> types.CallToolResult:
    """``result`` of a call of ``tool`` as MCP's ``CallToolResult``; ``call_timeout`` is
    the server's deadline for every call (``--call-timeout``), named when a call meets it."""
    if not result.succeeded:
        return error_result(_failure(tool, result.error, call_timeout))
    output = result.output if result.output is not None else {}
    if binary.is_binary(tool):
        return types.CallToolResult(content=_binary_content(tool, output))
    content = [mcp_block(block) for block in result.content]
    # A tool that gave blocks and an empty structured output: its blocks say it all.
    if output or not result.content:
        content.append(types.TextContent(type="text", text=json_text(output)))
    page = result.page
    if page is None:
        return types.CallToolResult(content=content, structured_content=output)
    content.append(types.TextContent(type="text", text=page.note()))
    return types.CallToolResult(
        content=content, structured_content=output, _meta={PAGE_META: page.to_dict()}
    )


def _failure(tool: Tool, error: Exception | None, call_timeout: float | None) -> str:
    """The error as the client reads it; the server's own deadline is named as such."""
    if (
        call_timeout is not None
        and isinstance(error, ToolExecutionError)
        and error.cause_type == ToolTimeoutError.__name__
    ):
        cause = error.cause
        if isinstance(cause, ToolTimeoutError):
            if cause.timeout != call_timeout:  # a deadline of the tool's own making
                return str(error)
            abandoned = cause.abandoned
        else:  # a copy cleaned of the tool's credentials: its text still says which
            abandoned = "cannot be stopped" in error.detail
        fate = (
            "its thread cannot be stopped and runs on, its result will be discarded"
            if abandoned
            else "it was cancelled"
        )
        return (
            f"Tool '{tool.name}' did not finish within {float(call_timeout)} s, the deadline "
            f"this server sets for every call (--call-timeout {call_timeout:g}); {fate}. If the "
            "tool needs longer, restart the server with a larger --call-timeout (in seconds); "
            "if it should not, check what it waits on."
        )
    return str(error)


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
