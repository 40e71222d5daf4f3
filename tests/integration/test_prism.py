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
import requests
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


def unions_description(version: str) -> dict[str, Any]:
    """A POST whose body takes unions of scalar types, each way OpenAPI can say one."""
    if version.startswith("3.1"):
        count: dict[str, Any] = {"type": ["integer", "boolean", "null"]}
    else:
        count = {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}
    body = {
        "type": "object",
        "required": ["title"],
        "properties": {
            "title": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "count": count,
        },
    }
    created = {
        "type": "object",
        "properties": {"id": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
    }
    return {
        "openapi": version,
        "info": {"title": "unions", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {
            "/issues": {
                "post": {
                    "operationId": "create_issue",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": body}},
                    },
                    "responses": {
                        "201": {
                            "description": "made",
                            "content": {"application/json": {"schema": created}},
                        },
                        "422": {"description": "invalid"},
                    },
                }
            }
        },
    }


@pytest.mark.parametrize("version", ["3.0.3", "3.1.0"])
@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"title": "Found a bug"}, id="string"),
        pytest.param({"title": 42, "count": 3}, id="integer"),
        pytest.param({"title": "Found a bug", "count": False}, id="boolean"),
    ],
)
def test_a_post_whose_body_takes_a_union_is_a_valid_request(
    prism: Callable[[Path], str], tmp_path: Path, version: str, arguments: dict[str, Any]
) -> None:
    description = tmp_path / f"unions-{version}.json"
    description.write_text(json.dumps(unions_description(version)), encoding="utf-8")
    out = tmp_path / "api"
    assert import_openapi(description, source="api", out=out).skipped == []
    base_url = prism(description)
    # Prism checks this body: one without the required title, or a title of neither type, is refused.
    for invalid in ({"count": 1}, {"title": True}, {"title": "a", "count": "x"}):
        refused = requests.post(f"{base_url}/issues", json=invalid, timeout=10)
        assert refused.status_code == 422, invalid
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ={"API_BASE_URL": base_url})
    result = ToolExecutor().execute(registry["create_issue"], arguments, raise_on_failure=False)
    assert result.succeeded, result.error


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"title": "Found a bug"}, id="title-string"),
        pytest.param({"title": 42, "milestone": 7}, id="title-integer"),
        pytest.param(
            {"title": "Found a bug", "milestone": "v1", "labels": ["bug"], "assignees": ["a"]},
            id="every-kind",
        ),
    ],
)
def test_githubs_issues_create_is_imported_and_answered(
    prism: Callable[[Path], str], tmp_path: Path, arguments: dict[str, Any]
) -> None:
    """GitHub's issues_create: ``title`` is a oneOf of string and integer (a union).

    Prism does not check this body (its nullable ``oneOf`` of ``milestone`` makes it
    skip the body's validation); the test above holds a body of unions to it."""
    description = FIXTURES / "github" / "api.github.com.json"
    out = tmp_path / "api"
    selection = Selection(operations=["issues_create"])
    assert import_openapi(description, source="api", out=out, selection=selection).skipped == []
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ={"API_BASE_URL": prism(description)})
    result = ToolExecutor().execute(
        registry["issues_create"], {"owner": "octocat", "repo": "hello", **arguments}
    )
    assert result.succeeded, result.error
    assert not {"error", "error_status"} & set(result.output or {}), result.output
