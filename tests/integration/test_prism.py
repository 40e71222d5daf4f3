"""Imported tools against Prism, a mock server that checks each request against the description.

Prism (npm ``@stoplight/prism-cli``, pinned in ``package-lock.json``) answers a
request only when it is valid for the description it serves, with a reply it
builds from the operation's 2xx schema. Every GET operation of each chosen
description is imported and called through the executor: each must be a valid
request (Prism answers 2xx) and its reply must pass the tool's output
validation. The descriptions: the GitHub subset (41 GETs) and three of
oas-examples that need no credentials (response shapes, path-level
parameters, a description without servers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.openapi import Selection, import_openapi

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openapi"
DESCRIPTIONS = [
    pytest.param(FIXTURES / "github" / "api.github.com.json", id="github"),
    pytest.param(
        FIXTURES / "oas-examples" / "3.0" / "response-schemas.json", id="response-schemas"
    ),
    pytest.param(
        FIXTURES / "oas-examples" / "3.0" / "parameters-common.json", id="parameters-common"
    ),
    pytest.param(FIXTURES / "oas-examples" / "3.0" / "link-example.json", id="link-example"),
]
_SAMPLES: dict[str, Any] = {
    "string": "octocat",
    "integer": 1,
    "float": 1.5,
    "boolean": True,
    "list": [],
    "dictionary": {},
}


def sample(parameter: dict[str, Any]) -> Any:
    """A value a request validator accepts for ``parameter``: its default, its first enum
    value, or one of its type within its bounds."""
    if "default" in parameter:
        return parameter["default"]
    if parameter.get("enum"):
        return parameter["enum"][0]
    value = _SAMPLES[parameter["type"]]
    if parameter["type"] in ("integer", "float"):
        value = max(value, parameter.get("minimum", value))
        value = min(value, parameter.get("maximum", value))
    return value


def arguments(definition: dict[str, Any]) -> dict[str, Any]:
    """A value for each required input of ``definition``."""
    parameters = definition.get("input_schema", {}).get("parameters", [])
    return {p["name"]: sample(p) for p in parameters if p.get("required", True)}


def error_keys(definition: dict[str, Any]) -> set[str]:
    """The outputs only an error reply sets (its per-status ``responses:``)."""
    responses = definition["backend"]["http"].get("responses", {})
    return {key for mapping in responses.values() for key in mapping}


@pytest.mark.parametrize("description", DESCRIPTIONS)
def test_every_imported_get_operation_is_a_valid_request_with_a_valid_reply(
    prism: Callable[[Path], str], tmp_path: Path, description: Path
) -> None:
    document = json.loads(description.read_text(encoding="utf-8"))
    gets = [path for path, item in document["paths"].items() if "get" in item]
    out = tmp_path / "api"
    selection = Selection(methods=["GET"])
    report = import_openapi(description, source="api", out=out, selection=selection)
    assert report.skipped == []
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ={"API_BASE_URL": prism(description)})
    assert len(registry) == len(gets)
    executor = ToolExecutor()
    failed: dict[str, str] = {}
    for tool in registry:
        definition = yaml.safe_load((out / f"{tool.name}.yaml").read_text(encoding="utf-8"))
        result = executor.execute(tool, arguments(definition), raise_on_failure=False)
        if not result.succeeded:
            failed[tool.name] = str(result.error)
        elif error_keys(definition) & set(result.output or {}):
            failed[tool.name] = f"an error reply: {result.output}"
    assert failed == {}
