"""A third-party agentkit extension, written as one would be outside agentkit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from agentkit import Tool
from agentkit.adapters.export import ExportFormat
from agentkit.declarative.backends import BackendContext


class EchoBackend:
    """``backend: {echo: {prefix: TEXT}}``: each string input back, ``prefix`` in front."""

    kind: ClassVar[str] = "echo"
    #: The value under ``backend: {echo: ...}``, for editors (``agentkit schema``).
    config_schema: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"prefix": {"type": "string", "description": "Put before each input."}},
    }

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    @classmethod
    def parse(cls, raw: Any, context: BackendContext) -> EchoBackend | None:
        if not context.check_keys(raw, ("prefix",), "an echo backend"):
            return None
        prefix = raw.get("prefix", "")
        if not isinstance(prefix, str):
            context.problem("expected a string", "prefix")
            return None
        return cls(prefix)

    def call(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {
            name: self.prefix + value if isinstance(value, str) else value
            for name, value in inputs.items()
        }

    @property
    def default_annotations(self) -> Mapping[str, Any]:
        return {"read_only": True}


def _names(tools: Sequence[Tool], *, strict: bool, warnings: list[str]) -> Any:
    return {"tools": [f"{tool.name} {tool.version}" for tool in tools]}


#: ``agentkit export --format names``: each tool's name and version.
NAMES = ExportFormat(
    name="names", formatter=_names, description="each tool's name and version, for a changelog"
)
