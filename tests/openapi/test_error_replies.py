"""Error replies a description defines become per-status outputs (``responses:``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.cli import main
from tests.openapi.test_import import definition, imported, minimal, outputs, write_spec
from tests.support.loopback import serve

ERROR = {
    "type": "object",
    "required": ["message"],
    "properties": {"message": {"type": "string"}, "code": {"type": "integer"}},
}
ITEM = {
    "type": "object",
    "required": ["id"],
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
}


def _json(schema: Any, description: str = "reply") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _spec(tmp_path: Path, responses: dict[str, Any], **extra: Any) -> Path:
    operation = {
        "operationId": "getItem",
        "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
        ],
        "responses": responses,
    }
    document = minimal(
        {"/items/{id}": {"get": operation}},
        components={
            "schemas": {"Error": ERROR, "Item": ITEM},
            "responses": {
                "NotFound": _json({"$ref": "#/components/schemas/Error"}, "No such item.")
            },
        },
        **extra,
    )
    return write_spec(tmp_path, document)


STANDARD = {
    "200": _json({"$ref": "#/components/schemas/Item"}),
    "404": {"$ref": "#/components/responses/NotFound"},
    "422": _json({"$ref": "#/components/schemas/Error"}, "The item is locked."),
    "default": _json({"$ref": "#/components/schemas/Error"}, "Unexpected error."),
}


def test_error_statuses_become_responses_with_typed_error_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = imported(tmp_path, _spec(tmp_path, STANDARD), source="items")
    http = definition(out, "get_item")["backend"]["http"]
    assert http["responses"] == {
        404: {
            "error_status": 404,
            "error": "{{ response.json }}",
            "error_message": "No such item.",
        },
        422: {
            "error_status": 422,
            "error": "{{ response.json }}",
            "error_message": "The item is locked.",
        },
        "4XX": {
            "error_status": "{{ response.status }}",
            "error": "{{ response.json }}",
            "error_message": "Unexpected error.",
        },
        "5XX": {
            "error_status": "{{ response.status }}",
            "error": "{{ response.json }}",
            "error_message": "Unexpected error.",
        },
    }
    declared = outputs(out, "get_item")
    assert declared["id"]["required"] is False  # a 404 has no id
    assert declared["error"]["parameters"] == [
        {"name": "message", "type": "string"},
        {"name": "code", "type": "integer", "required": False},
    ]
    assert {declared[name]["type"] for name in ("error_status", "error_message")} == {
        "integer",
        "string",
    }
    text = (out / "get_item.yaml").read_text()
    assert "# note: responses: 404, 422, 4XX, 5XX answer with the error outputs" in text
    assert main(["validate", "--strict", str(out)]) == 0


def test_an_error_reply_is_an_output_of_the_call(tmp_path: Path) -> None:
    replies = {
        "/items/1": (200, {"id": 1, "name": "one", "extra": True}),
        "/items/2": (404, {"message": "gone", "code": 7, "trace": "x"}),
        "/items/3": (500, {"message": "boom"}),
    }

    def behaviour(status: int, payload: Any) -> Any:
        return lambda handler: handler.reply(status, payload)

    with serve({path: behaviour(*reply) for path, reply in replies.items()}) as origin:
        out, _ = imported(
            tmp_path, _spec(tmp_path, STANDARD, servers=[{"url": origin}]), source="items"
        )
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={})
        # no retry waits in the test: a 500 is not retried by default
        results = [
            ToolExecutor().execute(registry["get_item"], {"id": key}) for key in ("1", "2", "3")
        ]
    assert [result.error for result in results] == [None, None, None]
    assert [result.output for result in results] == [
        {"id": 1, "name": "one"},
        {
            "error_status": 404,
            "error": {"message": "gone", "code": 7},  # projected: trace dropped
            "error_message": "No such item.",
        },
        {"error_status": 500, "error": {"message": "boom"}, "error_message": "Unexpected error."},
    ]


def test_error_replies_of_different_shapes_share_a_free_form_error(tmp_path: Path) -> None:
    responses = {
        "200": _json(ITEM),
        "400": _json({"type": "object", "properties": {"errors": {"type": "array"}}}),
        "409": _json(ERROR),
        "503": {"description": "Down.", "content": {"text/html": {}}},
    }
    out, _ = imported(tmp_path, _spec(tmp_path, responses), source="items")
    declared = outputs(out, "get_item")
    assert declared["error"] == {
        "name": "error",
        "type": "dictionary",
        "description": "The body of an error reply.",
        "required": False,
    }
    http = definition(out, "get_item")["backend"]["http"]
    assert http["responses"][503] == {"error_status": 503, "error_message": "Down."}
    text = (out / "get_item.yaml").read_text()
    assert "# note: responses: error replies of different shapes: a free-form dictionary" in text
    assert (
        "# note: responses.503: its body does not fit the other error replies' dictionary" in text
    )
    assert main(["validate", "--strict", str(out)]) == 0


def test_text_error_replies_give_a_string_error(tmp_path: Path) -> None:
    responses = {
        "200": _json(ITEM),
        "404": {"description": "Not {{ here }}.", "content": {"text/plain": {}}},
        "410": {"description": "Gone for good."},
    }
    out, _ = imported(tmp_path, _spec(tmp_path, responses), source="items")
    http = definition(out, "get_item")["backend"]["http"]
    assert http["responses"] == {
        404: {"error_status": 404, "error": "{{ response.text }}"},  # that text is no template
        410: {"error_status": 410, "error_message": "Gone for good."},
    }
    assert outputs(out, "get_item")["error"]["type"] == "string"
    assert main(["validate", "--strict", str(out)]) == 0


def test_error_output_names_do_not_clash_with_the_success_outputs(tmp_path: Path) -> None:
    item = {"type": "object", "properties": {"error": {"type": "string"}}}
    responses = {"200": _json(item), "404": _json(ERROR, "Missing.")}
    out, _ = imported(tmp_path, _spec(tmp_path, responses), source="items")
    assert list(outputs(out, "get_item")) == ["error", "error_status", "error_2", "error_message"]
    assert main(["validate", "--strict", str(out)]) == 0


def test_a_binary_tool_keeps_failing_on_error_statuses(tmp_path: Path) -> None:
    responses = {
        "200": {"description": "png", "content": {"image/png": {}}},
        "404": _json(ERROR),
    }
    out, _ = imported(tmp_path, _spec(tmp_path, responses), source="items")
    http = definition(out, "get_item")["backend"]["http"]
    assert http["binary"] is True
    assert "responses" not in http
    assert (
        "# note: responses: error replies not mapped: a binary tool has none"
        in (out / "get_item.yaml").read_text()
    )


def test_a_broken_error_reply_is_noted_and_the_operation_imports(tmp_path: Path) -> None:
    responses = {
        "200": _json(ITEM),
        "404": {"$ref": "#/components/responses/Nowhere"},
        "500": _json(ERROR, "Oops."),
    }
    out, report = imported(tmp_path, _spec(tmp_path, responses), source="items")
    assert not report.skipped
    assert list(definition(out, "get_item")["backend"]["http"]["responses"]) == [500]
    assert (
        "# note: responses.404: $ref '#/components/responses/Nowhere' points at nothing: "
        "#/components/responses has no 'Nowhere'; not mapped" in (out / "get_item.yaml").read_text()
    )


def test_only_success_replies_change_nothing(tmp_path: Path) -> None:
    out, _ = imported(tmp_path, _spec(tmp_path, {"200": _json(ITEM)}), source="items")
    assert "responses" not in definition(out, "get_item")["backend"]["http"]
    assert outputs(out, "get_item")["id"] == {"name": "id", "type": "integer"}
