"""``schema.constraints``: each reader of a parameter's type and constraints, on its own.

A reader returns what it read, or ``None`` with each problem reported at its key, in
the chapter's voice: what was wrong, and what would be right.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from agentkit.schema.constraints import (
    parse_bound,
    parse_enum,
    parse_flag,
    parse_length,
    parse_pattern,
    parse_type,
    parse_union,
    parse_union_enum,
)
from agentkit.toolerrors import Problem

CHOICES = "string, integer, float, boolean, list, dictionary"
HERE = ("parameters", 2)


class Heard:
    """The ``problem`` callback a reader is given: what it reports, as (key, message)."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    def __call__(self, key: str, message: str) -> None:
        self.problems.append((key, message))


def _located(problems: list[Problem]) -> list[tuple[tuple[str | int, ...], str]]:
    return [(problem.location, problem.message) for problem in problems]


# -- type ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["string", "integer", "float", "boolean", "list", "dictionary"])
def test_each_parameter_type_is_read_as_written(name: str) -> None:
    problems: list[Problem] = []
    assert parse_type(name, HERE, problems) == name
    assert problems == []


def test_a_missing_type_is_reported_at_the_parameter_with_the_choices() -> None:
    problems: list[Problem] = []
    assert parse_type(None, HERE, problems) is None
    assert _located(problems) == [(HERE, f"missing 'type'; expected one of: {CHOICES}")]


@pytest.mark.parametrize(
    ("raw", "hint"),
    [
        pytest.param("int", " (did you mean 'integer'?)", id="python-alias"),
        pytest.param("Int", " (did you mean 'integer'?)", id="alias-any-case"),
        pytest.param("number", " (did you mean 'float'?)", id="json-schema-alias"),
        pytest.param("object", " (did you mean 'dictionary'?)", id="object"),
        pytest.param("integr", " (did you mean 'integer'?)", id="typo"),
        pytest.param("xyz", "", id="nothing-close"),
    ],
)
def test_an_unsupported_type_names_the_closest_one(raw: str, hint: str) -> None:
    problems: list[Problem] = []
    assert parse_type(raw, HERE, problems) is None
    assert _located(problems) == [
        ((*HERE, "type"), f"unsupported type '{raw}'{hint}; expected one of: {CHOICES}")
    ]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        pytest.param(5, "5", id="number"),
        pytest.param(True, "true", id="boolean-as-yaml-writes-it"),
        pytest.param({"a": 1}, "a mapping", id="mapping"),
    ],
)
def test_a_type_that_is_no_name_is_shown_as_the_definition_wrote_it(raw: Any, shown: str) -> None:
    problems: list[Problem] = []
    assert parse_type(raw, HERE, problems) is None
    assert _located(problems) == [
        ((*HERE, "type"), f"unsupported type {shown}; expected one of: {CHOICES}")
    ]


# -- unions --------------------------------------------------------------------------------------


def test_a_list_of_types_is_read_as_a_union_in_its_order() -> None:
    problems: list[Problem] = []
    assert parse_type(["integer", "string", "list"], HERE, problems) == (
        "integer",
        "string",
        "list",
    )
    assert problems == []


def test_every_wrong_member_of_a_union_is_reported_at_its_index() -> None:
    problems: list[Problem] = []
    assert parse_union(["number", "string", "str", 3, "string"], HERE, problems) is None
    joins = f"a union joins: {CHOICES}"
    assert _located(problems) == [
        ((*HERE, "type", 0), f"unsupported type: 'number' (did you mean 'float'?); {joins}"),
        ((*HERE, "type", 2), f"unsupported type: 'str' (did you mean 'string'?); {joins}"),
        ((*HERE, "type", 3), f"unsupported type: 3; {joins}"),
        ((*HERE, "type", 4), "'string' is listed twice"),
    ]


@pytest.mark.parametrize(
    ("raw", "fix"),
    [
        pytest.param(["float"], "type: float", id="one-member"),
        pytest.param([], f"one of: {CHOICES}", id="empty"),
    ],
)
def test_a_union_of_fewer_than_two_types_says_how_to_write_one(raw: list[Any], fix: str) -> None:
    problems: list[Problem] = []
    assert parse_union(raw, HERE, problems) is None
    assert _located(problems) == [
        ((*HERE, "type"), f"a union lists two or more types; for one type write {fix}")
    ]


def test_a_union_reports_only_its_own_problems() -> None:
    problems = [Problem(location=("earlier",), message="already there")]
    assert parse_union(["string", "integer"], HERE, problems) == ("string", "integer")
    assert len(problems) == 1


# -- enum ----------------------------------------------------------------------------------------


def test_no_enum_reads_as_none_and_reports_nothing() -> None:
    heard = Heard()
    assert parse_enum({"name": "x"}, "string", heard) is None
    assert parse_union_enum({"name": "x"}, ("string", "integer"), heard) is None
    assert heard.problems == []


@pytest.mark.parametrize(
    ("declared", "values", "read"),
    [
        pytest.param("string", ["a", "\u00e9t\u00e9", ""], ("a", "\u00e9t\u00e9", ""), id="string"),
        pytest.param("integer", [3, -1, 0], (3, -1, 0), id="integer"),
        pytest.param("float", [1, 2.5], (1.0, 2.5), id="float-ints-become-floats"),
    ],
)
def test_an_enum_is_read_as_a_tuple_of_its_values(
    declared: str, values: list[Any], read: tuple[Any, ...]
) -> None:
    heard = Heard()
    got = parse_enum({"enum": values}, declared, heard)
    assert got == read
    assert [type(value) for value in got or ()] == [type(value) for value in read]
    assert heard.problems == []


@pytest.mark.parametrize(
    ("declared", "values", "message"),
    [
        pytest.param(
            "boolean",
            [True],
            "'enum' applies to string, integer and float parameters, not 'boolean'",
            id="boolean",
        ),
        pytest.param(
            "list",
            [[1]],
            "'enum' applies to string, integer and float parameters, not 'list'",
            id="list",
        ),
        pytest.param("string", [], "expected a non-empty list of allowed values", id="empty"),
        pytest.param("string", "a", "expected a non-empty list of allowed values", id="a-string"),
        pytest.param(
            "integer",
            [1, "2"],
            "every value must be of type 'integer'; '2' is not",
            id="wrong-type",
        ),
        pytest.param(
            "integer", [1, True], "every value must be of type 'integer'; True is not", id="bool"
        ),
        pytest.param("float", [1.0, math.nan], "NaN can never be matched; remove it", id="nan"),
        pytest.param(
            "float",
            [1, 1.0],
            "duplicate values: 1.0; list each value once",
            id="one-number-shown-as-repeated",
        ),
        pytest.param(
            "string",
            [*"abcdefg", *"abcdefg"],
            "duplicate values: 'a', 'b', 'c', 'd', 'e' and 2 more; list each value once",
            id="many-duplicates",
        ),
    ],
)
def test_a_wrong_enum_is_reported_at_its_key(declared: str, values: Any, message: str) -> None:
    heard = Heard()
    assert parse_enum({"enum": values}, declared, heard) is None
    assert heard.problems == [("enum", message)]


def test_an_enum_value_too_large_for_a_float_is_reported_not_raised() -> None:
    heard = Heard()
    assert parse_enum({"enum": [1.5, 10**400]}, "float", heard) is None
    [(key, message)] = heard.problems
    assert key == "enum"
    assert message.startswith("every value must be of type 'float'; 1000")
    assert message.endswith(" is an integer too large for a float")
    assert len(message) < 200  # the value is cut short


def test_a_huge_integer_is_a_whole_integer_enum_value() -> None:
    heard = Heard()
    assert parse_enum({"enum": [10**400]}, "integer", heard) == (10**400,)
    assert heard.problems == []


def test_a_union_enum_takes_each_value_of_a_scalar_member() -> None:
    heard = Heard()
    values = [1, "auto", 2.5]
    assert parse_union_enum({"enum": values}, ("float", "string", "list"), heard) == (
        1,
        "auto",
        2.5,
    )
    assert heard.problems == []


@pytest.mark.parametrize(
    ("declared", "values", "message"),
    [
        pytest.param(
            ("list", "dictionary"),
            [[1]],
            "'enum' applies to a union's scalar types, and 'list' or 'dictionary' has none",
            id="no-scalar-member",
        ),
        pytest.param(
            ("integer", "string"), [], "expected a non-empty list of allowed values", id="empty"
        ),
        pytest.param(
            ("integer", "string"),
            [1, 2.5],
            "every value must be of type 'integer' or 'string'; 2.5 is not",
            id="wrong-type",
        ),
        pytest.param(
            ("integer", "string", "list"),
            [1, [1]],
            "every value must be of type 'integer' or 'string'; a list is not",
            id="a-list-member-takes-no-enum",
        ),
        pytest.param(
            ("float", "string"),
            [math.nan, "a"],
            "NaN can never be matched; remove it",
            id="nan",
        ),
        pytest.param(
            ("float", "string"),
            [1, 1.0, "1", "1"],
            "duplicate values: 1.0, '1'; list each value once",
            id="duplicates",
        ),
        pytest.param(
            ("integer", "string"),
            [1, 2],
            "no value is of type 'string'; add one, or leave 'string' out of the type",
            id="a-member-without-a-value",
        ),
    ],
)
def test_a_wrong_union_enum_is_reported_at_its_key(
    declared: tuple[str, ...], values: Any, message: str
) -> None:
    heard = Heard()
    assert parse_union_enum({"enum": values}, declared, heard) is None
    assert heard.problems == [("enum", message)]


def test_a_union_enum_keeps_a_boolean_apart_from_a_number() -> None:
    """JSON's ``true`` is not ``1``: both are allowed values, not one value twice."""
    heard = Heard()
    assert parse_union_enum({"enum": [1, True]}, ("integer", "boolean"), heard) == (1, True)
    assert heard.problems == []


# -- bounds --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "value"),
    [
        pytest.param("integer", 0, id="zero"),
        pytest.param("integer", -5, id="negative"),
        pytest.param("float", 2.5, id="float"),
        pytest.param("float", 10, id="int-bound-of-a-float"),
        pytest.param("integer", 10**400, id="huge-integer"),
    ],
)
def test_a_bound_is_read_as_written(declared: str, value: float) -> None:
    heard = Heard()
    assert parse_bound({"minimum": value}, "minimum", declared, heard) == value
    assert heard.problems == []


@pytest.mark.parametrize(
    ("declared", "value", "message"),
    [
        pytest.param(
            "string",
            1,
            "'maximum' applies to integer and float parameters, not 'string'",
            id="string",
        ),
        pytest.param("integer", "10", "expected a number, got '10'", id="text"),
        pytest.param("integer", True, "expected a number, got true", id="boolean"),
        pytest.param("integer", None, "expected a number, got null", id="null"),
        pytest.param("float", math.inf, "expected a finite number, got inf", id="inf"),
        pytest.param("float", -math.inf, "expected a finite number, got -inf", id="minus-inf"),
        pytest.param("float", math.nan, "expected a finite number, got nan", id="nan"),
    ],
)
def test_a_wrong_bound_is_reported_at_its_key(declared: str, value: Any, message: str) -> None:
    heard = Heard()
    assert parse_bound({"maximum": value}, "maximum", declared, heard) is None
    assert heard.problems == [("maximum", message)]


def test_a_float_bound_too_large_for_a_float_is_reported_not_raised() -> None:
    heard = Heard()
    assert parse_bound({"maximum": 10**400}, "maximum", "float", heard) is None
    [(key, message)] = heard.problems
    assert key == "maximum"
    assert message.startswith("expected a finite number, got an integer too large for a float: 1")
    assert len(message) < 200


def test_an_absent_bound_reads_as_none_whatever_the_type() -> None:
    heard = Heard()
    assert parse_bound({"minimum": 1}, "maximum", "string", heard) is None
    assert heard.problems == []


# -- lengths, flags, patterns --------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, 10**6])
def test_a_length_is_a_whole_number_of_characters(value: int) -> None:
    heard = Heard()
    assert parse_length({"max_length": value}, "max_length", "string", heard) == value
    assert heard.problems == []


@pytest.mark.parametrize(
    ("declared", "value", "message"),
    [
        pytest.param(
            "integer", 3, "'min_length' applies to string parameters, not 'integer'", id="integer"
        ),
        pytest.param(
            "string",
            -1,
            "expected a whole number of characters, 0 or more, got -1",
            id="negative",
        ),
        pytest.param(
            "string",
            True,
            "expected a whole number of characters, 0 or more, got true",
            id="boolean",
        ),
        pytest.param(
            "string",
            3.0,
            "expected a whole number of characters, 0 or more, got 3.0",
            id="a-float-even-whole",
        ),
        pytest.param(
            "string",
            "3",
            "expected a whole number of characters, 0 or more, got '3'",
            id="text",
        ),
    ],
)
def test_a_wrong_length_is_reported_at_its_key(declared: str, value: Any, message: str) -> None:
    heard = Heard()
    assert parse_length({"min_length": value}, "min_length", declared, heard) is None
    assert heard.problems == [("min_length", message)]


@pytest.mark.parametrize("default", [True, False])
def test_a_flag_is_its_default_when_absent(default: bool) -> None:
    heard = Heard()
    assert parse_flag({}, "required", heard, default=default) is default
    assert parse_flag({"required": not default}, "required", heard, default=default) is (
        not default
    )
    assert heard.problems == []


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param("yes", "'yes'", id="a-word"),
        pytest.param(1, "1", id="one"),
        pytest.param(None, "null", id="null"),
        pytest.param([True], "a list", id="a-list"),
    ],
)
def test_a_flag_that_is_no_boolean_is_reported_and_read_as_its_default(
    value: Any, shown: str
) -> None:
    heard = Heard()
    assert parse_flag({"sensitive": value}, "sensitive", heard, default=False) is False
    assert heard.problems == [("sensitive", f"expected true or false, got {shown}")]


@pytest.mark.parametrize("pattern", ["^[A-Z]{3}$", "", "\u00e9+", r"\d+(?:\.\d+)?"])
def test_a_pattern_that_compiles_is_read_as_written(pattern: str) -> None:
    heard = Heard()
    assert parse_pattern({"pattern": pattern}, "string", heard) == pattern
    assert heard.problems == []


@pytest.mark.parametrize(
    ("declared", "value", "message"),
    [
        pytest.param(
            "integer", "^1$", "'pattern' applies to string parameters, not 'integer'", id="integer"
        ),
        pytest.param("string", 5, "expected a regular expression string, got 5", id="not-a-string"),
        pytest.param(
            "string",
            "[a-",
            "invalid regular expression: unterminated character set at position 0",
            id="unterminated-set",
        ),
        pytest.param(
            "string",
            "(a",
            "invalid regular expression: missing ), unterminated subpattern at position 0",
            id="unterminated-group",
        ),
    ],
)
def test_a_wrong_pattern_is_reported_at_its_key(declared: str, value: Any, message: str) -> None:
    heard = Heard()
    assert parse_pattern({"pattern": value}, declared, heard) is None
    assert heard.problems == [("pattern", message)]


def test_no_pattern_reads_as_none() -> None:
    heard = Heard()
    assert parse_pattern({}, "integer", heard) is None
    assert heard.problems == []
