"""Multipart bodies, object and cookie parameters, and string lengths and formats, imported
and sent to a loopback server."""

from __future__ import annotations

import base64
import copy
import email.parser
import email.policy
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import yaml

from agentkit import (
    SecretInOutputError,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    ToolResult,
    load_tools,
)
from agentkit.cli import main
from agentkit.openapi import import_openapi
from agentkit.toolerrors import ToolValidationError
from tests.openapi.test_import import FINE, OK, definition, imported, inputs, minimal, write_spec
from tests.support.loopback import Handler, serve


def _import(tmp_path: Path, operation: dict[str, Any], origin: str = "http://127.0.0.1:9") -> Path:
    document = minimal(
        {"/op": {"post": {"operationId": "op", "responses": OK, **operation}}},
        servers=[{"url": origin}],
    )
    out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert not report.skipped, report.skipped
    assert main(["validate", "--strict", str(out)]) == 0
    return out


def _call(out: Path, arguments: dict[str, Any]) -> ToolResult:
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ={})
    return ToolExecutor().execute(registry["op"], arguments)


class Recorder:
    """A loopback endpoint that keeps each request it is sent."""

    def __init__(self, payload: Any = None) -> None:
        self.seen: list[Handler] = []
        self.bodies: list[bytes] = []
        self.payload = payload if payload is not None else {}

    def __call__(self, handler: Handler) -> None:
        # One handler serves every request of a kept-alive connection: keep this one's
        # headers and path (a shallow copy holds them).
        self.seen.append(copy.copy(handler))
        self.bodies.append(handler.body)
        handler.reply(200, self.payload)

    def parts(self) -> dict[str, tuple[str | None, str | None, bytes]]:
        """The last multipart body: field name -> (file name, media type, bytes)."""
        head = f"Content-Type: {self.seen[-1].headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            head + self.bodies[-1]
        )
        found = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            assert isinstance(name, str)
            assert isinstance(payload, bytes)
            found[name] = (part.get_filename(), part.get("Content-Type"), payload)
        return found

    def query(self) -> list[tuple[str, str]]:
        return parse_qsl(urlsplit(self.seen[-1].path).query)


# -- multipart ----------------------------------------------------------------------------


MULTIPART = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["title", "image"],
                "properties": {
                    "title": {"type": "string"},
                    "labels": {"type": "array", "items": {"type": "string"}},
                    "image": {"type": "string", "format": "binary", "description": "A picture."},
                    "notes": {"type": "string", "format": "binary"},
                    "meta": {"type": "object", "properties": {"a": {"type": "string"}}},
                },
            },
            "encoding": {
                "image": {"contentType": "image/png"},
                "notes": {"contentType": "text/plain"},
            },
        }
    },
}


def test_a_multipart_body_becomes_fields_and_file_parts(tmp_path: Path) -> None:
    out = _import(tmp_path, {"requestBody": MULTIPART})
    http = definition(out, "op")["backend"]["http"]
    assert http["multipart"] == {
        "fields": {"title": "{{ inputs.title }}", "labels": "{{ inputs.labels }}"},
        "files": {
            "image": {
                "content": "{{ inputs.image }}",
                "encoding": "base64",
                "filename": "{{ inputs.image_filename }}",
                "content_type": "image/png",
            },
            "notes": {
                "content": "{{ inputs.notes }}",
                "filename": "{{ inputs.notes_filename }}",
                "content_type": "text/plain",
            },
        },
    }
    params = inputs(out, "op")
    assert params["image"]["description"] == "A picture. The file's content, base64-encoded."
    assert params["notes"]["description"] == "The file's content, as text."
    assert params["image_filename"]["required"] is False
    assert "# note: multipart meta: an object field left out" in (out / "op.yaml").read_text()


def test_a_multipart_upload_reaches_the_server(tmp_path: Path) -> None:
    recorder = Recorder()
    picture = bytes(range(256))
    with serve({"/op": recorder}) as origin:
        out = _import(tmp_path, {"requestBody": MULTIPART}, origin)
        result = _call(
            out,
            {
                "title": "Bug",
                "labels": ["a", "b"],
                "image": base64.b64encode(picture).decode(),
                "image_filename": "shot.png",
                "notes": "line one\n",
            },
        )
    assert result.succeeded, result.error
    assert recorder.seen[-1].headers["Content-Type"].startswith("multipart/form-data; boundary=")
    parts = recorder.parts()
    assert parts["title"] == (None, None, b"Bug")
    assert parts["image"] == ("shot.png", "image/png", picture)
    assert parts["notes"] == ("notes", "text/plain", b"line one\n")  # default file name
    assert list(parts) == ["title", "labels", "image", "notes"]  # the second label too
    assert b'name="labels"\r\n\r\nb\r\n' in recorder.bodies[-1]


@pytest.mark.parametrize(
    ("required", "skipped"),
    [(True, "multipart field 'files' is a list of files; one file a field"), (False, "")],
    ids=["required", "optional"],
)
def test_a_list_of_files_cannot_be_sent(tmp_path: Path, required: bool, skipped: str) -> None:
    schema = {
        "type": "object",
        "required": ["files"] if required else [],
        "properties": {
            "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
            "name": {"type": "string"},
        },
    }
    body = {"required": True, "content": {"multipart/form-data": {"schema": schema}}}
    document = minimal(
        {"/op": {"post": {"operationId": "op", "requestBody": body, "responses": OK}}, **FINE}
    )
    out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    if required:
        assert [s.problem.message for s in report.skipped] == [skipped]
        assert report.skipped[0].problem.path == (
            "#/paths/~1op/post/requestBody/content/multipart~1form-data/schema/properties/files"
        )
    else:
        assert "# note: multipart files: a list of files left out" in (out / "op.yaml").read_text()
        assert definition(out, "op")["backend"]["http"]["multipart"] == {
            "fields": {"name": "{{ inputs.name }}"}
        }


def test_a_body_of_only_lists_of_files_skips_the_operation_saying_why(tmp_path: Path) -> None:
    many = {"type": "array", "items": {"type": "string", "format": "binary"}}
    schema = {"type": "object", "properties": {"docs": many, "meta": FILTER}}
    body = {"content": {"multipart/form-data": {"schema": schema}}}
    document = minimal(
        {"/op": {"put": {"operationId": "op", "requestBody": body, "responses": OK}}, **FINE}
    )
    _, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert [str(skipped.problem) for skipped in report.skipped] == [
        "#/paths/~1op/put/requestBody/content/multipart~1form-data: no field of the multipart "
        "body can be sent: 'docs' is a list of files (one file a field); 'meta' is an object"
    ]


def test_a_3_1_content_media_type_is_a_file(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"doc": {"type": "string", "contentMediaType": "application/pdf"}},
    }
    body = {"content": {"multipart/form-data": {"schema": schema}}}
    out = _import(tmp_path, {"requestBody": body})
    files = definition(out, "op")["backend"]["http"]["multipart"]["files"]
    assert files["doc"]["content_type"] == "application/pdf"
    assert files["doc"]["encoding"] == "base64"


# -- object and cookie parameters ---------------------------------------------------------


FILTER = {
    "type": "object",
    "required": ["state"],
    "properties": {
        "state": {"type": "string", "enum": ["open", "closed"]},
        "limit": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "deep": {"type": "object", "properties": {"x": {"type": "string"}}},
    },
}


def test_deep_object_and_form_object_parameters_are_flattened(tmp_path: Path) -> None:
    parameters = [
        {
            "name": "filter",
            "in": "query",
            "style": "deepObject",
            "required": True,
            "schema": FILTER,
        },
        {"name": "page", "in": "query", "schema": {"$ref": "#/components/schemas/Page"}},
    ]
    page = {"type": "object", "properties": {"number": {"type": "integer"}}}
    recorder = Recorder()
    with serve({"/op": recorder}) as origin:
        document = minimal(
            {"/op": {"get": {"operationId": "op", "parameters": parameters, "responses": OK}}},
            servers=[{"url": origin}],
            components={"schemas": {"Page": page}},
        )
        out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
        assert not report.skipped
        assert main(["validate", "--strict", str(out)]) == 0
        params = inputs(out, "op")
        result = _call(out, {"filter_state": "open", "filter_tags": ["a", "b"], "number": 2})
    assert result.succeeded, result.error
    assert params["filter_state"] == {
        "name": "filter_state",
        "type": "string",
        "enum": ["open", "closed"],
    }
    assert params["filter_limit"]["required"] is False
    assert definition(out, "op")["backend"]["http"]["query"] == {
        "filter[state]": "{{ inputs.filter_state }}",
        "filter[limit]": "{{ inputs.filter_limit }}",
        "filter[tags]": "{{ inputs.filter_tags }}",
        "number": "{{ inputs.number }}",
    }
    assert (
        "# note: query filter.deep: a nested object is not supported: left out"
        in (out / "op.yaml").read_text()
    )
    assert recorder.query() == [
        ("filter[state]", "open"),
        ("filter[tags]", "a"),
        ("filter[tags]", "b"),
        ("number", "2"),
    ]


@pytest.mark.parametrize(
    ("parameter", "message"),
    [
        (
            {"name": "f", "in": "query", "style": "form", "explode": False, "schema": FILTER},
            "required query parameter 'f': an object-valued parameter (form) is not supported",
        ),
        (
            {"name": "f", "in": "header", "schema": FILTER},
            "required header parameter 'f': an object-valued parameter (simple) is not supported",
        ),
        (
            {"name": "f", "in": "query", "style": "deepObject", "schema": {"type": "object"}},
            "required query parameter 'f': an object without declared properties is not supported",
        ),
        (
            {"name": "a b", "in": "cookie", "schema": {"type": "string"}},
            "required cookie parameter 'a b': a cookie name that is not a token is not supported",
        ),
        (
            {"name": "x'~inputs~'", "in": "cookie", "schema": {"type": "string"}},
            "required cookie parameter \"x'~inputs~'\": a cookie name that is not a token is not supported",
        ),
    ],
    ids=[
        "form-unexploded",
        "header-object",
        "free-form",
        "cookie-name",
        "cookie-quote",
    ],
)
def test_parameters_that_cannot_be_sent_skip_the_operation_with_a_reason(
    tmp_path: Path, parameter: dict[str, Any], message: str
) -> None:
    parameter = {**parameter, "required": True}
    document = minimal(
        {"/op": {"get": {"operationId": "op", "parameters": [parameter], "responses": OK}}, **FINE}
    )
    _, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert [str(s.problem) for s in report.skipped] == [f"#/paths/~1op/get/parameters/0: {message}"]


COOKIES = [
    {"name": "sid", "in": "cookie", "required": True, "schema": {"type": "string"}},
    {"name": "theme", "in": "cookie", "schema": {"type": "string"}},
    {"name": "beta", "in": "cookie", "schema": {"type": "boolean"}},
]
#: Required but nullable: the input is optional, and a null cookie is left out.
NULLABLE = [
    {
        "name": "sid",
        "in": "cookie",
        "required": True,
        "schema": {"type": "string", "nullable": True},
    },
    {
        "name": "beta",
        "in": "cookie",
        "required": True,
        "schema": {"type": "boolean", "nullable": True},
    },
]


@pytest.mark.parametrize(
    ("cookies", "arguments", "sent"),
    [
        (COOKIES[:1], {"sid": "a b;c"}, "sid=a%20b%3Bc"),
        (
            COOKIES[:1],
            {"sid": "x; admin=1\r\nX-Evil: 1"},
            "sid=x%3B%20admin%3D1%0D%0AX-Evil%3A%201",
        ),
        (COOKIES, {"sid": "s", "theme": "dark", "beta": True}, "sid=s; theme=dark; beta=true"),
        (COOKIES, {"sid": "s", "beta": False}, "sid=s; beta=false"),
        (COOKIES[1:], {}, None),
        (NULLABLE, {}, None),
        (NULLABLE, {"sid": None, "beta": None}, None),
        (NULLABLE, {"beta": False}, "beta=false"),
        (NULLABLE, {"sid": "s"}, "sid=s"),
    ],
    ids=[
        "one-encoded",
        "injection",
        "all",
        "some",
        "none",
        "nullable-omitted",
        "nullable-null",
        "nullable-false",
        "nullable-given",
    ],
)
def test_cookie_parameters_are_sent_as_one_cookie_header(
    tmp_path: Path, cookies: list[dict[str, Any]], arguments: dict[str, Any], sent: str | None
) -> None:
    recorder = Recorder()
    with serve({"/op": recorder}) as origin:
        out = _import(tmp_path, {"parameters": cookies}, origin)
        result = _call(out, arguments)
    assert result.succeeded, result.error
    assert recorder.seen[-1].headers.get("Cookie") == sent


def test_an_api_key_in_a_cookie_is_sent_with_the_cookie_parameters(tmp_path: Path) -> None:
    recorder = Recorder()
    schemes = {
        "key": {"type": "apiKey", "in": "cookie", "name": "key"},
        "other": {"type": "apiKey", "in": "cookie", "name": "sess.id"},
        "bad": {"type": "apiKey", "in": "cookie", "name": "a;b"},
    }

    def op(name: str, **extra: Any) -> dict[str, Any]:
        return {"operationId": name, "responses": OK, **extra}

    with serve({"/a": recorder, "/b": recorder, "/c": recorder}) as origin:
        document = minimal(
            {
                "/a": {"get": op("plain")},
                "/b": {"get": op("withCookies", parameters=COOKIES[1:2])},
                "/c": {"get": op("ownKey", security=[{"bad": []}, {"other": []}])},
            },
            servers=[{"url": origin}],
            security=[{"key": []}],
            components={"securitySchemes": schemes},
        )
        out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
        assert not report.skipped
        assert main(["validate", "--strict", str(out)]) == 0
        source = yaml.safe_load((out / "api.source.yaml").read_text())
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={})
        executor = ToolExecutor(credentials={"api-key": "s3cr;t-key", "api-other": "other-key"})
        for name, arguments in [
            ("plain", {}),
            ("with_cookies", {"theme": "dark"}),
            ("with_cookies", {}),
            ("own_key", {}),
        ]:
            result = executor.execute(registry[name], arguments)
            assert result.succeeded, result.error
    assert (source["credentials"], source["headers"]) == (
        ["api-key"],
        {"Cookie": "key={{ credentials['api-key'] | urlencode }}"},
    )
    assert [handler.headers.get("Cookie") for handler in recorder.seen] == [
        "key=s3cr%3Bt-key",
        "key=s3cr%3Bt-key; theme=dark",
        "key=s3cr%3Bt-key",
        "sess.id=other-key",  # the tool's own scheme replaces the source's cookie
    ]
    assert definition(out, "own_key")["credentials"] == ["api-other"]


# -- lengths and formats ------------------------------------------------------------------


def test_lengths_become_lengths_and_formats_words(tmp_path: Path) -> None:
    parameters = [
        {
            "name": "code",
            "in": "query",
            "schema": {"type": "string", "minLength": 2, "maxLength": 4},
        },
        {
            "name": "slug",
            "in": "query",
            "description": "A slug",
            "schema": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
        },
        {"name": "when", "in": "query", "schema": {"type": "string", "format": "date-time"}},
        {
            "name": "mail",
            "in": "query",
            "schema": {"type": "string", "format": "email", "minLength": 1},
        },
        {
            "name": "pin",
            "in": "query",
            "schema": {"type": "string", "minLength": 4, "maxLength": 4},
        },
        {"name": "any", "in": "query", "schema": {"type": "string", "minLength": 0}},
        {
            "name": "odd",
            "in": "query",
            "schema": {"type": "string", "minLength": 5, "maxLength": 2},
        },
        {"name": "count", "in": "query", "schema": {"type": "integer", "format": "int32"}},
    ]
    recorder = Recorder()
    with serve({"/op": recorder}) as origin:
        out = _import(tmp_path, {"parameters": parameters}, origin)
        params = inputs(out, "op")
        good = _call(out, {"code": "ab\nc", "slug": "abc", "pin": "\N{GRINNING FACE}" * 4})
        for wrong, message in (
            ({"code": "a"}, "Parameter 'code': expected a string of at least 2 characters, got 1"),
            ({"code": "abcde"}, "Parameter 'code': expected a string of at most 4 characters"),
            ({"slug": "abcd"}, "Parameter 'slug': expected a string of at most 3 characters"),
            ({"slug": "AB"}, "Parameter 'slug': expected a string matching '^[a-z]+$'"),
            ({"pin": "12345"}, "Parameter 'pin': expected a string of at most 4 characters"),
        ):
            with pytest.raises(ToolValidationError, match=re.escape(message)):
                _call(out, wrong)
    assert params["code"] == {
        "name": "code",
        "type": "string",
        "description": "2 to 4 characters.",
        "min_length": 2,
        "max_length": 4,
        "required": False,
    }
    assert params["slug"]["pattern"] == "^[a-z]+$"
    assert (params["slug"].get("min_length"), params["slug"]["max_length"]) == (None, 3)
    assert params["slug"]["description"] == "A slug. At most 3 characters."
    assert params["pin"]["description"] == "Exactly 4 characters."
    assert (params["pin"]["min_length"], params["pin"]["max_length"]) == (4, 4)
    assert params["any"] == {"name": "any", "type": "string", "required": False}
    # A description that contradicts itself bounds nothing.
    assert params["odd"] == {"name": "odd", "type": "string", "required": False}
    assert params["when"]["description"] == "An RFC 3339 date-time (2024-01-31T12:00:00Z)."
    assert params["mail"]["description"] == "At least 1 character. Format: email."
    assert params["mail"]["min_length"] == 1
    assert params["count"] == {"name": "count", "type": "integer", "required": False}
    assert good.succeeded, good.error
    assert len(recorder.seen) == 1  # nothing sent for a value out of bounds


def test_an_api_key_cookie_echoed_back_withholds_the_answer(tmp_path: Path) -> None:
    def echo(handler: Handler) -> None:
        handler.reply(200, {"seen": handler.headers.get("Cookie")})

    reply = {
        "description": "ok",
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": {"seen": {"type": "string"}}}
            }
        },
    }
    with serve({"/a": echo}) as origin:
        document = minimal(
            {"/a": {"get": {"operationId": "a", "responses": {"200": reply}}}},
            servers=[{"url": origin}],
            security=[{"key": []}],
            components={
                "securitySchemes": {"key": {"type": "apiKey", "in": "cookie", "name": "k"}}
            },
        )
        out, _ = imported(tmp_path, write_spec(tmp_path, document), source="api")
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={})
        result = ToolExecutor(credentials={"api-key": "hunter2 pw"}).execute(
            registry["a"], {}, raise_on_failure=False
        )
    # The header rendered from the key, whole, is a form of it: the answer is not given.
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, SecretInOutputError)
    assert result.error.cause.where == "output.seen"
    assert "hunter2" not in str(result.error)


@pytest.mark.parametrize(
    ("style", "explode", "sent"),
    [
        # a path value is one segment: its comma is sent encoded, as with the simple style
        ("label", False, "/r/.5/.a%2Cb"),
        ("label", True, "/r/.5/.a.b"),
        ("matrix", False, "/r/;id=5/;ids=a%2Cb"),
    ],
)
def test_label_and_matrix_path_parameters(
    tmp_path: Path, style: str, explode: bool, sent: str
) -> None:
    parameters = [
        {
            "name": "id",
            "in": "path",
            "required": True,
            "style": style,
            "schema": {"type": "integer"},
        },
        {
            "name": "ids",
            "in": "path",
            "required": True,
            "style": style,
            "explode": explode,
            "schema": {"type": "array", "items": {"type": "string"}},
        },
    ]
    paths: list[str] = []

    def note(handler: Handler) -> None:
        paths.append(handler.path)
        handler.reply(200, {})

    with serve({sent: note}) as origin:
        document = minimal(
            {
                "/r/{id}/{ids}": {
                    "get": {"operationId": "op", "parameters": parameters, "responses": OK}
                }
            },
            servers=[{"url": origin}],
        )
        out, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
        assert not report.skipped
        assert main(["validate", "--strict", str(out)]) == 0
        result = _call(out, {"id": 5, "ids": ["a", "b"]})
    assert result.succeeded, result.error
    assert paths == [sent]


def test_an_exploded_matrix_list_skips_the_operation(tmp_path: Path) -> None:
    parameter = {
        "name": "f",
        "in": "path",
        "required": True,
        "style": "matrix",
        "explode": True,
        "schema": {"type": "array", "items": {"type": "string"}},
    }
    document = minimal(
        {
            "/r/{f}": {"get": {"operationId": "op", "parameters": [parameter], "responses": OK}},
            **FINE,
        }
    )
    _, report = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert [str(s.problem) for s in report.skipped] == [
        "#/paths/~1r~1{f}/get/parameters/0: required path parameter 'f': style 'matrix' "
        "exploded is not supported"
    ]


def json_query_spec(tmp_path: Path, *parameters: dict[str, Any]) -> Path:
    operation = {"operationId": "getItems", "parameters": list(parameters), "responses": OK}
    return write_spec(tmp_path, minimal({"/items": {"get": operation}, **FINE}))


def in_json(name: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "content": {"application/json": {"schema": schema}},
        **extra,
    }


def test_a_json_query_parameter_is_sent_as_compact_json(tmp_path: Path) -> None:
    spec = json_query_spec(
        tmp_path,
        in_json("filter", {"type": "object"}, description="Select items by conditions."),
        in_json("ids", {"type": "array", "items": {"type": "integer"}}),
        in_json(
            "deep", {"type": "object", "properties": {"a": {"type": "integer"}}}, required=True
        ),
    )
    out = tmp_path / "tools.d"
    import_openapi(spec, source="d", out=out)
    doc = yaml.safe_load((out / "get_items.yaml").read_text(encoding="utf-8"))
    params = {param["name"]: param for param in doc["input_schema"]["parameters"]}
    assert params["filter"] == {
        "name": "filter",
        "type": "dictionary",
        "description": "Select items by conditions.",
        "required": False,
    }
    assert params["ids"]["type"] == "list"
    assert params["deep"]["parameters"] == [{"name": "a", "type": "integer", "required": False}]
    assert doc["backend"]["http"]["query"] == {
        "filter": "{{ none if inputs.filter is none else inputs.filter | tojson }}",
        "ids": "{{ none if inputs.ids is none else inputs.ids | tojson }}",
        "deep": "{{ inputs.deep | tojson }}",
    }
    seen: list[str] = []

    def note(handler: Handler) -> None:
        seen.append(handler.path)
        handler.reply(200, {})

    with serve({"/items": note}) as origin:
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={"D_BASE_URL": origin})
        arguments = {"filter": {"status": {"_eq": "a b&c"}}, "deep": {"a": 1}}
        assert ToolExecutor().execute(registry["get_items"], arguments).succeeded
    [path] = seen
    query = path.split("?", 1)[1]
    # Compact, percent-encoded by the URL layer, and an absent optional one not sent.
    assert query == (
        "filter=%7B%22status%22%3A%7B%22_eq%22%3A%22a+b%26c%22%7D%7D&deep=%7B%22a%22%3A1%7D"
    )
    assert [json.loads(value) for _, value in parse_qsl(query)] == [
        {"status": {"_eq": "a b&c"}},
        {"a": 1},
    ]


@pytest.mark.parametrize(
    ("parameter", "skipped"),
    [
        pytest.param(
            {"name": "q", "in": "query", "content": {"text/plain": {"schema": {}}}},
            False,
            id="text",
        ),
        pytest.param(
            {"name": "q", "in": "cookie", "required": True, "content": {"application/json": {}}},
            True,
            id="cookie",
        ),
    ],
)
def test_a_parameter_with_other_content_is_still_left_out(
    tmp_path: Path, parameter: dict[str, Any], skipped: bool
) -> None:
    spec = json_query_spec(tmp_path, parameter, in_json("filter", {"type": "object"}))
    report = import_openapi(spec, source="d", out=tmp_path / "tools.d")
    assert bool(report.skipped) is skipped
    if skipped:
        assert "'content' other than JSON is not supported" in str(report.skipped[0].problem)
