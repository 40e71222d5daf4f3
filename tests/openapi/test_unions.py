"""Unions in a description (oneOf, anyOf, a list of types) imported as agentkit unions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from agentkit.cli import main
from tests.declarative.loopback import serve
from tests.openapi.test_import import OK, definition, imported, inputs, minimal, write_spec
from tests.openapi.test_request_shapes import Recorder, _call, _import

STRING_OR_INTEGER = ["string", "integer"]


def body_of(schema: dict[str, Any], *, required: list[str] | None = None) -> dict[str, Any]:
    """A request body of one property, ``value``, of ``schema``."""
    body = {"type": "object", "properties": {"value": schema}, "required": required or []}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": body}}}}


def import_required(tmp_path: Path, schema: dict[str, Any], version: str) -> Path:
    """A POST whose body's one property, ``value`` (required), is ``schema``; the folder."""
    operation = {"operationId": "op", "responses": OK, **body_of(schema, required=["value"])}
    document = minimal(
        {"/op": {"post": operation}},
        openapi=version,
        components={"schemas": {"Text": {"type": "string"}}},
    )
    out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert report.skipped == []
    assert main(["validate", "--strict", str(out)]) == 0
    return out


def imported_value(tmp_path: Path, schema: dict[str, Any], version: str = "3.0.3") -> Any:
    document = minimal(
        {"/op": {"post": {"operationId": "op", "responses": OK, **body_of(schema)}}},
        openapi=version,
    )
    out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert report.skipped == []
    assert main(["validate", "--strict", str(out)]) == 0
    return inputs(out, "op").get("value"), (out / "op.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("schema", "version", "expected"),
    [
        pytest.param(
            {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "3.0.3",
            STRING_OR_INTEGER,
            id="oneOf",
        ),
        pytest.param(
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "3.0.3",
            STRING_OR_INTEGER,
            id="anyOf",
        ),
        pytest.param({"type": ["string", "integer"]}, "3.1.0", STRING_OR_INTEGER, id="type-list"),
        pytest.param(
            {"oneOf": [{"type": "integer"}, {"type": "number"}]},
            "3.0.3",
            ["integer", "float"],
            id="numbers",
        ),
        pytest.param(
            {"oneOf": [{"type": "boolean"}, {"type": "string"}, {"type": "integer"}]},
            "3.0.3",
            ["boolean", "string", "integer"],
            id="three-in-order",
        ),
        pytest.param(
            {
                "oneOf": [
                    {"type": "string"},
                    {"type": "string", "format": "date"},
                    {"type": "integer"},
                ]
            },
            "3.0.3",
            STRING_OR_INTEGER,
            id="a-type-twice",
        ),
        pytest.param(
            {"oneOf": [{"enum": ["a", "b"]}, {"type": "integer"}]},
            "3.0.3",
            STRING_OR_INTEGER,
            id="enum-variant",
        ),
        pytest.param(
            {"oneOf": [{"$ref": "#/components/schemas/Text"}, {"type": "integer"}]},
            "3.0.3",
            STRING_OR_INTEGER,
            id="ref-variant",
        ),
    ],
)
def test_a_union_of_scalar_types_is_typed_as_one(
    tmp_path: Path, schema: dict[str, Any], version: str, expected: list[str]
) -> None:
    out = import_required(tmp_path, schema, version)
    assert inputs(out, "op")["value"] == {"name": "value", "type": expected}


@pytest.mark.parametrize(
    ("schema", "version"),
    [
        pytest.param(
            {"oneOf": [{"type": "string"}, {"type": "integer"}], "nullable": True},
            "3.0.3",
            id="nullable",
        ),
        pytest.param(
            {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            "3.1.0",
            id="null-variant",
        ),
        pytest.param({"type": ["string", "integer", "null"]}, "3.1.0", id="null-in-type-list"),
    ],
)
def test_a_nullable_union_is_an_optional_union(
    tmp_path: Path, schema: dict[str, Any], version: str
) -> None:
    out = import_required(tmp_path, schema, version)
    assert inputs(out, "op")["value"] == {
        "name": "value",
        "type": STRING_OR_INTEGER,
        "required": False,
    }


def test_constraints_of_the_types_are_noted_and_a_fitting_default_kept(tmp_path: Path) -> None:
    value, text = imported_value(
        tmp_path,
        {
            "oneOf": [{"type": "string", "pattern": "^[a-z]+$"}, {"type": "integer", "minimum": 1}],
            "default": 5,
            "description": "A name or a number",
        },
    )
    assert value == {
        "name": "value",
        "type": STRING_OR_INTEGER,
        "description": "A name or a number",
        "default": 5,
        "required": False,
    }
    assert (
        "# note: body.value: string or integer: the constraints of each type are not kept" in text
    )


def test_a_default_of_neither_type_is_left_out(tmp_path: Path) -> None:
    value, text = imported_value(tmp_path, {"type": ["string", "integer"], "default": 1.5}, "3.1.0")
    assert "default" not in value
    assert "default left out: it does not fit the type" in text


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param(
            {
                "oneOf": [
                    {"$ref": "#/components/schemas/Cat"},
                    {"$ref": "#/components/schemas/Dog"},
                ],
                "discriminator": {"propertyName": "kind"},
            },
            {"name": "value", "type": "dictionary", "required": False},
            id="objects-with-a-discriminator",
        ),
        pytest.param(
            {
                "oneOf": [
                    {"type": "string"},
                    {"type": "object", "properties": {"a": {"type": "string"}}},
                ]
            },
            None,
            id="scalar-or-object",
        ),
        pytest.param(
            {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
            None,
            id="scalar-or-list",
        ),
    ],
)
def test_a_union_with_a_container_is_not_a_union(
    tmp_path: Path, schema: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    cat = {
        "type": "object",
        "properties": {"kind": {"type": "string"}, "purrs": {"type": "boolean"}},
    }
    dog = {
        "type": "object",
        "properties": {"kind": {"type": "string"}, "barks": {"type": "boolean"}},
    }
    document = minimal(
        {"/op": {"post": {"operationId": "op", "responses": OK, **body_of(schema)}}},
        components={"schemas": {"Cat": cat, "Dog": dog}},
    )
    out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert report.skipped == []
    parameters = definition(out, "op").get("input_schema", {}).get("parameters", [])
    assert {p["name"]: p for p in parameters}.get("value") == expected


def untypable_inside(required: bool) -> dict[str, Any]:
    """An optional (or required) list of objects whose required ``value`` has no type."""
    item = {
        "type": "object",
        "required": ["value"],
        "properties": {
            "field_id": {"type": "integer"},
            "value": {
                "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
            },
        },
    }
    body = {
        "type": "object",
        "required": ["title", *(["fields"] if required else [])],
        "properties": {
            "title": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "fields": {"type": "array", "items": item},
        },
    }
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": body}}}}


def test_an_optional_property_holding_an_untypable_one_is_left_out(tmp_path: Path) -> None:
    document = minimal(
        {"/op": {"post": {"operationId": "op", "responses": OK, **untypable_inside(False)}}}
    )
    out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert report.skipped == []
    assert set(inputs(out, "op")) == {"title"}
    text = (out / "op.yaml").read_text(encoding="utf-8")
    pointer = "#/paths/~1op/post/requestBody/content/application~1json/schema/properties/fields/items/properties/value"
    assert (
        f"# note: body.fields: left out: required property 'value' has no single type ({pointer})"
        in text
    )


def test_a_required_property_holding_an_untypable_one_skips_the_operation(tmp_path: Path) -> None:
    document = minimal(
        {"/op": {"post": {"operationId": "op", "responses": OK, **untypable_inside(True)}}}
    )
    _, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    (skipped,) = report.skipped
    assert skipped.problem.message == "required property 'value' has no single type"


def test_an_output_union_is_typed_and_checked(tmp_path: Path) -> None:
    created = {
        "type": "object",
        "properties": {"id": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
    }
    reply = {"201": {"description": "made", "content": {"application/json": {"schema": created}}}}
    recorder = Recorder(payload={"id": 7})
    with serve({"/op": recorder}) as origin:
        document = minimal(
            {
                "/op": {
                    "post": {"operationId": "op", "responses": reply, **body_of({"type": "string"})}
                }
            },
            servers=[{"url": origin}],
        )
        out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
        assert report.skipped == []
        outputs = {p["name"]: p for p in definition(out, "op")["output_schema"]["parameters"]}
        assert outputs["id"]["type"] == STRING_OR_INTEGER
        assert _call(out, {"value": "x"}).output == {"id": 7}


@pytest.mark.parametrize("value", ["42", 42], ids=["string", "integer"])
def test_a_union_value_is_sent_as_the_type_given(tmp_path: Path, value: Any) -> None:
    """A body field keeps its JSON type: "42" stays a string, 42 an integer."""
    recorder = Recorder()
    schema = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    with serve({"/op": recorder}) as origin:
        out = _import(tmp_path, body_of(schema, required=["value"]), origin)
        result = _call(out, {"value": value})
        assert result.succeeded, result.error
    assert json.loads(recorder.bodies[-1]) == {"value": value}


@pytest.mark.parametrize(
    ("value", "sent"),
    [("42", "42"), (42, "42"), (True, "true")],
    ids=["string", "integer", "boolean"],
)
def test_a_union_in_the_query_and_a_cookie_is_sent_as_text(
    tmp_path: Path, value: Any, sent: str
) -> None:
    schema = {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]}
    parameters = [
        {"name": "q", "in": "query", "required": True, "schema": schema},
        {"name": "c", "in": "cookie", "required": True, "schema": schema},
    ]
    recorder = Recorder()
    with serve({"/op": recorder}) as origin:
        out = _import(tmp_path, {"parameters": parameters}, origin)
        assert inputs(out, "op")["q"]["type"] == ["string", "integer", "boolean"]
        result = _call(out, {"q": value, "c": value})
        assert result.succeeded, result.error
    handler = recorder.seen[-1]
    assert dict(parse_qsl(urlsplit(handler.path).query)) == {"q": sent}
    assert handler.headers["Cookie"] == f"c={sent}"
