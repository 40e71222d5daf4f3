"""Checking a schema definition stays linear and its messages short, whatever the input."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import SchemaDefinitionError, ToolSchema
from agentkit.schema.constraints import duplicates as _duplicates


def problems_of(parameter: dict[str, Any]) -> list[str]:
    with pytest.raises(SchemaDefinitionError) as info:
        ToolSchema.from_dict({"parameters": [parameter]})
    return [f"{'.'.join(map(str, p.location))}: {p.message}" for p in info.value.problems]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param([1, 2, 3], [], id="none"),
        pytest.param([1, 2, 1, 1, 2], [1, 2], id="each-once-in-order"),
        pytest.param([1, 1.0], [1.0], id="equal-across-types"),
        pytest.param([[1], [1], {"a": [2]}, {"a": [2]}], [[1], {"a": [2]}], id="unhashable"),
        pytest.param([{"a": 1, "b": 2}, {"b": 2, "a": 1}], [{"b": 2, "a": 1}], id="key-order"),
        pytest.param(list(range(200_000)) * 2, list(range(200_000)), id="large"),
    ],
)
def test_duplicates_are_found_in_one_pass(values: list[Any], expected: list[Any]) -> None:
    assert _duplicates(values) == expected


@pytest.mark.parametrize(
    ("enum", "expected"),
    [
        pytest.param(["a", "b", "a"], "duplicate values: 'a'; list each value once", id="one"),
        pytest.param(
            [str(i) for i in range(50_000)] * 2,
            "duplicate values: '0', '1', '2', '3', '4' and 49995 more; list each value once",
            id="many-cut-short",
        ),
        pytest.param(
            ["x" * 100_000] * 2,
            "duplicate values: 'xxxxxxxx",
            id="long-value-cut-short",
        ),
    ],
)
def test_enum_duplicates(enum: list[Any], expected: str) -> None:
    (problem,) = problems_of({"name": "e", "type": "string", "enum": enum})
    assert problem.startswith(f"parameters.0.enum: {expected}")
    assert len(problem) < 400


@pytest.mark.parametrize(
    "enum",
    [
        pytest.param([float("nan")], id="alone"),
        pytest.param([1.0, float("nan")], id="after"),
        pytest.param([float("nan"), float("nan")], id="twice"),
    ],
)
def test_nan_in_an_enum_is_refused_as_it_would_never_match(enum: list[float]) -> None:
    (problem,) = problems_of({"name": "n", "type": "float", "enum": enum})
    assert problem == "parameters.0.enum: NaN can never be matched; remove it"


@pytest.mark.parametrize(
    "parameter",
    [
        pytest.param({"name": "n" * 100_000, "type": "string"}, id="name"),
        pytest.param({"name": "n", "type": "t" * 100_000}, id="type"),
        pytest.param({"name": "n", "type": "string", "k" * 100_000: 1}, id="unknown-key"),
        pytest.param({"name": "n", "type": "integer", "enum": ["s" * 100_000]}, id="enum-type"),
    ],
)
def test_long_values_are_cut_short_in_messages(parameter: dict[str, Any]) -> None:
    found = problems_of(parameter)
    assert found
    assert all(len(problem.split(": ", 1)[1]) < 400 for problem in found), found


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param(1, 1.0, id="int-float"),
        pytest.param(1, True, id="int-bool"),
        pytest.param(0.0, -0.0, id="signed-zero"),
        pytest.param("1", 1, id="str-int"),
    ],
)
def test_equal_definitions_of_other_types_are_parsed_apart(first: Any, second: Any) -> None:
    kinds = {int: "integer", float: "float", bool: "boolean", str: "string"}
    for value in (first, second, first):
        parameter = {"name": "p", "type": kinds[type(value)], "required": False}
        (parsed,) = ToolSchema.from_dict({"parameters": [{**parameter, "default": value}]})
        assert type(parsed.default) is type(value)
        assert repr(parsed.default) == repr(value)


def test_a_parameter_parsed_before_is_the_same_value_and_a_broken_one_reported_again() -> None:
    written = {"name": "id", "type": "string", "description": "The item."}
    first = ToolSchema.from_dict({"parameters": [dict(written)]})
    again = ToolSchema.from_dict({"parameters": [dict(written)]})
    assert first.parameters[0] is again.parameters[0]
    broken = {"name": "id", "type": "string", "default": "x"}
    for _ in range(2):
        assert problems_of(dict(broken)) == [
            "parameters.0.default: a required parameter cannot have a default; "
            "set 'required: false' or remove the default"
        ]


def test_remembered_parameters_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit.schema import parse as schemaparse

    monkeypatch.setattr(schemaparse, "_remembered", {})
    for index in range(schemaparse.MAX_REMEMBERED + 10):
        ToolSchema.from_dict({"parameters": [{"name": f"p{index}", "type": "string"}]})
    assert 0 < len(schemaparse._remembered) <= schemaparse.MAX_REMEMBERED


def test_a_list_of_flat_parameters_parsed_before_is_the_same_schema() -> None:
    written: list[dict[str, Any]] = [
        {"name": "id", "type": "string"},
        {"name": "n", "type": "integer", "required": False},
    ]
    first = ToolSchema.from_dict({"parameters": [dict(p) for p in written]})
    again = ToolSchema.from_dict({"parameters": [dict(p) for p in written]})
    assert first is again
    nested = [*written, {"name": "f", "type": "dictionary", "parameters": [written[0]]}]
    assert ToolSchema.from_dict({"parameters": nested}) is not ToolSchema.from_dict(
        {"parameters": nested}
    )  # not flat: parsed each time
    duplicated = [*written, written[0]]
    for _ in range(2):
        with pytest.raises(SchemaDefinitionError, match="duplicate parameter name 'id'"):
            ToolSchema.from_dict({"parameters": [dict(p) for p in duplicated]})
