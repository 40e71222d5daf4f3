"""ToolSchema: parsing definitions, validating values, exporting JSON Schema."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit import PARAMETER_TYPES, Parameter, SchemaDefinitionError, ToolSchema


def schema(*parameters: dict[str, Any]) -> ToolSchema:
    return ToolSchema.from_dict({"parameters": list(parameters)})


WEATHER = schema(
    {"name": "city", "type": "string", "description": "City name"},
    {"name": "days", "type": "integer", "required": False, "default": 1},
    {"name": "units", "type": "string", "required": False, "enum": ["metric", "imperial"]},
)


# -- the chapter's wording -------------------------------------------------------------------


def test_valid_values_give_no_errors_and_fill_defaults_in_place() -> None:
    values: dict[str, Any] = {"city": "Oslo"}
    assert WEATHER.validate(values) == []
    assert values == {"city": "Oslo", "days": 1}


def test_missing_required_parameter() -> None:
    assert WEATHER.validate({}) == ["Missing required parameter: 'city'"]


def test_wrong_type_uses_the_chapters_wording() -> None:
    errors = WEATHER.validate({"city": "Oslo", "days": "3"})
    assert errors == ["Parameter 'days': expected type 'integer', got 'str'"]


def test_every_problem_is_reported_at_once() -> None:
    errors = WEATHER.validate({"days": "3", "units": "kelvin", "citty": "Oslo"})
    assert errors == [
        "Missing required parameter: 'city'",
        "Parameter 'days': expected type 'integer', got 'str'",
        "Parameter 'units': expected one of ['metric', 'imperial'], got 'kelvin'",
        "Unknown parameter: 'citty' (did you mean 'city'?)",
    ]


@pytest.mark.parametrize(
    ("values", "unknown"),
    [
        pytest.param({"city": "Oslo", "units": None, "kind": 1}, ["kind"], id="beside-a-none"),
        pytest.param({"city": "Oslo", "units": None, "a": 1, "b": 2}, ["a", "b"], id="two"),
        pytest.param({"city": "Oslo", "days": None, "kind": 1}, ["kind"], id="beside-a-default"),
    ],
)
def test_an_unknown_name_beside_an_optional_given_none_is_reported(
    values: dict[str, Any], unknown: list[str]
) -> None:
    assert WEATHER.validate(dict(values)) == [f"Unknown parameter: '{name}'" for name in unknown]
    assert [problem.path for problem in WEATHER.check(values).problems] == unknown


def test_invalid_values_are_left_unchanged() -> None:
    values: dict[str, Any] = {"days": "3"}
    WEATHER.validate(values)
    assert values == {"days": "3"}


def test_non_mapping_values() -> None:
    assert WEATHER.validate(["Oslo"]) == [  # type: ignore[arg-type]
        "Expected a mapping of parameter names to values, got 'list'"
    ]


# -- the six types and the settled points ------------------------------------------------------


@pytest.mark.parametrize(
    ("type_name", "good", "bad", "bad_type"),
    [
        pytest.param("string", "x", 1, "int", id="string"),
        pytest.param("integer", 3, 3.0, "float", id="integer"),
        pytest.param("float", 2.5, "2.5", "str", id="float"),
        pytest.param("boolean", False, 0, "int", id="boolean"),
        pytest.param("list", [1, "a"], (1,), "tuple", id="list"),
        pytest.param("dictionary", {"a": 1}, [("a", 1)], "list", id="dictionary"),
    ],
)
def test_each_type_accepts_its_values_and_names_the_wrong_one(
    type_name: str, good: Any, bad: Any, bad_type: str
) -> None:
    one = schema({"name": "v", "type": type_name})
    assert one.validate({"v": good}) == []
    assert one.validate({"v": bad}) == [
        f"Parameter 'v': expected type '{type_name}', got '{bad_type}'"
    ]


def test_the_six_types() -> None:
    assert PARAMETER_TYPES == ("string", "integer", "float", "boolean", "list", "dictionary")


@pytest.mark.parametrize("value", [True, False], ids=["true", "false"])
@pytest.mark.parametrize("type_name", ["integer", "float"])
def test_numbers_reject_booleans(type_name: str, value: bool) -> None:
    errors = schema({"name": "n", "type": type_name}).validate({"n": value})
    assert errors == [f"Parameter 'n': expected type '{type_name}', got 'bool'"]


def test_float_accepts_an_integer_and_stores_a_float() -> None:
    values: dict[str, Any] = {"t": 72}
    assert schema({"name": "t", "type": "float"}).validate(values) == []
    assert values["t"] == 72.0
    assert type(values["t"]) is float


def test_float_rejects_an_integer_too_large() -> None:
    errors = schema({"name": "t", "type": "float"}).validate({"t": 10**400})
    assert errors == ["Parameter 't': expected type 'float', got an integer too large"]


@pytest.mark.parametrize(
    ("type_name", "text"),
    [("integer", "3"), ("float", "2.5"), ("boolean", "true")],
    ids=["integer", "float", "boolean"],
)
def test_no_string_coercion(type_name: str, text: str) -> None:
    assert schema({"name": "v", "type": type_name}).validate({"v": text}) != []


def test_none_for_an_optional_parameter_applies_its_default() -> None:
    values: dict[str, Any] = {"city": "Oslo", "days": None}
    assert WEATHER.validate(values) == []
    assert values["days"] == 1


def test_none_for_an_optional_parameter_without_default_removes_it() -> None:
    values: dict[str, Any] = {"city": "Oslo", "units": None}
    assert WEATHER.validate(values) == []
    assert "units" not in values


def test_none_for_a_required_parameter_is_a_type_error() -> None:
    assert WEATHER.validate({"city": None}) == [
        "Parameter 'city': expected type 'string', got 'NoneType'"
    ]


def test_unknown_parameter_without_a_close_name() -> None:
    assert WEATHER.validate({"city": "Oslo", "zzz": 1}) == ["Unknown parameter: 'zzz'"]


def test_mutable_defaults_are_fresh_for_every_call() -> None:
    tagged = schema({"name": "tags", "type": "list", "required": False, "default": ["a"]})
    first: dict[str, Any] = {}
    tagged.validate(first)
    first["tags"].append("changed")
    second: dict[str, Any] = {}
    tagged.validate(second)
    assert second["tags"] == ["a"]


# -- extensions --------------------------------------------------------------------------------


def test_enum() -> None:
    units = schema({"name": "u", "type": "string", "enum": ["a", "b"]})
    assert units.validate({"u": "a"}) == []
    assert units.validate({"u": "c"}) == ["Parameter 'u': expected one of ['a', 'b'], got 'c'"]


@pytest.mark.parametrize(
    ("value", "error"),
    [
        pytest.param(0, "Parameter 'n': expected a value of at least 1, got 0", id="below"),
        pytest.param(11, "Parameter 'n': expected a value of at most 10, got 11", id="above"),
        pytest.param(1, None, id="low-edge"),
        pytest.param(10, None, id="high-edge"),
    ],
)
def test_minimum_and_maximum(value: int, error: str | None) -> None:
    bounded = schema({"name": "n", "type": "integer", "minimum": 1, "maximum": 10})
    assert bounded.validate({"n": value}) == ([error] if error else [])


def test_pattern_must_match_the_whole_string() -> None:
    code = schema({"name": "code", "type": "string", "pattern": "[A-Z]{3}"})
    assert code.validate({"code": "OSL"}) == []
    assert code.validate({"code": "OSLO"}) == [
        "Parameter 'code': expected a string matching '[A-Z]{3}', got 'OSLO'"
    ]


def test_a_pattern_is_shown_as_written() -> None:
    code = schema({"name": "code", "type": "string", "pattern": r"^[a-z]+\d$"})
    assert code.validate({"code": "ab"}) == [
        "Parameter 'code': expected a string matching '^[a-z]+\\d$', got 'ab'"
    ]


@pytest.mark.parametrize(
    ("value", "error"),
    [
        pytest.param("a", "expected a string of at least 2 characters, got 1", id="short"),
        pytest.param("", "expected a string of at least 2 characters, got 0", id="empty"),
        pytest.param("abcde", "expected a string of at most 4 characters, got 5", id="long"),
        pytest.param("ab", None, id="low-edge"),
        pytest.param("abcd", None, id="high-edge"),
        # Code points, as Python and JSON Schema count: not bytes, not UTF-16 units.
        pytest.param("\N{GRINNING FACE}" * 4, None, id="astral-characters-count-once"),
        pytest.param("e\u0301" * 2, None, id="combining-marks-count-apart"),
        pytest.param(
            "\N{REGIONAL INDICATOR SYMBOL LETTER N}\N{REGIONAL INDICATOR SYMBOL LETTER O}" * 3,
            "expected a string of at most 4 characters, got 6",
            id="a-flag-is-two",
        ),
        pytest.param(
            "\N{GRINNING FACE}" * 5,
            "expected a string of at most 4 characters, got 5",
            id="astral-too-long",
        ),
    ],
)
def test_min_length_and_max_length(value: str, error: str | None) -> None:
    code = schema({"name": "code", "type": "string", "min_length": 2, "max_length": 4})
    assert code.validate({"code": value}) == ([f"Parameter 'code': {error}"] if error else [])


def test_a_length_of_one_is_one_character() -> None:
    one = schema({"name": "c", "type": "string", "min_length": 1, "max_length": 1})
    assert one.validate({"c": "ab"}) == [
        "Parameter 'c': expected a string of at most 1 character, got 2"
    ]


def test_lengths_and_a_pattern_are_each_checked() -> None:
    code = schema(
        {"name": "code", "type": "string", "pattern": "[a-z]+", "min_length": 3, "max_length": 3}
    )
    assert code.validate({"code": "abc"}) == []
    assert code.validate({"code": "A1"}) == [
        "Parameter 'code': expected a string matching '[a-z]+', got 'A1'",
        "Parameter 'code': expected a string of at least 3 characters, got 2",
    ]


def test_lengths_round_trip_and_export() -> None:
    definition = {"name": "c", "type": "string", "min_length": 0, "max_length": 10}
    parsed = schema(definition)
    assert parsed.to_dict() == {"parameters": [definition]}
    assert ToolSchema.from_dict(parsed.to_dict()) == parsed
    assert parsed.to_json_schema()["properties"]["c"] == {
        "type": "string",
        "minLength": 0,
        "maxLength": 10,
    }
    assert not parsed["c"].is_trivial


def test_lengths_are_optional_keywords_of_parameter() -> None:
    built = Parameter(name="c", type="string", max_length=2)
    assert (built.min_length, built.max_length) == (None, 2)
    assert built.check("abc")[1] == [
        "Parameter 'c': expected a string of at most 2 characters, got 3"
    ]
    assert Parameter(name="c", type="string").is_trivial


def test_list_items_by_type_name_with_paths() -> None:
    tags = schema({"name": "tags", "type": "list", "items": "string"})
    assert tags.validate({"tags": ["a", "b"]}) == []
    assert tags.validate({"tags": ["a", 2]}) == [
        "Parameter 'tags[1]': expected type 'string', got 'int'"
    ]


def test_list_items_by_spec_convert_elements() -> None:
    temps = schema({"name": "t", "type": "list", "items": {"type": "float", "minimum": -100}})
    values: dict[str, Any] = {"t": [1, 2.5]}
    assert temps.validate(values) == []
    assert values["t"] == [1.0, 2.5]
    assert temps.validate({"t": [-200]}) == [
        "Parameter 't[0]': expected a value of at least -100, got -200.0"
    ]


FILTERS = schema(
    {
        "name": "filters",
        "type": "dictionary",
        "parameters": [
            {"name": "tags", "type": "list", "items": "string"},
            {"name": "since", "type": "string", "required": False, "default": "today"},
        ],
    }
)


def test_nested_errors_name_the_path() -> None:
    errors = FILTERS.validate({"filters": {"tags": ["a", "b", 3]}})
    assert errors == ["Parameter 'filters.tags[2]': expected type 'string', got 'int'"]


def test_nested_missing_and_unknown_name_the_path() -> None:
    errors = FILTERS.validate({"filters": {"tgs": []}})
    assert errors == [
        "Missing required parameter: 'filters.tags'",
        "Unknown parameter: 'filters.tgs' (did you mean 'filters.tags'?)",
    ]


def test_nested_defaults_apply_to_a_copy_not_the_callers_dict() -> None:
    inner = {"tags": ["a"]}
    values: dict[str, Any] = {"filters": inner}
    assert FILTERS.validate(values) == []
    assert values["filters"] == {"tags": ["a"], "since": "today"}
    assert inner == {"tags": ["a"]}


def test_free_form_dictionary_and_list_accept_anything_inside() -> None:
    free = schema({"name": "d", "type": "dictionary"}, {"name": "l", "type": "list"})
    assert free.validate({"d": {"x": [1, {"y": None}]}, "l": [None, 1, "a"]}) == []


# -- checking definitions ----------------------------------------------------------------------


def problems_of(definition: Any) -> list[str]:
    with pytest.raises(SchemaDefinitionError) as info:
        ToolSchema.from_dict(definition)
    return [str(problem) for problem in info.value.problems]


@pytest.mark.parametrize(
    ("parameter", "expected"),
    [
        pytest.param({"type": "string"}, "parameters[0]: missing 'name'", id="no-name"),
        pytest.param(
            {"name": "x"},
            "parameters[0]: missing 'type'; expected one of: string, integer, float, "
            "boolean, list, dictionary",
            id="no-type",
        ),
        pytest.param(
            {"name": "x", "type": "int"},
            "parameters[0].type: unsupported type 'int' (did you mean 'integer'?); expected "
            "one of: string, integer, float, boolean, list, dictionary",
            id="alias-type",
        ),
        pytest.param(
            {"name": "x", "type": "strng"},
            "parameters[0].type: unsupported type 'strng' (did you mean 'string'?); expected "
            "one of: string, integer, float, boolean, list, dictionary",
            id="typo-type",
        ),
        pytest.param(
            {"name": "x", "type": "integer", "required": False, "default": "3"},
            "parameters[0].default: invalid default: Parameter 'x': expected type 'integer', "
            "got 'str'",
            id="default-type",
        ),
        pytest.param(
            {"name": "x", "type": "integer", "default": 3},
            "parameters[0].default: a required parameter cannot have a default; set "
            "'required: false' or remove the default",
            id="default-on-required",
        ),
        pytest.param(
            {"name": "x", "type": "string", "descripton": "typo"},
            "parameters[0].descripton: unknown key 'descripton' (did you mean "
            "'description'?); allowed keys: name, required, default, type, description, "
            "enum, items, parameters, minimum, maximum, pattern, min_length, max_length, "
            "sensitive",
            id="unknown-key",
        ),
        pytest.param(
            {"name": "my city", "type": "string"},
            "parameters[0].name: invalid parameter name 'my city': use letters, digits and "
            "underscores, starting with a letter or underscore, at most 64 characters",
            id="bad-name",
        ),
        pytest.param(
            {"name": "x", "type": "string", "required": "no"},
            "parameters[0].required: expected true or false, got 'no'",
            id="required-not-bool",
        ),
        pytest.param(
            {"name": "x", "type": "boolean", "enum": [True]},
            "parameters[0].enum: 'enum' applies to string, integer and float parameters, "
            "not 'boolean'",
            id="enum-on-boolean",
        ),
        pytest.param(
            {"name": "x", "type": "string", "enum": ["a", 1]},
            "parameters[0].enum: every value must be of type 'string'; 1 is not",
            id="enum-mixed",
        ),
        pytest.param(
            {"name": "x", "type": "string", "enum": []},
            "parameters[0].enum: expected a non-empty list of allowed values",
            id="enum-empty",
        ),
        pytest.param(
            {"name": "x", "type": "integer", "minimum": 5, "maximum": 1},
            "parameters[0].maximum: maximum 1 is below minimum 5",
            id="min-above-max",
        ),
        pytest.param(
            {"name": "x", "type": "string", "minimum": 1},
            "parameters[0].minimum: 'minimum' applies to integer and float parameters, "
            "not 'string'",
            id="minimum-on-string",
        ),
        pytest.param(
            {"name": "x", "type": "string", "min_length": 5, "max_length": 2},
            "parameters[0].max_length: max_length 2 is below min_length 5",
            id="min-length-above-max-length",
        ),
        pytest.param(
            {"name": "x", "type": "string", "min_length": -1},
            "parameters[0].min_length: expected a whole number of characters, 0 or more, got -1",
            id="negative-min-length",
        ),
        pytest.param(
            {"name": "x", "type": "string", "max_length": 2.0},
            "parameters[0].max_length: expected a whole number of characters, 0 or more, got 2.0",
            id="float-max-length",
        ),
        pytest.param(
            {"name": "x", "type": "string", "max_length": True},
            "parameters[0].max_length: expected a whole number of characters, 0 or more, got true",
            id="bool-max-length",
        ),
        pytest.param(
            {"name": "x", "type": "string", "min_length": "3"},
            "parameters[0].min_length: expected a whole number of characters, 0 or more, got '3'",
            id="text-min-length",
        ),
        pytest.param(
            {"name": "x", "type": "list", "max_length": 3},
            "parameters[0].max_length: 'max_length' applies to string parameters, not 'list'",
            id="max-length-on-list",
        ),
        pytest.param(
            {"name": "x", "type": ["string", "integer"], "min_length": 1},
            "parameters[0].min_length: 'min_length' does not apply to a union of types "
            "('string' or 'integer'); declare one type to constrain it",
            id="min-length-on-union",
        ),
        pytest.param(
            {"name": "x", "type": "string", "required": False, "default": "", "min_length": 1},
            "parameters[0].default: invalid default: Parameter 'x': expected a string of at "
            "least 1 character, got 0",
            id="default-too-short",
        ),
        pytest.param(
            {"name": "x", "type": "string", "pattern": "("},
            "parameters[0].pattern: invalid regular expression: missing ), unterminated "
            "subpattern at position 0",
            id="bad-pattern",
        ),
        pytest.param(
            {"name": "x", "type": "string", "items": "string"},
            "parameters[0].items: 'items' applies only to type 'list', not 'string'",
            id="items-on-string",
        ),
        pytest.param(
            {"name": "x", "type": "list", "parameters": []},
            "parameters[0].parameters: 'parameters' applies only to type 'dictionary', not 'list'",
            id="parameters-on-list",
        ),
        pytest.param(
            {"name": "x", "type": "string", "required": False, "default": "b", "enum": ["a"]},
            "parameters[0].default: invalid default: Parameter 'x': expected one of ['a'], got 'b'",
            id="default-outside-enum",
        ),
        pytest.param(
            "city",
            "parameters[0]: expected a mapping with 'name' and 'type', got 'city'",
            id="not-a-mapping",
        ),
    ],
)
def test_definition_problems(parameter: Any, expected: str) -> None:
    assert problems_of({"parameters": [parameter]}) == [expected]


def test_every_definition_problem_is_reported_at_once() -> None:
    problems = problems_of(
        {
            "parameters": [
                {"name": "a", "type": "nope"},
                {"name": "a", "type": "string"},
                {"name": "a", "type": "string"},
                {"name": "n", "type": "dictionary", "parameters": [{"name": "m"}]},
            ],
            "paramters": [],
        }
    )
    assert problems == [
        "paramters: unknown key 'paramters' (did you mean 'parameters'?); a schema has only "
        "'parameters'",
        "parameters[0].type: unsupported type 'nope'; expected one of: string, integer, "
        "float, boolean, list, dictionary",
        "parameters[2].name: duplicate parameter name 'a' (first defined at parameters[1])",
        "parameters[3].parameters[0]: missing 'type'; expected one of: string, integer, "
        "float, boolean, list, dictionary",
    ]


def test_problem_locations_are_structured() -> None:
    with pytest.raises(SchemaDefinitionError) as info:
        ToolSchema.from_dict({"parameters": [{"name": "x", "type": "list", "items": "nope"}]})
    (problem,) = info.value.problems
    assert problem.location == ("parameters", 0, "items", "type")
    assert problem.path == "parameters[0].items.type"


@pytest.mark.parametrize("definition", [None, [], "parameters"], ids=["none", "list", "string"])
def test_schema_must_be_a_mapping(definition: Any) -> None:
    (problem,) = problems_of(definition)
    assert problem.startswith("expected a mapping with a 'parameters' list")


def test_empty_schema_is_valid() -> None:
    assert len(ToolSchema.from_dict({})) == 0
    assert ToolSchema.from_dict({}).validate({}) == []


# -- JSON Schema -------------------------------------------------------------------------------


def test_to_json_schema() -> None:
    full = schema(
        {"name": "city", "type": "string", "description": "City", "pattern": "[A-Za-z ]+"},
        {"name": "days", "type": "integer", "required": False, "default": 1, "minimum": 1},
        {"name": "units", "type": "string", "required": False, "enum": ["metric", "imperial"]},
        {"name": "temps", "type": "list", "items": "float"},
        {"name": "anything", "type": "list", "required": False},
        {"name": "filters", "type": "dictionary", "parameters": [{"name": "q", "type": "string"}]},
        {"name": "extra", "type": "dictionary", "required": False},
        {"name": "flag", "type": "boolean", "required": False},
    )
    assert full.to_json_schema() == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City", "pattern": "^(?:[A-Za-z ]+)$"},
            "days": {"type": "integer", "minimum": 1, "default": 1},
            "units": {"type": "string", "enum": ["metric", "imperial"]},
            "temps": {"type": "array", "items": {"type": "number"}},
            "anything": {"type": "array", "items": {}},
            "filters": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
                "additionalProperties": False,
            },
            "extra": {"type": "object"},
            "flag": {"type": "boolean"},
        },
        "required": ["city", "temps", "filters"],
        "additionalProperties": False,
    }


def test_to_dict_round_trips() -> None:
    again = ToolSchema.from_dict(FILTERS.to_dict())
    assert again == FILTERS
    assert ToolSchema.from_dict(WEATHER.to_dict()) == WEATHER


def test_schema_is_immutable() -> None:
    with pytest.raises(AttributeError, match="immutable"):
        WEATHER._parameters = ()
    with pytest.raises(AttributeError, match="immutable"):
        WEATHER.parameters[0].name = "x"


def test_names_cannot_inject_code_into_the_generated_validator() -> None:
    # Names are checked against an identifier pattern, and the generated code never
    # embeds them as text anyway; a quote in a nested key reaches it only as data.
    nested = schema(
        {"name": "d", "type": "dictionary", "parameters": [{"name": "a", "type": "string"}]}
    )
    errors = nested.validate({"d": {"a": "x", "'); import os; ('": 1}})
    assert errors == ["Unknown parameter: 'd.'); import os; (''"]


# -- properties --------------------------------------------------------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6))
def test_validate_never_raises_and_reports_strings(values: dict[str, Any]) -> None:
    for candidate in (WEATHER, FILTERS):
        errors = candidate.validate(dict(values))
        assert all(isinstance(error, str) for error in errors)


@given(
    st.text(min_size=1),
    st.one_of(st.none(), st.integers(min_value=-(2**31), max_value=2**31)),
)
def test_valid_inputs_pass_and_keep_their_values(city: str, days: int | None) -> None:
    values: dict[str, Any] = {"city": city}
    if days is not None:
        values["days"] = days
    assert WEATHER.validate(values) == []
    assert values["city"] == city
    assert values["days"] == (1 if days is None else days)


@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6))
def test_invalid_values_are_never_changed(values: dict[str, Any]) -> None:
    before = repr(values)
    errors = FILTERS.validate(values)
    if errors:
        assert repr(values) == before


# -- check(): the same check, changing nothing ---------------------------------------------------


def test_check_changes_nothing_and_returns_what_a_call_would_get() -> None:
    values: dict[str, Any] = {"city": "Oslo"}
    checked = WEATHER.check(values)
    assert checked.ok
    assert checked.values == {"city": "Oslo", "days": 1}
    assert values == {"city": "Oslo"}


def test_check_returns_a_copy_even_when_nothing_changes() -> None:
    values: dict[str, Any] = {"city": "Oslo", "days": 2}
    plain = schema({"name": "city", "type": "string"}, {"name": "days", "type": "integer"})
    checked = plain.check(values)
    assert checked.values == values
    assert checked.values is not values  # a caller may hand it on and change it


PLAIN_FLOAT = schema({"name": "ratio", "type": "float"}, {"name": "label", "type": "string"})


@pytest.mark.parametrize(
    ("ratio", "expected"),
    [
        pytest.param(2.5, 2.5, id="finite-float"),
        pytest.param(-0.0, -0.0, id="negative-zero"),
        pytest.param(3, 3.0, id="integer-converted"),
        pytest.param(1e308, 1e308, id="largest"),
    ],
)
def test_check_of_a_plain_float_keeps_or_converts_it(ratio: Any, expected: float) -> None:
    values: dict[str, Any] = {"ratio": ratio, "label": "x"}
    before = dict(values)
    checked = PLAIN_FLOAT.check(values)
    assert checked.ok
    assert checked.values == {"ratio": expected, "label": "x"}
    assert type(checked.values["ratio"]) is float
    assert values == before
    assert type(values["ratio"]) is type(before["ratio"])
    assert checked.values is not values


@pytest.mark.parametrize(
    "ratio", [float("nan"), float("inf"), float("-inf"), True, "2.5", None, 10**400]
)
def test_check_of_a_plain_float_refuses_what_is_not_a_finite_number(ratio: Any) -> None:
    values: dict[str, Any] = {"ratio": ratio, "label": "x"}
    before = repr(values)
    problems = PLAIN_FLOAT.check(values).problems
    assert [problem.path for problem in problems] == ["ratio"]
    assert repr(values) == before


@given(st.dictionaries(st.sampled_from(["ratio", "label", "other"]), JSON_VALUES, max_size=3))
def test_check_agrees_with_validate_and_never_changes_its_input(values: dict[str, Any]) -> None:
    before = repr(values)
    checked = PLAIN_FLOAT.check(values)
    assert repr(values) == before
    copy = dict(values)
    errors = PLAIN_FLOAT.validate(copy)
    assert [problem.message for problem in checked.problems] == errors
    if not errors:
        assert checked.values == copy


def test_check_reports_structured_problems_in_the_chapters_wording() -> None:
    checked = WEATHER.check({"days": "3", "citty": "Oslo"})
    assert not checked.ok
    assert [(problem.path, problem.message) for problem in checked.problems] == [
        ("city", "Missing required parameter: 'city'"),
        ("days", "Parameter 'days': expected type 'integer', got 'str'"),
        ("citty", "Unknown parameter: 'citty' (did you mean 'city'?)"),
    ]


@pytest.mark.parametrize(
    ("value", "path"),
    [
        pytest.param({"filters": {"tags": ["a", "b", 3]}}, "filters.tags[2]", id="list-element"),
        pytest.param({"filters": {"tags": "a"}}, "filters.tags", id="nested-type"),
        pytest.param({"filters": {"tags": [], "tagz": []}}, "filters.tagz", id="nested-unknown"),
        pytest.param({"filters": {}}, "filters.tags", id="nested-missing"),
        pytest.param(
            {"filters": {"tags": [], "extra": {"x": float("nan")}}},
            "filters.extra.x",
            id="free-form-nan",
        ),
    ],
)
def test_problem_paths_name_the_nested_parameter(value: dict[str, Any], path: str) -> None:
    nested = schema(
        {
            "name": "filters",
            "type": "dictionary",
            "parameters": [
                {"name": "tags", "type": "list", "items": "string"},
                {"name": "extra", "type": "dictionary", "required": False},
            ],
        }
    )
    problems = nested.check(value).problems
    assert [problem.path for problem in problems] == [path]
    assert f"'{path}'" in problems[0].message


def test_check_of_a_non_mapping_is_one_problem_without_a_path() -> None:
    checked = WEATHER.check(["Oslo"])  # type: ignore[arg-type]
    assert [(p.path, p.message) for p in checked.problems] == [
        ("", "Expected a mapping of parameter names to values, got 'list'")
    ]


def test_the_split_modules_keep_the_old_imports_working() -> None:
    from agentkit import toolschema

    for name in ("FREE_FORM", "PARAMETER_TYPES", "ABSENT", "is_integer", "is_number"):
        assert getattr(toolschema, name) is not None
