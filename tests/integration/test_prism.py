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
    return post_description(version, "/issues", "create_issue", body, created)


def post_description(
    version: str,
    path: str,
    operation_id: str,
    body: dict[str, Any],
    created: dict[str, Any],
    parameters: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A description of one POST of a required JSON ``body``, answered 201 with ``created``."""
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": {
            "201": {"description": "made", "content": {"application/json": {"schema": created}}},
            "422": {"description": "invalid"},
        },
    }
    if parameters:
        operation["parameters"] = parameters
    return {
        "openapi": version,
        "info": {"title": operation_id, "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {path: {"post": operation}},
    }


def served(
    prism: Callable[[Path], str],
    tmp_path: Path,
    document: dict[str, Any],
    path: str,
    invalid: list[dict[str, Any]],
) -> ToolRegistry:
    """``document`` imported, its tools pointed at Prism serving it; Prism must first
    refuse each body of ``invalid`` POSTed to ``path`` (so it checks those shapes)."""
    description = tmp_path / "description.json"
    description.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "api"
    assert import_openapi(description, source="api", out=out).skipped == []
    base_url = prism(description)
    for body in invalid:
        refused = requests.post(f"{base_url}{path}", json=body, timeout=10)
        assert refused.status_code == 422, body
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ={"API_BASE_URL": base_url})
    return registry


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
    # Prism checks this body: one without the required title, or a title of neither type, is refused.
    invalid: list[dict[str, Any]] = [{"count": 1}, {"title": True}, {"title": "a", "count": "x"}]
    registry = served(prism, tmp_path, unions_description(version), "/issues", invalid)
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
        pytest.param(
            {
                "title": "Found a bug",
                "issue_field_values": [
                    {"field_id": 1, "value": ["high", "urgent"]},
                    {"field_id": 2, "value": "text"},
                    {"field_id": 3, "value": 2.5},
                ],
            },
            id="field-values-a-string-a-number-or-a-list",
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


def shapes_description(version: str) -> dict[str, Any]:
    """A POST whose body takes a mixed enum, a const beside strings and a scalar or a
    list, and whose query takes a scalar or a list, exploded and joined."""
    string_or_list: dict[str, Any] = {
        "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
    }
    if version.startswith("3.1"):
        size: dict[str, Any] = {"enum": [0, "auto", None]}
        level: dict[str, Any] = {"oneOf": [{"const": 0}, {"type": "string", "enum": ["low"]}]}
        labels: dict[str, Any] = {"type": ["string", "array"], "items": {"type": "string"}}
    else:
        size = {"enum": [0, "auto"]}
        level = {"oneOf": [{"enum": [0]}, {"type": "string", "enum": ["low"]}]}
        labels = string_or_list
    body = {
        "type": "object",
        "required": ["size"],
        "properties": {"size": size, "level": level, "labels": labels},
    }
    query: list[dict[str, Any]] = [
        {"name": "has", "in": "query", "schema": string_or_list},
        {"name": "joined", "in": "query", "explode": False, "schema": string_or_list},
    ]
    created = {"type": "object", "properties": {"id": {"type": "integer"}}}
    return post_description(version, "/settings", "set_settings", body, created, query)


@pytest.mark.parametrize("version", ["3.0.3", "3.1.0"])
@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"size": 0}, id="integer"),
        pytest.param(
            {"size": "auto", "level": 0, "labels": "bug", "has": ["a", "b"], "joined": ["x", "y"]},
            id="string-and-lists",
        ),
        pytest.param(
            {"size": 0, "level": "low", "labels": ["bug", "docs"], "has": "a", "joined": "x"},
            id="lists-and-strings",
        ),
    ],
)
def test_mixed_enums_and_scalar_or_list_values_are_valid_requests(
    prism: Callable[[Path], str], tmp_path: Path, version: str, arguments: dict[str, Any]
) -> None:
    # Prism checks these shapes: a value of no member, or not in the enum, is refused.
    invalid: list[dict[str, Any]] = [
        {"size": 1},
        {"size": "big"},
        {"size": True},
        {"size": 0, "level": "high"},
        {"size": 0, "labels": [1]},
        {"size": 0, "labels": {"a": "b"}},
    ]
    registry = served(prism, tmp_path, shapes_description(version), "/settings", invalid)
    tool = registry["set_settings"]
    result = ToolExecutor().execute(tool, arguments, raise_on_failure=False)
    assert result.succeeded, result.error
    assert isinstance((result.output or {}).get("id"), int), result.output
    # What Prism refuses, the tool refuses before sending.
    refused_call = ToolExecutor().execute(tool, {"size": True}, raise_on_failure=False)
    assert "expected type 'integer' or 'string', got 'bool'" in str(refused_call.error)
