"""The shipped JSON Schema of the definition format: valid, in step with the parser, and true of tools.d."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from agentkit.declarative import definition_schema
from agentkit.declarative.definition import ANNOTATION_KEYS, TOP_LEVEL_KEYS
from agentkit.declarative.http_spec import HTTP_KEYS, METHODS
from agentkit.declarative.sources import SOURCE_KEYS
from agentkit.toolschema import PARAMETER_TYPES

TOOLS_D = Path(__file__).resolve().parents[2] / "tools.d"
SCHEMA: dict[str, Any] = definition_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_schema_lists_exactly_the_keys_the_loader_reads() -> None:
    defs = SCHEMA["$defs"]
    assert set(SCHEMA["properties"]) == set(TOP_LEVEL_KEYS)
    assert set(SCHEMA["properties"]["annotations"]["properties"]) == set(ANNOTATION_KEYS)
    assert set(defs["http"]["properties"]) == set(HTTP_KEYS)
    assert defs["http"]["properties"]["method"]["enum"] == list(METHODS)
    assert set(defs["source"]["properties"]) == set(SOURCE_KEYS)
    assert defs["type"]["enum"] == list(PARAMETER_TYPES)


@pytest.mark.parametrize("path", sorted(TOOLS_D.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_definition_matches(path: Path) -> None:
    for document in yaml.safe_load_all(path.read_text()):
        VALIDATOR.validate(document)


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({"name": "x", "version": "1.0.0"}, id="no-backend"),
        pytest.param({"name": "x y", "version": "1.0.0", "backend": {"python": "a:b"}}, id="name"),
        pytest.param({"name": "x", "version": "1.0", "backend": {"python": "a:b"}}, id="version"),
        pytest.param(
            {"name": "x", "version": "1.0.0", "backend": {"http": {"url": "https://{{ h }}/"}}},
            id="templated-host",
        ),
        pytest.param(
            {
                "name": "x",
                "version": "1.0.0",
                "backend": {"http": {"url": "https://a/", "json": {}, "body": ""}},
            },
            id="two-bodies",
        ),
        pytest.param(
            {
                "name": "x",
                "version": "1.0.0",
                "backend": {"python": "a:b", "http": {"url": "https://a/"}},
            },
            id="two-backends",
        ),
        pytest.param(
            {
                "name": "x",
                "version": "1.0.0",
                "backend": {"python": "a:b"},
                "input_schema": {"parameters": [{"name": "a", "type": "int"}]},
            },
            id="type",
        ),
        pytest.param(
            {
                "name": "x",
                "version": "1.0.0",
                "backend": {"python": "a:b"},
                "input_schema": {"parameters": [{"name": "a", "type": "string", "descripton": ""}]},
            },
            id="unknown-parameter-key",
        ),
    ],
)
def test_broken_definitions_do_not_match(document: dict[str, Any]) -> None:
    assert not VALIDATOR.is_valid(document)


SOURCE_DOCUMENT = {
    "source": "api",
    "base_url": "${API_URL:-https://api.example.com}/v1",
    "credentials": ["token"],
    "auth": {"bearer": "token"},
    "headers": {"Accept": "application/json"},
    "verify": True,
}
SOURCE_TOOL = {
    "name": "x",
    "version": "1.0.0",
    "backend": {"http": {"source": "api", "path": "/items/{{ inputs.id }}"}},
}


def test_sources_and_tools_of_sources_match() -> None:
    VALIDATOR.validate(SOURCE_DOCUMENT)
    VALIDATOR.validate(SOURCE_TOOL)


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({**SOURCE_DOCUMENT, "name": "x"}, id="source-with-a-tool-key"),
        pytest.param({**SOURCE_DOCUMENT, "base_url": 3}, id="source-base-url"),
        pytest.param({"source": "api"}, id="source-without-base-url"),
        pytest.param({**SOURCE_TOOL, "base_url": "https://a"}, id="tool-with-a-source-key"),
        pytest.param(
            {**SOURCE_TOOL, "backend": {"http": {"source": "api", "path": "items"}}},
            id="relative-path",
        ),
        pytest.param(
            {
                **SOURCE_TOOL,
                "backend": {"http": {"source": "api", "path": "/a", "url": "https://a/"}},
            },
            id="url-and-source",
        ),
    ],
)
def test_broken_sources_do_not_match(document: dict[str, Any]) -> None:
    assert not VALIDATOR.is_valid(document)
