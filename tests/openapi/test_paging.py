"""``paginate:`` written for operations whose pages are plain to see, a note for the rest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.openapi import import_openapi
from tests.support.loopback import Handler, serve

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"
ARRAY = {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}
INTEGER = {"type": "integer"}
STRING = {"type": "string"}


def query(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": schema}


def listing(
    parameters: list[dict[str, Any]],
    schema: dict[str, Any],
    *,
    headers: dict[str, Any] | None = None,
    method: str = "get",
    errors: bool = False,
) -> dict[str, Any]:
    ok: dict[str, Any] = {"description": "ok", "content": {"application/json": {"schema": schema}}}
    if headers:
        ok["headers"] = headers
    responses: dict[str, Any] = {"200": ok}
    if errors:
        responses["404"] = {
            "description": "gone",
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    operation = {"operationId": "listThings", "parameters": parameters, "responses": responses}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Things", "version": "1"},
        "servers": [{"url": "https://things.example.com"}],
        "paths": {"/things": {method: operation}},
    }


def imported(tmp_path: Path, document: dict[str, Any]) -> tuple[Path, dict[str, Any], str]:
    spec = tmp_path / "things.json"
    spec.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "tools.d"
    import_openapi(spec, source="things", out=out)
    file = next(path for path in out.glob("*.yaml") if "source" not in path.name)
    text = file.read_text(encoding="utf-8")
    return out, yaml.safe_load(text), text


LINK = {"Link": {"schema": {"type": "string"}}}


def test_github_style_pages_follow_the_link_header(tmp_path: Path) -> None:
    parameters = [query("per_page", INTEGER), query("page", INTEGER)]
    out, doc, text = imported(tmp_path, listing(parameters, ARRAY, headers=LINK, errors=True))
    http = doc["backend"]["http"]
    assert http["paginate"] == {"link": {}, "output": "items"}
    assert http["query"] == {"per_page": "{{ inputs.per_page }}", "page": "{{ inputs.page }}"}
    assert "output" not in http
    assert "responses" not in http
    assert [p["name"] for p in doc["output_schema"]["parameters"]] == ["items", "truncated"]
    assert "error replies are not mapped" in text
    pages = {
        "1": ([{"id": 1}, {"id": 2}], '<{origin}/things?page=2&per_page=2>; rel="next"'),
        "2": ([{"id": 3}], ""),
    }
    asked: list[dict[str, list[str]]] = []
    routes: dict[str, Any] = {}
    with serve(routes) as origin:

        def things(handler: Handler) -> None:
            params = parse_qs(urlsplit(handler.path).query)
            asked.append(params)
            records, link = pages[params["page"][0]]
            handler.reply(200, records, {"Link": link.format(origin=origin)} if link else None)

        routes["/things"] = things  # a next link names the origin: known once serving
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={"THINGS_BASE_URL": origin})
        result = ToolExecutor().execute(registry["list_things"], {"page": 1, "per_page": 2})
    assert result.succeeded, result.error
    assert result.output == {"items": [{"id": 1}, {"id": 2}, {"id": 3}], "truncated": False}
    assert [params["page"] for params in asked] == [["1"], ["2"]]


@pytest.mark.parametrize(
    ("name", "start"),
    [pytest.param("page", "page", id="page"), pytest.param("offset", "offset", id="offset")],
)
def test_without_a_link_header_the_query_parameter_moves_from_where_the_model_asked(
    tmp_path: Path, name: str, start: str
) -> None:
    _, doc, _ = imported(tmp_path, listing([query(name, INTEGER), query("q", STRING)], ARRAY))
    http = doc["backend"]["http"]
    assert http["paginate"] == {
        start: {"param": name, "start": "{{ inputs." + name + " }}"},
        "output": "items",
    }
    assert http["query"] == {"q": "{{ inputs.q }}"}
    outputs = [p["name"] for p in doc["output_schema"]["parameters"]]
    assert outputs == ["items", "truncated", "next_cursor"]


def test_a_cursor_in_the_answer_is_the_next_requests_cursor(tmp_path: Path) -> None:
    page = {
        "type": "object",
        "properties": {
            "data": ARRAY,
            "next_cursor": {"type": "string", "nullable": True},
            "total": INTEGER,
        },
    }
    out, doc, _ = imported(tmp_path, listing([query("cursor", STRING)], page))
    assert doc["backend"]["http"]["paginate"] == {
        "cursor": {"param": "cursor", "next": "{{ response.json.next_cursor | default(none) }}"},
        "items": "{{ response.json.data }}",
        "output": "data",
    }
    answers = {
        None: {"data": [{"id": 1}], "next_cursor": "c2", "total": 2},
        "c2": {"data": [{"id": 2}], "next_cursor": None, "total": 2},
    }
    routes: dict[str, Any] = {}
    with serve(routes) as origin:

        def things(handler: Handler) -> None:
            given = parse_qs(urlsplit(handler.path).query).get("cursor", [None])[0]
            handler.reply(200, answers[given])

        routes["/things"] = things  # a next link names the origin: known once serving
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={"THINGS_BASE_URL": origin})
        result = ToolExecutor().execute(registry["list_things"], {})
    assert result.succeeded, result.error
    # Nothing left: not truncated, and no cursor to go on from (an absent optional output).
    assert result.output == {"data": [{"id": 1}, {"id": 2}], "truncated": False}


@pytest.mark.parametrize(
    ("parameters", "schema", "method"),
    [
        pytest.param([query("page", INTEGER)], ARRAY, "post", id="post"),
        pytest.param([query("page", STRING)], ARRAY, "get", id="page-not-integer"),
        pytest.param([query("page", INTEGER), query("offset", INTEGER)], ARRAY, "get", id="two"),
        pytest.param(
            [query("cursor", STRING)],
            {"type": "object", "properties": {"a": ARRAY, "b": ARRAY, "next_cursor": STRING}},
            "get",
            id="two-lists",
        ),
        pytest.param(
            [query("cursor", STRING)],
            {"type": "object", "properties": {"a": ARRAY, "next": STRING}},
            "get",
            id="no-cursor-field",
        ),
    ],
)
def test_paging_that_is_not_plain_is_noted_and_not_written(
    tmp_path: Path, parameters: list[dict[str, Any]], schema: dict[str, Any], method: str
) -> None:
    _, doc, text = imported(tmp_path, listing(parameters, schema, method=method))
    assert "paginate" not in doc["backend"]["http"]
    if method == "get":
        assert "looks paged (query " in text
        assert "the way to the next page is not plain" in text
    else:
        assert "looks paged" not in text


def test_a_listing_without_page_parameters_is_left_alone(tmp_path: Path) -> None:
    _, doc, text = imported(tmp_path, listing([query("q", STRING)], ARRAY, headers=LINK))
    assert doc["backend"]["http"]["output"] == {"items": "{{ response.json }}"}
    assert "paginate" not in text


def test_githubs_listings_follow_their_link_headers(tmp_path: Path) -> None:
    out = tmp_path / "tools.d"
    spec = FIXTURES / "github" / "api.github.com.json"
    import_openapi(spec, source="github", out=out, check=False)
    doc = yaml.safe_load((out / "issues_list_labels_for_repo.yaml").read_text(encoding="utf-8"))
    assert doc["backend"]["http"]["paginate"] == {"link": {}, "output": "items"}
    paged = [path.stem for path in out.glob("*.yaml") if "paginate:" in path.read_text()]
    assert len(paged) == 20
    assert load_tools(out)  # each loads


def test_page_numbers_start_where_the_model_asked_and_stop_at_an_empty_page(
    tmp_path: Path,
) -> None:
    out, _, _ = imported(tmp_path, listing([query("page", INTEGER)], ARRAY))
    asked: list[str] = []

    def things(handler: Handler) -> None:
        page = parse_qs(urlsplit(handler.path).query)["page"][0]
        asked.append(page)
        handler.reply(200, [{"id": int(page)}] if page in ("3", "4") else [])

    with serve({"/things": things}) as origin:
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={"THINGS_BASE_URL": origin})
        result = ToolExecutor().execute(registry["list_things"], {"page": 3})
    assert result.succeeded, result.error
    assert result.output == {"items": [{"id": 3}, {"id": 4}], "truncated": False}
    assert asked == ["3", "4", "5"]
