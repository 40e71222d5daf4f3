"""A tool's schema size: the bytes of the schemas its tools/list entry carries."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from agentkit import Tool, binary
from agentkit.adapters.export import mcp_tool
from agentkit.schemasize import SchemaSize, schema_bytes, schema_size
from agentkit.toolschema import ToolSchema


class Search(Tool):
    TOOL_NAME = "search"
    TOOL_DESCRIPTION = "Search the catalogue"
    INPUT_SCHEMA: ClassVar[Mapping[str, Any] | ToolSchema | None] = {
        "parameters": [
            {"name": "q", "type": "string", "description": "Was suchen? Größe zählt"},
            {"name": "limit", "type": "integer", "required": False, "default": 10},
            {
                "name": "filter",
                "type": "dictionary",
                "required": False,
                "parameters": [{"name": "lang", "type": "string", "enum": ["de", "en"]}],
            },
        ]
    }
    OUTPUT_SCHEMA: ClassVar[Mapping[str, Any] | ToolSchema | None] = {
        "parameters": [{"name": "hits", "type": "list", "items": "string"}]
    }

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"hits": []}


class Picture(Search):
    TOOL_NAME = "picture"
    OUTPUT_SCHEMA = binary.OUTPUT_SCHEMA


class Anything(Search):
    TOOL_NAME = "anything"
    INPUT_SCHEMA = None
    OUTPUT_SCHEMA = None


def listed_bytes(value: Any) -> int:
    """``value`` as a compact JSON wire writes it, in UTF-8 bytes."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


@pytest.mark.parametrize("tool", [Search(), Picture(), Anything()], ids=["plain", "binary", "free"])
def test_the_size_is_the_bytes_of_the_schemas_tools_list_carries(tool: Tool) -> None:
    entry = mcp_tool(tool)
    size = schema_size(tool)
    assert size.input == listed_bytes(entry["inputSchema"])
    assert size.output == (listed_bytes(entry["outputSchema"]) if "outputSchema" in entry else 0)
    assert size.total == size.input + size.output


def test_a_binary_output_counts_nothing() -> None:
    assert schema_size(Picture()).output == 0
    assert schema_size(Picture()).input == schema_size(Search()).input


def test_non_ascii_text_counts_in_utf8_bytes() -> None:
    plain = ToolSchema.from_dict(
        {"parameters": [{"name": "a", "type": "string", "description": "o"}]}
    )
    umlaut = ToolSchema.from_dict(
        {"parameters": [{"name": "a", "type": "string", "description": "ö"}]}
    )
    assert schema_bytes(umlaut) == schema_bytes(plain) + 1  # ö is two bytes, not \\u00f6's six


def test_a_size_is_a_value() -> None:
    assert SchemaSize(input=3, output=4).total == 7
    with pytest.raises(AttributeError):
        SchemaSize(input=3, output=4).input = 5  # type: ignore[misc]
