"""`agentkit import openapi`: descriptions in, reviewable definitions out, that load and run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.cli import main
from agentkit.openapi import ImportReport, OpenAPIError, Selection, import_openapi
from agentkit.openapi.naming import MAX_NAME, operation_name, snake_case
from agentkit.toolerrors import UsageError
from tests.support.loopback import Handler, serve

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"
TRACKER = Path(__file__).resolve().parents[2] / "examples" / "openapi" / "tracker.yaml"
NOTES = FIXTURES / "notes.json"


def imported(tmp_path: Path, spec: Path = TRACKER, **options: Any) -> tuple[Path, ImportReport]:
    out = tmp_path / "tools.d"
    source = options.pop("source", spec.stem)
    report = import_openapi(spec, source=source, out=out, selection=Selection(**options))
    return out, report


def definition(out: Path, name: str) -> dict[str, Any]:
    data = yaml.safe_load((out / f"{name}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def inputs(out: Path, name: str) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in definition(out, name)["input_schema"]["parameters"]}


def outputs(out: Path, name: str) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in definition(out, name)["output_schema"]["parameters"]}


def write_spec(tmp_path: Path, document: dict[str, Any], name: str = "spec.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def minimal(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": paths, **extra}


OK = {"200": {"description": "ok"}}
#: An operation that imports, beside one a test expects skipped: an import that would
#: write no tool at all is an error of its own.
FINE = {"/fine": {"get": {"operationId": "fine", "responses": OK}}}


# -- every generated file loads -----------------------------------------------------------


@pytest.mark.parametrize("spec", [TRACKER, NOTES], ids=["3.0-yaml", "3.1-json"])
def test_every_generated_file_passes_agentkit_validate(
    tmp_path: Path, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = imported(tmp_path, spec)
    assert main(["validate", "--strict", str(out)]) == 0
    tools = len(report.written) - 1
    assert f"ok: {tools} tools in {len(report.written)} file(s)" in capsys.readouterr().out


def test_the_cli_imports_and_reports_skipped_operations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["import", "openapi", str(TRACKER), "--source", "tracker", "--out", str(out)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert (
        "skipped: import_issues: #/paths/~1imports/post/requestBody: request body of application/xml: only JSON, form and multipart bodies are supported"
        in captured.err
    )
    assert "skipped: download_attachment" not in captured.err  # binary: true
    assert "wrote 11 tool(s) and a source" in captured.out
    assert sorted(path.name for path in out.iterdir()) == [
        "comment_on_issue.yaml",
        "create_issue.yaml",
        "create_node.yaml",
        "delete_issue.yaml",
        "download_attachment.yaml",
        "get_health.yaml",
        "get_issue.yaml",
        "get_node.yaml",
        "list_issues.yaml",
        "search.yaml",
        "tracker.openapi-lock.json",
        "tracker.source.yaml",
        "upload.yaml",
    ]


def test_the_same_description_gives_the_same_files(tmp_path: Path) -> None:
    first, _ = imported(tmp_path / "a")
    second, _ = imported(tmp_path / "b")
    for path in first.iterdir():
        assert path.read_text() == (second / path.name).read_text()


def test_existing_files_are_not_overwritten(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    edited = out / "get_issue.yaml"
    edited.write_text("# my edit\n")
    with pytest.raises(
        UsageError,
        match=r"tools\.d holds an import of 'tracker' already \(tracker\.openapi-lock\.json\); give --update to import the description over it, keeping your edits",
    ):
        imported(tmp_path)
    (out / "tracker.openapi-lock.json").unlink()
    with pytest.raises(
        UsageError,
        match=r"12 file\(s\) to write exist already in .*tools\.d \(tracker\.source\.yaml, list_issues\.yaml, create_issue\.yaml, \.\.\.\); import into a new folder",
    ):
        imported(tmp_path)
    assert edited.read_text() == "# my edit\n"


# -- names --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("listPetsByID", "list_pets_by_id"),
        ("x-request-id", "x_request_id"),
        ("repos/get-content", "repos_get_content"),
        ("HTTPServerStatus", "http_server_status"),
        ("already_snake", "already_snake"),
        ("  spaced  out ", "spaced_out"),
    ],
)
def test_snake_case(given: str, expected: str) -> None:
    assert snake_case(given) == expected


def test_names_from_method_and_path_without_an_operation_id() -> None:
    assert operation_name(None, "GET", "/repos/{owner}/{repo}/issues") == (
        "get_repos_owner_repo_issues"
    )
    assert operation_name("", "DELETE", "/2fa") == "delete_2fa"
    assert operation_name("123go", "GET", "/") == "op_123go"


@pytest.mark.parametrize(
    ("operation_id", "expected"),
    [
        pytest.param(
            "get" + "VeryLongResourceName" * 5 + "A", "get_very_long_resource_name_a", id="repeats"
        ),
        pytest.param(
            "actions/get-github-actions-default-workflow-permissions-for-an-organization-or-user",
            "actions_get_github_default_workflow_permissions_for_an_user",
            id="words",
        ),
        pytest.param("x" * 80, "x" * MAX_NAME, id="one-word"),
    ],
)
def test_long_names_are_cut_to_whole_words_without_a_hash(operation_id: str, expected: str) -> None:
    name = operation_name(operation_id, "GET", "/")
    assert name == expected
    assert len(name) <= MAX_NAME
    assert name == operation_name(operation_id, "GET", "/")


def test_long_names_cut_alike_stay_apart_and_are_reported(tmp_path: Path) -> None:
    stem = "get-" + "-".join(f"word{n}" for n in range(12))
    spec = write_spec(
        tmp_path,
        minimal(
            {
                f"/{end}": {"get": {"operationId": f"{stem}-{end}-last", "responses": OK}}
                for end in ("a", "b")
            }
        ),
    )
    out, report = imported(tmp_path, spec)
    names = sorted(path.stem for path in out.glob("*.yaml") if "source" not in path.name)
    assert names == [
        "get_word0_word1_word2_word3_word4_word5_word6_word7_word8_last",
        "get_word0_word1_word2_word3_word4_word5_word6_word7_word8_last_2",
    ]
    assert [renamed.name for renamed in report.renamed] == [names[1]]


def test_name_collisions_are_resolved_in_description_order_and_reported(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        minimal(
            {
                "/a": {"get": {"operationId": "getThing", "responses": OK}},
                "/b": {"get": {"operationId": "get_thing", "responses": OK}},
                "/c": {"get": {"operationId": "GetThing", "responses": OK}},
            }
        ),
    )
    out, report = imported(tmp_path, spec, source="api")
    assert [(r.wanted, r.name, r.pointer) for r in report.renamed] == [
        ("get_thing", "get_thing_2", "#/paths/~1b/get"),
        ("get_thing", "get_thing_3", "#/paths/~1c/get"),
    ]
    assert definition(out, "get_thing_3")["backend"]["http"]["path"] == "/c"
    assert main(["validate", str(out)]) == 0


# -- parameters ---------------------------------------------------------------------------


def test_query_and_header_parameters_keep_their_constraints(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    params = inputs(out, "list_issues")
    assert params["state"] == {
        "name": "state",
        "type": "string",
        "enum": ["open", "closed", "all"],
        "default": "open",
        "required": False,
    }
    assert params["per_page"] == {
        "name": "per_page",
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 30,
        "required": False,
    }
    http = definition(out, "list_issues")["backend"]["http"]
    assert http["query"]["per-page"] == "{{ inputs.per_page }}"
    assert http["query"]["tag"] == "{{ inputs.tag }}"  # form, exploded: tag=a&tag=b
    assert http["query"]["labels"] == (
        "{{ none if inputs.labels is none else inputs.labels | join(',') }}"
    )
    assert http["headers"]["X-Request-Id"] == "{{ inputs.x_request_id }}"  # from $ref


def test_a_trimmed_description_keeps_the_first_paragraph(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    assert definition(out, "list_issues")["description"] == (
        "List issues. List the issues of the tracker, newest first."
    )


def test_path_query_and_body_fields_of_one_name_do_not_clash(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    assert set(inputs(out, "get_issue")) == {"id", "query_id"}
    assert definition(out, "get_issue")["backend"]["http"]["query"] == {
        "id": "{{ inputs.query_id }}"
    }
    comment = definition(out, "comment_on_issue")
    assert set(inputs(out, "comment_on_issue")) == {"id", "body_id", "body"}
    assert comment["backend"]["http"]["path"] == "/issues/{{ inputs.id }}/comments"
    assert comment["backend"]["http"]["json"] == {
        "id": "{{ inputs.body_id }}",
        "body": "{{ inputs.body }}",
    }
    text = (out / "comment_on_issue.yaml").read_text()
    assert "# note: body id: input named 'body_id': 'id' was taken" in text


def test_a_json_body_becomes_typed_parameters_with_allof_and_readonly(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    params = inputs(out, "create_issue")
    assert "id" not in params  # readOnly in Issue, and NewIssue has none
    assert params["title"] == {  # minLength: 1
        "name": "title",
        "type": "string",
        "description": "The title. At least 1 character.",
        "min_length": 1,
    }
    # 3.0 exclusiveMaximum: an integer bound moves by one
    assert params["priority"]["maximum"] == 4
    assert params["assignee"] == {
        "name": "assignee",
        "type": "dictionary",
        "parameters": [{"name": "login", "type": "string", "required": False}],
        "required": False,
    }
    assert params["body"]["required"] is False  # nullable


def test_openapi_3_1_types_nullable_unions_and_numeric_exclusive_bounds(tmp_path: Path) -> None:
    out, _ = imported(tmp_path, NOTES)
    params = inputs(out, "create_note")
    assert params["stars"]["minimum"] == 1  # exclusiveMinimum: 0 on an integer
    assert params["folder"]["parameters"] == [{"name": "name", "type": "string"}]
    assert params["folder"]["required"] is False  # anyOf [Folder, null]
    assert params["color"] == {
        "name": "color",
        "type": "string",
        "enum": ["red", "blue"],
        "default": "red",
        "required": False,
    }
    assert "exclusive minimum 0.5 written as inclusive" in (out / "create_note.yaml").read_text()


def test_one_of_of_one_type_is_free_form_and_of_scalar_types_a_union(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    params = inputs(out, "search")
    assert params["sort"] == {"name": "sort", "type": "string", "required": False}
    assert params["q"] == {"name": "q", "type": ["string", "integer"]}
    text = (out / "search.yaml").read_text()
    assert "# note: query sort: oneOf kept as a free-form string" in text
    assert "query q:" not in text  # typed as it is: nothing to note


def test_a_pattern_found_anywhere_becomes_one_the_whole_value_matches(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    assert inputs(out, "comment_on_issue")["body"]["pattern"] == r".*(?:\S).*"


def test_recursive_schemas_are_cut_with_a_note(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    assert inputs(out, "create_node")["children"] == {
        "name": "children",
        "type": "list",
        "items": "dictionary",
        "required": False,
    }
    text = (out / "create_node.yaml").read_text()
    assert "recursive schema #/components/schemas/Node cut here, kept free-form" in text


def test_a_ref_loop_skips_the_operation_and_the_rest_import(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        minimal(
            {
                "/loop": {
                    "post": {
                        "operationId": "loop",
                        "requestBody": {
                            "required": True,
                            "content": {
                                "application/json": {"schema": {"$ref": "#/components/schemas/A"}}
                            },
                        },
                        "responses": OK,
                    }
                },
                "/far": {
                    "get": {
                        "operationId": "far",
                        "parameters": [{"$ref": "other.yaml#/components/parameters/P"}],
                        "responses": OK,
                    }
                },
                "/fine": {"get": {"operationId": "fine", "responses": OK}},
            },
            components={
                "schemas": {
                    "A": {"$ref": "#/components/schemas/B"},
                    "B": {"$ref": "#/components/schemas/A"},
                }
            },
        ),
    )
    out, report = imported(tmp_path, spec, source="api")
    assert [(s.operation, str(s.problem)) for s in report.skipped] == [
        (
            "loop",
            "#/components/schemas/B: $ref '#/components/schemas/A' refers to itself",
        ),
        (
            "far",
            "#/paths/~1far/get/parameters/0: $ref 'other.yaml#/components/parameters/P' points outside this file; not supported",
        ),
    ]
    assert (out / "fine.yaml").exists()


_SELF_ALLOF = {"$ref": "#/components/schemas/N"}


@pytest.mark.parametrize(
    "operation",
    [
        {"requestBody": {"content": {"application/json": {"schema": _SELF_ALLOF}}}},
        {
            "requestBody": {
                "content": {"application/x-www-form-urlencoded": {"schema": _SELF_ALLOF}}
            }
        },
        {"requestBody": {"content": {"multipart/form-data": {"schema": _SELF_ALLOF}}}},
        {
            "responses": {
                "200": {
                    "description": "ok",
                    "content": {"application/json": {"schema": _SELF_ALLOF}},
                }
            }
        },
    ],
    ids=["json-body", "form-body", "multipart-body", "2xx-response"],
)
def test_a_self_referencing_allof_skips_only_its_operation(
    tmp_path: Path, operation: dict[str, Any]
) -> None:
    spec = write_spec(
        tmp_path,
        minimal(
            {
                "/n": {"post": {"operationId": "selfish", "responses": OK, **operation}},
                "/fine": {"get": {"operationId": "fine", "responses": OK}},
            },
            components={"schemas": {"N": {"allOf": [_SELF_ALLOF]}}},
        ),
    )
    out, report = imported(tmp_path, spec, source="api")
    assert [(s.operation, str(s.problem)) for s in report.skipped] == [
        (
            "selfish",
            "#/components/schemas/N: its allOf refers back to itself, so it cannot be merged "
            "into one schema",
        )
    ]
    assert (out / "fine.yaml").exists()
    assert load_tools(out)


def test_required_parameters_that_cannot_be_sent_skip_the_operation(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        minimal(
            {
                "/a": {
                    "get": {
                        "operationId": "needsCookie",
                        "parameters": [
                            {
                                "name": "sid",
                                "in": "cookie",
                                "required": True,
                                "schema": {"type": "array", "items": {"type": "string"}},
                            }
                        ],
                        "responses": OK,
                    }
                },
                "/b": {
                    "get": {
                        "operationId": "deepFilter",
                        "parameters": [
                            {
                                "name": "filter",
                                "in": "query",
                                "style": "deepObject",
                                "schema": {"type": "object"},
                            }
                        ],
                        "responses": OK,
                    }
                },
            }
        ),
    )
    out, report = imported(tmp_path, spec, source="api")
    assert [str(s.problem) for s in report.skipped] == [
        "#/paths/~1a/get/parameters/0: required cookie parameter 'sid': a list-valued cookie is not supported"
    ]
    assert (
        "an object without declared properties is not supported: left out"
        in (out / "deep_filter.yaml").read_text()
    )


# -- outputs ------------------------------------------------------------------------------


def test_outputs_come_from_the_2xx_schema(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    issue = outputs(out, "create_issue")  # get_issue's 404 makes its outputs optional
    assert issue["state"] == {"name": "state", "type": "string"}  # no enum: APIs add values
    assert issue["assignee"] == {
        "name": "assignee",
        "type": "dictionary",
        "parameters": [{"name": "login", "type": "string", "required": False}],
        "required": False,
    }
    assert "secret" not in issue  # writeOnly
    assert "output" not in definition(out, "create_issue")["backend"]["http"]  # projected
    listing = definition(out, "list_issues")
    assert listing["backend"]["http"]["output"] == {"items": "{{ response.json }}"}
    item = outputs(out, "list_issues")["items"]["items"]
    assert item["type"] == "dictionary"
    assert [p["name"] for p in item["parameters"]] == [
        "title",
        "body",
        "priority",
        "labels",
        "assignee",
        "id",
        "state",
        "html_url",
    ]


def test_a_binary_reply_is_a_binary_tool(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    attachment = definition(out, "download_attachment")
    assert attachment["backend"]["http"]["binary"] is True
    assert "output_schema" not in attachment


def test_no_content_and_text_responses(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    deleted = definition(out, "delete_issue")
    assert "output_schema" not in deleted
    assert deleted["backend"]["http"]["output"] == {}
    health = definition(out, "get_health")
    assert health["backend"]["http"]["output"] == {"body": "{{ response.text }}"}


# -- annotations, selection, deprecation --------------------------------------------------


def test_annotations_follow_the_method(tmp_path: Path) -> None:
    out, _ = imported(tmp_path)
    assert definition(out, "get_issue")["annotations"] == {
        "title": "Read one issue",
        "read_only": True,
        "destructive": False,
        "idempotent": True,
        "open_world": True,
    }
    deleted = definition(out, "delete_issue")["annotations"]
    assert (deleted["read_only"], deleted["destructive"], deleted["idempotent"]) == (
        False,
        True,
        True,
    )


def test_deprecated_operations_are_left_out_unless_asked(tmp_path: Path) -> None:
    out, report = imported(tmp_path / "a")
    assert report.deprecated == ["update_issue_old"]
    assert not (out / "update_issue_old.yaml").exists()
    out, report = imported(tmp_path / "b", deprecated=True)
    assert (out / "update_issue_old.yaml").exists()


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        ({"tags": ["tree"]}, ["create_node", "get_node"]),
        ({"operations": ["getIssue", "search"]}, ["get_issue", "search"]),
        ({"methods": ["delete"]}, ["delete_issue"]),
        (
            {"tags": ["issues"], "exclude": ["listIssues", "search"], "methods": ["GET"]},
            ["get_issue"],
        ),
    ],
    ids=["tag", "operation", "method", "combined"],
)
def test_filters_select_operations(
    tmp_path: Path, selection: dict[str, Any], expected: list[str]
) -> None:
    out, _ = imported(tmp_path, **selection)
    assert (
        sorted(path.stem for path in out.glob("*.yaml") if ".source" not in path.name) == expected
    )


# -- the source ---------------------------------------------------------------------------


def test_server_variables_are_their_defaults_and_one_variable_moves_the_source(
    tmp_path: Path,
) -> None:
    out, _ = imported(tmp_path)
    text = (out / "tracker.source.yaml").read_text()
    assert yaml.safe_load(text) == {
        "source": "tracker",
        "description": "Tracker API 2.1",
        "base_url": "${TRACKER_BASE_URL:-https://eu.tracker.example.com/v2}",
        "credentials": ["tracker-bearer-auth"],
        "auth": {"bearer": "tracker-bearer-auth"},
    }
    assert (
        "# note: base_url: server variable 'region' is its default, 'eu'; set TRACKER_BASE_URL "
        "to point elsewhere, or import with --server-variable to read 'TRACKER_SERVER_REGION' "
        "(#/servers/0/url)"
    ) in text
    registry = ToolRegistry()
    staging = "https://staging.tracker.example.com/v2"
    load_tools(out, registry=registry, environ={"TRACKER_BASE_URL": staging})
    assert len(registry) == 11
    assert {sub["value"] for sub in _substitutions(registry)} == {staging}


def test_an_exposed_server_variable_is_read_from_its_own_name(tmp_path: Path) -> None:
    out = tmp_path / "tools.d"
    import_openapi(TRACKER, source="tracker", out=out, server_variables=["region"])
    source = yaml.safe_load((out / "tracker.source.yaml").read_text())
    assert source["base_url"] == "https://${TRACKER_SERVER_REGION:-eu}.tracker.example.com/v2"
    registry = ToolRegistry()
    environ = {"TRACKER_SERVER_REGION": "us", "TRACKER_REGION": "not-this-one"}
    load_tools(out, registry=registry, environ=environ)
    assert {(sub["variable"], sub["value"]) for sub in _substitutions(registry)} == {
        ("TRACKER_SERVER_REGION", "us")
    }


def _substitutions(registry: ToolRegistry) -> list[dict[str, str]]:
    return [
        sub
        for name in registry.names()
        for sub in registry[name].definition.loaded_with().get("substitutions", [])  # type: ignore[union-attr]
    ]


@pytest.mark.parametrize(
    ("scheme", "auth", "credentials"),
    [
        ({"type": "http", "scheme": "bearer"}, {"bearer": "api-s"}, ["api-s"]),
        (
            {"type": "http", "scheme": "basic"},
            {"basic": {"username": "api-s-username", "password": "api-s-password"}},
            ["api-s-username", "api-s-password"],
        ),
        (
            {"type": "apiKey", "in": "header", "name": "X-Key"},
            {"api_key": {"credential": "api-s", "in": "header", "name": "X-Key"}},
            ["api-s"],
        ),
        (
            {
                "type": "oauth2",
                "flows": {
                    "clientCredentials": {"tokenUrl": "https://a.example/token", "scopes": {}}
                },
            },
            {
                "oauth2": {
                    "token_url": "https://a.example/token",
                    "client_id": "api-s-client-id",
                    "client_secret": "api-s-client-secret",
                    "scopes": ["read"],
                }
            },
            ["api-s-client-id", "api-s-client-secret"],
        ),
        (
            {
                "type": "oauth2",
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://a.example/auth",
                        "tokenUrl": "https://a.example/token",
                        "scopes": {},
                    }
                },
            },
            {"bearer": "api-s"},
            ["api-s"],
        ),
    ],
    ids=["bearer", "basic", "api-key", "client-credentials", "authorization-code"],
)
def test_security_schemes_become_auth_with_credential_names(
    tmp_path: Path, scheme: dict[str, Any], auth: dict[str, Any], credentials: list[str]
) -> None:
    spec = write_spec(
        tmp_path,
        minimal(
            {"/a": {"get": {"operationId": "a", "responses": OK}}},
            servers=[{"url": "https://api.example.com"}],
            security=[{"s": ["read"]}],
            components={"securitySchemes": {"s": scheme}},
        ),
    )
    out, _ = imported(tmp_path, spec, source="api")
    source = yaml.safe_load((out / "api.source.yaml").read_text())
    assert (source["auth"], source["credentials"]) == (auth, credentials)
    assert main(["validate", str(out)]) == 0


def test_an_unsupported_scheme_is_noted_and_the_source_has_no_auth(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        minimal(
            {"/a": {"get": {"operationId": "a", "responses": OK}}},
            security=[{"c": []}],
            components={"securitySchemes": {"c": {"type": "http", "scheme": "digest"}}},
        ),
    )
    out, _ = imported(tmp_path, spec, source="api")
    text = (out / "api.source.yaml").read_text()
    assert "security scheme 'c' (http digest) is not supported" in text
    assert "auth" not in yaml.safe_load(text)


# -- problems -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"swagger": "1.2"}',
            "#/swagger: Swagger version '1.2' is not supported; expected 2.0",
        ),
        ('{"swagger": "2.0", "paths": 3}', "#/paths: expected a mapping of paths"),
        (
            '{"openapi": "4.0.0"}',
            "#/openapi: OpenAPI version '4.0.0' is not supported; expected 3.0.x or 3.1.x",
        ),
        ("info: {title: x}\n", "#/openapi: missing 'openapi': not an OpenAPI 3 description"),
        ("openapi: 3.0.0\npaths: [1, 2]\n", "#/paths: expected a mapping of paths"),
        ("openapi: [unclosed\n", "#: invalid YAML at line 2, column 1"),
        ('{"openapi": ', "#: invalid JSON at line 1, column 13"),
        ("- a list\n", "#: expected a mapping (an OpenAPI document)"),
    ],
    ids=["swagger", "swagger-paths", "version", "not-openapi", "paths", "yaml", "json", "list"],
)
def test_a_description_that_cannot_be_imported_gets_a_located_problem(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    with pytest.raises(SystemExit) as info:
        main(["import", "openapi", str(spec), "--source", "api", "--out", str(tmp_path / "out")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"{spec}{message}" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_filters_that_match_nothing_are_problems_with_hints(tmp_path: Path) -> None:
    with pytest.raises(OpenAPIError) as info:
        imported(tmp_path, operations=["listIssue"], tags=["isues"])
    assert [str(p) for p in info.value.problems] == [
        "#/paths: no operation 'listIssue' (did you mean 'listIssues'?)",
        "#/paths: no operation has tag 'isues' (did you mean 'issues'?)",
    ]


def test_an_invalid_source_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"invalid source name '9 lives'"):
        imported(tmp_path, source="9 lives")


# -- calling an imported tool -------------------------------------------------------------


def test_imported_tools_call_a_loopback_server(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def note(handler: Handler) -> None:
        seen.append(
            {
                "method": handler.command,
                "path": handler.path,
                "tenant": handler.headers.get("X-Tenant"),
                "authorization": handler.headers.get("Authorization"),
                "body": json.loads(handler.body) if handler.body else None,
            }
        )
        handler.reply(
            200,
            {
                "id": "n1",
                "text": "hello",
                "stars": None,
                "extra": 1,
                "folder": {"name": "f", "x": 2},
            },
        )

    out, _ = imported(tmp_path, NOTES, methods=["GET"])
    with serve({"/api/notes/n 1": note, "/api/notes/n%201": note}) as origin:
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={"NOTES_BASE_URL": f"{origin}/api"})
        executor = ToolExecutor(
            credentials={
                "notes-basic-auth-username": "user-notes",
                "notes-basic-auth-password": "pass-notes",
            }
        )
        result = executor.execute(
            registry["get_note"], {"note_id": "n 1", "fields": ["a", "b"], "x_tenant": "t1"}
        )
    assert result.succeeded, result.error
    # null is absent; undeclared keys are dropped at every depth
    assert result.output == {"id": "n1", "text": "hello", "folder": {"name": "f"}}
    assert seen == [
        {
            "method": "GET",
            "path": "/api/notes/n%201?fields=a&fields=b",
            "tenant": "t1",
            "authorization": "Basic dXNlci1ub3RlczpwYXNzLW5vdGVz",
            "body": None,
        }
    ]


def test_a_json_body_is_sent_from_typed_parameters(tmp_path: Path) -> None:
    seen: list[Any] = []

    def created(handler: Handler) -> None:
        seen.append((handler.command, handler.path, json.loads(handler.body)))
        handler.reply(201, [{"id": 7}])

    with serve({"/v1/items/42/notes": created}) as origin:
        schema = {
            "type": "object",
            "required": ["text"],
            "properties": {
                "text": {"type": "string"},
                "id": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "meta": {"type": "object", "properties": {"pinned": {"type": "boolean"}}},
            },
        }
        spec = write_spec(
            tmp_path,
            minimal(
                {
                    "/items/{id}/notes": {
                        "post": {
                            "operationId": "addNote",
                            "parameters": [
                                {
                                    "name": "id",
                                    "in": "path",
                                    "required": True,
                                    "schema": {"type": "integer"},
                                }
                            ],
                            "requestBody": {
                                "required": True,
                                "content": {"application/json": {"schema": schema}},
                            },
                            "responses": {
                                "201": {
                                    "description": "made",
                                    "content": {
                                        "application/json": {
                                            "schema": {"type": "array", "items": {"type": "object"}}
                                        }
                                    },
                                }
                            },
                        }
                    }
                },
                servers=[{"url": f"{origin}/v1"}],
            ),
        )
        out, _ = imported(tmp_path, spec, source="items")
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={})
        result = ToolExecutor().execute(
            registry["add_note"],
            {"id": 42, "text": "hi", "body_id": 3, "meta": {"pinned": True}},
        )
    assert result.succeeded, result.error
    assert result.output == {"items": [{"id": 7}]}
    assert seen == [
        ("POST", "/v1/items/42/notes", {"text": "hi", "id": 3, "meta": {"pinned": True}})
    ]


# -- a hostile description ----------------------------------------------------------------


def test_text_from_the_description_cannot_leave_a_comment(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        minimal(
            {
                "/a\nbackend: {python: os:system}": {"get": {"operationId": "a", "responses": OK}},
                "/b": {
                    "get": {
                        "operationId": "b",
                        "parameters": [
                            {
                                "name": "s\nname: evil\r",
                                "in": "cookie",
                                "schema": {"type": "string"},
                            }
                        ],
                        "responses": OK,
                    }
                },
            }
        ),
    )
    out, _ = imported(tmp_path, spec, source="api")
    for name in ("a", "b"):
        text = (out / f"{name}.yaml").read_text()
        comments = [line for line in text.splitlines() if line.startswith("#")]
        assert yaml.safe_load(text)["name"] == name
        assert all(line.count("\n") == 0 for line in comments)
    assert "# GET /a\\nbackend: {python: os:system}" in (out / "a.yaml").read_text()
    assert "cookie s\\nname: evil\\r:" in (out / "b.yaml").read_text()
    assert main(["validate", str(out)]) == 0


@pytest.mark.parametrize("path", ["/x/{{ credentials }}", "/x/{% if 1 %}y{% endif %}", "/x/{#c#}"])
def test_a_path_with_template_syntax_is_skipped(tmp_path: Path, path: str) -> None:
    spec = write_spec(
        tmp_path, minimal({path: {"get": {"operationId": "x", "responses": OK}}, **FINE})
    )
    out, report = imported(tmp_path, spec, source="api")
    assert [s.problem.message for s in report.skipped] == [
        "a path with '{{', '{%' or '{#' would be read as a template"
    ]
    assert not (out / "x.yaml").exists()


def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    parameter = {"name": "n", "in": "query", "schema": schema}
    return {"/n": {"get": {"operationId": "n", "parameters": [parameter], "responses": OK}}}


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"type": "integer", "maximum": 10**100}, id="integer-101-digits"),
        pytest.param({"type": "integer", "minimum": -(10**99)}, id="negative-101-chars"),
        pytest.param(
            {"type": "integer", "maximum": 10**400, "exclusiveMaximum": True}, id="exclusive"
        ),
        pytest.param({"type": "integer", "enum": [1, 10**150]}, id="enum"),
        pytest.param({"type": "number", "minimum": -(10**400)}, id="number-past-a-float"),
    ],
)
def test_a_number_no_definition_can_hold_skips_its_operation_with_the_reason(
    tmp_path: Path, schema: dict[str, Any]
) -> None:
    spec = write_spec(tmp_path, minimal({**_bounded(schema), **FINE}))
    out, report = imported(tmp_path, spec, source="api")
    [skipped] = report.skipped
    assert skipped.operation == "n"
    assert "would write a definition that does not load: input_schema.parameters[0]." in str(
        skipped.problem
    )
    assert not (out / "n.yaml").exists()
    assert main(["validate", str(out)]) == 0


@pytest.mark.parametrize(
    ("schema", "written"),
    [
        pytest.param({"type": "integer", "maximum": 10**100 - 1}, 10**100 - 1, id="100-digits"),
        pytest.param({"type": "integer", "minimum": -(10**99) + 1}, -(10**99) + 1, id="negative"),
        pytest.param(
            {"type": "integer", "maximum": 10**100, "exclusiveMaximum": True},
            10**100 - 1,
            id="exclusive-comes-inside",
        ),
    ],
)
def test_the_longest_number_a_definition_holds_is_written_and_loads(
    tmp_path: Path, schema: dict[str, Any], written: int
) -> None:
    spec = write_spec(tmp_path, minimal(_bounded(schema)))
    out, report = imported(tmp_path, spec, source="api")
    assert report.skipped == []
    [bound] = [value for key, value in inputs(out, "n")["n"].items() if key.endswith("imum")]
    assert bound == written
    assert main(["validate", str(out)]) == 0


# -- checking the description -------------------------------------------------------------


def test_the_validator_reports_located_findings_and_the_import_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {"name": "x", "in": "nowhere"}
    spec = write_spec(
        tmp_path,
        minimal({"/a": {"get": {"operationId": "a", "parameters": [bad], "responses": OK}}}),
    )
    assert (
        main(["import", "openapi", str(spec), "--source", "api", "--out", str(tmp_path / "o")]) == 0
    )
    err = capsys.readouterr().err
    assert f"warning: {spec}#/paths/~1a/get/parameters/0: ParameterLocation (oneOf) failed: " in err
    assert 'the value is not one of "query"' in err
    assert (tmp_path / "o" / "a.yaml").exists()


def test_the_fixtures_are_valid_descriptions(tmp_path: Path) -> None:
    for spec in (TRACKER, NOTES):
        _, report = imported(tmp_path / spec.stem, spec)
        assert report.findings == []


def test_without_the_validator_the_import_says_it_did_not_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)
    argv = ["import", "openapi", str(NOTES), "--source", "notes", "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    assert "not checked against the OpenAPI schema: pip install 'agentkit[openapi]'" in (
        capsys.readouterr().out
    )


def test_a_form_body_sends_flat_fields(tmp_path: Path) -> None:
    seen: list[Any] = []

    def posted(handler: Handler) -> None:
        seen.append((handler.headers.get("Content-Type"), handler.body.decode()))
        handler.reply(200, {})

    schema = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    }
    with serve({"/forms": posted}) as origin:
        body = {
            "required": True,
            "content": {"application/x-www-form-urlencoded": {"schema": schema}},
        }
        spec = write_spec(
            tmp_path,
            minimal(
                {
                    "/forms": {
                        "post": {"operationId": "postForm", "requestBody": body, "responses": OK}
                    }
                },
                servers=[{"url": origin}],
            ),
        )
        out, _ = imported(tmp_path, spec, source="forms")
        assert "# note: form meta: an object field left out" in (out / "post_form.yaml").read_text()
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={})
        result = ToolExecutor().execute(registry["post_form"], {"name": "a b", "tags": ["x", "y"]})
    assert result.succeeded, result.error
    assert seen == [("application/x-www-form-urlencoded", "name=a+b&tags=x&tags=y")]


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("paths", "/a", "post", "parameters"), 5),
        (("components", "schemas", "S", "required"), 5),
        (("components", "schemas", "S", "required"), [{"x": 1}, "name"]),
        (("components", "schemas", "S", "properties"), []),
    ],
    ids=["parameters-int", "required-int", "required-junk", "properties-list"],
)
def test_values_of_the_wrong_type_do_not_crash_the_import(
    tmp_path: Path, where: tuple[str, ...], value: Any
) -> None:
    body = {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/S"}}},
    }
    document = minimal(
        {"/a": {"post": {"operationId": "a", "requestBody": body, "responses": OK}}},
        components={
            "schemas": {
                "S": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}},
                }
            }
        },
    )
    node: Any = document
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    out, _ = imported(tmp_path, write_spec(tmp_path, document), source="api")
    assert main(["validate", str(out)]) == 0
