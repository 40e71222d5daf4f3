"""A tool's schema size: what its schemas cost a model's context, in bytes.

The size is measured on the JSON Schemas an MCP ``tools/list`` entry carries for the
tool (``agentkit.adapters.export.mcp_tool``): ``inputSchema``, plus ``outputSchema`` unless
the tool's output is binary (which is content, not structured JSON). Each schema is
written as compact JSON (no spaces, ``separators=(",", ":")``, non-ASCII characters
as themselves) and counted in UTF-8 bytes; the size is the sum. The name, title,
description and annotations of the entry are not counted: they are the same size
however the schemas are written.

``agentkit validate`` reports the largest and warns past a budget
(``DEFAULT_SCHEMA_BUDGET`` unless ``--schema-budget`` says otherwise); ``agentkit
show`` prints each tool's; ``agentkit import openapi`` generates within one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from agentkit.binary import is_binary

if TYPE_CHECKING:
    from agentkit.tool import Tool
    from agentkit.toolschema import ToolSchema

__all__ = ["DEFAULT_SCHEMA_BUDGET", "SchemaSize", "schema_bytes", "schema_size"]

#: The schema size past which ``agentkit validate`` warns: about 2,000 tokens.
DEFAULT_SCHEMA_BUDGET: Final = 8 * 1024


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaSize:
    """A tool's schema size: its input and output schemas' bytes (output 0 when binary)."""

    input: int
    output: int

    @property
    def total(self) -> int:
        return self.input + self.output


def schema_bytes(schema: ToolSchema) -> int:
    """The bytes of ``schema``'s JSON Schema, written compact, in UTF-8."""
    text = json.dumps(schema.to_json_schema(), separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8"))


def schema_size(tool: Tool) -> SchemaSize:
    """``tool``'s schema size, as the module's docstring defines it."""
    output = 0 if is_binary(tool) else schema_bytes(tool.output_schema)
    return SchemaSize(input=schema_bytes(tool.input_schema), output=output)
