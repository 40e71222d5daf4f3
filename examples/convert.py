"""A second hand-written tool: temperature conversion, pure Python, no credentials."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentkit import Tool

_TO_CELSIUS = {
    "celsius": lambda v: v,
    "fahrenheit": lambda v: (v - 32) * 5 / 9,
    "kelvin": lambda v: v - 273.15,
}
_FROM_CELSIUS = {
    "celsius": lambda v: v,
    "fahrenheit": lambda v: v * 9 / 5 + 32,
    "kelvin": lambda v: v + 273.15,
}
_SCALES = sorted(_TO_CELSIUS)


class ConvertTemperatureTool(Tool):
    TOOL_NAME = "convert_temperature"
    TOOL_DESCRIPTION = "Convert a temperature between celsius, fahrenheit and kelvin."
    TOOL_VERSION = "1.0.0"
    TOOL_TAGS = {"domain": "weather", "offline": "true"}
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "value", "type": "float", "description": "The temperature to convert"},
            {"name": "from_scale", "type": "string", "enum": _SCALES},
            {"name": "to_scale", "type": "string", "enum": _SCALES},
            {
                "name": "decimals",
                "type": "integer",
                "required": False,
                "default": 1,
                "minimum": 0,
                "maximum": 6,
            },
        ]
    }
    OUTPUT_SCHEMA = {
        "parameters": [
            {"name": "value", "type": "float"},
            {"name": "scale", "type": "string"},
        ]
    }

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        celsius = _TO_CELSIUS[inputs["from_scale"]](inputs["value"])
        if celsius < -273.15:
            raise ValueError(f"{inputs['value']} {inputs['from_scale']} is below absolute zero")
        converted = _FROM_CELSIUS[inputs["to_scale"]](celsius)
        return {"value": round(converted, inputs["decimals"]), "scale": inputs["to_scale"]}
