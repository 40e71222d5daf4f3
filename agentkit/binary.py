"""Binary outputs: an image, a sound or a file as a tool's output, in one small shape.

A tool returns binary content by declaring ``OUTPUT_SCHEMA = binary.OUTPUT_SCHEMA``
(a YAML HTTP tool says ``binary: true``) and returning ``binary.encode(...)``::

    {"media_type": "image/png", "data": "iVBORw0KGgo...", "size": 8090}

- ``media_type``: the content's media type, lower-case, without parameters
  (``application/octet-stream`` when none was given or it cannot be read);
- ``data``: the content in base64 (RFC 4648, standard alphabet, padded), about
  4/3 of its size;
- ``size``: the content's length in bytes.

The executor's caller gets this dictionary; the MCP server turns it into image
content (``image/*``), audio content (``audio/*``) or an embedded resource
(anything else). A Python tool that makes media can instead return
``agentkit.content`` blocks, which also mix with text and structured output.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Final

from agentkit.content import is_media_type
from agentkit.toolschema import ToolSchema

if TYPE_CHECKING:
    from agentkit.tool import Tool

__all__ = ["DEFAULT_MEDIA_TYPE", "OUTPUT_SCHEMA", "encode", "is_binary", "media_type"]

DEFAULT_MEDIA_TYPE: Final = "application/octet-stream"

OUTPUT_SCHEMA: Final = ToolSchema.from_dict(
    {
        "parameters": [
            {
                "name": "media_type",
                "type": "string",
                "description": "The content's media type, such as image/png.",
            },
            {
                "name": "data",
                "type": "string",
                "description": "The content, base64-encoded.",
            },
            {"name": "size", "type": "integer", "description": "The content's size in bytes."},
        ]
    }
)


def media_type(value: str | None) -> str:
    """A ``Content-Type`` value as ``media_type`` gives it: ``image/png; q=1`` -> ``image/png``."""
    if value:
        essence = value.split(";", 1)[0].strip().lower()
        if is_media_type(essence):
            return essence
    return DEFAULT_MEDIA_TYPE


def encode(content: bytes, content_type: str | None = None) -> dict[str, Any]:
    """``content`` as a binary output; ``content_type`` is read by ``media_type``."""
    return {
        "media_type": media_type(content_type),
        "data": base64.b64encode(content).decode("ascii"),
        "size": len(content),
    }


def is_binary(tool: Tool) -> bool:
    """True when ``tool`` declares the binary output."""
    return tool.output_schema == OUTPUT_SCHEMA
