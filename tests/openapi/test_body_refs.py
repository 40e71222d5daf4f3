"""A request body reached through ``$ref`` is followed, or its operation skipped with a reason.

Swagger 2.0 gives the body as a ``body`` (or ``formData``) parameter, and a parameter
may be a ``$ref`` to another parameter anywhere in the file, which may itself be a
``$ref``. Every chain is followed (percent-encoded or not, bounded, a loop stopped);
one that leads nowhere skips the operation with the reason. No tool is written
without the body its description declares. OpenAPI 3's ``requestBody`` and parameter
refs are followed the same way.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit import ToolRegistry, load_tools
from agentkit.openapi import import_openapi
from agentkit.openapi.pointers import MAX_REF_CHAIN
from tests.openapi.test_import import FINE, OK, minimal, write_spec

PET = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
}
BODY = {"name": "body", "in": "body", "required": True, "schema": {"$ref": "#/definitions/Pet"}}


def _swagger(operation_parameters: list[Any], **extra: Any) -> dict[str, Any]:
    """A Swagger 2.0 description whose ``POST /target`` takes ``operation_parameters``,
    beside ``POST /other`` with an inline body parameter to refer to."""
    document: dict[str, Any] = {
        "swagger": "2.0",
        "info": {"title": "T", "version": "1"},
        "host": "api.example.com",
        "consumes": ["application/json"],
        "definitions": {"Pet": PET},
        "parameters": {
            "Body Param": copy.deepcopy(BODY),
            "Chain": {"$ref": "#/parameters/Body%20Param"},
            "Chain~2": {"$ref": "#/parameters/Chain"},
            "ToOther": {"$ref": "#/paths/~1other/post/parameters/0"},
            "Name": {"name": "name", "in": "formData", "type": "string", "required": True},
            "FormChain": {"$ref": "#/parameters/Name"},
        },
        "paths": {
            "/other": {
                "parameters": [{"$ref": "#/parameters/Chain"}],
                "post": {"operationId": "other", "parameters": [BODY], "responses": OK},
            },
            "/target": {
                "post": {
                    "operationId": "target",
                    "parameters": operation_parameters,
                    "responses": OK,
                }
            },
            "/fine": {"get": {"operationId": "fine", "responses": OK}},
        },
    }
    document.update(extra)
    return document


def _imported(tmp_path: Path, document: dict[str, Any]) -> tuple[Path, Any]:
    out = tmp_path / "tools.d"
    report = import_openapi(write_spec(tmp_path, document), source="api", out=out)
    registry = ToolRegistry()
    load_tools(out, registry=registry)  # every file written loads
    return out, report


def _http(out: Path, name: str) -> dict[str, Any]:
    document = yaml.safe_load((out / f"{name}.yaml").read_text(encoding="utf-8"))
    http: dict[str, Any] = document["backend"]["http"]
    return http


def _input_names(out: Path, name: str) -> set[str]:
    document = yaml.safe_load((out / f"{name}.yaml").read_text(encoding="utf-8"))
    return {param["name"] for param in document.get("input_schema", {}).get("parameters", [])}


@pytest.mark.parametrize(
    "ref",
    [
        "#/parameters/Body%20Param",
        "#/%70arameters/Body%20Param",
        "#/parameters/Chain",
        "#/parameters/Chain~02",
        "#/parameters/Chain%7E02",
        "#/parameters/ToOther",
        "#/paths/~1other/post/parameters/0",
        "#/paths/%7E1other/post/parameters/0",
        "#/paths/~1other/parameters/0",
    ],
    ids=[
        "encoded",
        "encoded-key",
        "chain",
        "chain-of-chains",
        "chain-encoded-tilde",
        "chain-to-another-operation",
        "another-operation",
        "another-operation-encoded",
        "another-path-item",
    ],
)
def test_a_body_parameter_is_followed_through_every_chain(tmp_path: Path, ref: str) -> None:
    out, report = _imported(tmp_path, _swagger([{"$ref": ref}]))
    assert report.skipped == []
    http = _http(out, "target")
    assert http["method"] == "POST"
    assert http["json"] == {"name": "{{ inputs.name }}", "age": "{{ inputs.age }}"}
    assert _input_names(out, "target") == {"name", "age"}


def test_a_shared_body_parameter_is_followed_too(tmp_path: Path) -> None:
    document = _swagger([])
    document["paths"]["/target"]["parameters"] = [{"$ref": "#/parameters/Chain~02"}]
    out, report = _imported(tmp_path, document)
    assert report.skipped == []
    assert _http(out, "target")["json"] == {"name": "{{ inputs.name }}", "age": "{{ inputs.age }}"}


@pytest.mark.parametrize(
    "ref", ["#/parameters/FormChain", "#/parameters/%46ormChain"], ids=["chain", "encoded"]
)
def test_a_form_parameter_is_followed_through_a_chain(tmp_path: Path, ref: str) -> None:
    document = _swagger([{"$ref": ref}])
    document["paths"]["/target"]["post"]["consumes"] = ["application/x-www-form-urlencoded"]
    out, report = _imported(tmp_path, document)
    assert report.skipped == []
    assert _http(out, "target")["form"] == {"name": "{{ inputs.name }}"}


def _loop(document: dict[str, Any]) -> None:
    document["parameters"]["A"] = {"$ref": "#/parameters/B"}
    document["parameters"]["B"] = {"$ref": "#/parameters/A"}


def _too_long(document: dict[str, Any]) -> None:
    for index in range(MAX_REF_CHAIN + 5):
        document["parameters"][f"L{index}"] = {"$ref": f"#/parameters/L{index + 1}"}
    document["parameters"][f"L{MAX_REF_CHAIN + 5}"] = copy.deepcopy(BODY)


@pytest.mark.parametrize(
    ("parameters", "change", "pointer", "message"),
    [
        (
            [{"$ref": "#/parameters/A"}],
            _loop,
            "#/parameters/B",
            "$ref '#/parameters/A' refers to itself",
        ),
        (
            [{"$ref": "#/parameters/L0"}],
            _too_long,
            f"#/parameters/L{MAX_REF_CHAIN - 1}",
            f"$ref '#/parameters/L{MAX_REF_CHAIN}' is the {MAX_REF_CHAIN + 1}th of a chain; "
            f"at most {MAX_REF_CHAIN} are followed",
        ),
        (
            [{"$ref": "#/parameters/Gone"}],
            lambda document: document["parameters"].update(Gone={"$ref": "#/parameters/Nothing"}),
            "#/parameters/Gone",
            "$ref '#/parameters/Nothing' points at nothing: #/parameters has no 'Nothing'",
        ),
        (
            [{"$ref": "#/parameters/Far"}],
            lambda document: document["parameters"].update(Far={"$ref": "other.yaml#/Body"}),
            "#/parameters/Far",
            "$ref 'other.yaml#/Body' points outside this file; not supported",
        ),
        (
            [{"$ref": "#/parameters/Bad"}],
            lambda document: document["parameters"].update(Bad={"$ref": "#/parameters/%zz"}),
            "#/parameters/Bad",
            "$ref '#/parameters/%zz' is not a valid JSON pointer",
        ),
        (
            [{"$ref": "#/parameters/Chain"}, {"$ref": "#/parameters/FormChain"}],
            None,
            "#/parameters/Name",
            "body and formData parameters together: a request has one body",
        ),
        (
            [{"$ref": "#/parameters/Chain"}, {**BODY, "name": "second"}],
            None,
            "#/paths/~1target/post/parameters/1",
            "more than one body parameter: a request has one body",
        ),
    ],
    ids=["loop", "too-long", "to-nothing", "outside", "bad-pointer", "body-and-form", "two-bodies"],
)
def test_a_chain_that_leads_nowhere_skips_the_operation_with_the_reason(
    tmp_path: Path, parameters: list[Any], change: Any, pointer: str, message: str
) -> None:
    document = _swagger(parameters)
    if change is not None:
        change(document)
    out, report = _imported(tmp_path, document)
    [skipped] = report.skipped
    assert skipped.operation == "target"
    assert skipped.problem.path == pointer
    assert message in skipped.problem.message
    assert not (out / "target.yaml").exists()


# -- OpenAPI 3: requestBody and parameter refs through chains --------------------------------


def _openapi(operation: dict[str, Any]) -> dict[str, Any]:
    json_body = {"required": True, "content": {"application/json": {"schema": PET}}}
    return minimal(
        {
            "/other": {
                "post": {"operationId": "other", "requestBody": json_body, "responses": OK},
                "get": {
                    "operationId": "other_get",
                    "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}],
                    "responses": OK,
                },
            },
            "/target": {"post": {"operationId": "target", "responses": OK, **operation}},
            **FINE,
        },
        components={
            "requestBodies": {
                "Pet Body": json_body,
                "Chain": {"$ref": "#/components/requestBodies/Pet%20Body"},
                "Chain~2": {"$ref": "#/components/requestBodies/Chain"},
                "Loop": {"$ref": "#/components/requestBodies/Loop"},
            },
            "parameters": {
                "Q": {"name": "q", "in": "query", "schema": {"type": "string"}},
                "QChain": {"$ref": "#/components/parameters/Q"},
            },
        },
    )


@pytest.mark.parametrize(
    "ref",
    [
        "#/components/requestBodies/Chain",
        "#/components/requestBodies/Chain~02",
        "#/components/%72equestBodies/Chain%7E02",
        "#/paths/~1other/post/requestBody",
    ],
    ids=["chain", "chain-of-chains", "encoded", "another-operation"],
)
def test_a_request_body_is_followed_through_every_chain(tmp_path: Path, ref: str) -> None:
    out, report = _imported(tmp_path, _openapi({"requestBody": {"$ref": ref}}))
    assert report.skipped == []
    assert _http(out, "target")["json"] == {"name": "{{ inputs.name }}", "age": "{{ inputs.age }}"}


@pytest.mark.parametrize(
    "ref",
    ["#/components/parameters/QChain", "#/paths/~1other/get/parameters/0"],
    ids=["chain", "another-operation"],
)
def test_a_parameter_is_followed_through_every_chain(tmp_path: Path, ref: str) -> None:
    out, report = _imported(tmp_path, _openapi({"parameters": [{"$ref": ref}]}))
    assert report.skipped == []
    assert _http(out, "target")["query"] == {"q": "{{ inputs.q }}"}


def test_a_request_body_loop_skips_the_operation(tmp_path: Path) -> None:
    document = _openapi({"requestBody": {"$ref": "#/components/requestBodies/Loop"}})
    _, report = _imported(tmp_path, document)
    [skipped] = report.skipped
    assert skipped.problem.path == "#/components/requestBodies/Loop"
    assert "refers to itself" in skipped.problem.message


def test_a_body_parameter_in_an_openapi_3_description_is_not_dropped(tmp_path: Path) -> None:
    document = _openapi({"parameters": [{"name": "pet", "in": "body", "schema": PET}]})
    _, report = _imported(tmp_path, document)
    [skipped] = report.skipped
    assert skipped.problem.path == "#/paths/~1target/post/parameters/0"
    assert skipped.problem.message == (
        "parameter 'pet' is in 'body', which no request body was read from "
        "(an OpenAPI 3 operation gives its body as 'requestBody')"
    )
