"""Swagger 2.0 descriptions, read as OpenAPI 3.0, with every problem located in the original."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.cli import main
from agentkit.openapi import import_openapi
from agentkit.openapi.pointers import Pointers
from tests.openapi.test_import import definition, inputs, write_spec
from tests.openapi.test_real_descriptions import operations, resolves
from tests.openapi.test_request_shapes import Recorder
from tests.support.loopback import Handler, serve

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"
KENNEL = FIXTURES / "kennel-swagger.yaml"
EXAMPLES = sorted((FIXTURES / "oas-examples" / "2.0").glob("*.json"))


def kennel(tmp_path: Path) -> Path:
    out = tmp_path / "tools.d"
    import_openapi(KENNEL, source="kennel", out=out)
    return out


def test_the_source_comes_from_host_base_path_schemes_and_security_definitions(
    tmp_path: Path,
) -> None:
    out = kennel(tmp_path)
    source = yaml.safe_load((out / "kennel.source.yaml").read_text())
    assert source == {
        "source": "kennel",
        "description": "Kennel API 1.4",
        "base_url": "${KENNEL_BASE_URL:-https://kennel.example.com/v1}",  # https preferred
        "credentials": ["kennel-key"],
        "auth": {"api_key": {"credential": "kennel-key", "in": "header", "name": "X-Api-Key"}},
    }
    assert definition(out, "get_dog")["backend"]["http"]["auth"] == {
        "oauth2": {
            "token_url": "https://kennel.example.com/oauth/token",
            "client_id": "kennel-robot-client-id",
            "client_secret": "kennel-robot-client-secret",
            "scopes": ["dogs"],
        }
    }
    assert definition(out, "upload_photo")["backend"]["http"]["auth"] == {
        "basic": {"username": "kennel-basic-username", "password": "kennel-basic-password"}
    }
    assert main(["validate", "--strict", str(out)]) == 0


def test_parameters_bodies_and_replies_take_their_3_0_shapes(tmp_path: Path) -> None:
    out = kennel(tmp_path)
    listing = definition(out, "list_dogs")
    assert listing["backend"]["http"]["query"] == {
        "limit": "{{ inputs.limit }}",  # from #/parameters/Limit
        "tags": "{{ none if inputs.tags is none else inputs.tags | join(',') }}",  # csv
        "status": "{{ inputs.status }}",  # multi
        "breed": "{{ inputs.breed }}",
    }
    assert inputs(out, "list_dogs")["limit"] == {
        "name": "limit",
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
        "required": False,
    }
    assert listing["output_schema"]["parameters"][0]["items"]["parameters"] == [
        {"name": "name", "type": "string"},
        {"name": "breed", "type": "string", "required": False},
        {"name": "id", "type": "integer"},
    ]
    assert definition(out, "add_dog")["backend"]["http"]["json"] == {
        "name": "{{ inputs.name }}",
        "breed": "{{ inputs.breed }}",
    }
    assert definition(out, "log_walk")["backend"]["http"]["form"] == {
        "minutes": "{{ inputs.minutes }}",
        "park": "{{ inputs.park }}",
    }
    assert definition(out, "upload_photo")["backend"]["http"]["multipart"]["files"] == {
        "photo": {
            "content": "{{ inputs.photo }}",
            "encoding": "base64",
            "filename": "{{ inputs.photo_filename }}",
        }
    }
    assert definition(out, "get_photo")["backend"]["http"]["binary"] is True
    assert definition(out, "get_dog")["backend"]["http"]["responses"] == {
        404: {"error_status": 404, "error": "{{ response.json }}", "error_message": "No such dog."}
    }


def test_problems_point_into_the_swagger_file(tmp_path: Path) -> None:
    out = tmp_path / "tools.d"
    report = import_openapi(KENNEL, source="kennel", out=out)
    assert [str(skipped.problem) for skipped in report.skipped] == [
        "#/paths/~1broken/post/parameters/0/schema: $ref '#/definitions/Nowhere' points at "
        "nothing: #/definitions has no 'Nowhere'"
    ]
    notes = [line for line in (out / "list_dogs.yaml").read_text().splitlines() if "note:" in line]
    assert notes == [
        "# note: query breed: pattern left out: not a Python regular expression "
        "(#/paths/~1dogs/get/parameters/3)",
        "# note: query colors: style 'tabDelimited' is not supported: left out "
        "(#/paths/~1dogs/get/parameters/4)",
    ]


@pytest.mark.parametrize("spec", [KENNEL, *EXAMPLES], ids=lambda spec: spec.stem)
def test_every_note_and_skip_resolves_in_the_original(tmp_path: Path, spec: Path) -> None:
    text = spec.read_text(encoding="utf-8")
    document = json.loads(text) if spec.suffix == ".json" else yaml.safe_load(text)
    out = tmp_path / "tools.d"
    report = import_openapi(spec, source="api", out=out)
    assert len(report.written) - 1 + len(report.skipped) + len(report.deprecated) == operations(
        document
    )
    pointers = [skipped.problem.path for skipped in report.skipped]
    for path in out.glob("*.yaml"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# note: "):
                pointers.append(line[line.rfind(" (#/") + 2 : -1])
    assert pointers or spec.stem == "petstore-minimal"
    for pointer in pointers:
        assert resolves(document, pointer), pointer
    # plain http:// with credentials warns (rightly); pointed at https:// they load clean
    code = main(["validate", "--strict", "--env-file", str(_https(tmp_path)), str(out)])
    assert code == 0


def _https(tmp_path: Path) -> Path:
    env = tmp_path / "https.env"
    env.write_text("API_BASE_URL=https://api.example.com\n", encoding="utf-8")
    return env


def test_imported_swagger_tools_call_a_loopback_server(tmp_path: Path) -> None:
    listing, posting, uploading = (
        Recorder([{"name": "Rex", "id": 1, "x": 0}]),
        Recorder(),
        Recorder(),
    )

    def dogs(handler: Handler) -> None:
        (listing if handler.command == "GET" else posting)(handler)

    out = kennel(tmp_path)
    picture = b"\xff\xd8\xff\xe0 a jpeg"
    with serve({"/v1/dogs": dogs, "/v1/dogs/7/photo": uploading}) as origin:
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={"KENNEL_BASE_URL": f"{origin}/v1"})
        executor = ToolExecutor(
            credentials={
                "kennel-key": "k3y-kennel",
                "kennel-basic-username": "user-kennel",
                "kennel-basic-password": "pass-kennel",
            }
        )
        results = [
            executor.execute(registry["list_dogs"], {"tags": ["a", "b"], "status": ["x", "y"]}),
            executor.execute(registry["add_dog"], {"name": "Rex"}),
            executor.execute(
                registry["upload_photo"],
                {"dog_id": 7, "photo": base64.b64encode(picture).decode(), "caption": "hi"},
            ),
        ]
    assert [result.error for result in results] == [None, None, None]
    assert results[0].output == {"items": [{"name": "Rex", "id": 1}]}
    assert listing.query() == [("limit", "10"), ("tags", "a,b"), ("status", "x"), ("status", "y")]
    assert listing.seen[0].headers["X-Api-Key"] == "k3y-kennel"
    assert json.loads(posting.bodies[0]) == {"name": "Rex"}
    assert uploading.parts()["photo"] == ("photo", "application/octet-stream", picture)
    assert uploading.seen[0].headers["Authorization"] == "Basic dXNlci1rZW5uZWw6cGFzcy1rZW5uZWw="


def test_the_schema_check_reads_the_swagger_file_as_written(tmp_path: Path) -> None:
    pytest.importorskip("jsonschema_rs")
    document = {
        "swagger": "2.0",
        "info": {"title": "T", "version": "1"},
        "paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}}}},
        "servers": [],  # not a Swagger 2.0 key (a 3.0 one)
    }
    report = import_openapi(write_spec(tmp_path, document), source="api", out=tmp_path / "out")
    assert report.findings
    assert any("servers" in finding.message for finding in report.findings)


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("#/servers/0/url", "#/host"),
        ("#/paths/~1a/get/parameters/1/schema", "#/paths/~1a/get/parameters/1"),
        ("#/paths/~1a/get/parameters/1/schema/items", "#/paths/~1a/get/parameters/1/items"),
        ("#/paths/~1a/get/parameters/10/schema", "#/paths/~1a/get/parameters/10/schema"),
        ("#/definitions/Pet", "#/definitions/Pet"),
    ],
)
def test_pointers_map_back_by_whole_segments(pointer: str, expected: str) -> None:
    pointers = Pointers(
        {
            "#/servers/0/url": "#/host",
            "#/paths/~1a/get/parameters/1/schema": "#/paths/~1a/get/parameters/1",
        }
    )
    assert pointers.original(pointer) == expected
