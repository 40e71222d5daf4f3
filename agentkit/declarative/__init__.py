"""Tools defined as YAML: the definition format, its loader and its backends."""

from agentkit.declarative.loader import (
    definition_files,
    definition_schema,
    load_tools,
    load_toolsets,
)
from agentkit.declarative.tool import DeclarativeTool

__all__ = [
    "DeclarativeTool",
    "definition_files",
    "definition_schema",
    "load_tools",
    "load_toolsets",
]
