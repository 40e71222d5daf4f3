"""Small tools the tests share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agentkit import Tool

SECRET = "sk-live-8f3a/9+Zq=="


class Adder(Tool):
    TOOL_NAME = "add"
    TOOL_DESCRIPTION = "Add two numbers."
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "a", "type": "float"},
            {"name": "b", "type": "float", "required": False, "default": 0},
        ]
    }
    OUTPUT_SCHEMA = {"parameters": [{"name": "sum", "type": "float"}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"sum": inputs["a"] + inputs["b"]}


class Scripted(Tool):
    """Runs whatever function a test hands it; needs the credential 'api-key'."""

    TOOL_NAME = "scripted"
    CREDENTIAL_NAMES = ("api-key",)
    INPUT_SCHEMA = {"parameters": [{"name": "q", "type": "string", "required": False}]}
    OUTPUT_SCHEMA = {"parameters": [{"name": "answer", "type": "string"}]}

    def __init__(self, body: Callable[[dict[str, Any], Mapping[str, str]], Any]) -> None:
        super().__init__()
        self.body = body
        self.calls = 0

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        self.calls += 1
        return self.body(inputs, credentials)  # type: ignore[no-any-return]
