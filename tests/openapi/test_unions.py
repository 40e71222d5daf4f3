"""Unions in a description (oneOf, anyOf, a list of types) imported as agentkit unions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from agentkit.cli import main
from tests.openapi.test_import import FINE, OK, definition, imported, inputs, minimal, write_spec
from tests.openapi.test_request_shapes import Recorder, _call, _import
from tests.support.loopback import serve

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
            {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}]},
            {"name": "value", "type": ["string", "list"], "items": "integer", "required": False},
            id="scalar-or-list-is-one",
        ),
        pytest.param(
            {
                "oneOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"type": "string"}},
                    {"type": "array", "items": {"type": "integer"}},
                ]
            },
            None,
            id="lists-of-two-kinds",
        ),
    ],
)
def test_a_union_with_an_object_is_not_a_union(
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
                "oneOf": [
                    {"type": "string"},
                    {"type": "object", "properties": {"a": {"type": "string"}}},
                ]
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
        {"/op": {"post": {"operationId": "op", "responses": OK, **untypable_inside(True)}}, **FINE}
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


# -- enums and consts of mixed types -----------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "version", "expected"),
    [
        pytest.param(
            {"enum": [1, "auto", None]},
            "3.0.3",
            {"type": ["integer", "string"], "enum": [1, "auto"], "required": False},
            id="enum-without-type-null-is-optional",
        ),
        pytest.param(
            {"type": ["integer", "string", "null"], "enum": [1, "auto", None]},
            "3.1.0",
            {"type": ["integer", "string"], "enum": [1, "auto"], "required": False},
            id="type-list-with-enum",
        ),
        pytest.param(
            {"enum": [0, 2.5, "auto", True]},
            "3.0.3",
            {"type": ["integer", "float", "string", "boolean"], "enum": [0, 2.5, "auto", True]},
            id="four-kinds",
        ),
        pytest.param(
            {"oneOf": [{"const": 0}, {"type": "string", "enum": ["low", "high"]}]},
            "3.1.0",
            {"type": ["integer", "string"], "enum": [0, "low", "high"]},
            id="const-beside-strings",
        ),
        pytest.param(
            {"anyOf": [{"const": "auto"}, {"const": 1}, {"const": 1}]},
            "3.1.0",
            {"type": ["string", "integer"], "enum": ["auto", 1]},
            id="consts-each-once",
        ),
        pytest.param(
            {"oneOf": [{"type": "boolean"}, {"type": "string", "enum": ["true", "false"]}]},
            "3.0.3",
            {"type": ["boolean", "string"], "enum": [True, False, "true", "false"]},
            id="boolean-or-its-spelling",  # GitHub's gists_create.public
        ),
        pytest.param(
            {"oneOf": [{"enum": [1, "one"]}, {"type": "boolean"}]},
            "3.0.3",
            {"type": ["integer", "string", "boolean"], "enum": [1, "one", True, False]},
            id="a-mixed-enum-variant",
        ),
    ],
)
def test_a_mixed_enum_or_const_is_a_union_with_its_values(
    tmp_path: Path, schema: dict[str, Any], version: str, expected: dict[str, Any]
) -> None:
    out = import_required(tmp_path, schema, version)
    assert inputs(out, "op")["value"] == {"name": "value", **expected}


def test_a_member_that_takes_any_value_keeps_no_enum(tmp_path: Path) -> None:
    value, text = imported_value(
        tmp_path, {"oneOf": [{"type": "integer"}, {"const": "auto"}]}, "3.1.0"
    )
    assert value == {"name": "value", "type": STRING_OR_INTEGER[::-1], "required": False}
    assert (
        "# note: body.value: integer or string: the constraints of each type are not kept" in text
    )


@pytest.mark.parametrize(
    ("schema", "expected", "note"),
    [
        pytest.param(
            {"enum": [1, "auto", {"mode": "x"}, [2]]},
            {"type": ["integer", "string"], "enum": [1, "auto"]},
            'enum value {"mode": "x"} left out: not of the types integer, string',
            id="an-object-and-a-list",
        ),
        pytest.param(
            {"type": "string", "enum": ["a", 1]},
            {"type": "string", "enum": ["a"]},
            "enum value 1 left out: not of the type string",
            id="one-not-of-the-type",
        ),
        pytest.param(
            {"enum": [1, {"x": 1}, 2]},
            {"type": "integer", "enum": [1, 2]},
            'enum value {"x": 1} left out: not of the type integer',
            id="one-type-left",
        ),
        pytest.param(
            {"type": ["integer", "array"], "items": {"type": "string"}, "enum": [1, "x"]},
            {"type": ["integer", "list"], "items": "string", "enum": [1]},
            'enum value "x" left out: not of the types integer, list',
            id="type-list",
        ),
    ],
)
def test_an_enum_value_agentkit_cannot_hold_is_noted_where_it_was(
    tmp_path: Path, schema: dict[str, Any], expected: dict[str, Any], note: str
) -> None:
    value, text = imported_value(tmp_path, schema, "3.1.0")
    assert value == {"name": "value", **expected, "required": False}
    pointer = "#/paths/~1op/post/requestBody/content/application~1json/schema/properties/value"
    assert f"# note: body.value: {note} ({pointer})" in text


def test_an_output_union_keeps_no_enum(tmp_path: Path) -> None:
    created = {"type": "object", "properties": {"mode": {"enum": [0, "auto"]}}}
    reply = {"200": {"description": "ok", "content": {"application/json": {"schema": created}}}}
    document = minimal({"/op": {"get": {"operationId": "op", "responses": reply}}})
    out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert report.skipped == []
    outputs = definition(out, "op")["output_schema"]["parameters"]
    assert outputs == [{"name": "mode", "type": ["integer", "string"], "required": False}]


# -- a scalar or a list ------------------------------------------------------------------------

STRING_OR_LIST = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}


@pytest.mark.parametrize(
    ("schema", "version", "expected"),
    [
        pytest.param(
            STRING_OR_LIST, "3.0.3", {"type": ["string", "list"], "items": "string"}, id="oneOf"
        ),
        pytest.param(
            {"type": ["string", "array"], "items": {"type": "integer"}},
            "3.1.0",
            {"type": ["string", "list"], "items": "integer"},
            id="type-list",
        ),
        pytest.param(
            {
                "oneOf": [
                    {"type": "string", "enum": ["patch"]},
                    {"type": "array", "items": {"type": "string", "enum": ["patch"]}},
                ]
            },
            "3.0.3",
            {
                "type": ["string", "list"],
                "enum": ["patch"],
                "items": {"type": "string", "enum": ["patch"]},
            },
            id="enum-on-both",
        ),
        pytest.param(
            {
                "oneOf": [
                    {"type": "string"},
                    {"type": "number"},
                    {"type": "array", "items": {"type": "string"}},
                ]
            },
            "3.0.3",
            {"type": ["string", "float", "list"], "items": "string"},
            id="githubs-issue-field-value",
        ),
        pytest.param(
            {"anyOf": [{"type": "string"}, {"type": "array"}]},
            "3.0.3",
            {"type": ["string", "list"]},
            id="a-free-form-list",
        ),
    ],
)
def test_a_scalar_or_a_list_is_a_union_with_items(
    tmp_path: Path, schema: dict[str, Any], version: str, expected: dict[str, Any]
) -> None:
    out = import_required(tmp_path, schema, version)
    assert inputs(out, "op")["value"] == {"name": "value", **expected}


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        pytest.param("a", {"multi": ["a"], "joined": ["a"], "X-Tags": "a"}, id="one"),
        pytest.param(
            ["a", "b c"],
            {"multi": ["a", "b c"], "joined": ["a,b c"], "X-Tags": "a,b c"},
            id="a-list",
        ),
        pytest.param(
            "a,b", {"multi": ["a,b"], "joined": ["a,b"], "X-Tags": "a,b"}, id="text-with-a-comma"
        ),
    ],
)
def test_a_scalar_or_a_list_is_sent_as_a_list_is_or_as_one_value(
    tmp_path: Path, value: Any, sent: dict[str, Any]
) -> None:
    """Exploded in the query, a list is sent once per item; joined (``explode: false``,
    a header), its items with ``,``; one string, as it is, in either."""
    parameters = [
        {"name": "multi", "in": "query", "required": True, "schema": STRING_OR_LIST},
        {
            "name": "joined",
            "in": "query",
            "required": True,
            "explode": False,
            "schema": STRING_OR_LIST,
        },
        {"name": "X-Tags", "in": "header", "required": True, "schema": STRING_OR_LIST},
    ]
    recorder = Recorder()
    with serve({"/op": recorder}) as origin:
        out = _import(tmp_path, {"parameters": parameters, **body_of(STRING_OR_LIST)}, origin)
        result = _call(out, {"multi": value, "joined": value, "x_tags": value, "value": value})
        assert result.succeeded, result.error
    handler = recorder.seen[-1]
    query: dict[str, list[str]] = {}
    for key, item in parse_qsl(urlsplit(handler.path).query):
        query.setdefault(key, []).append(item)
    assert query == {"multi": sent["multi"], "joined": sent["joined"]}
    assert handler.headers["X-Tags"] == sent["X-Tags"]
    assert json.loads(recorder.bodies[-1]) == {"value": value}


def test_a_scalar_or_a_list_in_a_cookie_is_left_out(tmp_path: Path) -> None:
    parameters = [{"name": "c", "in": "cookie", "schema": STRING_OR_LIST}]
    out = _import(tmp_path, {"parameters": parameters})
    assert "input_schema" not in definition(out, "op")
    text = (out / "op.yaml").read_text(encoding="utf-8")
    assert "# note: cookie c: a list-valued cookie is not supported: left out" in text


@pytest.mark.parametrize(
    ("schema", "expected", "note"),
    [
        pytest.param(
            {"enum": ["x", "y", None]},
            {"type": "string", "enum": ["x", "y"], "required": False},
            None,
            id="null-without-type-is-optional",
        ),
        pytest.param(
            {"type": "string", "enum": ["x", None]},
            {"type": "string", "enum": ["x"]},
            None,
            id="null-the-type-refuses-is-dropped",
        ),
        pytest.param(
            {"enum": [True, False, None]},
            {"type": "boolean", "required": False},
            None,
            id="both-booleans-need-no-enum",
        ),
        pytest.param(
            {"type": "boolean", "enum": [True]},
            {"type": "boolean"},
            "enum [true] left out: a boolean has none",
            id="one-boolean-is-noted",  # it skipped the operation: a boolean takes no enum
        ),
    ],
)
def test_an_enum_of_one_type_keeps_its_values_and_says_what_it_dropped(
    tmp_path: Path, schema: dict[str, Any], expected: dict[str, Any], note: str | None
) -> None:
    out = import_required(tmp_path, schema, "3.1.0")
    assert inputs(out, "op")["value"] == {"name": "value", **expected}
    text = (out / "op.yaml").read_text(encoding="utf-8")
    if note is None:
        assert "# note: body.value" not in text
    else:
        assert f"# note: body.value: {note} (" in text
