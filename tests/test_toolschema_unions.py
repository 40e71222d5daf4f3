"""A union of types (``type: [string, integer]``, ``[string, list]``, ``[string,
dictionary]``, with an ``enum`` of mixed types): parsed, checked, exported, diffed."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import jsonschema
import pytest

from agentkit import Tool, ToolSchema
from agentkit.adapters.diff import BREAKING, COMPATIBLE, diff_tools
from agentkit.adapters.export import FORMATS, export_tools
from agentkit.cli import main
from tests.test_toolschema_definitions import problems_of as all_problems_of

UNIONS: dict[str, Any] = {
    "parameters": [
        {"name": "title", "type": ["string", "integer"], "description": "Text or a number"},
        {"name": "amount", "type": ["integer", "float"], "required": False, "default": 3},
        {"name": "flag", "type": ["float", "boolean"], "required": False},
    ]
}


def problems_of(parameter: dict[str, Any]) -> list[str]:
    """The problems of one parameter, located below it: ``type.1: ...``."""
    return [problem.removeprefix("parameters.0.") for problem in all_problems_of(parameter)]


# -- checking values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param({"title": "a"}, {"title": "a", "amount": 3}, id="string"),
        pytest.param({"title": 7}, {"title": 7, "amount": 3}, id="integer"),
        pytest.param({"title": 7, "amount": 2}, {"title": 7, "amount": 2}, id="int-stays-int"),
        pytest.param({"title": 7, "amount": 2.5}, {"title": 7, "amount": 2.5}, id="float"),
        pytest.param(
            {"title": 7, "flag": 3}, {"title": 7, "flag": 3.0, "amount": 3}, id="to-float"
        ),
        pytest.param(
            {"title": 7, "flag": True}, {"title": 7, "flag": True, "amount": 3}, id="bool"
        ),
        pytest.param({"title": 7, "amount": None}, {"title": 7, "amount": 3}, id="null-default"),
    ],
)
def test_a_value_of_any_member_passes(values: dict[str, Any], expected: dict[str, Any]) -> None:
    checked = ToolSchema.from_dict(UNIONS).check(values)
    assert checked.problems == ()
    assert checked.values == expected
    assert [type(value) for value in checked.values.values()] == [
        type(value) for value in expected.values()
    ]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param(
            {"title": True}, "Parameter 'title': expected type 'string' or 'integer', got 'bool'"
        ),
        pytest.param(
            {"title": 1.5}, "Parameter 'title': expected type 'string' or 'integer', got 'float'"
        ),
        pytest.param(
            {"title": ["a"]}, "Parameter 'title': expected type 'string' or 'integer', got 'list'"
        ),
        pytest.param(
            {"title": "a", "amount": "3"},
            "Parameter 'amount': expected type 'integer' or 'float', got 'str'",
        ),
        pytest.param(
            {"title": "a", "amount": math.inf}, "Parameter 'amount': expected a finite number"
        ),
        pytest.param(
            {"title": "a", "flag": math.nan}, "Parameter 'flag': expected a finite number"
        ),
        pytest.param({}, "Missing required parameter: 'title'"),
    ],
)
def test_a_value_of_no_member_is_refused(values: dict[str, Any], message: str) -> None:
    (problem,) = ToolSchema.from_dict(UNIONS).check(values).problems
    assert problem.message.startswith(message)


def test_a_union_in_list_items_and_nested_parameters() -> None:
    schema = ToolSchema.from_dict(
        {
            "parameters": [
                {"name": "ids", "type": "list", "items": {"type": ["string", "integer"]}},
                {
                    "name": "filter",
                    "type": "dictionary",
                    "parameters": [{"name": "key", "type": ["integer", "boolean"]}],
                },
            ]
        }
    )
    assert schema.check({"ids": ["a", 1], "filter": {"key": False}}).problems == ()
    messages = [p.message for p in schema.check({"ids": [None], "filter": {"key": "x"}}).problems]
    assert messages == [
        "Parameter 'ids[0]': expected type 'string' or 'integer', got 'NoneType'",
        "Parameter 'filter.key': expected type 'integer' or 'boolean', got 'str'",
    ]


def test_a_union_reads_back_as_it_was_written() -> None:
    schema = ToolSchema.from_dict(UNIONS)
    assert schema.to_dict() == UNIONS
    assert ToolSchema.from_dict(schema.to_dict()) == schema


# -- defining one ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        pytest.param(
            ["string"],
            "type: a union lists two or more types; for one type write type: string",
            id="one",
        ),
        pytest.param([], "type: a union lists two or more types", id="empty"),
        pytest.param(["string", "string"], "type.1: 'string' is listed twice", id="twice"),
        pytest.param(
            ["dictionary", "dict"],
            "type.1: unsupported type: 'dict' (did you mean 'dictionary'?)",
            id="dict-alias",
        ),
        pytest.param(["string", "list", "list"], "type.2: 'list' is listed twice", id="list-twice"),
        pytest.param(
            ["str", "integer"],
            "type.0: unsupported type: 'str' (did you mean 'string'?)",
            id="alias",
        ),
        pytest.param(["string", None], "type.1: unsupported type: null", id="null"),
        pytest.param(["string", ["integer"]], "type.1: unsupported type: a list", id="nested"),
    ],
)
def test_a_union_that_is_not_one_is_located(declared: list[Any], message: str) -> None:
    problems = problems_of({"name": "x", "type": declared})
    assert any(problem.startswith(message) for problem in problems), problems


@pytest.mark.parametrize("key", ["minimum", "maximum", "pattern", "min_length", "max_length"])
def test_a_union_takes_no_bound_pattern_or_length(key: str) -> None:
    values = {"minimum": 1, "maximum": 2, "pattern": "a", "min_length": 1, "max_length": 2}
    (problem,) = problems_of({"name": "x", "type": ["string", "integer"], key: values[key]})
    assert problem == (
        f"{key}: '{key}' does not apply to a union of types ('string' or 'integer'); "
        "declare one type to constrain it"
    )


@pytest.mark.parametrize(
    ("default", "problem"),
    [
        pytest.param(5, None, id="integer"),
        pytest.param("five", None, id="string"),
        pytest.param(
            5.5, "invalid default: Parameter 'x': expected type 'string' or 'integer'", id="float"
        ),
        pytest.param(
            True, "invalid default: Parameter 'x': expected type 'string' or 'integer'", id="bool"
        ),
    ],
)
def test_a_default_must_be_of_a_member(default: Any, problem: str | None) -> None:
    parameter = {"name": "x", "type": ["string", "integer"], "required": False, "default": default}
    if problem is None:
        assert ToolSchema.from_dict({"parameters": [parameter]}).check({}).values == {"x": default}
    else:
        assert problems_of(parameter) == [f"default: {problem}, got '{type(default).__name__}'"]


# -- exporting ------------------------------------------------------------------------------


class Unions(Tool):
    TOOL_NAME = "unions"
    TOOL_DESCRIPTION = "Takes unions"
    INPUT_SCHEMA = UNIONS
    OUTPUT_SCHEMA = {"parameters": [{"name": "id", "type": ["string", "integer"]}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"id": inputs["title"]}


def input_schemas(document: Any) -> list[dict[str, Any]]:
    """Every input schema in an exported document, whatever the format's envelope."""
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                envelope = key in (
                    "parameters",
                    "input_schema",
                    "inputSchema",
                    "parametersJsonSchema",
                )
                if envelope and isinstance(value, dict) and value.get("type") == "object":
                    found.append(value)
                    continue
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(document)
    return found


@pytest.mark.parametrize("strict", [False, True], ids=["loose", "strict"])
@pytest.mark.parametrize("format_name", FORMATS)
def test_every_format_exports_a_union_as_any_of(format_name: str, strict: bool) -> None:
    document = export_tools([Unions()], format_name, strict=strict).document
    (schema,) = input_schemas(document)
    jsonschema.Draft202012Validator.check_schema(schema)
    title = schema["properties"]["title"]
    assert title["anyOf"][:2] == [{"type": "string"}, {"type": "integer"}]
    assert "type" not in title  # a type list is not every provider's dialect; anyOf is
    validator = jsonschema.Draft202012Validator(schema)
    accepted: list[dict[str, Any]] = [
        {"title": "a"},
        {"title": 5, "amount": 2.5},
        {"title": 5, "flag": False},
    ]
    for values in accepted:
        if "amount" in schema["required"]:  # strict: every property required, optional nullable
            values = {"amount": None, "flag": None, **values}
        assert validator.is_valid(values), (format_name, values)
    for refused in ({"title": True}, {"title": 1.5}, {"title": None}, {"title": "a", "flag": "x"}):
        assert not validator.is_valid(refused), (format_name, refused)


def test_strict_makes_an_optional_union_nullable() -> None:
    (entry,) = export_tools([Unions()], "openai", strict=True).document
    properties = entry["function"]["parameters"]["properties"]
    assert properties["flag"] == {
        "anyOf": [{"type": "number"}, {"type": "boolean"}, {"type": "null"}]
    }
    assert properties["amount"]["description"] == "Default: 3."
    assert entry["function"]["strict"] is True


# -- diff and the command line --------------------------------------------------------------


def tool_with_parameter(
    parameter: dict[str, Any], *, version: str = "1.0.0", side: str = "input"
) -> Tool:
    schema = {"parameters": [{"name": "x", **parameter}]}
    attributes = {
        "TOOL_NAME": "t",
        "TOOL_VERSION": version,
        "TOOL_DESCRIPTION": "d",
        "INPUT_SCHEMA": schema if side == "input" else {"parameters": []},
        "OUTPUT_SCHEMA": schema if side == "output" else {"parameters": []},
        "execute": lambda self, inputs, credentials: {},
    }
    return type("T", (Tool,), attributes)()  # type: ignore[no-any-return]


def tool_with(declared: Any, version: str = "1.0.0", *, side: str = "input") -> Tool:
    return tool_with_parameter({"type": declared}, version=version, side=side)


@pytest.mark.parametrize(
    ("side", "old", "new", "kind"),
    [
        pytest.param("input", "string", ["string", "integer"], COMPATIBLE, id="input-widened"),
        pytest.param("input", ["string", "integer"], "string", BREAKING, id="input-narrowed"),
        pytest.param(
            "input", ["string", "integer"], ["string", "float"], BREAKING, id="input-swapped"
        ),
        pytest.param("output", "string", ["string", "integer"], BREAKING, id="output-widened"),
        pytest.param("output", ["string", "integer"], "integer", COMPATIBLE, id="output-narrowed"),
    ],
)
def test_diff_classifies_a_change_of_union(side: str, old: Any, new: Any, kind: str) -> None:
    (diff,) = diff_tools([tool_with(old, side=side)], [tool_with(new, side=side)])
    (change,) = diff.changes
    assert change.kind == kind
    shown = [value if isinstance(value, str) else "|".join(value) for value in (old, new)]
    assert change.message == f"{side} 'x' changed type from {shown[0]} to {shown[1]}"


@pytest.mark.parametrize("side", ["input", "output"])
@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["string", "integer"], ["integer", "string"]),
        (["boolean", "integer", "float"], ["float", "boolean", "integer"]),
    ],
)
def test_diff_takes_a_reordered_union_as_unchanged(side: str, old: Any, new: Any) -> None:
    diffs = diff_tools([tool_with(old, side=side)], [tool_with(new, side=side)])
    assert [change for diff in diffs for change in diff.changes] == []


#: Text (an argument, a ``${VAR}`` default) and the value a union reads it as.
FROM_TEXT = [
    pytest.param(["string", "integer"], "5", 5, id="integer-first"),
    pytest.param(["string", "integer"], "five", "five", id="else-text"),
    pytest.param(["integer", "float"], "2.5", 2.5, id="float"),
    pytest.param(["string", "boolean"], "true", True, id="boolean"),
    pytest.param(["string", "boolean"], "yes", "yes", id="yes-is-text-next-to-string"),
    pytest.param(["boolean", "integer"], "yes", True, id="yes-is-true-without-string"),
    pytest.param(["string", "integer"], "00501", "00501", id="leading-zero-is-text"),
]


@pytest.mark.parametrize(("declared", "argument", "expected"), FROM_TEXT)
def test_call_reads_an_argument_as_the_first_member_it_fits(
    declared: list[str], argument: str, expected: Any
) -> None:
    from agentkit.cli.calling import parse_value

    parameter = ToolSchema.from_dict({"parameters": [{"name": "x", "type": declared}]})["x"]
    value = parse_value(argument, parameter, "x")
    assert value == expected
    assert type(value) is type(expected)


def test_call_refuses_an_argument_of_no_member() -> None:
    from agentkit.cli.calling import parse_value
    from agentkit.toolerrors import UsageError

    parameter = ToolSchema.from_dict(
        {"parameters": [{"name": "x", "type": ["integer", "boolean"]}]}
    )
    with pytest.raises(UsageError, match=r"argument x='five': expected integer or boolean"):
        parse_value("five", parameter["x"], "x")


def test_show_names_the_union(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    (tmp_path / "t.yaml").write_text(
        "name: t\nversion: 1.0.0\ndescription: d\n"
        "input_schema:\n  parameters:\n  - {name: x, type: [string, integer]}\n"
        "backend: {http: {url: 'https://api.example.com/x'}}\n"
    )
    assert main(["show", "t", "--tools", str(tmp_path)]) == 0
    assert "x: string|integer" in capsys.readouterr().out


@pytest.mark.parametrize(("declared", "variable", "expected"), FROM_TEXT)
def test_a_default_from_the_environment_reads_as_a_member(
    tmp_path: Any, declared: list[str], variable: str, expected: Any
) -> None:
    from agentkit import ToolRegistry, load_tools

    (tmp_path / "t.yaml").write_text(
        "name: t\nversion: 1.0.0\ndescription: d\ninput_schema:\n  parameters:\n"
        f"  - {{name: x, type: [{', '.join(declared)}], required: false, default: '${{X}}'}}\n"
        "backend: {http: {url: 'https://api.example.com/x'}}\n"
    )
    registry = ToolRegistry()
    load_tools(tmp_path, registry=registry, environ={"X": variable})
    default = registry["t"].input_schema["x"].default
    assert default == expected
    assert type(default) is type(expected)


# -- text read into a union (``agentkit call key=value``, ``${VAR}`` defaults) ------------------


@pytest.mark.parametrize(
    "text",
    ["007", "1_000", " 7", "7 ", "+5", "\u0663", "NO", "on", "yes", "True", "nan", "inf",
     "1e999", "1_5", "0x10", ".5", "5.", "-", "", "١٢"],
)  # fmt: skip
@pytest.mark.parametrize(
    "types",
    [["string", "integer"], ["string", "float"], ["string", "boolean"], ["float", "string"]],
)
def test_text_that_json_would_not_read_stays_a_string(text: str, types: list[str]) -> None:
    from agentkit.schema.values import from_text

    assert from_text(text, types) == text


@pytest.mark.parametrize(
    ("text", "types", "expected"),
    [
        ("7", ["string", "integer"], 7),
        ("-12", ["integer", "string"], -12),
        ("0", ["string", "integer"], 0),
        ("0.5", ["string", "float"], 0.5),
        ("1e3", ["string", "float"], 1000.0),
        ("-2.5E-1", ["string", "float"], -0.25),
        ("true", ["string", "boolean"], True),
        ("false", ["boolean", "string"], False),
    ],
)
def test_json_spelled_text_reads_as_the_other_member(
    text: str, types: list[str], expected: Any
) -> None:
    from agentkit.schema.values import from_text

    read = from_text(text, types)
    assert read == expected
    assert type(read) is type(expected)


def test_without_string_the_reading_stays_lenient() -> None:
    from agentkit.schema.values import from_text

    assert from_text("007", ["integer", "float"]) == 7
    assert from_text("NO", ["boolean", "integer"]) is False


@pytest.mark.parametrize(
    ("declared", "written"),
    [
        pytest.param(["string", 5], "unsupported type: 5;", id="number"),
        pytest.param(["string", True], "unsupported type: true;", id="boolean"),
        pytest.param(["string", {"x": 1}], "unsupported type: a mapping;", id="mapping"),
        pytest.param({"x": "y"}, "unsupported type a mapping;", id="mapping-as-type"),
        pytest.param(5, "unsupported type 5;", id="number-as-type"),
    ],
)
def test_a_wrong_type_is_named_as_written_not_by_python_class(declared: Any, written: str) -> None:
    problems = problems_of({"name": "x", "type": declared})
    assert any(written in problem for problem in problems), problems
    for python in ("NoneType", "'int'", "'bool'", "'dict'", "Located", "did you mean"):
        assert not any(python in problem for problem in problems), problems


def test_a_located_default_is_named_list_not_by_the_loaders_class(tmp_path: Any) -> None:
    from agentkit import ToolRegistry, load_tools

    (tmp_path / "t.yaml").write_text(
        "name: t\nversion: 1.0.0\ndescription: d\ninput_schema:\n  parameters:\n"
        "  - {name: x, type: [integer, float], required: false, default: [1]}\n"
        "backend: {http: {url: 'https://api.example.com/x'}}\n"
    )
    with pytest.raises(Exception, match=r"got 'list'") as raised:
        load_tools(tmp_path, registry=ToolRegistry())
    assert "Located" not in str(raised.value)


# -- an enum of mixed types -----------------------------------------------------------------

MIXED = {"name": "x", "type": ["integer", "string"], "enum": [1, "auto"]}


@pytest.mark.parametrize(
    ("parameter", "value", "problem"),
    [
        pytest.param(MIXED, 1, None, id="integer"),
        pytest.param(MIXED, "auto", None, id="string"),
        pytest.param(MIXED, 2, "expected one of [1, 'auto'], got 2", id="other-integer"),
        pytest.param(MIXED, "1", "expected one of [1, 'auto'], got '1'", id="number-as-text"),
        pytest.param(
            MIXED, True, "expected type 'integer' or 'string', got 'bool'", id="bool-not-1"
        ),
        pytest.param(
            {"name": "x", "type": ["boolean", "integer"], "enum": [1, False]},
            True,
            "expected one of [1, False], got True",
            id="true-is-not-1",
        ),
        pytest.param(
            {"name": "x", "type": ["boolean", "integer"], "enum": [1, False]},
            0,
            "expected one of [1, False], got 0",
            id="0-is-not-false",
        ),
        pytest.param(
            {"name": "x", "type": ["float", "string"], "enum": [1, 2.5, "none"]},
            1.0,
            None,
            id="1.0-is-1",
        ),
    ],
)
def test_a_mixed_enum_is_matched_by_kind_and_value(
    parameter: dict[str, Any], value: Any, problem: str | None
) -> None:
    problems = ToolSchema.from_dict({"parameters": [parameter]}).check({"x": value}).problems
    assert [p.message for p in problems] == (
        [] if problem is None else [f"Parameter 'x': {problem}"]
    )


@pytest.mark.parametrize(
    ("declared", "enum", "message"),
    [
        pytest.param(
            ["integer", "string"],
            [1, 2.5],
            "enum: every value must be of type 'integer' or 'string'; 2.5 is not",
            id="value-of-no-member",
        ),
        pytest.param(
            ["integer", "string"],
            [1, None],
            "enum: every value must be of type 'integer' or 'string'; null is not",
            id="null",
        ),
        pytest.param(
            ["string", "list"],
            ["a", ["a"]],
            "enum: every value must be of type 'string'; a list is not",
            id="a-list-value",
        ),
        pytest.param(
            ["integer", "string"],
            ["a", "b"],
            "enum: no value is of type 'integer'; add one, or leave 'integer' out of the type",
            id="member-without-value",
        ),
        pytest.param(
            ["float", "string"], [1, 1.0, "a"], "enum: duplicate values: 1.0; list each", id="1-1.0"
        ),
        pytest.param(
            ["float", "string"], [math.nan, "a"], "enum: NaN can never be matched", id="nan"
        ),
        pytest.param(["integer", "string"], [], "enum: expected a non-empty list", id="empty"),
    ],
)
def test_a_mixed_enum_that_cannot_hold_is_located(
    declared: list[str], enum: list[Any], message: str
) -> None:
    problems = problems_of({"name": "x", "type": declared, "enum": enum})
    assert any(problem.startswith(message) for problem in problems), problems


def test_true_and_1_are_two_values_of_a_mixed_enum() -> None:
    parameter = {"name": "x", "type": ["boolean", "integer"], "enum": [True, 1]}
    schema = ToolSchema.from_dict({"parameters": [parameter]})
    assert [schema.check({"x": value}).problems for value in (True, 1)] == [(), ()]


# -- a union with a list ----------------------------------------------------------------------

SCALAR_OR_LIST = {
    "name": "labels",
    "type": ["string", "list"],
    "items": {"type": "string", "enum": ["bug", "docs"]},
    "enum": ["bug", "docs"],
}


@pytest.mark.parametrize(
    ("value", "problems"),
    [
        pytest.param("bug", [], id="one"),
        pytest.param(["bug", "docs"], [], id="a-list"),
        pytest.param([], [], id="empty-list"),
        pytest.param("x", ["Parameter 'labels': expected one of ['bug', 'docs'], got 'x'"], id="x"),
        pytest.param(
            ["bug", "x", 3],
            [
                "Parameter 'labels[1]': expected one of ['bug', 'docs'], got 'x'",
                "Parameter 'labels[2]': expected type 'string', got 'int'",
            ],
            id="items-located",
        ),
        pytest.param(
            {"a": 1},
            ["Parameter 'labels': expected type 'string' or 'list', got 'dict'"],
            id="dict",
        ),
    ],
)
def test_a_scalar_or_a_list_checks_each_by_its_own_rule(value: Any, problems: list[str]) -> None:
    schema = ToolSchema.from_dict({"parameters": [SCALAR_OR_LIST]})
    assert [p.message for p in schema.check({"labels": value}).problems] == problems


def test_a_list_without_items_is_free_form_and_copied() -> None:
    schema = ToolSchema.from_dict({"parameters": [{"name": "x", "type": ["integer", "list"]}]})
    given = [1, "a", [2]]
    checked = schema.check({"x": given})
    assert checked.problems == ()
    assert checked.values["x"] == given
    assert checked.values["x"] is not given
    (problem,) = schema.check({"x": [math.inf]}).problems
    assert "finite" in problem.message


def test_items_need_a_list_in_the_union() -> None:
    (problem,) = problems_of({"name": "x", "type": ["string", "integer"], "items": "string"})
    assert problem == "items: 'items' applies to a union with 'list', not to 'string' or 'integer'"


def test_a_union_with_a_list_and_an_enum_reads_back_as_written() -> None:
    schema = ToolSchema.from_dict({"parameters": [SCALAR_OR_LIST, MIXED]})
    assert schema.to_dict() == {"parameters": [SCALAR_OR_LIST, MIXED]}
    assert ToolSchema.from_dict(schema.to_dict()) == schema


class Shapes(Tool):
    TOOL_NAME = "shapes"
    TOOL_DESCRIPTION = "Takes a mixed enum and a scalar or a list"
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "size", "type": ["integer", "string", "boolean"], "enum": [0, "auto", True]},
            {**SCALAR_OR_LIST, "required": False},
            {
                "name": "filters",
                "type": ["string", "list"],
                "required": False,
                "items": {"type": "dictionary", "parameters": [{"name": "key", "type": "string"}]},
            },
        ]
    }
    OUTPUT_SCHEMA = {"parameters": [{"name": "value", "type": ["string", "integer", "list"]}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"value": inputs["size"]}


@pytest.mark.parametrize("strict", [False, True], ids=["loose", "strict"])
@pytest.mark.parametrize("format_name", FORMATS)
def test_every_format_exports_mixed_enums_and_lists_per_member(
    format_name: str, strict: bool
) -> None:
    document = export_tools([Shapes()], format_name, strict=strict).document
    (schema,) = input_schemas(document)
    jsonschema.Draft202012Validator.check_schema(schema)
    size = schema["properties"]["size"]
    assert size["anyOf"] == [
        {"type": "integer", "enum": [0]},
        {"type": "string", "enum": ["auto"]},
        {"type": "boolean", "enum": [True]},
    ]
    labels = schema["properties"]["labels"]["anyOf"]
    assert labels[:2] == [
        {"type": "string", "enum": ["bug", "docs"]},
        {"type": "array", "items": {"type": "string", "enum": ["bug", "docs"]}},
    ]
    validator = jsonschema.Draft202012Validator(schema)
    # strict (OpenAI): every property required, an optional one nullable
    optional = {"labels": None, "filters": None} if "labels" in schema["required"] else {}
    accepted: list[dict[str, Any]] = [
        {"size": 0},
        {"size": "auto", "labels": "bug"},
        {"size": True, "labels": ["bug", "docs"], "filters": [{"key": "a"}]},
        {"size": 0, "filters": "state:open"},
    ]
    for values in accepted:
        assert validator.is_valid({**optional, **values}), (format_name, values)
    refused: list[dict[str, Any]] = [
        {"size": 1},
        {"size": False},
        {"size": "1"},
        {"size": 0, "labels": "x"},
        {"size": 0, "labels": ["x"]},
        {"size": 0, "labels": {"a": "bug"}},
    ]
    for values in refused:
        assert not validator.is_valid({**optional, **values}), (format_name, values)
    if strict and format_name.startswith("openai"):
        filters = schema["properties"]["filters"]["anyOf"][1]["items"]
        assert filters["additionalProperties"] is False  # strict reaches the list member's items
        assert not validator.is_valid({**optional, "size": 0, "filters": [{"key": "a", "b": 1}]})


def test_strict_keeps_a_free_form_list_member_loose() -> None:
    class Loose(Tool):
        TOOL_NAME = "loose"
        TOOL_DESCRIPTION = "d"
        INPUT_SCHEMA = {
            "parameters": [
                {"name": "x", "type": ["string", "list"], "items": "dictionary"},
            ]
        }

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return {}

    export = export_tools([Loose()], "openai", strict=True)
    assert export.document[0]["function"]["strict"] is False
    assert "'x[]' is a dictionary without declared parameters" in export.warnings[0]


@pytest.mark.parametrize(
    ("side", "old", "new", "changes"),
    [
        pytest.param(
            "input",
            {"type": ["boolean", "integer"], "enum": [1, False]},
            {"type": ["boolean", "integer"], "enum": [True, 0]},  # equal in Python, not JSON
            [(BREAKING, "input 'x': enum narrowed")],
            id="1-to-true-is-a-change",
        ),
        pytest.param(
            "input",
            {"type": ["integer", "string"], "enum": [1, "a"]},
            {"type": ["integer", "string"], "enum": ["a", 1, 2]},
            [(COMPATIBLE, "input 'x': enum widened")],
            id="widened",
        ),
        pytest.param(
            "input",
            {"type": ["integer", "string"], "enum": [1, "a"]},
            {"type": ["string", "integer"], "enum": ["a", 1]},
            [],
            id="reordered",
        ),
        pytest.param(
            "input",
            {"type": "string"},
            {"type": ["string", "list"], "items": "string"},
            [(COMPATIBLE, "input 'x' changed type from string to string|list")],
            id="list-added",
        ),
        pytest.param(
            "input",
            {"type": ["string", "list"], "items": "string"},
            {"type": ["string", "list"], "items": "integer"},
            [(BREAKING, "input 'x[]' changed type from string to integer")],
            id="items-changed",
        ),
        pytest.param(
            "output",
            {"type": ["string", "list"], "items": "string"},
            {"type": ["string", "list"], "items": {"type": "string", "description": "A label"}},
            [("cosmetic", "output 'x[]': description changed")],
            id="items-described",
        ),
    ],
)
def test_diff_reads_mixed_enums_and_list_members(
    side: str, old: dict[str, Any], new: dict[str, Any], changes: list[tuple[str, str]]
) -> None:
    diffs = diff_tools([tool_with_parameter(old, side=side)], [tool_with_parameter(new, side=side)])
    found = [(change.kind, change.message) for diff in diffs for change in diff.changes]
    assert found == changes


@pytest.mark.parametrize(
    ("declared", "argument", "expected"),
    [
        pytest.param(["string", "list"], "a,b", "a,b", id="text-stays-text"),
        pytest.param(["string", "list"], '["a", "b"]', ["a", "b"], id="json-list"),
        pytest.param(["integer", "list"], "5", 5, id="integer"),
        pytest.param(["integer", "list"], "a,b", ["a", "b"], id="comma-list-when-no-scalar-fits"),
        pytest.param(["string", "dictionary"], '{"a": 1}', {"a": 1}, id="json-object"),
        pytest.param(["string", "dictionary"], "a=1", "a=1", id="text-beside-a-dictionary"),
        pytest.param(["integer", "dictionary"], "5", 5, id="integer-beside-a-dictionary"),
        pytest.param(["list", "dictionary"], "[1]", [1], id="json-list-beside-a-dictionary"),
    ],
)
def test_call_reads_a_scalar_or_a_list(declared: list[str], argument: str, expected: Any) -> None:
    from agentkit.cli.calling import parse_value

    parameter = ToolSchema.from_dict({"parameters": [{"name": "x", "type": declared}]})["x"]
    assert parse_value(argument, parameter, "x") == expected


def test_an_output_list_member_of_mappings_is_projected() -> None:
    from agentkit.declarative.backends.http.projection import schema_projectors

    schema = ToolSchema.from_dict(
        {
            "parameters": [
                {
                    "name": "x",
                    "type": ["string", "list"],
                    "items": {
                        "type": "dictionary",
                        "parameters": [{"name": "a", "type": "string"}],
                    },
                }
            ]
        }
    )
    project = schema_projectors(schema)["x"]
    assert project([{"a": "1", "extra": 2}]) == [{"a": "1"}]
    assert project("text") == "text"


# -- a union with a dictionary ------------------------------------------------------------------

#: A label, or a filter that declares its fields.
LABEL_OR_FILTER = {
    "name": "match",
    "type": ["string", "dictionary"],
    "enum": ["all", "none"],
    "parameters": [
        {"name": "key", "type": "string"},
        {"name": "limit", "type": "integer", "required": False, "default": 10},
    ],
}


@pytest.mark.parametrize(
    ("value", "checked", "problems"),
    [
        pytest.param("all", "all", [], id="scalar"),
        pytest.param({"key": "a"}, {"key": "a", "limit": 10}, [], id="dictionary-defaulted"),
        pytest.param({"key": "a", "limit": 3}, {"key": "a", "limit": 3}, [], id="dictionary"),
        pytest.param(
            "some",
            "some",
            ["Parameter 'match': expected one of ['all', 'none'], got 'some'"],
            id="enum-holds-the-scalar",
        ),
        pytest.param(
            {"key": 1, "other": 2},
            None,
            [
                "Parameter 'match.key': expected type 'string', got 'int'",
                "Unknown parameter: 'match.other'",
            ],
            id="fields-located",
        ),
        pytest.param(
            ["all"],
            None,
            ["Parameter 'match': expected type 'string' or 'dictionary', got 'list'"],
            id="list",
        ),
        pytest.param(
            None,
            None,
            ["Parameter 'match': expected type 'string' or 'dictionary', got 'NoneType'"],
            id="null",
        ),
    ],
)
def test_a_scalar_or_a_dictionary_checks_each_by_its_own_rule(
    value: Any, checked: Any, problems: list[str]
) -> None:
    schema = ToolSchema.from_dict({"parameters": [LABEL_OR_FILTER]})
    result = schema.check({"match": value})
    assert [p.message for p in result.problems] == problems
    if checked is not None:
        assert result.values["match"] == checked
    # The fast tier takes what has no problem, as the full tier makes it, and only that.
    fast = schema.fast_check({"match": value})
    assert fast == (None if problems else result.values)


def test_a_dictionary_without_parameters_is_free_form_and_copied() -> None:
    schema = ToolSchema.from_dict(
        {"parameters": [{"name": "x", "type": ["integer", "dictionary"]}]}
    )
    given = {"a": [1, {"b": "c"}]}
    checked = schema.check({"x": given})
    assert checked.problems == ()
    assert checked.values["x"] == given
    assert checked.values["x"] is not given
    assert checked.values["x"]["a"] is not given["a"]
    (problem,) = schema.check({"x": {"a": math.nan}}).problems
    assert problem.message == "Parameter 'x.a': expected a finite number, got nan"


def test_a_list_or_a_dictionary_each_takes_its_own_declaration() -> None:
    schema = ToolSchema.from_dict(
        {
            "parameters": [
                {
                    "name": "x",
                    "type": ["list", "dictionary"],
                    "items": "integer",
                    "parameters": [{"name": "n", "type": "integer"}],
                }
            ]
        }
    )
    assert schema.check({"x": [1, 2]}).problems == ()
    assert schema.check({"x": {"n": 1}}).problems == ()
    messages = [p.message for p in schema.check({"x": ["a"]}).problems]
    assert messages == ["Parameter 'x[0]': expected type 'integer', got 'str'"]
    messages = [p.message for p in schema.check({"x": {"n": "a"}}).problems]
    assert messages == ["Parameter 'x.n': expected type 'integer', got 'str'"]


@pytest.mark.parametrize(
    ("parameter", "expected"),
    [
        pytest.param(
            {"name": "x", "type": ["string", "list"], "parameters": []},
            "parameters: 'parameters' applies to a union with 'dictionary', not to 'string' "
            "or 'list'",
            id="parameters-without-a-dictionary",
        ),
        pytest.param(
            {"name": "x", "type": ["list", "dictionary"], "enum": ["a"]},
            "enum: 'enum' applies to a union's scalar types, and 'list' or 'dictionary' has none",
            id="enum-without-a-scalar",
        ),
        pytest.param(
            {"name": "x", "type": ["string", "dictionary"], "parameters": [{"name": "a"}]},
            "parameters.0: missing 'type'; expected one of: string, integer, float, boolean, "
            "list, dictionary",
            id="nested-problem-located",
        ),
        pytest.param(
            {
                "name": "x",
                "type": ["string", "dictionary"],
                "required": False,
                "default": {"a": 1},
                "parameters": [{"name": "b", "type": "string"}],
            },
            "default: invalid default: Missing required parameter: 'x.b'; Unknown parameter: 'x.a'",
            id="default-checked-by-the-parameters",
        ),
    ],
)
def test_a_union_with_a_dictionary_that_cannot_hold_is_located(
    parameter: dict[str, Any], expected: str
) -> None:
    assert problems_of(parameter) == [expected]


def test_a_union_with_a_dictionary_reads_back_as_written() -> None:
    written = {**LABEL_OR_FILTER, "required": False, "default": {"key": "k"}}
    schema = ToolSchema.from_dict({"parameters": [written]})
    assert schema.to_dict() == {"parameters": [{**written, "default": {"key": "k", "limit": 10}}]}
    assert ToolSchema.from_dict(schema.to_dict()) == schema


class Matches(Tool):
    TOOL_NAME = "matches"
    TOOL_DESCRIPTION = "Takes a label or a filter"
    INPUT_SCHEMA = {
        "parameters": [
            LABEL_OR_FILTER,
            {"name": "extra", "type": ["integer", "dictionary"], "required": False},
        ]
    }

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {}


@pytest.mark.parametrize("format_name", FORMATS)
def test_every_format_exports_a_dictionary_member_with_its_fields(format_name: str) -> None:
    document = export_tools([Matches()], format_name).document
    (schema,) = input_schemas(document)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["match"]["anyOf"] == [
        {"type": "string", "enum": ["all", "none"]},
        {
            "type": "object",
            "properties": {
                "key": {"type": "string"},
                "limit": {"type": "integer", "default": 10},
            },
            "required": ["key"],
            "additionalProperties": False,
        },
    ]
    assert schema["properties"]["extra"]["anyOf"] == [{"type": "integer"}, {"type": "object"}]
    validator = jsonschema.Draft202012Validator(schema)
    accepted: list[dict[str, Any]] = [
        {"match": "all"},
        {"match": {"key": "a"}},
        {"match": "none", "extra": {}},
    ]
    refused: list[dict[str, Any]] = [
        {"match": "x"},
        {"match": {"key": 1}},
        {"match": {"key": "a", "b": 1}},
    ]
    for values in accepted:
        assert validator.is_valid(values), (format_name, values)
    for values in refused:
        assert not validator.is_valid(values), (format_name, values)


def test_strict_names_a_free_form_dictionary_member() -> None:
    export = export_tools([Matches()], "openai", strict=True)
    assert export.document[0]["function"]["strict"] is False
    assert export.warnings == [
        "tool 'matches': 'extra' is a dictionary without declared parameters, which strict "
        "mode cannot express; exported with strict: false"
    ]


@pytest.mark.parametrize(
    ("old", "new", "changes"),
    [
        pytest.param(
            {"type": "string"},
            {"type": ["string", "dictionary"]},
            [(COMPATIBLE, "input 'x' changed type from string to string|dictionary")],
            id="dictionary-added",
        ),
        pytest.param(
            {"type": ["string", "dictionary"], "parameters": [{"name": "a", "type": "string"}]},
            {
                "type": ["string", "dictionary"],
                "parameters": [
                    {"name": "a", "type": "string"},
                    {"name": "b", "type": "string"},
                ],
            },
            [(BREAKING, "new required input 'x.b'")],
            id="field-added",
        ),
        pytest.param(
            {"type": ["string", "dictionary"]},
            {"type": ["string", "dictionary"], "parameters": [{"name": "a", "type": "string"}]},
            [(BREAKING, "input 'x': nested parameters changed")],
            id="parameters-declared",
        ),
    ],
)
def test_diff_reads_dictionary_members(
    old: dict[str, Any], new: dict[str, Any], changes: list[tuple[str, str]]
) -> None:
    diffs = diff_tools([tool_with_parameter(old)], [tool_with_parameter(new)])
    assert [(c.kind, c.message) for diff in diffs for c in diff.changes] == changes


def test_an_output_dictionary_member_is_projected() -> None:
    from agentkit.declarative.backends.http.projection import schema_projectors

    schema = ToolSchema.from_dict(
        {
            "parameters": [
                {
                    "name": "x",
                    "type": ["string", "list", "dictionary"],
                    "items": {
                        "type": "dictionary",
                        "parameters": [{"name": "b", "type": "string"}],
                    },
                    "parameters": [{"name": "a", "type": "string"}],
                }
            ]
        }
    )
    project = schema_projectors(schema)["x"]
    assert project({"a": "1", "extra": 2}) == {"a": "1"}
    assert project([{"b": "2", "extra": 3}]) == [{"b": "2"}]
    assert project("text") == "text"
