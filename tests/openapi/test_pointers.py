"""``$ref`` as JSON pointers in a URI fragment (RFC 6901 section 6), percent-encoded or not.

DigitalOcean's description, for one, writes its refs into other operations
percent-encoded (``#/paths/~1v2~1apps~1%7Bapp_id%7D/get/...``): the fragment is
percent-decoded first, then split at ``/``, then each key unescaped (``~1`` before
``~0``). Only pointers into the description itself are followed.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.cli import main
from agentkit.openapi import OpenAPIError, import_openapi
from agentkit.openapi.pointers import pointer_join, pointer_keys
from agentkit.openapi.reader import Resolver
from agentkit.toolerrors import PointerError, UnexpressibleOperation
from tests.openapi.test_import import FINE, OK, definition, inputs, minimal, write_spec


@pytest.mark.parametrize(
    ("ref", "keys"),
    [
        ("#", []),
        ("#/", [""]),
        ("#/components/schemas/Pet", ["components", "schemas", "Pet"]),
        ("#/paths/~1v2~1apps~1%7Bapp_id%7D/get", ["paths", "/v2/apps/{app_id}", "get"]),
        ("#/paths/~1v2~1apps~1%7bapp_id%7d/get", ["paths", "/v2/apps/{app_id}", "get"]),
        ("#/paths/~1v2~1apps~1{app_id}/get", ["paths", "/v2/apps/{app_id}", "get"]),
        ("#/a/100%25", ["a", "100%"]),
        ("#/a/%257E", ["a", "%7E"]),  # decoded once: '%25' is a '%', not the start of another
        ("#/a/%7E0", ["a", "~"]),
        ("#/a/%7E1", ["a", "/"]),
        ("#/a/~01", ["a", "~1"]),  # '~1' first, then '~0': never '/'
        ("#/a/~10", ["a", "/0"]),
        ("#/a%2Fb", ["a", "b"]),  # a '/' percent-encoded is still a separator
        ("#/a/Caf%C3%A9", ["a", "Café"]),
        ("#/a/%F0%9F%90%B6%20dog", ["a", "🐶 dog"]),
        ("#/a/Café", ["a", "Café"]),
        ("#/a/x~y", ["a", "x~y"]),  # a '~' escaping nothing is kept
        ("#/items/0", ["items", "0"]),
    ],
    ids=repr,
)
def test_pointer_keys_decode_percent_first_then_tilde(ref: str, keys: list[str]) -> None:
    assert pointer_keys(ref) == keys


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("#/a/%zz", "'%zz' is not a percent-encoded byte"),
        ("#/a/%4", "'%4' is not a percent-encoded byte"),
        ("#/a/100%", "'%' is not a percent-encoded byte"),
        ("#/a/%C3", "the percent-encoded bytes %C3 are not UTF-8 text"),
        ("#/a/%FF%FE", "the percent-encoded bytes %FF%FE are not UTF-8 text"),
        ("#a/b", "the pointer after '#' must start with '/'"),
        ("#%41", "the pointer after '#' must start with '/'"),
        ("/components/schemas/Pet", "not a pointer into this file"),
    ],
    ids=repr,
)
def test_malformed_pointers_say_what_is_wrong(ref: str, reason: str) -> None:
    with pytest.raises(PointerError, match="^" + reason.replace("%", "%").replace("(", r"\(")):
        pointer_keys(ref)


@pytest.mark.parametrize(
    "key",
    ["plain", "a/b", "a~b", "~1", "100%", "%7B", "{id}", "Café", "🐶", "", " sp ace"],
    ids=repr,
)
def test_pointer_join_writes_what_pointer_keys_reads_back(key: str) -> None:
    assert pointer_keys(pointer_join("#/paths", key, "get")) == ["paths", key, "get"]


# -- refs followed in a description --------------------------------------------------------

APP = "/v2/apps/{app_id}"
APP_ENCODED = "~1v2~1apps~1%7Bapp_id%7D"
TOKEN = {"name": "token", "in": "query", "schema": {"type": "integer", "maximum": 9}}
REPLY = {
    "description": "the app",
    "content": {
        "application/json": {"schema": {"type": "object", "properties": {"id": {"type": "string"}}}}
    },
}
BODY = {
    "content": {
        "application/json": {
            "schema": {"type": "object", "properties": {"spec": {"type": "string"}}}
        }
    }
}


def _digitalocean(ref_parameter: str, ref_reply: str, ref_body: str) -> dict[str, Any]:
    """Two operations on one app: the second refers into the first, as DigitalOcean does."""
    app_id = {"name": "app_id", "in": "path", "required": True, "schema": {"type": "string"}}
    return minimal(
        {
            APP: {
                "get": {
                    "operationId": "apps_get",
                    "parameters": [app_id, TOKEN],
                    "responses": {"200": REPLY},
                },
                "put": {
                    "operationId": "apps_update",
                    "parameters": [{"$ref": f"#/paths/{APP_ENCODED}/get/parameters/0"}],
                    "requestBody": BODY,
                    "responses": {"200": REPLY},
                },
            },
            "/v2/apps/{app_id}/restart": {
                "post": {
                    "operationId": "apps_restart",
                    "parameters": [
                        {"$ref": f"#/paths/{APP_ENCODED}/get/parameters/0"},
                        {"$ref": ref_parameter},
                    ],
                    "requestBody": {"$ref": ref_body},
                    "responses": {"200": {"$ref": ref_reply}},
                }
            },
        },
        components={
            "parameters": {"100%": TOKEN, "a~b": TOKEN, "Café": TOKEN, "a/b": TOKEN},
            "responses": {
                "App reply": REPLY,
                "Ref": {"$ref": f"#/paths/{APP_ENCODED}/get/responses/200"},
            },
            "requestBodies": {
                "{spec}": BODY,
                "Ref": {"$ref": "#/components/requestBodies/%7Bspec%7D"},
            },
        },
    )


@pytest.mark.parametrize(
    ("ref_parameter", "ref_reply", "ref_body"),
    [
        (
            f"#/paths/{APP_ENCODED}/get/parameters/1",
            f"#/paths/{APP_ENCODED}/get/responses/200",
            f"#/paths/{APP_ENCODED}/put/requestBody",
        ),
        (
            "#/paths/~1v2~1apps~1{app_id}/get/parameters/1",
            "#/components/responses/App reply",
            "#/components/requestBodies/{spec}",
        ),
        (
            "#/components/parameters/100%25",
            "#/components/responses/App%20reply",
            "#/components/requestBodies/%7Bspec%7D",
        ),
        (
            "#/components/parameters/a%7E0b",
            "#/components/responses/Ref",
            "#/components/requestBodies/Ref",
        ),
        (
            "#/components/parameters/Caf%C3%A9",
            "#/components/responses/App%20reply",
            "#/components/requestBodies/%7bspec%7d",
        ),
        (
            "#/components/parameters/a~1b",
            "#/components/responses/App%20reply",
            "#/components/requestBodies/Ref",
        ),
    ],
    ids=[
        "into-paths-encoded",
        "raw-braces-and-space",
        "percent-25",
        "tilde-0-encoded-and-refs-to-refs",
        "utf-8",
        "tilde-1",
    ],
)
def test_percent_encoded_refs_are_followed(
    tmp_path: Path, ref_parameter: str, ref_reply: str, ref_body: str
) -> None:
    spec = write_spec(tmp_path, _digitalocean(ref_parameter, ref_reply, ref_body))
    out = tmp_path / "tools.d"
    report = import_openapi(spec, source="do", out=out)
    assert [str(skipped.problem) for skipped in report.skipped] == []
    assert set(inputs(out, "apps_update")) == {"app_id", "spec"}
    restart = inputs(out, "apps_restart")
    assert set(restart) == {"app_id", "token", "spec"}
    assert restart["token"]["maximum"] == 9
    outputs = definition(out, "apps_restart")["output_schema"]["parameters"]
    assert [output["name"] for output in outputs] == ["id"]
    assert main(["validate", "--strict", "--tools", str(out)]) == 0


def test_a_schema_ref_percent_encoded_is_followed(tmp_path: Path) -> None:
    schemas = {"Caf\u00e9 Item": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    body = {
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/Caf%C3%A9%20Item"}}
        }
    }
    spec = write_spec(
        tmp_path,
        minimal(
            {"/i": {"post": {"operationId": "make", "requestBody": body, "responses": OK}}},
            components={"schemas": schemas},
        ),
    )
    out = tmp_path / "tools.d"
    import_openapi(spec, source="api", out=out)
    assert inputs(out, "make")["n"]["type"] == "integer"


def test_a_ref_loop_through_two_spellings_is_one_loop(tmp_path: Path) -> None:
    schemas = {
        "A": {"$ref": "#/components/schemas/%42"},
        "B": {"$ref": "#/components/schemas/A"},
    }
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/%41"}}}}
    spec = write_spec(
        tmp_path,
        minimal(
            {"/i": {"post": {"operationId": "make", "requestBody": body, "responses": OK}}, **FINE},
            components={"schemas": schemas},
        ),
    )
    report = import_openapi(spec, source="api", out=tmp_path / "tools.d")
    [skipped] = report.skipped
    assert str(skipped.problem) == (
        "#/components/schemas/B: $ref '#/components/schemas/A' refers to itself"
    )


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        (
            "#/components/parameters/%zz",
            "is not a valid JSON pointer: '%zz' is not a percent-encoded byte",
        ),
        (
            "#/components/parameters/100%",
            "is not a valid JSON pointer: '%' is not a percent-encoded byte",
        ),
        (
            "#/components/parameters/%C3",
            "is not a valid JSON pointer: the percent-encoded bytes %C3",
        ),
        (
            "#components/parameters/x",
            "is not a valid JSON pointer: the pointer after '#' must start",
        ),
        (
            f"#/paths/{APP_ENCODED}/get/parameters/7",
            "points at nothing: #/paths/~1v2~1apps~1{app_id}/get/parameters has no '7'",
        ),
    ],
    ids=["bad-hex", "lone-percent", "not-utf-8", "no-slash", "decoded-but-missing"],
)
def test_a_malformed_or_missing_ref_skips_its_operation_with_a_located_problem(
    tmp_path: Path, ref: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(
        tmp_path, _digitalocean(ref, "#/components/responses/Ref", "#/components/requestBodies/Ref")
    )
    out = tmp_path / "tools.d"
    assert main(["import", "openapi", str(spec), "--source", "do", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    skipped = [line for line in err.splitlines() if line.startswith("skipped:")]
    [line] = skipped
    assert line.startswith(
        f"skipped: apps_restart: #/paths/~1v2~1apps~1{{app_id}}~1restart/post/parameters/1: "
        f"$ref {ref!r} {message}"
    )
    assert "Traceback" not in err
    assert sorted(path.name for path in out.glob("apps_*.yaml")) == [
        "apps_get.yaml",
        "apps_update.yaml",
    ]


def test_the_resolver_follows_a_ref_to_the_whole_document() -> None:
    document = {"openapi": "3.0.3", "x": {"$ref": "#"}}
    node, pointer, refs = Resolver(document).resolve(document["x"], "#/x")
    assert node is document
    assert (pointer, refs) == ("#", ("#",))


# -- nothing outside the description is opened ---------------------------------------------


class _Counter(BaseHTTPRequestHandler):
    hits: list[str] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.hits.append(self.path)
        data = yaml.safe_dump({"type": "string"}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.mark.parametrize(
    "ref",
    [
        "other.yaml#/components/schemas/Pet",
        "./other.yaml",
        "other.yaml",
        "/components/schemas/Pet",
        "file:///etc/passwd",
        "{origin}/schema.yaml",
        "{origin}/schema.yaml#/type",
        "spec.json#/components/schemas/Pet",  # the file's own name: still another document
    ],
    ids=repr,
)
def test_a_ref_outside_the_description_is_refused_and_never_opened(
    tmp_path: Path, ref: str
) -> None:
    (tmp_path / "other.yaml").write_text(
        yaml.safe_dump({"components": {"schemas": {"Pet": {"type": "string"}}}}), encoding="utf-8"
    )
    hits: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("C", (_Counter,), {"hits": hits}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        ref = ref.replace("{origin}", f"http://127.0.0.1:{server.server_address[1]}")
        parameter = {"name": "q", "in": "query", "required": True, "schema": {"$ref": ref}}
        document = minimal(
            {
                "/a": {"get": {"operationId": "a", "parameters": [parameter], "responses": OK}},
                **FINE,
            },
            components={"schemas": {"Pet": {"type": "string"}}},
        )
        # The importer's own resolver: the description's schema check is another matter.
        report = import_openapi(
            write_spec(tmp_path, document), source="api", out=tmp_path / "out", check=False
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert hits == []
    [skipped] = report.skipped
    assert str(skipped.problem) == (
        f"#/paths/~1a/get/parameters/0/schema: $ref {ref!r} points outside this file; not supported"
    )


def test_resolver_lookup_refuses_an_external_ref_without_reading_it() -> None:
    with pytest.raises(UnexpressibleOperation, match="points outside this file"):
        Resolver({"openapi": "3.0.3"}).lookup("https://127.0.0.1:9/x.yaml#/a", "#/x")


def test_a_swagger_parameter_ref_percent_encoded_is_converted(tmp_path: Path) -> None:
    document = {
        "swagger": "2.0",
        "info": {"title": "T", "version": "1"},
        "host": "api.example.com",
        "parameters": {
            "page size": {"name": "size", "in": "query", "type": "integer", "maximum": 50}
        },
        "paths": {
            "/dogs": {
                "get": {
                    "operationId": "list_dogs",
                    "parameters": [{"$ref": "#/parameters/page%20size"}],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    out = tmp_path / "tools.d"
    report = import_openapi(write_spec(tmp_path, document), source="kennel", out=out)
    assert report.skipped == []
    assert inputs(out, "list_dogs")["size"] == {
        "name": "size",
        "type": "integer",
        "maximum": 50,
        "required": False,
    }


def test_an_import_of_only_malformed_refs_exits_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parameter = {"$ref": "#/components/parameters/%zz"}
    spec = write_spec(
        tmp_path,
        minimal({"/a": {"get": {"operationId": "a", "parameters": [parameter], "responses": OK}}}),
    )
    with pytest.raises(SystemExit) as exited:
        main(["import", "openapi", str(spec), "--source", "api", "--out", str(tmp_path / "o")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert (
        f"{spec}#/paths/~1a/get/parameters/0: a: $ref '#/components/parameters/%zz' is not a valid JSON pointer"
        in err
    )
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()
    with pytest.raises(OpenAPIError):
        import_openapi(spec, source="api", out=tmp_path / "o")
