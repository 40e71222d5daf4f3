"""A question's form (MCP's ``requestedSchema``) read once, and answers checked against it."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.forms import Form, FormField
from agentkit.redaction import Redactor
from agentkit.toolerrors import AnswerError, ElicitationError

SECRET = "s3cret-answer-0123456789"


def _titled(*values: str) -> list[dict[str, str]]:
    return [{"const": value, "title": value.title()} for value in values]


#: Every kind of field MCP's forms have (2025-11-25 and 2026-07-28 alike), each constraint.
EVERY_KIND: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "title": "Everything",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
        "email": {"type": "string", "format": "email", "default": "a@b.example"},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
        "size": {"type": "string", "oneOf": _titled("s", "m", "l")},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "score": {"type": "number", "minimum": -1.5, "maximum": 1.5},
        "ok": {"type": "boolean", "default": True},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
        "picks": {
            "type": "array",
            "items": {"anyOf": _titled("p", "q", "r")},
            "minItems": 1,
            "maxItems": 2,
        },
    },
    "required": ["name", "age"],
}
FORM = Form.read(EVERY_KIND)
GOOD: dict[str, Any] = {
    "name": "Ada",
    "email": "ada@example.org",
    "site": "https://example.org/a?b=c",
    "born": "1815-12-10",
    "at": "2026-12-03T16:00:00Z",
    "color": "green",
    "legacy": "b",
    "size": "m",
    "age": 36,
    "score": 0.5,
    "ok": False,
    "tags": ["x", "y"],
    "picks": ["p"],
}


def test_a_form_is_read_field_by_field() -> None:
    by_name = {field.name: field for field in FORM.fields}
    assert list(by_name) == list(EVERY_KIND["properties"])
    assert by_name["name"] == FormField(
        name="name", kind="string", required=True, min_length=2, max_length=5
    )
    assert by_name["size"].choices == ("s", "m", "l")
    assert by_name["picks"] == FormField(
        name="picks", kind="array", choices=("p", "q", "r"), min_items=1, max_items=2
    )
    assert by_name["age"] == FormField(
        name="age", kind="integer", required=True, minimum=0, maximum=150
    )


def test_an_answer_that_fits_is_given_as_sent() -> None:
    values, problems = FORM.check(GOOD)
    assert problems == ()
    assert values == GOOD


def test_empty_fields_are_left_out_and_an_integral_number_is_an_integer() -> None:
    values, problems = FORM.check({"name": "Ada", "age": 36.0, "email": None})
    assert problems == ()
    assert values == {"name": "Ada", "age": 36}
    assert type(values["age"]) is int


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"name": None}, "Missing required field: 'name'", id="required-null"),
        pytest.param({"age": "36"}, "Field 'age': expected type 'integer', got 'str'", id="type"),
        pytest.param({"age": True}, "Field 'age': expected type 'integer', got 'bool'", id="bool"),
        pytest.param(
            {"age": 3.5}, "Field 'age': expected type 'integer', got a fraction", id="frac"
        ),
        pytest.param({"score": "1"}, "Field 'score': expected type 'number', got 'str'", id="num"),
        pytest.param({"score": float("nan")}, "Field 'score': expected a finite number", id="nan"),
        pytest.param({"ok": "yes"}, "Field 'ok': expected type 'boolean', got 'str'", id="bool2"),
        pytest.param({"name": 5}, "Field 'name': expected type 'string', got 'int'", id="string"),
        pytest.param(
            {"color": "blue"},
            "Field 'color': expected one of 'red', 'green', got another value",
            id="enum",
        ),
        pytest.param(
            {"size": "S"},
            "Field 'size': expected one of 's', 'm', 'l', got another value",
            id="one-of-is-by-const-not-title",
        ),
        pytest.param(
            {"legacy": "A"},
            "Field 'legacy': expected one of 'a', 'b', got another value",
            id="legacy",
        ),
        pytest.param(
            {"name": "Ada Lovelace"},
            "Field 'name': expected at most 5 characters, got 12",
            id="max-length",
        ),
        pytest.param(
            {"name": "A"}, "Field 'name': expected at least 2 characters, got 1", id="min-length"
        ),
        pytest.param({"age": -1}, "Field 'age': expected a value of at least 0", id="minimum"),
        pytest.param({"age": 151}, "Field 'age': expected a value of at most 150", id="maximum"),
        pytest.param({"score": 1.6}, "Field 'score': expected a value of at most 1.5", id="max-f"),
        pytest.param(
            {"email": "ada"},
            "Field 'email': expected an email address (format 'email'), got a string that is not one",
            id="email",
        ),
        pytest.param({"tags": "x"}, "Field 'tags': expected type 'array', got 'str'", id="array"),
        pytest.param(
            {"tags": ["x", "z"]},
            "Field 'tags[1]': expected one of 'x', 'y', got another value",
            id="item-choice",
        ),
        pytest.param(
            {"tags": [1]}, "Field 'tags[0]': expected type 'string', got 'int'", id="item-type"
        ),
        pytest.param(
            {"picks": []}, "Field 'picks': expected at least 1 choice, got 0", id="min-items"
        ),
        pytest.param(
            {"picks": ["p", "q", "r"]},
            "Field 'picks': expected at most 2 choices, got 3",
            id="max-items",
        ),
        pytest.param({"agee": 3}, "Unknown field: 'agee' (did you mean 'age'?)", id="extra"),
    ],
)
def test_an_answer_that_does_not_fit_is_refused_field_by_field(
    change: dict[str, Any], message: str
) -> None:
    _, problems = FORM.check({**GOOD, **change})
    assert [problem.message for problem in problems] == [message]


def test_a_number_too_large_for_a_float_is_compared_not_converted() -> None:
    huge = 10**400
    _, problems = FORM.check({**GOOD, "age": huge, "score": -huge})
    assert [problem.message for problem in problems] == [
        "Field 'age': expected a value of at most 150",
        "Field 'score': expected a value of at least -1.5",
    ]


def test_a_missing_field_and_an_empty_answer() -> None:
    _, problems = FORM.check({})
    assert [problem.message for problem in problems] == [
        "Missing required field: 'name'",
        "Missing required field: 'age'",
    ]
    assert [problem.path for problem in problems] == ["name", "age"]


@pytest.mark.parametrize(
    "change",
    [
        {"name": SECRET},
        {"color": SECRET},
        {"size": SECRET},
        {"email": SECRET},
        {"site": f"not a uri {SECRET}"},
        {"born": SECRET},
        {"at": SECRET},
        {"tags": [SECRET]},
        {"age": SECRET},
        {"age": 10**40 + 7},
    ],
    ids=lambda change: next(iter(change)),
)
def test_a_problem_never_shows_the_value_given(change: dict[str, Any]) -> None:
    _, problems = FORM.check({**GOOD, **change})
    assert problems
    shown = " ".join(problem.message for problem in problems)
    assert SECRET not in shown
    assert str(10**40 + 7) not in shown


@pytest.mark.parametrize(
    ("format", "good", "bad"),
    [
        ("email", ["a@b.example", "first.last+tag@sub.example.org"], ["a", "a@b", "a b@c.d", "@b.c"]),
        ("uri", ["https://example.org", "mailto:a@b.c", "urn:isbn:0451450523"], ["example.org", "/a/b", "http://a b", "1http://x"]),
        ("date", ["2026-12-03", "2024-02-29"], ["2026-13-01", "2023-02-29", "03/12/2026", "2026-12-3", "\uff12\uff10\uff12\uff16-12-03"]),
        ("date-time", ["2026-12-03T16:00:00Z", "2026-12-03t16:00:00.5+01:00", "2016-12-31T23:59:60Z"], ["2026-12-03T16:00:00", "2026-12-03T24:00:00Z", "2026-12-03", "2026-12-03T16:00:00+25:00", "2026-02-30T10:00:00Z"]),
    ],
)  # fmt: skip
def test_each_format_is_checked(format: str, good: list[str], bad: list[str]) -> None:
    form = Form.read({"type": "object", "properties": {"v": {"type": "string", "format": format}}})
    assert [value for value in good if form.check({"v": value})[1]] == []
    assert [value for value in bad if not form.check({"v": value})[1]] == []


def test_a_confirmation_has_nothing_to_fill_in() -> None:
    form = Form.read({"type": "object", "properties": {}})
    assert form.check({}) == ({}, ())
    assert [problem.message for problem in form.check({"ok": True})[1]] == ["Unknown field: 'ok'"]


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        pytest.param(["name"], "expected a mapping (a JSON Schema object), got a list", id="list"),
        pytest.param({"properties": {}}, "type: must be 'object', got null", id="no-type"),
        pytest.param({"type": "object"}, "properties: expected a mapping of fields", id="no-props"),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}},
            "properties.a.type: must be one of 'string', 'number', 'integer', 'boolean', "
            "'array' (a form is flat), got 'object'",
            id="nested",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}},
            "properties.a.pattern: is not in MCP's elicitation forms",
            id="pattern",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "integer", "enum": [1, 2]}}},
            "properties.a.enum: is not in MCP's elicitation forms",
            id="enum-of-numbers",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}},
            "properties.a.format: must be one of 'email', 'uri', 'date', 'date-time', got 'ipv4'",
            id="format",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string", "minLength": -1}}},
            "properties.a.minLength: expected a whole number of at least 0, got -1",
            id="negative-length",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "number", "minimum": 2, "maximum": 1}}},
            "properties.a: minimum 2 is above maximum 1",
            id="bounds",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}},
            "properties.a.items: must list the choices",
            id="free-array",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string", "oneOf": [{"const": "x"}]}}},
            "properties.a.oneOf: expected a non-empty list of options",
            id="untitled-one-of",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string", "enum": []}}},
            "properties.a.enum: expected a non-empty list of strings",
            id="empty-enum",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
            "required: names 'b', which is no field",
            id="required-unknown",
        ),
        pytest.param(
            {"type": "object", "properties": {}, "additionalProperties": True},
            "additionalProperties: is not in MCP's elicitation forms",
            id="additional-properties",
        ),
    ],
)
def test_a_form_mcp_has_no_such_thing_as_is_not_asked(schema: Any, message: str) -> None:
    with pytest.raises(ElicitationError, match="the form cannot be asked") as caught:
        Form.read(schema)
    assert message in str(caught.value)


def test_every_problem_of_a_form_is_listed_at_once() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "pattern": "x"},
            "b": {"type": "integer", "minimum": "0"},
        },
    }
    with pytest.raises(ElicitationError) as caught:
        Form.read(schema)
    assert "properties.a.pattern" in str(caught.value)
    assert "properties.b.minimum: expected a number, got '0'" in str(caught.value)


def test_annotations_a_form_may_carry_are_not_refused() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"a": {"type": "string", "examples": ["x"], "x-hint": 1}},
    }
    assert Form.read(schema).check({"a": "y"}) == ({"a": "y"}, ())


def test_an_answer_error_says_each_problem_and_survives_redaction() -> None:
    _, problems = FORM.check({"age": "old", "agee": 1})
    error = AnswerError(problems)
    assert isinstance(error, ElicitationError)
    assert error.problems == problems
    assert str(error) == (
        "the answer does not fit the form it was asked with, so it was not used: "
        "Unknown field: 'agee' (did you mean 'age'?); Missing required field: 'name'; "
        "Field 'age': expected type 'integer', got 'str'"
    )
    # A tool with credentials has its errors copied without secrets: the text is kept.
    copy = Redactor([SECRET]).clean_exception(error)
    assert type(copy) is AnswerError
    assert str(copy) == str(error)
