"""The fast tier (``ToolSchema.fast_check``) and the executor's one stretch, against the full tier.

The fast tier takes plainly valid values whole, nested ones included, and
declines everything else. Each test here holds it to the full tier: what it
takes, it takes exactly as the full tier would (the same values, types and key
order, in a copy that shares nothing with the caller's), and what it declines,
the full tier refuses. The full tier is reached on its own by handing it the
same values in subclasses of ``dict`` and ``list``, which the fast tier never
takes and the full tier checks like any others.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentkit import SchemaDefinitionError, Tool, ToolExecutor, ToolSchema, ToolValidationError
from agentkit.jsonvalues import MAX_DEPTH
from agentkit.toolschema import Checked
from benchmarks import bench_executor

NAN, INF = float("nan"), float("inf")


class _Dict(dict[Any, Any]):
    """A dict the fast tier declines: its values go to the full tier alone."""


class _List(list[Any]):
    """A list the fast tier declines."""


def full_tier(schema: ToolSchema, values: Any) -> Checked:
    """``schema``'s full tier alone on ``values``: every dict and list handed in as a subclass."""
    return schema.check(_declined(values))


def _declined(value: Any) -> Any:
    if type(value) is dict:
        return _Dict((key, _declined(item)) for key, item in value.items())
    if type(value) is list:
        return _List(_declined(item) for item in value)
    return value


def same(left: Any, right: Any) -> bool:
    """Equal and of the same types all the way down, keys in the same order
    (``==`` finds ``1 == 1.0 == True`` and ``{"a": 1, "b": 2} == {"b": 2, "a": 1}``)."""
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        return list(left) == list(right) and all(same(left[key], right[key]) for key in left)
    if type(left) is list:
        return len(left) == len(right) and all(map(same, left, right))
    if type(left) is float:
        if math.isnan(left) or math.isnan(right):
            return math.isnan(left) and math.isnan(right)
        return left == right and math.copysign(1, left) == math.copysign(1, right)
    return bool(left == right)


def containers(value: Any) -> Iterator[Any]:
    """Every list and dict in ``value``, itself included."""
    if isinstance(value, (dict, list)):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from containers(item)


def assert_shares_nothing(copied: Any, original: Any) -> None:
    theirs = {id(container) for container in containers(original)}
    assert not any(id(container) in theirs for container in containers(copied))


# -- schemas and values to try ----------------------------------------------------------------

NAMES = ["a", "b", "c", "d"]
JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
# What a model or a caller gets wrong: bools for numbers, non-finite floats, an
# integer no float holds, nesting past the bound; and what only a Python caller or
# tool can give: values JSON has no form for, keys that are not strings.
NOISE = (
    st.sampled_from(
        [None, True, False, NAN, INF, -INF, 10**400, "7", 7, 2.5, [], {}, [NAN], {"x": [INF]}]
    )
    | st.builds(lambda depth: _nested(depth), st.sampled_from([MAX_DEPTH - 1, MAX_DEPTH, 70]))
    | st.sampled_from(
        [b"x", (1, 2), {1, 2}, object, ["a", b"x"], {"k": (1,)}, {1: "a"}, [{"a": 1, (2,): 3}]]
    )
)


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def elements(draw: st.DrawFn, level: int) -> dict[str, Any]:
    """A parameter definition without its name: any type, constraints, nesting."""
    kinds = ["string", "integer", "float", "boolean", "union"]
    if level < 3:
        kinds += ["list", "dictionary"]
    kind = draw(st.sampled_from(kinds))
    if kind == "union":
        union: dict[str, Any] = {
            "type": draw(
                st.sampled_from(
                    [
                        ["string", "integer"],
                        ["integer", "float"],
                        ["string", "list"],
                        ["boolean", "float"],
                        ["string", "dictionary"],
                        ["list", "dictionary"],
                    ]
                )
            )
        }
        if "dictionary" in union["type"] and level < 3 and draw(st.booleans()):
            union["parameters"] = draw(parameter_lists(level + 1))
        return union
    definition: dict[str, Any] = {"type": kind}
    if kind == "string":
        if draw(st.booleans()):
            definition["enum"] = ["x", "y", "zz"]
            return definition
        if draw(st.booleans()):
            definition["pattern"] = "[a-c]{1,3}"
        if draw(st.booleans()):
            definition["min_length"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            definition["max_length"] = draw(st.integers(2, 4))
    elif kind in ("integer", "float"):
        if draw(st.integers(0, 3)) == 0:
            definition["enum"] = [1, 2, 30] if kind == "integer" else [0.5, 1.0, 2]
        else:
            if draw(st.booleans()):
                definition["minimum"] = -5
            if draw(st.booleans()):
                definition["maximum"] = 100 if kind == "integer" else 10.5
    elif kind == "list" and draw(st.booleans()):
        definition["items"] = draw(elements(level + 1))
    elif kind == "dictionary" and draw(st.booleans()):
        definition["parameters"] = draw(parameter_lists(level + 1))
    return definition


@st.composite
def parameter_lists(draw: st.DrawFn, level: int = 0) -> list[dict[str, Any]]:
    params = []
    for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=4)):
        param = {"name": name, **draw(elements(level))}
        if draw(st.booleans()):
            param["required"] = False
            if draw(st.booleans()):
                default = draw(valid_values(param))
                if default is not None:
                    param["default"] = default
        params.append(param)
    return params


@st.composite
def schemas(draw: st.DrawFn) -> ToolSchema:
    try:
        return ToolSchema.from_dict({"parameters": draw(parameter_lists())})
    except SchemaDefinitionError:  # a default the parameter refuses
        assume(False)
        raise


def valid_values(definition: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values ``definition`` takes (mostly: nested values are ``candidates``)."""
    kind = definition["type"]
    if isinstance(kind, list):
        # Each member with what the union declares for it (a dictionary its parameters).
        return st.one_of([valid_values({**definition, "type": member}) for member in kind])
    if "enum" in definition:
        return st.sampled_from(definition["enum"])
    if kind == "string":
        low, high = definition.get("min_length", 0), definition.get("max_length", 5)
        if "pattern" in definition:
            matching = st.from_regex(definition["pattern"], fullmatch=True)
            return matching.filter(lambda text: low <= len(text) <= high)
        # Characters past the BMP too: a length counts code points, not UTF-16 units.
        return st.text(st.characters(codec="utf-8"), min_size=low, max_size=high)
    if kind in ("integer", "float"):
        low, high = definition.get("minimum", -(10**6)), definition.get("maximum", 10**6)
        integers = st.integers(math.ceil(low), math.floor(high))
        if kind == "integer":
            return integers
        return integers | st.floats(low, high, allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "list":
        if "items" in definition:
            return st.lists(candidates(definition["items"]), max_size=4)
        return st.lists(JSON_VALUES, max_size=3)
    if "parameters" in definition:
        return objects(definition["parameters"])
    return st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=3)


def candidates(definition: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Mostly values ``definition`` takes, sometimes a mistake."""
    valid = valid_values(definition)
    return st.one_of(valid, valid, valid, NOISE, JSON_VALUES)


@st.composite
def objects(draw: st.DrawFn, params: list[dict[str, Any]]) -> dict[str, Any]:
    """A dict for ``params``: each required one given, each optional one given, None or not."""
    values: dict[str, Any] = {}
    for param in draw(st.permutations(params)):
        if param.get("required", True) or draw(st.booleans()):
            values[param["name"]] = draw(candidates(param)) if draw(st.integers(0, 5)) else None
    if draw(st.integers(0, 7)) == 0:
        values[draw(st.sampled_from(["e", "aa", "B"]))] = draw(JSON_SCALARS)
    if params and draw(st.integers(0, 7)) == 0:
        values.pop(draw(st.sampled_from(params))["name"], None)
    return values


@st.composite
def schemas_and_values(draw: st.DrawFn) -> tuple[ToolSchema, dict[str, Any]]:
    schema = draw(schemas())
    return schema, draw(objects([param.to_dict() for param in schema]))


# -- the fast tier against the full tier ------------------------------------------------------


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas_and_values())
def test_the_fast_tier_takes_exactly_what_the_full_tier_takes(
    case: tuple[ToolSchema, dict[str, Any]],
) -> None:
    schema, given = case
    before = copy.deepcopy(given)
    fast = schema.fast_check(given)
    full = full_tier(schema, given)
    assert same(given, before)  # neither changed what it was given
    if fast is None:
        # Every value here is plain JSON: only a problem sends it to the full tier.
        assert full.problems
        return
    assert not full.problems
    assert same(fast, full.values)
    assert_shares_nothing(fast, given)
    assert schema.check(given) == (fast, ())  # check runs the same fast tier


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas_and_values())
def test_the_executor_says_what_the_full_tier_says(
    case: tuple[ToolSchema, dict[str, Any]],
) -> None:
    schema, given = case
    echo = echo_tool(schema)
    before = copy.deepcopy(given)
    plain = ToolExecutor(credentials={}).execute(echo, given, raise_on_failure=False)
    # A listener sends the call through the steps, the path that is not the one stretch.
    stepped = ToolExecutor(credentials={}, listeners=[lambda event: None]).execute(
        echo, given, raise_on_failure=False
    )
    assert same(given, before)
    full = full_tier(schema, given)
    assert plain.succeeded == stepped.succeeded == (not full.problems)
    if plain.succeeded:
        assert same(plain.output, full.values)
        assert same(stepped.output, full.values)
        assert_shares_nothing(plain.output, given)
    else:
        assert str(plain.error) == str(stepped.error)
        assert str(plain.error) == str(ToolValidationError("echo", "input", full.problems))


def echo_tool(schema: ToolSchema) -> Tool:
    class Echo(Tool):
        TOOL_NAME = "echo"
        INPUT_SCHEMA = schema.to_dict()
        OUTPUT_SCHEMA = schema.to_dict()

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return inputs

    return Echo()


# -- each guarantee, on the one stretch and through the steps --------------------------------

ROW = {
    "type": "dictionary",
    "parameters": [
        {"name": "name", "type": "string", "min_length": 1, "max_length": 8},
        {"name": "count", "type": "integer", "minimum": 0},
        {"name": "score", "type": "float"},
        {"name": "note", "type": "string", "required": False},
        {"name": "extra", "type": "dictionary", "required": False, "default": {}},
    ],
}
FILTERS = {
    "type": "dictionary",
    "parameters": [
        {"name": "kind", "type": "string", "enum": ["open", "closed"]},
        {"name": "limit", "type": "integer", "required": False, "default": 10},
        {
            "name": "window",
            "type": "dictionary",
            "parameters": [
                {"name": "start", "type": "integer"},
                {"name": "end", "type": "integer"},
            ],
        },
    ],
}
PARAMETERS = [
    {"name": "q", "type": "string"},
    {"name": "tags", "type": "list", "items": {"type": "string"}},
    {"name": "rows", "type": "list", "items": ROW},
    {"name": "filters", **FILTERS},
    {"name": "data", "type": "dictionary", "required": False},
    {"name": "ratio", "type": "float", "required": False, "default": 0.5},
]


def values(**changes: Any) -> dict[str, Any]:
    """Valid values of every kind the fast tier inlines, with ``changes`` made."""
    given: dict[str, Any] = {
        "q": "weather",
        "tags": ["a", "b", "c"],
        "rows": [
            {"name": "x", "count": 1, "score": 0.5, "note": "n", "extra": {"k": [1, {"m": 2.5}]}},
            {"name": "y", "count": 2, "score": 3},
        ],
        "filters": {"kind": "open", "window": {"start": 1, "end": 9}},
        "data": {"nested": {"list": [1, "two", 3.0, None, True]}},
    }
    given.update(changes)
    return given


def changed(path: str, value: Any) -> dict[str, Any]:
    """``values()`` with the value at ``path`` (``rows[1].score``) replaced."""
    given = values()
    parent, last = _parent(given, path)
    parent[last] = value
    return given


def removed(path: str) -> dict[str, Any]:
    """``values()`` without the value at ``path``."""
    given = values()
    parent, last = _parent(given, path)
    del parent[last]
    return given


def _parent(given: dict[str, Any], path: str) -> tuple[Any, str | int]:
    *steps, last = _steps(path)
    parent: Any = given
    for step in steps:
        parent = parent[step]
    return parent, last


def _steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    for part in path.replace("[", ".[").split("."):
        steps.append(int(part[1:-1]) if part.startswith("[") else part)
    return steps


class Rows(Tool):
    TOOL_NAME = "rows"
    INPUT_SCHEMA = {"parameters": PARAMETERS}
    OUTPUT_SCHEMA = {"parameters": PARAMETERS}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return inputs


class Returns(Tool):
    """Takes nothing; returns ``self.output`` (the output checked against PARAMETERS)."""

    TOOL_NAME = "returns"
    INPUT_SCHEMA = {"parameters": []}
    OUTPUT_SCHEMA = {"parameters": PARAMETERS}

    def __init__(self, output: Any) -> None:
        super().__init__()
        self.output = output

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        return self.output


def both_ways(tool: Tool, given: dict[str, Any]) -> Any:
    """The call's output, or its error message -- the same on the one stretch and
    through the steps (a listener sends it there), or this fails."""
    plain = ToolExecutor(credentials={}).execute(tool, given, raise_on_failure=False)
    stepped = ToolExecutor(credentials={}, listeners=[lambda event: None]).execute(
        tool, given, raise_on_failure=False
    )
    if plain.succeeded:
        assert stepped.succeeded
        assert same(plain.output, stepped.output)
        return plain.output
    assert str(plain.error) == str(stepped.error)
    return str(plain.error)


def call(direction: str, given: dict[str, Any]) -> Any:
    """``given`` as the input of ``Rows`` or as the output of ``Returns``: ``both_ways``."""
    return both_ways(Rows(), given) if direction == "input" else both_ways(Returns(given), {})


def test_the_valid_values_take_the_fast_tier() -> None:
    assert Rows().input_schema.fast_check(values()) is not None


def vandalise(value: Any) -> None:
    """Change every list and dict in ``value``, all the way down."""
    for container in list(containers(value)):
        if isinstance(container, dict):
            container["vandal"] = True
        else:
            container.append("vandal")


class Vandal(Tool):
    TOOL_NAME = "vandal"
    INPUT_SCHEMA = {"parameters": PARAMETERS}
    OUTPUT_SCHEMA = None

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        vandalise(inputs)
        return {}


@pytest.mark.parametrize(
    "given",
    [
        pytest.param(values(), id="plain"),
        pytest.param(values(ratio=2), id="an-integer-for-a-float"),
        pytest.param(_declined(values()), id="subclasses-take-the-full-tier"),
        pytest.param(removed("rows[0].extra"), id="a-default-filled-in"),
        pytest.param(changed("rows[0].note", None), id="none-for-an-optional"),
    ],
)
@pytest.mark.parametrize("listeners", [[], [lambda event: None]], ids=["one-stretch", "steps"])
def test_the_tool_cannot_change_the_callers_values(
    given: dict[str, Any], listeners: list[Any]
) -> None:
    before = copy.deepcopy(given)
    held = list(containers(given))
    result = ToolExecutor(credentials={}, listeners=listeners).execute(Vandal(), given)
    assert result.succeeded
    assert same(_plain(given), _plain(before))
    assert all(a is b for a, b in zip(containers(given), held, strict=True))


def _plain(value: Any) -> Any:
    """``value`` with its subclassed containers as plain ones, to compare."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def test_a_default_is_fresh_on_every_call() -> None:
    first = both_ways(Rows(), removed("rows[0].extra"))
    first["rows"][0]["extra"]["changed"] = True
    second = both_ways(Rows(), removed("rows[0].extra"))
    assert second["rows"][0]["extra"] == {}
    row = Rows().input_schema["rows"].items
    assert row is not None
    assert row.parameters is not None
    assert row.parameters["extra"].default == {}


def test_an_output_shares_nothing_with_what_the_tool_returned() -> None:
    returned = values()
    output = both_ways(Returns(returned), {})
    assert same(output, full_tier(Returns(returned).output_schema, returned).values)
    assert_shares_nothing(output, returned)


OPTIONALS = [
    {"name": "a", "type": "string"},
    {"name": "b", "type": "integer", "required": False, "default": 1},
    {"name": "c", "type": "string", "required": False},
    {"name": "d", "type": "float", "required": False},
]


@pytest.mark.parametrize(
    "given",
    [
        pytest.param({"a": "x"}, id="a-default-added-to-the-copy"),
        pytest.param({"a": "x", "c": None}, id="a-none-removed-from-the-copy"),
        pytest.param({"a": "x", "b": None, "c": None, "d": None}, id="all-none"),
        pytest.param({"c": "y", "a": "x", "d": 2}, id="all-given-an-integer-for-a-float"),
    ],
)
@pytest.mark.parametrize("where", ["top-level", "in-a-list-of-objects"])
def test_names_are_counted_as_given_not_as_copied(given: dict[str, Any], where: str) -> None:
    """The fast tier writes defaults into its copy and drops Nones from it: an unknown
    name beside them is still found, counted against what the caller gave."""
    if where == "top-level":
        schema = ToolSchema.from_dict({"parameters": OPTIONALS})

        def wrap(value: dict[str, Any]) -> dict[str, Any]:
            return value

    else:
        schema = ToolSchema.from_dict(
            {
                "parameters": [
                    {
                        "name": "rows",
                        "type": "list",
                        "items": {"type": "dictionary", "parameters": OPTIONALS},
                    }
                ]
            }
        )

        def wrap(value: dict[str, Any]) -> dict[str, Any]:
            return {"rows": [{"a": "first"}, value]}

    accepted = schema.fast_check(wrap(given))
    assert accepted is not None
    assert same(accepted, full_tier(schema, wrap(given)).values)
    unknown = wrap({**given, "zz": 1})
    assert schema.fast_check(unknown) is None
    path = "zz" if where == "top-level" else "rows[1].zz"
    assert [problem.message for problem in schema.check(unknown).problems] == [
        f"Unknown parameter: '{path}'"
    ]


DEEP_OK = _nested(MAX_DEPTH - 2)  # with the dict around it: MAX_DEPTH levels
DEEP_BAD = _nested(MAX_DEPTH - 1)


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        pytest.param(values(data={"x": DEEP_OK}), None, id="at-the-bound"),
        pytest.param(
            values(data={"x": DEEP_BAD}),
            "Parameter 'data': nested more than 64 levels deep; send a flatter value",
            id="past-the-bound",
        ),
        pytest.param(
            changed("rows[0].extra", {"x": DEEP_BAD}),
            "Parameter 'rows[0].extra': nested more than 64 levels deep; send a flatter value",
            id="past-the-bound-in-a-list-of-objects",
        ),
        pytest.param(
            values(data={"x": _nested(500)}),
            "Parameter 'data': nested more than 64 levels deep; send a flatter value",
            id="far-past-the-bound",
        ),
    ],
)
@pytest.mark.parametrize("direction", ["input", "output"])
def test_nesting_is_bounded(given: dict[str, Any], problem: str | None, direction: str) -> None:
    outcome = call(direction, given)
    if problem is None:
        assert isinstance(outcome, dict)
        assert same(outcome["data"], given["data"])
    else:
        assert outcome.endswith(f":\n  - {problem}")


@pytest.mark.parametrize("bad", [NAN, INF, -INF], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize(
    ("path", "where"),
    [
        pytest.param("ratio", "ratio", id="a-float"),
        pytest.param("rows[1].score", "rows[1].score", id="a-float-in-a-list-of-objects"),
        pytest.param("data", "data.x[1]", id="inside-a-free-form-value"),
        pytest.param("rows[0].extra", "rows[0].extra.k[0]", id="inside-a-free-form-field"),
    ],
)
@pytest.mark.parametrize("direction", ["input", "output"])
def test_numbers_must_be_finite(bad: float, path: str, where: str, direction: str) -> None:
    if path == "data":
        given = values(data={"x": [1.5, bad]})
    elif path == "rows[0].extra":
        given = changed(path, {"k": [bad]})
    else:
        given = changed(path, bad)
    outcome = call(direction, given)
    assert f"Parameter '{where}': expected a finite number, got {bad}" in outcome


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        pytest.param("data", {"blob": b"x"}, "'data.blob': expected a JSON value", id="bytes"),
        pytest.param("data", {"s": {1}}, "'data.s': expected a JSON value", id="a-set"),
        pytest.param("data", {"t": (1,)}, "'data.t': expected a JSON value", id="a-tuple"),
        pytest.param("data", {2: "x"}, "'data': expected a dictionary with string keys", id="key"),
        pytest.param("rows[0].extra", {"k": [object()]}, "'rows[0].extra.k[0]'", id="in-rows"),
        pytest.param("q", b"weather", "'q': expected type 'string', got 'bytes'", id="a-string"),
        pytest.param("tags[1]", b"b", "'tags[1]': expected type 'string', got 'bytes'", id="item"),
        pytest.param("tags", ("a",), "'tags': expected type 'list', got 'tuple'", id="list"),
    ],
)
@pytest.mark.parametrize("direction", ["input", "output"])
def test_a_value_json_has_no_form_for_is_an_error(
    path: str, value: Any, message: str, direction: str
) -> None:
    assert f"Parameter {message}" in call(direction, changed(path, value))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        pytest.param(
            "rows[0].count",
            True,
            "Parameter 'rows[0].count': expected type 'integer', got 'bool'",
            id="integer-in-a-list-of-objects",
        ),
        pytest.param(
            "filters.window.start",
            False,
            "Parameter 'filters.window.start': expected type 'integer', got 'bool'",
            id="integer-two-levels-down",
        ),
        pytest.param(
            "ratio", True, "Parameter 'ratio': expected type 'float', got 'bool'", id="float"
        ),
        pytest.param(
            "rows[1].score",
            False,
            "Parameter 'rows[1].score': expected type 'float', got 'bool'",
            id="float-in-a-list-of-objects",
        ),
        pytest.param(
            "tags[2]",
            True,
            "Parameter 'tags[2]': expected type 'string', got 'bool'",
            id="a-string-item",
        ),
    ],
)
@pytest.mark.parametrize("direction", ["input", "output"])
def test_a_bool_is_not_a_number(path: str, value: bool, message: str, direction: str) -> None:
    given = changed(path, value)
    outcome = call(direction, given)
    assert message in outcome


@pytest.mark.parametrize(
    ("given", "message"),
    [
        pytest.param(values(qq=1), "Unknown parameter: 'qq' (did you mean 'q'?)", id="top-level"),
        pytest.param(
            changed("rows[0].nmae", "x"),
            "Unknown parameter: 'rows[0].nmae' (did you mean 'rows[0].name'?)",
            id="in-a-list-of-objects",
        ),
        pytest.param(
            changed("filters.window.stop", 3),
            "Unknown parameter: 'filters.window.stop'",
            id="two-levels-down",
        ),
        # An optional given None is left out: an unknown name beside it still counts.
        pytest.param(values(data=None, other=1), "Unknown parameter: 'other'", id="beside-a-none"),
        pytest.param(
            changed("rows[0].note", None) | {"zz": 1},
            "Unknown parameter: 'zz'",
            id="beside-a-nested-none",
        ),
        pytest.param(
            changed("rows[0].nmae", None),
            "Unknown parameter: 'rows[0].nmae' (did you mean 'rows[0].name'?)",
            id="a-nested-unknown-name-given-none",
        ),
    ],
)
@pytest.mark.parametrize("direction", ["input", "output"])
def test_unknown_names_are_errors(given: dict[str, Any], message: str, direction: str) -> None:
    outcome = call(direction, given)
    assert isinstance(outcome, str)
    assert message in outcome


def test_an_unknown_name_beside_a_nested_none_is_an_error() -> None:
    given = changed("rows[0].note", None)
    given["rows"][0]["other"] = 1
    assert "Unknown parameter: 'rows[0].other'" in both_ways(Rows(), given)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param(values(data=None), {"data": None}, id="optional-without-a-default"),
        pytest.param(values(ratio=None), {"ratio": 0.5}, id="optional-with-a-default"),
        pytest.param(
            changed("rows[0].note", None), {"rows[0].note": None}, id="nested-without-a-default"
        ),
        pytest.param(
            changed("filters.limit", None), {"filters.limit": 10}, id="nested-with-a-default"
        ),
        pytest.param(
            changed("rows[0].extra", None), {"rows[0].extra": {}}, id="nested-container-default"
        ),
    ],
)
@pytest.mark.parametrize("direction", ["input", "output"])
def test_none_for_an_optional_is_no_value(
    given: dict[str, Any], expected: dict[str, Any], direction: str
) -> None:
    assert Rows().input_schema.fast_check(given) is not None
    outcome = call(direction, given)
    for path, value in expected.items():
        target, last = _parent(outcome, path)
        if value is None:
            assert last not in target
        else:
            assert same(target[last], value)


@pytest.mark.parametrize("path", ["q", "rows[0].name", "filters.window.end", "tags[0]"])
def test_none_for_a_required_value_is_an_error(path: str) -> None:
    outcome = both_ways(Rows(), changed(path, None))
    assert f"Parameter '{path}': expected type " in outcome
    assert "got 'NoneType'" in outcome


@pytest.mark.parametrize("path", ["q", "rows[1].count", "filters.window", "tags"])
def test_a_missing_required_value_is_an_error(path: str) -> None:
    assert f"Missing required parameter: '{path}'" in both_ways(Rows(), removed(path))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        pytest.param(
            "rows[0].count",
            -1,
            "Parameter 'rows[0].count': expected a value of at least 0, got -1",
            id="minimum",
        ),
        pytest.param(
            "filters.kind",
            "any",
            "Parameter 'filters.kind': expected one of ['open', 'closed'], got 'any'",
            id="enum",
        ),
        pytest.param(
            "rows[0].name",
            "",
            "Parameter 'rows[0].name': expected a string of at least 1 character, got 0",
            id="min-length",
        ),
        pytest.param(
            "rows[1].name",
            "\N{GRINNING FACE}" * 9,
            "Parameter 'rows[1].name': expected a string of at most 8 characters, got 9",
            id="max-length-in-code-points",
        ),
        pytest.param(
            "ratio",
            10**400,
            "Parameter 'ratio': expected type 'float', got an integer too large",
            id="an-integer-no-float-holds",
        ),
    ],
)
def test_constraints_hold_on_the_fast_tier(path: str, value: Any, message: str) -> None:
    assert message in both_ways(Rows(), changed(path, value))


@pytest.mark.parametrize("shape", list(bench_executor.SHAPES))
def test_the_benchmarks_shapes_take_the_one_stretch(shape: str) -> None:
    """benchmarks/bench_executor.py measures the fast tier, in and out, not the steps."""
    tool = bench_executor.shape_tool(shape)
    given = bench_executor.shape_inputs(shape)
    checked = tool.input_schema.fast_check(given)
    assert checked is not None
    assert same(checked, given)
    assert tool.output_schema.fast_check(tool.execute(checked, {})) is not None


def _deep_schema(levels: int) -> tuple[dict[str, Any], Any]:
    """A definition nesting ``levels`` lists of objects, each with an optional field, and a
    value of it whose innermost score is ``0.5``."""
    definition: dict[str, Any] = {"type": "float"}
    value: Any = 0.5
    for level in range(levels):
        definition = {
            "type": "list",
            "items": {
                "type": "dictionary",
                "parameters": [
                    {"name": "inner", **definition},
                    {"name": "tag", "type": "string", "required": False, "default": f"t{level}"},
                ],
            },
        }
        value = [{"inner": value}]
    return definition, value


@pytest.mark.parametrize("levels", [1, 5, 6, 7, 12, 30])
def test_deeply_nested_schemas_are_checked_past_the_inlined_levels(levels: int) -> None:
    definition, value = _deep_schema(levels)
    schema = ToolSchema.from_dict({"parameters": [{"name": "root", **definition}]})
    checked = schema.fast_check({"root": value})
    assert checked is not None
    assert same(checked, full_tier(schema, {"root": value}).values)
    innermost = checked["root"]
    for _ in range(levels - 1):
        assert innermost[0]["tag"].startswith("t")
        innermost = innermost[0]["inner"]
    assert innermost == [{"inner": 0.5, "tag": "t0"}]

    bad = copy.deepcopy(value)
    target = bad
    for _ in range(levels - 1):
        target = target[0]["inner"]
    target[0]["inner"] = NAN
    assert schema.fast_check({"root": bad}) is None
    path = "root" + "[0].inner" * levels
    assert [problem.path for problem in schema.check({"root": bad}).problems] == [path]
