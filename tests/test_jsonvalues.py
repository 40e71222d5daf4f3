"""Values from the model: nesting is bounded, numbers are finite, a bad call never raises."""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import pytest

from agentkit import (
    ExecutionRecorder,
    SchemaDefinitionError,
    Tool,
    ToolExecutor,
    ToolRegistry,
    ToolResult,
    ToolSchema,
    ToolValidationError,
)
from agentkit.adapters.dispatch import (
    dispatch_anthropic,
    dispatch_openai,
    dispatch_openai_responses,
)
from agentkit.jsonvalues import (
    MAX_DEPTH,
    checked_copy,
    checked_object,
    containers_copied,
    loads,
    plain_copy,
    plain_dict_copy,
    plain_list_copy,
)
from agentkit.toolerrors import Problem
from tests.support.helpers import Adder, run_bounded

NAN, INF = float("nan"), float("inf")


def nested(depth: int, leaf: Any = 1, *, kind: str = "list") -> Any:
    """A value ``depth`` containers deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


class Echo(Tool):
    TOOL_NAME = "echo"
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "data", "type": "dictionary", "required": False},
            {"name": "items", "type": "list", "required": False},
            {"name": "rows", "type": "list", "items": "dictionary", "required": False},
            {
                "name": "box",
                "type": "dictionary",
                "required": False,
                "parameters": [{"name": "inner", "type": "list", "required": False}],
            },
            {"name": "lat", "type": "float", "required": False, "minimum": -90, "maximum": 90},
            {"name": "ratio", "type": "float", "required": False},
            {"name": "scores", "type": "list", "items": "float", "required": False},
        ]
    }
    OUTPUT_SCHEMA = {
        "parameters": [
            {"name": "data", "type": "dictionary", "required": False},
            {"name": "value", "type": "float", "required": False},
        ]
    }

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        self.called = True
        return {"data": inputs.get("data")}


class Returns(Tool):
    """Returns whatever the test set, as an upstream reply would."""

    TOOL_NAME = "returns"
    OUTPUT_SCHEMA = Echo.OUTPUT_SCHEMA

    def __init__(self, output: dict[str, Any]) -> None:
        super().__init__()
        self.output = output

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return self.output


# -- the validator -------------------------------------------------------------------------------

TOO_DEEP = [
    pytest.param({"data": nested(MAX_DEPTH + 1, kind="dict")}, "data", id="dictionary"),
    pytest.param({"data": {"a": nested(600)}}, "data", id="list-in-dictionary-600"),
    pytest.param({"items": nested(MAX_DEPTH + 1)}, "items", id="list"),
    pytest.param({"rows": [{"x": 1}, nested(MAX_DEPTH + 1, kind="dict")]}, "rows[1]", id="items"),
    pytest.param({"box": {"inner": nested(5000)}}, "box.inner", id="declared-nesting"),
    pytest.param({"items": [nested(MAX_DEPTH, kind="dict")]}, "items", id="mixed-kinds"),
    pytest.param({"data": {"t": [nested(MAX_DEPTH)]}}, "data", id="list-in-a-list"),
]


@pytest.mark.parametrize(("inputs", "path"), TOO_DEEP)
def test_nesting_beyond_the_limit_is_a_located_validation_error(
    executor: ToolExecutor, inputs: dict[str, Any], path: str
) -> None:
    tool = Echo()
    result = executor.execute(tool, inputs, raise_on_failure=False)
    assert not result.succeeded
    assert f"Parameter '{path}': nested more than {MAX_DEPTH} levels deep" in str(result.error)
    assert not hasattr(tool, "called")


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(nested(MAX_DEPTH - 1, kind="dict"), id="just-under-dict"),
        pytest.param({"k": nested(MAX_DEPTH - 1)}, id="exactly-at-the-limit"),
        pytest.param({str(i): i for i in range(200_000)}, id="huge-but-shallow-dict"),
        pytest.param({"k": list(range(200_000))}, id="huge-but-shallow-list"),
    ],
)
def test_values_within_the_limit_pass_whole(executor: ToolExecutor, value: Any) -> None:
    result = executor.execute(Echo(), {"data": value}, raise_on_failure=False)
    assert result.succeeded, result.error
    assert result.output == {"data": value}


@pytest.mark.parametrize(
    ("inputs", "path", "shown"),
    [
        pytest.param({"lat": NAN}, "lat", "nan", id="nan-within-bounds"),
        pytest.param({"lat": -INF}, "lat", "-inf", id="minus-infinity"),
        pytest.param({"ratio": INF}, "ratio", "inf", id="unbounded-float"),
        pytest.param({"scores": [1.0, NAN]}, "scores[1]", "nan", id="list-items"),
        pytest.param({"data": {"a": [0.5, {"b": INF}]}}, "data.a[1].b", "inf", id="free-form"),
        pytest.param({"items": [NAN]}, "items[0]", "nan", id="free-form-list"),
        pytest.param({"rows": [{"x": -INF}]}, "rows[0].x", "-inf", id="dictionary-items"),
    ],
)
def test_non_finite_numbers_are_refused_where_they_are(
    executor: ToolExecutor, inputs: dict[str, Any], path: str, shown: str
) -> None:
    result = executor.execute(Echo(), inputs, raise_on_failure=False)
    assert not result.succeeded
    assert f"Parameter '{path}': expected a finite number, got {shown}" in str(result.error)


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        pytest.param({"value": NAN}, "'value': expected a finite number, got nan", id="float"),
        pytest.param({"data": {"x": [INF]}}, "'data.x[0]': expected a finite", id="free-form"),
        pytest.param({"data": nested(700, kind="dict")}, "'data': nested more", id="too-deep"),
    ],
)
def test_outputs_are_held_to_the_same_rules(
    executor: ToolExecutor, output: Any, problem: str
) -> None:
    result = executor.execute(Returns(output), {}, raise_on_failure=False)
    assert not result.succeeded
    assert "Tool 'returns' returned invalid output" in str(result.error)
    assert f"Parameter {problem}" in str(result.error)


class _Own:
    """An object of a Python tool's own, which JSON has no form for."""


class _Str(str):
    pass


class _Int(int):
    pass


class _Float(float):
    pass


JSON_VALUE = "expected a JSON value (a string, number, boolean, null, list or dictionary)"

NOT_JSON = [
    pytest.param(b"k3y", "'bytes'; decode bytes to a string (or base64-encode them)", id="bytes"),
    pytest.param(bytearray(b"x"), "'bytearray'; decode bytes", id="bytearray"),
    pytest.param(memoryview(b"x"), "'memoryview'; decode bytes", id="memoryview"),
    pytest.param({1, 2}, "'set'; give a list", id="set"),
    pytest.param(frozenset(), "'frozenset'; give a list", id="frozenset"),
    pytest.param((1, 2), "'tuple'; give a list", id="tuple"),
    pytest.param(datetime.datetime(2026, 1, 2), "'datetime'; give its isoformat()", id="datetime"),
    pytest.param(datetime.date(2026, 1, 2), "'date'; give its isoformat() string", id="date"),
    pytest.param(decimal.Decimal("1.5"), "'Decimal'", id="decimal"),
    pytest.param(MappingProxyType({"a": 1}), "'mappingproxy'; give a dict", id="mapping-proxy"),
    pytest.param(_Own(), "'_Own'", id="an-object-of-its-own"),
    pytest.param(iter([1]), "'list_iterator'", id="an-iterator"),
    pytest.param((n for n in [1]), "'generator'", id="a-generator"),
    pytest.param(ValueError("x"), "'ValueError'", id="an-exception"),
]

# Where a value sits: (the answer, the path a message names), for the one schema
# of Echo's output and Free's (none at all).
PLACES = [
    pytest.param(lambda bad: {"data": {"blob": bad}}, "data.blob", id="in-a-free-form-dict"),
    pytest.param(lambda bad: {"data": {"a": [1, {"b": bad}]}}, "data.a[1].b", id="deep"),
    pytest.param(lambda bad: {"items": ["x", bad]}, "items[1]", id="in-a-free-form-list"),
    pytest.param(lambda bad: {"rows": [{"x": bad}]}, "rows[0].x", id="in-dictionary-items"),
    pytest.param(lambda bad: {"box": {"inner": [bad]}}, "box.inner[0]", id="in-a-declared-dict"),
]


class Free(Tool):
    """A tool without schemas (the chapter's ``= None``): any argument, any answer that is JSON."""

    TOOL_NAME = "free"
    INPUT_SCHEMA = None
    OUTPUT_SCHEMA = None

    def __init__(self, output: Any = None) -> None:
        super().__init__()
        self.output = output

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        return self.output if self.output is not None else dict(inputs)


class Answers(Tool):
    TOOL_NAME = "answers"
    OUTPUT_SCHEMA = Echo.INPUT_SCHEMA

    def __init__(self, output: dict[str, Any]) -> None:
        super().__init__()
        self.output = output

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return self.output


def _both_ways(tool: Tool, inputs: dict[str, Any]) -> list[ToolResult]:
    """The call on the one stretch and through the steps (a listener sends it there)."""
    return [
        ToolExecutor(credentials={}).execute(tool, inputs, raise_on_failure=False),
        ToolExecutor(credentials={}, listeners=[lambda event: None]).execute(
            tool, inputs, raise_on_failure=False
        ),
    ]


@pytest.mark.parametrize(("bad", "got"), NOT_JSON)
@pytest.mark.parametrize(("place", "path"), PLACES)
@pytest.mark.parametrize("direction", ["input", "output"])
def test_a_value_json_has_no_form_for_is_refused_where_it_is(
    bad: Any, got: str, place: Callable[[Any], dict[str, Any]], path: str, direction: str
) -> None:
    """An argument from Python and a tool's answer are held to one rule, and the
    refusal names the tool, the place, the type found and what is allowed."""
    given = place(bad)
    tool: Tool = Echo() if direction == "input" else Answers(given)
    for result in _both_ways(tool, given if direction == "input" else {}):
        assert not result.succeeded
        error = result.error
        assert isinstance(error, ToolValidationError)
        assert (error.tool_name, error.direction) == (tool.name, direction)
        [problem] = error.problems
        assert problem.path == path
        assert problem.message.startswith(f"Parameter '{path}': {JSON_VALUE}, got {got}")
        json.dumps(result.to_dict())  # the failure itself is JSON
    assert not hasattr(tool, "called")


@pytest.mark.parametrize(("bad", "got"), NOT_JSON)
def test_a_free_form_answer_holds_json_alone(bad: Any, got: str) -> None:
    """A tool without an output schema still answers in JSON: printed, served, dispatched."""
    for result in _both_ways(Free({"ok": 1, "data": {"k": [bad]}}), {}):
        assert not result.succeeded
        assert isinstance(result.error, ToolValidationError)
        assert (
            f"Tool 'free' returned invalid output:\n  - Parameter 'data.k[0]': {JSON_VALUE}, got {got}"
            in str(result.error)
        )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param(
            {1: "a"},
            "expected a dictionary with string keys, got a key of type 'int'",
            id="top-level-int-key",
        ),
        pytest.param(
            {"a": {(1, 2): 3}},
            "Parameter 'a': expected a dictionary with string keys, got a key of type 'tuple'",
            id="tuple-key",
        ),
        pytest.param(
            {"a": [{None: 1}]},
            "Parameter 'a[0]': expected a dictionary with string keys, got a key of type 'NoneType'",
            id="none-key-in-a-list",
        ),
        pytest.param(
            {"a": {True: 1}},
            "Parameter 'a': expected a dictionary with string keys, got a key of type 'bool'; JSON keys are strings",
            id="bool-key",
        ),
        pytest.param(
            {"x": float("nan")}, "Parameter 'x': expected a finite number, got nan", id="nan"
        ),
        pytest.param(
            {"x": nested(MAX_DEPTH + 1)},
            "Parameter 'x': nested more than 64 levels deep",
            id="too-deep",
        ),
    ],
)
def test_a_free_form_answer_is_held_to_the_free_form_rules(answer: Any, message: str) -> None:
    for result in _both_ways(Free(answer), {}):
        assert not result.succeeded
        assert f"\n  - {message}" in str(result.error)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"data": {1: "a"}}, id="int-key"),
        pytest.param({"data": {"k": {("a",): 1}}}, id="tuple-key-nested"),
        pytest.param({"items": [{2.5: "x"}]}, id="float-key-in-a-list"),
    ],
)
def test_a_key_that_is_not_a_string_is_refused_both_ways(value: dict[str, Any]) -> None:
    for result in [*_both_ways(Echo(), value), *_both_ways(Answers(value), {})]:
        assert not result.succeeded
        assert "expected a dictionary with string keys, got a key of type" in str(result.error)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(_Str("text"), id="a-str-subclass"),
        pytest.param(_Int(7), id="an-int-subclass"),
        pytest.param(_Float(2.5), id="a-float-subclass"),
        pytest.param({_Str("key"): 1}, id="a-str-subclass-key"),
    ],
)
def test_subclasses_of_json_types_are_json(value: Any) -> None:
    """As a declared ``string`` takes a ``str`` subclass, a free-form value does: json.dumps
    writes each as its value."""
    given = {"data": {"v": [value]}}
    for result in [
        *_both_ways(Echo(), given),
        *_both_ways(Answers(given), {}),
        *_both_ways(Free(given), {}),
    ]:
        assert result.succeeded, result.error
        assert json.loads(json.dumps(result.to_dict()))["output"] == json.loads(json.dumps(given))


def test_a_float_subclass_must_be_finite_too() -> None:
    [result, _] = _both_ways(Answers({"data": {"v": _Float("nan")}}), {})
    assert "Parameter 'data.v': expected a finite number, got nan" in str(result.error)


def test_a_free_form_input_is_the_tools_own_business() -> None:
    """``INPUT_SCHEMA = None`` checks nothing (the tool checks its own inputs): a
    Python caller may hand it anything; only what it answers must be JSON."""
    own = _Own()
    seen: list[dict[str, Any]] = []

    class Takes(Free):
        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
            seen.append(inputs)
            return {"kind": type(inputs["x"]).__name__}

    given: dict[Any, Any] = {"x": own, 1: b"y"}
    for result in _both_ways(Takes(), given):
        assert result.succeeded, result.error
        assert result.output == {"kind": "_Own"}
    assert all(inputs["x"] is own for inputs in seen)


def test_a_plain_free_form_answer_is_a_copy() -> None:
    answer: dict[str, Any] = {"a": [1, {"b": "c"}], "d": {"e": None}}
    for result in _both_ways(Free(answer), {}):
        assert result.output == answer
        assert result.output is not answer
        assert result.output["a"] is not answer["a"]
        assert result.output["a"][1] is not answer["a"][1]


def test_checked_object_names_each_value_by_its_key() -> None:
    errors: list[Problem] = []
    copied = checked_object({"a": [1, b"x"], "b": 2, 3: "c"}, errors)
    assert copied == {"a": [1, b"x"], "b": 2}
    assert [problem.path for problem in errors] == ["a[1]", ""]


def test_a_flood_of_values_json_has_no_form_for_gives_a_few_messages() -> None:
    errors: list[Problem] = []
    checked_copy({str(i): b"x" for i in range(10_000)}, "data", errors)
    assert 0 < len(errors) <= 25
    errors = []
    checked_copy(dict.fromkeys(range(10_000), 1), "data", errors)
    assert 0 < len(errors) <= 25


def test_a_free_form_list_is_copied_in_and_out(executor: ToolExecutor) -> None:
    """A list of leaves and a list of containers, each a copy both ways."""
    given = {"data": {"leaves": ["a", 1, True, None, 2.5], "rows": [{"k": [1]}, ["x"]]}}
    seen: list[dict[str, Any]] = []

    class Keeps(Echo):
        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            seen.append(inputs)
            return {"data": inputs["data"]}

    result = executor.execute(Keeps(), given)
    assert result.output == given
    theirs = {id(container) for container in _containers(given)}
    tools = {id(container) for container in _containers(seen[0])}
    ours = {id(container) for container in _containers(result.output)}
    assert not theirs & tools  # copied in
    assert not tools & ours  # copied out
    assert not theirs & ours


def test_a_schema_validate_refuses_nan_in_place() -> None:
    schema = ToolSchema.from_dict({"parameters": [{"name": "x", "type": "float"}]})
    assert schema.validate({"x": NAN}) == ["Parameter 'x': expected a finite number, got nan"]


def test_free_form_values_are_copied_not_shared() -> None:
    original = {"a": [1, {"b": 2}]}
    errors: list[Problem] = []
    copied = checked_copy(original, "data", errors)
    assert copied == original
    assert not errors
    assert copied["a"] is not original["a"]
    assert copied["a"][1] is not original["a"][1]


def _containers(value: Any) -> Iterator[Any]:
    if isinstance(value, (dict, list)):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(
            [[1], "x", {"a": [2.5]}, None, [[], {}], True], id="containers-between-scalars"
        ),
        pytest.param({"a": 1, "b": [1, [2, {"c": None}]], "d": {"e": {}}}, id="dicts-in-lists"),
        pytest.param(["a", "b", 1.5, [3]], id="a-container-last"),
        pytest.param([], id="empty"),
    ],
)
def test_plain_copy_copies_each_container_to_its_place(value: Any) -> None:
    copied = plain_copy(value)
    assert copied == value
    assert json.dumps(copied) == json.dumps(value)  # the same order, every item in its place
    theirs = {id(container) for container in _containers(value)}
    assert not any(id(container) in theirs for container in _containers(copied))


@pytest.mark.parametrize(
    "value",
    [
        pytest.param([1, _Str("x")], id="a-str-subclass-in-a-list"),
        pytest.param({"a": {"b": _Int(1)}}, id="an-int-subclass-two-levels-down"),
        pytest.param([1, (2, 3)], id="a-tuple"),
        pytest.param({"a": [1.0, NAN]}, id="nan"),
        pytest.param([[-INF]], id="minus-infinity"),
        pytest.param({"a": nested(MAX_DEPTH)}, id="past-the-bound"),
        pytest.param({"a": {1: "x"}}, id="an-int-key"),
        pytest.param([{"a": 1, ("b",): 2}], id="a-tuple-key-in-a-list"),
        pytest.param({"a": {_Str("k"): 1}}, id="a-str-subclass-key"),
    ],
)
def test_plain_copy_declines_what_is_not_plain_json(value: Any) -> None:
    """Declined, for checked_copy to judge with its messages (or copy as it is)."""
    assert plain_copy(value) is None


@pytest.mark.parametrize("kind", ["list", "dict"])
@pytest.mark.parametrize("inner", ["list", "dict"])
def test_plain_copy_takes_exactly_max_depth_levels(kind: str, inner: str) -> None:
    """The bound is the same whichever kinds of container nest: 64 levels copied, 65 not."""
    deepest = nested(MAX_DEPTH - 1, kind=inner)
    value = [deepest] if kind == "list" else {"k": deepest}
    copied = plain_copy(value)
    assert copied == value
    assert plain_copy([value] if kind == "list" else {"k": value}) is None


@pytest.mark.parametrize(
    ("copy_of", "value"),
    [
        pytest.param(
            plain_dict_copy, {"a": "x", "b": 1, "c": True, "d": None, "e": 2.5}, id="dict"
        ),
        pytest.param(plain_list_copy, ["x", 1, True, None, 2.5], id="list-of-leaves"),
        pytest.param(plain_list_copy, ["x", {"a": [1]}, [2.5], "y"], id="list-of-containers"),
        pytest.param(plain_dict_copy, {"a": {"b": ["c", {"d": []}]}}, id="dict-of-containers"),
    ],
)
def test_each_walker_copies_every_container(copy_of: Any, value: Any) -> None:
    copied = copy_of(value)
    assert json.dumps(copied) == json.dumps(value)
    theirs = {id(container) for container in _containers(value)}
    assert not any(id(container) in theirs for container in _containers(copied))


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(NAN, id="nan"),
        pytest.param(INF, id="infinity"),
        pytest.param((1,), id="tuple"),
        pytest.param(b"x", id="bytes"),
        pytest.param({1, 2}, id="set"),
    ],
)
@pytest.mark.parametrize("where", ["first", "after-a-container", "deep"])
def test_each_walker_declines_a_bad_value_wherever_it_is(bad: Any, where: str) -> None:
    place: dict[str, Any] = {
        "first": {"a": bad, "b": [1]},
        "after-a-container": {"a": [1], "b": ["x", {"c": 1}, bad]},
        "deep": {"a": nested(5, bad, kind="dict")},
    }
    assert plain_dict_copy(place[where]) is None
    assert plain_list_copy([place[where]]) is None
    assert plain_list_copy(["x", bad] if where == "first" else [[1], bad]) is None


def test_a_flood_of_bad_numbers_gives_a_few_messages() -> None:
    errors: list[Problem] = []
    checked_copy([NAN] * 100_000, "xs", errors)
    assert 0 < len(errors) <= 25


# -- result mode never raises --------------------------------------------------------------------


class Recursing(Mapping[str, Any]):
    """Inputs whose every read recurses: a walk nobody bounded."""

    def __getitem__(self, key: str) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    def __iter__(self) -> Iterator[str]:
        raise RecursionError("maximum recursion depth exceeded")

    def __len__(self) -> int:
        return 1


def test_a_recursion_error_anywhere_in_a_call_is_a_clean_failure(executor: ToolExecutor) -> None:
    result = executor.execute(Echo(), Recursing(), raise_on_failure=False)
    assert not result.succeeded
    assert "nested too deeply" in str(result.error)


def test_execute_many_keeps_every_other_result(executor: ToolExecutor) -> None:
    results = executor.execute_many(
        [
            (Adder(), {"a": 1}),
            (Echo(), {"data": nested(900, kind="dict")}),
            (Echo(), Recursing()),
            (Adder(), {"a": 2, "b": 2}),
        ]
    )
    assert [r.succeeded for r in results] == [True, False, False, True]
    assert results[3].output == {"sum": 4.0}


# -- JSON from the model -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param('{"x": NaN}', "NaN is not a number JSON allows", id="nan"),
        pytest.param('{"x": Infinity}', "Infinity is not", id="infinity"),
        pytest.param('{"x": [-Infinity]}', "-Infinity is not", id="minus-infinity-in-list"),
        pytest.param('{"x": 1e400}', "too large for a float", id="overflow"),
        pytest.param('{"x": -2.5E+999}', "too large for a float", id="negative-overflow"),
        pytest.param("[" * 100_000 + "]" * 100_000, "nested more than 64", id="deep-parser"),
        pytest.param("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested more", id="deep"),
    ],
)
def test_loads_refuses_what_json_loads_lets_through(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        loads(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"x": 1.5e300, "y": -0.0}', id="large-finite"),
        pytest.param("[" * MAX_DEPTH + "]" * MAX_DEPTH, id="at-the-limit"),
        pytest.param('{"NaN": "Infinity"}', id="words-in-strings"),
    ],
)
def test_loads_keeps_what_json_means(text: str) -> None:
    assert loads(text) == json.loads(text)


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([Adder(), Echo()])


DEEP_TEXT = '{"data": ' + "[" * 5000 + "]" * 5000 + "}"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(DEEP_TEXT, "nested more than 64 levels deep", id="deep-json"),
        pytest.param('{"a": NaN}', "NaN is not a number JSON allows", id="nan-token"),
        pytest.param('{"a": 1e999}', "too large for a float", id="overflow"),
    ],
)
def test_openai_dispatch_answers_every_call_when_one_is_hostile(
    registry: ToolRegistry, executor: ToolExecutor, arguments: str, expected: str
) -> None:
    calls: list[dict[str, Any]] = [
        {"id": "good", "function": {"name": "add", "arguments": '{"a": 1}'}},
        {"id": "bad", "function": {"name": "add", "arguments": arguments}},
    ]
    replies = dispatch_openai(calls, registry, executor)
    assert replies[0]["content"] == '{"sum": 1.0}'
    assert expected in replies[1]["content"]
    responses = dispatch_openai_responses(
        [{"type": "function_call", "call_id": c["id"], **c["function"]} for c in calls],
        registry,
        executor,
    )
    assert [r["output"] for r in responses] == [r["content"] for r in replies]


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        pytest.param({"data": nested(600, kind="dict")}, "nested more than 64", id="deep"),
        pytest.param({"lat": NAN}, "expected a finite number, got nan", id="nan"),
    ],
)
def test_anthropic_dispatch_answers_every_call_when_one_is_hostile(
    registry: ToolRegistry, executor: ToolExecutor, inputs: dict[str, Any], expected: str
) -> None:
    blocks = [
        {"type": "tool_use", "id": "bad", "name": "echo", "input": inputs},
        {"type": "tool_use", "id": "good", "name": "add", "input": {"a": 3}},
    ]
    replies = dispatch_anthropic(blocks, registry, executor)
    assert replies[0]["is_error"] is True
    assert expected in replies[0]["content"]
    assert replies[1]["content"] == '{"sum": 3.0}'


# -- the bound, proved where a regression cannot take the test run down ------------------------


def test_a_million_levels_fail_cleanly_within_memory_and_time() -> None:
    child = run_bounded(
        """
        from agentkit import ToolExecutor, ToolRegistry
        from agentkit.adapters.dispatch import dispatch_openai
        from tests.test_jsonvalues import Echo, nested
        deep = nested(1_000_000, kind="dict")
        executor = ToolExecutor(credentials={})
        for inputs in ({"data": deep}, {"items": [deep]}, {"rows": [deep]}):
            result = executor.execute(Echo(), inputs, raise_on_failure=False)
            assert not result.succeeded, result
        text = '{"data": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}"
        replies = dispatch_openai(
            [{"id": "1", "function": {"name": "echo", "arguments": text}}],
            ToolRegistry([Echo()]),
            executor,
        )
        assert "nested more than 64" in replies[0]["content"], replies
        print("clean")
        """
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.strip() == "clean"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        pytest.param("minimum", NAN, id="nan-minimum"),
        pytest.param("maximum", INF, id="infinite-maximum"),
        pytest.param("minimum", -INF, id="minus-infinite-minimum"),
    ],
)
def test_a_bound_must_be_finite(key: str, value: float) -> None:
    definition = {"parameters": [{"name": "x", "type": "float", key: value}]}
    with pytest.raises(SchemaDefinitionError, match=rf"parameters\[0\]\.{key}.*expected a finite"):
        ToolSchema.from_dict(definition)


@pytest.mark.parametrize("default", [NAN, INF, [NAN]], ids=["nan", "inf", "in-a-list"])
def test_a_default_must_be_finite(default: Any) -> None:
    kind = "list" if isinstance(default, list) else "float"
    definition = {
        "parameters": [{"name": "x", "type": kind, "required": False, "default": default}]
    }
    with pytest.raises(SchemaDefinitionError, match=r"invalid default: .*expected a finite number"):
        ToolSchema.from_dict(definition)


@pytest.mark.parametrize(
    "inputs",
    [
        pytest.param({"data": nested(5000, kind="dict")}, id="deep-declared"),
        pytest.param({"undeclared": nested(5000)}, id="deep-undeclared"),
    ],
)
def test_a_failed_call_is_recorded_with_its_deep_parts_cut(inputs: dict[str, Any]) -> None:
    executor = ToolExecutor(credentials={})
    recorder = ExecutionRecorder(executor)
    result = executor.execute(Echo(), inputs, raise_on_failure=False)
    assert not result.succeeded
    (call,) = recorder.calls
    assert call.status == "failure"
    json.dumps(call.inputs)  # every listener can walk what it was given


def test_containers_copied_shares_no_list_or_dict_and_every_other_value() -> None:
    class Labels(dict[str, Any]):
        pass

    raw = b"bytes"
    thing = object()
    given: dict[Any, Any] = {"xs": [1, [2]], "labels": Labels(a=[3]), "raw": raw, 1: (thing,)}
    copied = containers_copied(given)
    assert copied == given
    assert copied["xs"] is not given["xs"]
    assert copied["xs"][1] is not given["xs"][1]
    assert type(copied["labels"]) is dict
    assert copied["labels"]["a"] is not given["labels"]["a"]
    assert copied["raw"] is raw
    assert copied[1] is given[1]  # a tuple is no list or dict: shared as it is


def test_containers_copied_stops_at_the_depth_bound() -> None:
    deep: Any = ["bottom"]
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    copied = containers_copied({"deep": deep})
    level, original = copied["deep"], deep
    for _ in range(MAX_DEPTH - 1):
        assert level is not original
        level, original = level[0], original[0]
    assert level is original  # past the bound, shared: no walk without end
