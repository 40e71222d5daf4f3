"""The short ways to write a definition: a schema as its list of parameters, a
parameter as ``NAME: TYPE``, tags on a source, and a version left out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from agentkit.adapters.diff import diff_tools
from agentkit.declarative.shorthand import written_in_full
from agentkit.openapi import import_openapi
from agentkit.openapi.update import update_openapi
from tests.declarative.conftest import WriteFile, load, problems

SCHEMA = json.loads(
    (
        Path(__file__).parents[2] / "agentkit" / "declarative" / "tool-definition.schema.json"
    ).read_text()
)


def http_tool(inputs: str, outputs: str = "", *, head: str = "name: t\n") -> str:
    return (
        f"{head}input_schema:\n{inputs}"
        + (f"output_schema:\n{outputs}" if outputs else "")
        + "backend:\n  http:\n    url: http://127.0.0.1:9/x\n"
    )


def json_schemas(folder: Path, name: str = "t") -> tuple[dict[str, Any], dict[str, Any]]:
    tool = load(folder)[name]
    return tool.input_schema.to_json_schema(), tool.output_schema.to_json_schema()


SHORT = """\
  - city: string
  - days: integer?
  - ratio: float
  - "on": boolean?
  - labels: list[string]
  - grid: list[list[integer]]?
  - extra: dictionary?
  - name: string
  - description: string?
"""
LONG = """\
  parameters:
    - {name: city, type: string}
    - {name: days, type: integer, required: false}
    - {name: ratio, type: float}
    - {name: "on", type: boolean, required: false}
    - {name: labels, type: list, items: string}
    - {name: grid, type: list, items: {type: list, items: integer}, required: false}
    - {name: extra, type: dictionary, required: false}
    - {name: name, type: string}
    - {name: description, type: string, required: false}
"""


def test_short_parameters_load_as_the_full_form(tmp_path: Path, write: WriteFile) -> None:
    short = WriteFile(tmp_path / "short")
    long = WriteFile(tmp_path / "long")
    short(http_tool(SHORT, SHORT))
    long(http_tool(LONG, LONG))
    assert json_schemas(short.folder) == json_schemas(long.folder)
    inputs, _ = json_schemas(short.folder)
    assert inputs["required"] == ["city", "ratio", "labels", "name"]
    assert inputs["properties"]["grid"]["items"] == {"type": "array", "items": {"type": "integer"}}


def test_short_parameters_mix_with_full_ones_and_nest(write: WriteFile) -> None:
    write(
        http_tool(
            """\
  parameters:
    - id: integer
    - name: filters
      type: dictionary
      parameters:
        - label: string
        - since: string?
    - name: rows
      type: list
      items: list[float]
      required: false
    - name: points
      type: list
      items:
        type: dictionary
        parameters:
          - x: float
"""
        )
    )
    schema = load(write.folder)["t"].input_schema
    filters = schema["filters"].parameters
    assert filters is not None
    assert filters["label"].required
    assert not filters["since"].required
    rows = schema.to_json_schema()["properties"]["rows"]
    assert rows["items"] == {"type": "array", "items": {"type": "number"}}
    points = schema.to_json_schema()["properties"]["points"]["items"]
    assert points["properties"]["x"] == {"type": "number"}


def test_an_element_spec_of_one_key_is_not_a_parameter(write: WriteFile) -> None:
    # items: {type: string} is the element's type, not a parameter called "type".
    write(http_tool("  - {name: tags, type: list, items: {type: string}}\n"))
    items = load(write.folder)["t"].input_schema.to_json_schema()["properties"]["tags"]["items"]
    assert items == {"type": "string"}


def test_the_calls_check_a_short_parameter_like_any_other(write: WriteFile) -> None:
    write(http_tool("  - labels: list[integer]\n  - note: string?\n"))
    schema = load(write.folder)["t"].input_schema
    assert not schema.check({"labels": [1, 2]}).problems
    assert schema.check({"labels": ["a"]}).problems
    assert schema.check({"labels": [True]}).problems  # a bool is not an integer
    assert schema.check({}).problems  # labels is required


@pytest.mark.parametrize(
    ("entry", "line", "expected"),
    [
        pytest.param("  - a: strnig\n", 4, "input_schema[1].type: unsupported type 'strnig' (did you mean 'string'?)", id="typo"),
        pytest.param("  - a: list[int]\n", 4, "input_schema[1].items.type: unsupported type 'int' (did you mean 'integer'?)", id="alias"),
        pytest.param("  - a: list[string\n", 4, "input_schema[1].a: cannot read the type 'list[string'", id="bracket"),
        pytest.param("  - a: string??\n", 4, "input_schema[1].a: cannot read the type 'string??'", id="twice"),
        pytest.param("  - a: list[string?]\n", 4, "cannot read the type 'list[string?]'", id="optional-inside"),
        pytest.param("  - a: ''\n", 4, "cannot read the type ''", id="empty"),
        pytest.param("  - on: boolean\n", 4, "input_schema[1]: the parameter name true is not text: unquoted, YAML reads on", id="yaml-boolean"),
        pytest.param("  - 3: string\n", 4, "the parameter name 3 is not text", id="number"),
        pytest.param("  - a: list[]\n", 4, "cannot read the type 'list[]'", id="empty-list"),
        pytest.param("  - a: list[string]]\n", 4, "cannot read the type 'list[string]]'", id="closing"),
        pytest.param("  - a: '?'\n", 4, "cannot read the type '?'", id="mark-alone"),
        pytest.param("  - a: " + "list[" * 65 + "string" + "]" * 65 + "\n", 4, "lists nested more than 64 deep", id="too-deep"),
        pytest.param("  - a: " + "list[" * 400 + "string" + "]" * 400 + "\n", 4, "lists nested more than 64 deep", id="far-too-deep"),
        pytest.param("  - a: string?\n    description: more\n", 4, "input_schema[1].a: a parameter written short is NAME: TYPE and nothing more", id="more-under-it"),
        pytest.param("  - a: {type: string, required: false}\n", 4, "write it in full: name: a, type: ...", id="mapping"),
        pytest.param("  - a: 5\n", 4, "a parameter written short is NAME: TYPE", id="number-type"),
        pytest.param("  - a:\n", 4, "a parameter written short is NAME: TYPE", id="no-type"),
        pytest.param("  - {a: string, b: integer}\n", 4, "one entry holds 2 parameters (a, b): written short, each parameter is an entry of its own", id="two-in-one"),
        pytest.param("  - ~: string\n", 4, "the parameter name null is not text", id="yaml-null"),
        pytest.param("  - nme: city\n    type: string\n", 4, "unknown key 'nme' (did you mean 'name'?)", id="misspelt-full-form"),
        pytest.param("  - name: city\n", 4, "input_schema[1]: missing 'type'", id="full-form-missing-type"),
    ],
)  # fmt: skip
def test_a_short_parameter_that_cannot_be_read_is_a_problem_at_its_line(
    write: WriteFile, entry: str, line: int, expected: str
) -> None:
    path = write(http_tool("  - ok: string\n" + entry))
    (found, *_) = problems(path)
    assert found.startswith(f"{path}:{line}:")
    assert expected in found


def test_a_problem_in_a_listed_schema_is_at_its_entry(write: WriteFile) -> None:
    # The schema given as its list: no 'parameters' in the location or the field named.
    path = write(http_tool("  - ok: string\n  - {name: n, type: integer, minimun: 1}\n"))
    (found,) = problems(path)
    assert found.startswith(f"{path}:4:")
    assert "input_schema[1].minimun" in found
    assert "did you mean 'minimum'" in found


def test_an_optional_short_parameter_takes_no_default(write: WriteFile) -> None:
    # A default is written in full: the short form says a type and nothing else.
    path = write(http_tool("  - days: integer? = 3\n"))
    (found,) = problems(path)
    assert "cannot read the type 'integer? = 3'" in found


SOURCE = """\
source: gh
base_url: http://127.0.0.1:9
tags:
  domain: github
  team: tools
parameters:
  - name: owner
    type: string
---
"""


def source_tool(name: str, extra: str = "", *, version: str = "") -> str:
    return (
        f"---\nname: {name}\n{version}{extra}input_schema:\n  - owner\n  - n: integer\n"
        "backend:\n  http:\n    source: gh\n    path: /x\n"
    )


def test_a_tool_carries_its_sources_tags_under_its_own(write: WriteFile) -> None:
    write(SOURCE + source_tool("a") + source_tool("b", "tags:\n  team: triage\n"))
    registry = load(write.folder)
    assert registry["a"].tags == {"domain": "github", "team": "tools"}
    assert registry["b"].tags == {"domain": "github", "team": "triage"}
    assert {tool.name for tool in registry.lookup_by_tags(domain="github")} == {"a", "b"}


def test_a_sources_tags_are_checked(write: WriteFile) -> None:
    path = write(SOURCE.replace("team: tools", "team: 3") + source_tool("a"))
    assert any("tags must map strings to strings" in found for found in problems(path))


def test_moving_tags_to_the_source_changes_no_tool(tmp_path: Path) -> None:
    before, after = WriteFile(tmp_path / "before"), WriteFile(tmp_path / "after")
    untagged = SOURCE.replace("tags:\n  domain: github\n  team: tools\n", "")
    before(untagged + source_tool("a", "tags:\n  domain: github\n  team: tools\n"))
    after(SOURCE + source_tool("a"))
    assert diff_tools(load(before.folder), load(after.folder)) == []
    # A tag the source changes is a change of each of its tools.
    changed = WriteFile(tmp_path / "changed")
    changed(SOURCE.replace("team: tools", "team: other") + source_tool("a"))
    (diff,) = diff_tools(load(after.folder), load(changed.folder))
    assert [change.message for change in diff.changes] == ["tags changed"]


def test_a_version_left_out_is_1_0_0(tmp_path: Path) -> None:
    written, left_out = WriteFile(tmp_path / "written"), WriteFile(tmp_path / "left_out")
    written(SOURCE + source_tool("a", version="version: 1.0.0\n"))
    left_out(SOURCE + source_tool("a"))
    assert load(left_out.folder)["a"].version == "1.0.0"
    assert diff_tools(load(written.folder), load(left_out.folder)) == []


def test_a_version_given_is_still_checked(write: WriteFile) -> None:
    path = write(SOURCE + source_tool("a", version="version: '1.2'\n"))
    (found,) = problems(path)
    assert "invalid version '1.2'" in found
    assert "leave it out for 1.0.0" in found


@pytest.mark.parametrize(
    "document",
    [
        {"name": "t", "input_schema": [{"a": "string"}, {"b": "list[list[integer]]?"}, "owner"],
         "output_schema": [{"description": "string?"}], "backend": {"python": "m:f"}},
        {"name": "t", "input_schema": {"parameters": [{"a": "integer"}]},
         "output_schema": {"parameters": [{"name": "x", "type": "list", "items": "list[string]"}]},
         "backend": {"python": "m:f"}},
    ],
)  # fmt: skip
def test_the_editor_schema_takes_the_short_forms(document: dict[str, Any]) -> None:
    jsonschema.validate(document, SCHEMA)


@pytest.mark.parametrize(
    "document",
    [
        {"name": "t", "input_schema": [{"a": "strnig"}], "backend": {"python": "m:f"}},
        {"name": "t", "input_schema": [{"a": "string", "b": "string"}], "backend": {"python": "m:f"}},
        {"name": "t", "output_schema": [{"a": "list[string]?x"}], "backend": {"python": "m:f"}},
    ],
)  # fmt: skip
def test_the_editor_schema_refuses_what_the_loader_refuses(document: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, SCHEMA)


def test_an_update_keeps_a_definition_the_reviewer_wrote_short(tmp_path: Path) -> None:
    def description(*fields: str) -> dict[str, Any]:
        properties = {field: {"type": "string"} for field in fields}
        return {
            "openapi": "3.0.3",
            "info": {"title": "Pets", "version": "1"},
            "servers": [{"url": "http://127.0.0.1:9"}],
            "paths": {
                "/pets/{id}": {
                    "get": {
                        "operationId": "getPet",
                        "parameters": [
                            {"name": "id", "in": "path", "required": True,
                             "schema": {"type": "integer"}},
                            {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                        ],
                        "responses": {"200": {"description": "ok", "content": {
                            "application/json": {"schema": {
                                "type": "object", "properties": properties}}}}},
                    }
                }
            },
        }  # fmt: skip

    spec = tmp_path / "pets.yaml"
    spec.write_text(yaml.safe_dump(description("name")))
    out = tmp_path / "tools.d"
    import_openapi(spec, source="pets", out=out, check=False)
    (written,) = out.glob("get_pet.yaml")
    document = yaml.safe_load(written.read_text())
    document["input_schema"] = [{"id": "integer"}, {"verbose": "boolean?"}]
    document["output_schema"] = [{"name": "string?"}]
    document["description"] = "A pet, by its number."  # the reviewer's own edit
    written.write_text(yaml.safe_dump(document, sort_keys=False))
    before = load(out)["get_pet"]

    spec.write_text(yaml.safe_dump(description("name", "owner")))
    update_openapi(spec, source="pets", out=out)

    after = load(out)["get_pet"]
    assert after.description == "A pet, by its number."
    assert after.input_schema.to_json_schema() == before.input_schema.to_json_schema()
    assert set(after.output_schema.to_json_schema()["properties"]) == {"name", "owner"}
    assert after.version == "1.1.0"


def test_a_long_type_is_read_in_time_linear_in_its_length(write: WriteFile) -> None:
    # No regular expression to backtrack: thousands of spaces inside brackets are one scan.
    path = write(http_tool("  - a: 'list[" + " " * 50_000 + "x'\n"))
    (found,) = problems(path)
    assert "cannot read the type 'list[" in found


def test_an_items_type_takes_no_optional_mark(write: WriteFile) -> None:
    path = write(http_tool("  - {name: a, type: list, items: 'list[string]?'}\n"))
    (found,) = problems(path)
    assert "input_schema[0].items: cannot read the type 'list[string]?'" in found
    assert "a list's items take no '?'" in found


def test_a_list_written_short_is_the_importers_list(tmp_path: Path) -> None:
    # items as a type name, as `import openapi` writes it: an update sees no edit in it.
    document = written_in_full({"output_schema": [{"tags": "list[list[string]]?"}]})
    assert document["output_schema"]["parameters"] == [
        {"name": "tags", "type": "list", "items": {"type": "list", "items": "string"},
         "required": False}
    ]  # fmt: skip


def test_a_source_writes_its_shared_parameters_short(write: WriteFile) -> None:
    path = write(
        "source: gh\nbase_url: http://127.0.0.1:9\nparameters:\n  - owner: string\n"
        "  - name: repo\n    type: string\n    pattern: '[a-z]+'\n"
        + source_tool("a").replace("  - owner\n", "  - owner\n  - repo\n")
    )
    schema = load(path)["a"].input_schema
    assert schema["owner"].type == "string"
    assert schema["repo"].pattern == "[a-z]+"
    bad = write(
        "source: gh\nbase_url: http://127.0.0.1:9\nparameters:\n  - owner: strin\n", "bad.yaml"
    )
    assert any(
        found.startswith(f"{bad}:4:") and "parameters[0].type: unsupported type 'strin'" in found
        for found in problems(bad)
    )


def test_diff_reports_a_version_that_went_down(tmp_path: Path) -> None:
    before, after = WriteFile(tmp_path / "before"), WriteFile(tmp_path / "after")
    before(SOURCE + source_tool("a", version="version: 1.2.0\n"))
    after(SOURCE + source_tool("a"))  # left out: 1.0.0
    (diff,) = diff_tools(load(before.folder), load(after.folder))
    assert diff.changes == ()
    assert diff.version_problem is not None
    assert "the version went down (1.2.0 -> 1.0.0)" in diff.version_problem


def test_an_empty_version_says_so(write: WriteFile) -> None:
    path = write(SOURCE + source_tool("a", version="version:\n"))
    (found,) = problems(path)
    assert (
        "'version' is empty: give a semantic version such as 1.2.0, or leave the key out" in found
    )


def test_entries_after_an_unresolved_shared_parameter_keep_their_lines(
    write: WriteFile,
) -> None:
    path = write(
        SOURCE
        + "---\nname: a\ninput_schema:\n  - use: ownr\n  - ok: string\n  - 'bad name': string\n"
        "backend:\n  http:\n    source: gh\n    path: /x\n"
    )
    lines = path.read_text().splitlines()
    first = lines.index("  - use: ownr") + 1
    assert lines[first + 1] == "  - 'bad name': string"
    unknown, bad = sorted(problems(path))
    assert unknown.startswith(f"{path}:{first}:")
    assert "unknown shared parameter 'ownr' (did you mean 'owner'?)" in unknown
    assert bad.startswith(f"{path}:{first + 2}:")
    assert "input_schema[2].name: invalid parameter name 'bad name'" in bad
