"""The import's budgets: schemas within a depth and a size, descriptions within a length,
streaming parameters left out, and a summary that says how to choose among many tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit import ToolRegistry, load_tools
from agentkit.cli import main
from agentkit.openapi import ImportReport, import_openapi, update_openapi
from agentkit.openapi.budgets import Budgets
from agentkit.openapi.descriptions import trim
from agentkit.schemasize import schema_size
from agentkit.toolerrors import UsageError

GITHUB = Path(__file__).parent.parent / "fixtures" / "openapi" / "github" / "api.github.com.json"
LONG = "A sentence of some length about this field. " * 4  # 176 characters


def nested(levels: int, leaf: dict[str, Any] | None = None) -> dict[str, Any]:
    """An object ``levels`` deep: ``{inner: {inner: ... {leaf: string}}}``."""
    schema: dict[str, Any] = leaf or {
        "type": "object",
        "properties": {"leaf": {"type": "string"}},
    }
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def wide(count: int) -> dict[str, Any]:
    """An object of ``count`` string fields, each with a long description."""
    return {
        "type": "object",
        "properties": {f"f{i}": {"type": "string", "description": LONG} for i in range(count)},
    }


def spec(tmp_path: Path, paths: dict[str, Any]) -> Path:
    document = {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": paths}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def post(body: dict[str, Any], answer: dict[str, Any] | None = None) -> dict[str, Any]:
    """A POST operation with a JSON ``body`` and, if given, a JSON ``answer``."""
    response: dict[str, Any] = {"description": "ok"}
    if answer is not None:
        response["content"] = {"application/json": {"schema": answer}}
    return {
        "post": {
            "operationId": "make",
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": body}},
            },
            "responses": {"200": response},
        }
    }


def imported(tmp_path: Path, paths: dict[str, Any], **budgets: Any) -> tuple[Path, ImportReport]:
    out = tmp_path / "out"
    report = import_openapi(
        spec(tmp_path, paths), source="api", out=out, budgets=Budgets(**budgets)
    )
    return out, report


def text(out: Path, name: str = "make") -> str:
    return (out / f"{name}.yaml").read_text(encoding="utf-8")


def document(out: Path, name: str = "make") -> dict[str, Any]:
    data = yaml.safe_load(text(out, name))
    assert isinstance(data, dict)
    return data


def loaded(out: Path) -> ToolRegistry:
    registry = ToolRegistry()
    load_tools(out, registry=registry)
    return registry


def depth(parameters: list[dict[str, Any]]) -> int:
    """The levels of structured parameters below the top (0: all free-form or scalar)."""
    deepest = 0
    for param in parameters:
        if "parameters" in param:
            deepest = max(deepest, 1 + depth(param["parameters"]))
    return deepest


# -- descriptions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "limit", "expected"),
    [
        pytest.param("Short enough.", 40, "Short enough.", id="within"),
        pytest.param(
            "First sentence here. Second sentence goes on and on.",
            40,
            "First sentence here. …",
            id="at-a-sentence",
        ),
        pytest.param(
            "one two three four five six seven eight nine ten eleven",
            30,
            "one two three four five six…",
            id="at-a-word",
        ),
        pytest.param("x" * 60, 30, "x" * 29 + "…", id="one-long-word"),
        pytest.param(
            "A. Then a very long sentence without any end in sight at all",
            40,
            "A. Then a very long sentence without…",
            id="sentence-too-short-to-keep",
        ),
        pytest.param("Para one.\n\nPara two.", 40, "Para one.", id="first-paragraph"),
    ],
)
def test_a_description_is_cut_at_a_sentence_else_a_word_with_a_marker(
    given: str, limit: int, expected: str
) -> None:
    assert trim(given, limit) == expected
    assert len(trim(given, limit)) <= limit


def test_descriptions_keep_within_their_budgets(tmp_path: Path) -> None:
    operation = post(wide(3))
    operation["post"]["description"] = LONG * 3
    out, _ = imported(
        tmp_path, {"/make": operation}, description_chars=60, tool_description_chars=100
    )
    tool = document(out)
    assert len(tool["description"]) <= 100
    assert tool["description"].endswith("…")
    for param in tool["input_schema"]["parameters"]:
        assert len(param["description"]) <= 60
        assert param["description"].endswith(". …")


# -- depth ---------------------------------------------------------------------------------


def test_deeper_parts_become_free_form_with_a_note(tmp_path: Path) -> None:
    out, report = imported(tmp_path, {"/make": post(nested(4))}, max_depth=2)
    (inner,) = document(out)["input_schema"]["parameters"]
    assert inner["parameters"][0]["parameters"][0] == {
        "name": "inner",
        "type": "dictionary",
        "required": False,
    }
    assert "# note: body.inner.inner.inner: nested over 2 levels, kept free-form" in text(out)
    assert report.fitted == []  # the depth budget, not the size budget, cut it
    assert len(loaded(out)) == 1


def test_a_depth_of_zero_keeps_only_the_top_level(tmp_path: Path) -> None:
    out, _ = imported(tmp_path, {"/make": post(nested(3))}, max_depth=0)
    assert document(out)["input_schema"]["parameters"] == [
        {"name": "inner", "type": "dictionary", "required": False}
    ]


# -- size ------------------------------------------------------------------------------------


def test_a_tool_over_the_size_budget_keeps_less_nesting_until_it_fits(tmp_path: Path) -> None:
    body = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "spec": nested(2, wide(25))},
    }
    out, report = imported(tmp_path, {"/make": post(body)}, schema_bytes=2000)
    tool = loaded(out)["make"]
    assert schema_size(tool).total <= 2000
    assert report.fitted == ["make"]
    assert report.over_budget == []
    assert "nesting cut (input to " in text(out)
    assert "to fit the schema budget of 2000 bytes (--schema-budget)" in text(out)
    assert "kept free-form" in text(out)  # each place cut is noted too
    # The default budget takes the whole tool, the 25 fields and all.
    (tmp_path / "whole").mkdir()
    whole, report = imported(tmp_path / "whole", {"/make": post(body)})
    assert report.fitted == []
    assert depth(document(whole)["input_schema"]["parameters"]) == 3


def test_the_larger_schema_loses_its_levels_first(tmp_path: Path) -> None:
    small_deep = nested(3)
    big_deep = {"type": "object", "properties": {"data": nested(1, wide(30))}}
    out, report = imported(
        tmp_path, {"/make": post(small_deep, answer=big_deep)}, schema_bytes=2500
    )
    tool = document(out)
    assert report.fitted == ["make"]
    assert depth(tool["input_schema"]["parameters"]) == 3  # untouched
    assert depth(tool["output_schema"]["parameters"]) < 2
    assert "nesting cut (output to " in text(out)
    assert "input to" not in text(out).split("nesting cut", 1)[1].split("\n", 1)[0]


def test_a_tool_whose_top_level_alone_is_over_the_budget_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    path = spec(tmp_path, {"/make": post(wide(40))})
    argv = ["import", "openapi", str(path), "--source", "api", "--out", str(out)]
    assert main([*argv, "--schema-budget", "1000"]) == 0
    said = capsys.readouterr().out
    assert "1 tool(s) over the schema budget even so (make)" in said
    assert "over the schema budget of 1000 with no nesting left to cut" in text(out)
    assert len(loaded(out)) == 1  # written all the same: the reviewer decides


# -- streaming parameters ---------------------------------------------------------------


def listing(*parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "/pods": {
            "get": {
                "operationId": "list",
                "parameters": list(parameters),
                "responses": {"200": {"description": "ok"}},
            }
        }
    }


WATCH = {"name": "watch", "in": "query", "schema": {"type": "boolean"}}
FOLLOW = {"name": "Follow", "in": "query", "schema": {"type": "boolean"}}
LIMIT = {"name": "limit", "in": "query", "schema": {"type": "integer"}}


def test_streaming_parameters_are_left_out_with_a_note(tmp_path: Path) -> None:
    out, report = imported(tmp_path, listing(WATCH, FOLLOW, LIMIT))
    tool = document(out, "list")
    assert [param["name"] for param in tool["input_schema"]["parameters"]] == ["limit"]
    assert set(tool["backend"]["http"]["query"]) == {"limit"}
    assert "# note: query watch: a streaming parameter, left out" in text(out, "list")
    assert "# note: query Follow: a streaming parameter, left out" in text(out, "list")
    assert report.streaming == 2


@pytest.mark.parametrize(
    ("parameter", "budgets"),
    [
        pytest.param(WATCH, {"keep_streaming": True}, id="kept-on-request"),
        pytest.param({**WATCH, "required": True}, {}, id="required"),
        pytest.param({**WATCH, "in": "header"}, {}, id="a-header"),
    ],
)
def test_a_streaming_parameter_stays_when_asked_or_required_or_not_in_the_query(
    tmp_path: Path, parameter: dict[str, Any], budgets: dict[str, Any]
) -> None:
    out, report = imported(tmp_path, listing(parameter), **budgets)
    assert [param["name"] for param in document(out, "list")["input_schema"]["parameters"]] == [
        "watch"
    ]
    assert report.streaming == 0


# -- the summary -----------------------------------------------------------------------------


def operations(count: int) -> dict[str, Any]:
    return {
        f"/things/{i}": {
            "get": {
                "operationId": f"get{i}",
                "tags": [f"tag{i % 7}"],
                "responses": {"200": {"description": "ok"}},
            }
        }
        for i in range(count)
    }


@pytest.mark.parametrize(
    ("count", "advised"), [pytest.param(129, True, id="129"), pytest.param(128, False, id="128")]
)
def test_an_import_over_128_tools_says_how_to_choose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], count: int, advised: bool
) -> None:
    path = spec(tmp_path, operations(count))
    argv = ["import", "openapi", str(path), "--source", "api", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert (f"{count} tools: over 128, the most providers accept in one request" in said) is advised
    assert ("--tag (7 tags: tag0, tag1, tag2, tag3, tag4, ...)" in said) is advised
    assert ("toolset: document" in said) is advised


# -- options and the lock ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "least"),
    [
        pytest.param("--max-depth", "-1", 0, id="depth"),
        pytest.param("--schema-budget", "0", 1, id="size"),
        pytest.param("--description-budget", "5", 20, id="description"),
        pytest.param("--tool-description-budget", "19", 20, id="tool-description"),
    ],
)
def test_a_budget_out_of_range_is_a_usage_error_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, least: int
) -> None:
    path = spec(tmp_path, operations(1))
    argv = ["import", "openapi", str(path), "--source", "api", "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as exited:
        main([*argv, option, value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"{option}: expected a whole number of at least {least}, got {value}" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_an_update_keeps_the_budgets_of_the_import_unless_given(tmp_path: Path) -> None:
    out, _ = imported(tmp_path, {"/make": post(nested(4))}, max_depth=1)
    before = text(out)
    path = tmp_path / "spec.json"
    report = update_openapi(path, source="api", out=out)
    assert report.written == []
    assert text(out) == before  # the lock's depth, not the default
    report = update_openapi(path, source="api", out=out, budgets=Budgets(max_depth=3))
    assert [str(path.name) for path in report.written] == ["make.yaml"]
    assert depth(document(out)["input_schema"]["parameters"]) == 3
    lock = json.loads((out / "api.openapi-lock.json").read_text(encoding="utf-8"))
    assert lock["budgets"]["max_depth"] == 3


def test_a_lock_without_budgets_updates_with_the_defaults(tmp_path: Path) -> None:
    out, _ = imported(tmp_path, {"/make": post(nested(2))})
    lock_path = out / "api.openapi-lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    del lock["budgets"]
    lock_path.write_text(json.dumps(lock), encoding="utf-8")
    report = update_openapi(tmp_path / "spec.json", source="api", out=out)
    assert report.written == []
    assert Budgets.from_json(None) == Budgets()


def test_budgets_are_refused_when_not_whole_numbers() -> None:
    with pytest.raises(UsageError, match="--max-depth: expected a whole number"):
        Budgets(max_depth=True)


# -- a real description ------------------------------------------------------------------


def test_githubs_description_imports_within_the_default_budget(tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = import_openapi(GITHUB, source="gh", out=out)
    registry = loaded(out)
    assert max(schema_size(tool).total for tool in registry) <= Budgets().schema_bytes
    assert report.fitted  # some of its tools had to give up nesting
    assert report.over_budget == []
    for name in report.fitted:
        assert "to fit the schema budget of 8192 bytes" in text(out, name)


def test_githubs_description_under_a_tight_budget_names_what_stays_over(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    report = import_openapi(GITHUB, source="gh", out=out, budgets=Budgets(schema_bytes=1500))
    registry = loaded(out)
    for tool in registry:
        size = schema_size(tool).total
        assert (size <= 1500) == (tool.name not in report.over_budget), tool.name
    assert report.over_budget
