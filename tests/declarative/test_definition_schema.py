"""The shipped JSON Schema of the definition format: valid, in step with the parser, and true of tools.d."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from agentkit.declarative import definition_schema
from agentkit.declarative.backends.http.auth import OAUTH2_KEYS
from agentkit.declarative.backends.http.multipart import MULTIPART_KEYS, PART_KEYS
from agentkit.declarative.backends.http.pagination import KIND_KEYS, PAGINATE_KEYS
from agentkit.declarative.backends.http.sources import SOURCE_KEYS
from agentkit.declarative.backends.http.spec import HTTP_KEYS, METHODS
from agentkit.declarative.definition import ANNOTATION_KEYS, TOP_LEVEL_KEYS
from agentkit.schema.parse import _ELEMENT_KEYS
from agentkit.schema.values import UNION_TYPES
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
    assert set(defs["paginate"]["properties"]) == set(PAGINATE_KEYS)
    assert set(defs["multipart"]["properties"]) == set(MULTIPART_KEYS)
    assert set(defs["multipartFile"]["properties"]) == set(PART_KEYS)
    for kind, (allowed, required) in KIND_KEYS.items():
        shape = defs["paginate"]["properties"][kind]
        shape = defs[shape["$ref"].rsplit("/", 1)[1]] if "$ref" in shape else shape
        assert set(shape.get("properties", {})) == set(allowed), kind
        assert set(shape.get("required", [])) == set(required), kind
    assert set(defs["source"]["properties"]) == set(SOURCE_KEYS)
    (oauth2,) = [
        kind["properties"]["oauth2"]
        for kind in defs["http"]["properties"]["auth"]["oneOf"]
        if "oauth2" in kind.get("properties", {})
    ]
    assert set(oauth2["properties"]) == set(OAUTH2_KEYS)
    assert set(defs["element"]["properties"]) == set(_ELEMENT_KEYS)
    one, union = defs["type"]["oneOf"]
    assert one["enum"] == list(PARAMETER_TYPES)
    assert union["items"]["enum"] == list(UNION_TYPES)


@pytest.mark.parametrize("path", sorted(TOOLS_D.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_definition_matches(path: Path) -> None:
    for document in yaml.safe_load_all(path.read_text()):
        VALIDATOR.validate(document)


def paginated(paginate: dict[str, Any]) -> dict[str, Any]:
    http = {"url": "https://a/x?per_page=5", "query": {"tag": ["a", "b"]}, "paginate": paginate}
    return {"name": "x", "version": "1.0.0", "backend": {"http": http}}


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(paginated({"link": {}, "output": "records"}), id="link"),
        pytest.param(paginated({"link": None, "output": "records"}), id="link-null"),
        pytest.param(
            paginated({"cursor": {"param": "a", "next": "{{ response.json.n }}"}, "output": "r"}),
            id="cursor",
        ),
        pytest.param(
            paginated(
                {
                    "page": {"param": "p", "start": 1, "size_param": "n", "size": 5},
                    "items": "{{ response.json.data }}",
                    "output": "r",
                    "max_pages": 3,
                    "max_items": 50,
                    "max_bytes": 1000,
                }
            ),
            id="page",
        ),
    ],
)
def test_paginated_definitions_match(document: dict[str, Any]) -> None:
    VALIDATOR.validate(document)


def uploading(multipart: dict[str, Any], **http: Any) -> dict[str, Any]:
    backend = {"http": {"method": "POST", "url": "https://a/up", "multipart": multipart, **http}}
    return {"name": "x", "version": "1.0.0", "backend": backend}


def test_a_multipart_definition_matches() -> None:
    files = {"f": {"content": "{{ inputs.f }}", "encoding": "base64", "filename": "a.png"}}
    VALIDATOR.validate(uploading({"fields": {"a": ["x", "y"]}, "files": files, "max_bytes": 9}))


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(uploading({}), id="empty"),
        pytest.param(uploading({"fields": {"a": "b"}}, form={"a": "b"}), id="with-form"),
        pytest.param(uploading({"fields": {"a": "b"}}, content_type="text/plain"), id="type"),
        pytest.param(uploading({"files": {"f": {"filename": "a"}}}), id="file-no-content"),
        pytest.param(uploading({"files": {"f": {"content": "x", "encoding": "hex"}}}), id="enc"),
    ],
)
def test_broken_multipart_definitions_do_not_match(document: dict[str, Any]) -> None:
    assert not VALIDATOR.is_valid(document)


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(paginated({"output": "r"}), id="paginate-without-kind"),
        pytest.param(paginated({"link": {}, "page": {"param": "p"}, "output": "r"}), id="two"),
        pytest.param(paginated({"cursor": {"param": "a"}, "output": "r"}), id="cursor-no-next"),
        pytest.param(
            paginated({"page": {"param": "p", "size_param": "n"}, "output": "r"}),
            id="size-param-without-size",
        ),
        pytest.param(paginated({"link": {}}), id="no-output"),
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


def with_input(*parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "x",
        "version": "1.0.0",
        "backend": {"python": "a:b"},
        "input_schema": {"parameters": list(parameters)},
    }


def test_string_lengths_match() -> None:
    VALIDATOR.validate(with_input({"name": "a", "type": "string", "min_length": 0}))
    VALIDATOR.validate(
        with_input({"name": "a", "type": "string", "min_length": 1, "max_length": 1})
    )


@pytest.mark.parametrize(
    "length", [-1, 1.5, "3", None, True], ids=["negative", "float", "text", "null", "bool"]
)
def test_lengths_that_are_not_counts_do_not_match(length: Any) -> None:
    assert not VALIDATOR.is_valid(with_input({"name": "a", "type": "string", "max_length": length}))


SOURCE_DOCUMENT = {
    "source": "api",
    "base_url": "${API_URL:-https://api.example.com}/v1",
    "credentials": ["token", "id", "secret"],
    "auth": {
        "oauth2": {
            "token_url": "https://auth.example.com/oauth/token",
            "client_id": "id",
            "client_secret": "secret",
            "scopes": ["items.read", "items:write"],
        }
    },
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


def test_shared_parameters_match() -> None:
    VALIDATOR.validate({**SOURCE_DOCUMENT, "parameters": [{"name": "owner", "type": "string"}]})
    taken = ["owner", {"use": "repo", "required": False}, {"name": "n", "type": "integer"}]
    VALIDATOR.validate({**SOURCE_TOOL, "input_schema": {"parameters": taken}})
    for wrong in ({"use": "repo", "type": "string"}, {"use": 3}, 3):
        document = {**SOURCE_TOOL, "input_schema": {"parameters": [wrong]}}
        assert not VALIDATOR.is_valid(document), wrong
    assert not VALIDATOR.is_valid({**SOURCE_DOCUMENT, "parameters": ["owner"]})


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


@pytest.mark.parametrize(("auth", "valid"), [("none", True), ("off", False), (None, False)])
def test_auth_none_matches_and_other_words_do_not(auth: Any, valid: bool) -> None:
    http = {"source": "s", "path": "/x", "auth": auth}
    document = {"name": "x", "version": "1.0.0", "backend": {"http": http}}
    assert VALIDATOR.is_valid(document) is valid


def test_toolsets_match_and_list_the_keys_the_loader_reads() -> None:
    from agentkit.declarative.toolsets import TOOLSET_KEYS
    from tests.support.toolsets import TOOLSETS

    assert set(SCHEMA["$defs"]["toolset"]["properties"]) == set(TOOLSET_KEYS)
    for document in yaml.safe_load_all(TOOLSETS):
        VALIDATOR.validate(document)


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({"toolset": "t"}, id="no-tools"),
        pytest.param({"toolset": "t", "tools": []}, id="empty-tools"),
        pytest.param({"toolset": "t", "tools": ["a"], "version": "1.0.0"}, id="a-tool-key"),
        pytest.param({"toolset": "t", "tools": [{"tag": {"a": "b"}}]}, id="tag-mapping"),
        pytest.param({"toolset": "t", "tools": ["a b"]}, id="not-a-name"),
        pytest.param({"toolset": "t/x", "tools": ["a"]}, id="bad-name"),
    ],
)
def test_broken_toolsets_do_not_match(document: dict[str, Any]) -> None:
    assert not VALIDATOR.is_valid(document)
