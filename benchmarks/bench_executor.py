"""The executor's per-call cost for a 5-input/5-output Python tool: against a direct call,
and against the seed (the chapter's own ``codecraftai-agent-kit``) for each shape of argument.

Each shape is the same tool: four scalar inputs and one of the shape, returned
as four scalar outputs and one of the shape, so every shape is checked once as
input and once as output. Sizes are those of real calls: lists of 10 items,
dictionaries of 5 keys nested 2 levels.

What each side checks differs, because the seed's schema has no nested field
types (its ``ToolSchema.validate`` is one ``isinstance`` per parameter) and
changes nothing it is given only because these calls fill no default:

- the seed: each parameter present and an instance of its type -- a list is a
  ``list``, whatever it holds (``True`` passes for an integer, ``NaN`` for a float);
  the tool gets the caller's own dict, nested values and all.
- agentkit: the same, and each nested value too: list items and object fields of
  their declared types, bools not numbers, floats finite, free-form values nested
  at most 64 levels, no unknown name at any level; the tool gets a copy that
  shares no list or dictionary with the caller's, and the output is a copy too.

Both are timed as a user gets them: ``ToolExecutor().execute(tool, inputs)``,
nothing turned off (agentkit's default records every call in its duration
histogram; the seed's logs through ``logging``, at its default level).
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

from agentkit import Tool, ToolExecutor
from benchmarks.timing import Case, best_per_call, target_line, verdict

_TYPES = ("string", "integer", "float", "boolean", "string")


class FiveByFive(Tool):
    TOOL_NAME = "five_by_five"
    TOOL_DESCRIPTION = "Five inputs in, five outputs out, no work in between."
    INPUT_SCHEMA = {"parameters": [{"name": f"in{i}", "type": t} for i, t in enumerate(_TYPES)]}
    OUTPUT_SCHEMA = {"parameters": [{"name": f"out{i}", "type": t} for i, t in enumerate(_TYPES)]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return _five_out(inputs)


def _five_out(inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "out0": inputs["in0"],
        "out1": inputs["in1"],
        "out2": inputs["in2"],
        "out3": inputs["in3"],
        "out4": inputs["in4"],
    }


INPUTS: dict[str, Any] = {"in0": "a", "in1": 1, "in2": 2.5, "in3": True, "in4": "b"}

# -- the shapes: (agentkit's definition of the fifth parameter, the seed's nearest, its value)

_OBJECT_FIELDS = [
    {"name": "name", "type": "string"},
    {"name": "count", "type": "integer"},
    {"name": "score", "type": "float"},
    {"name": "active", "type": "boolean"},
]
_NESTED = {
    "city": "Oslo",
    "days": 3,
    "ratio": 0.25,
    "window": {"start": 1, "end": 9, "label": "week"},
    "tags": ["a", "b", "c"],
}
SHAPES: dict[str, tuple[dict[str, Any], dict[str, Any], Any]] = {
    "scalars": ({"type": "string"}, {"type": "string"}, "b"),
    "list of 10 scalars": (
        {"type": "list", "items": {"type": "string"}},
        {"type": "list"},
        [f"item {i}" for i in range(10)],
    ),
    "nested dictionary (free-form)": ({"type": "dictionary"}, {"type": "dictionary"}, _NESTED),
    "nested dictionary (declared)": (
        {
            "type": "dictionary",
            "parameters": [
                {"name": "city", "type": "string"},
                {"name": "days", "type": "integer"},
                {"name": "ratio", "type": "float"},
                {
                    "name": "window",
                    "type": "dictionary",
                    "parameters": [
                        {"name": "start", "type": "integer"},
                        {"name": "end", "type": "integer"},
                        {"name": "label", "type": "string"},
                    ],
                },
                {"name": "tags", "type": "list", "items": {"type": "string"}},
            ],
        },
        {"type": "dictionary"},
        _NESTED,
    ),
    "list of 10 objects": (
        {"type": "list", "items": {"type": "dictionary", "parameters": _OBJECT_FIELDS}},
        {"type": "list"},
        [{"name": f"n{i}", "count": i, "score": i + 0.5, "active": i % 2 == 0} for i in range(10)],
    ),
}
#: The target: agentkit's default executor at least this many times the seed's speed.
SEED_TARGET = 1.5
SEED_NUMBER = 2_000
SEED_ROUNDS = 7
SEED_REPEATS = 5


def _schemas(fifth: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """INPUT_SCHEMA and OUTPUT_SCHEMA of the 5-in/5-out tool whose fifth parameter is ``fifth``."""
    types = _TYPES[:4]
    return (
        {"parameters": [*({"name": f"in{i}", "type": t} for i, t in enumerate(types)),
                        {"name": "in4", **fifth}]},
        {"parameters": [*({"name": f"out{i}", "type": t} for i, t in enumerate(types)),
                        {"name": "out4", **fifth}]},
    )  # fmt: skip


def shape_tool(shape: str) -> Tool:
    """agentkit's 5-in/5-out tool of ``shape``."""
    input_schema, output_schema = _schemas(SHAPES[shape][0])

    class Shaped(Tool):
        TOOL_NAME = "shaped"
        TOOL_DESCRIPTION = f"Five inputs in, five outputs out: {shape}."
        INPUT_SCHEMA = input_schema
        OUTPUT_SCHEMA = output_schema

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return _five_out(inputs)

    return Shaped()


def shape_inputs(shape: str) -> dict[str, Any]:
    return {**INPUTS, "in4": SHAPES[shape][2]}


def run() -> list[str]:
    return [*_against_a_direct_call(), "", *_against_the_seed()]


def _against_a_direct_call() -> list[str]:
    tool = FiveByFive()
    bare = ToolExecutor(credentials={})
    listened = ToolExecutor(credentials={}, listeners=[lambda event: None])
    no_credentials: Mapping[str, str] = {}
    best = best_per_call(
        [
            Case("direct call of execute()", lambda: tool.execute(INPUTS, no_credentials)),
            Case("ToolExecutor.execute, no listeners", lambda: bare.execute(tool, INPUTS)),
            Case("ToolExecutor.execute, one listener", lambda: listened.execute(tool, INPUTS)),
        ],
        number=20_000,
        clock=time.thread_time,
    )
    direct = best["direct call of execute()"]
    executor = best["ToolExecutor.execute, no listeners"]
    lines = [
        "executor: per-call cost of a 5-input/5-output tool, CPU time "
        "(best of 7 interleaved rounds)"
    ]
    for label, seconds in best.items():
        lines.append(f"  {label:<40} {seconds * 1e6:7.2f} us  {seconds / direct:5.1f}x direct")
    ratio = executor / direct
    lines.append(
        f"  target: executor <= 10x direct and < 5 us: {ratio:.1f}x, {executor * 1e6:.2f} us "
        f"-> {verdict(ratio <= 10 and executor < 5e-6)}"
    )
    return lines


def _against_the_seed() -> list[str]:
    title = "executor against the seed (codecraftai-agent-kit 1.3.1), per shape of argument"
    try:
        # By name: the bench extra installs the seed; `make test`'s type check runs without it.
        seed_tool_module = importlib.import_module("ccai.agentkit.tool")
        seed_executor_module = importlib.import_module("ccai.agentkit.toolexecutor")
    except ImportError:
        return [f"{title}: skipped, the seed is not installed (`make bench` installs it)"]
    SeedTool: Any = seed_tool_module.Tool

    def seed_tool(shape: str) -> Any:
        # The chapter's own spelling: a Tool subclass with its schemas as dicts.
        input_schema, output_schema = _schemas(SHAPES[shape][1])

        class SeedShaped(SeedTool):  # type: ignore[misc]
            TOOL_NAME = "shaped"
            TOOL_DESCRIPTION = f"Five inputs in, five outputs out: {shape}."
            INPUT_SCHEMA = input_schema
            OUTPUT_SCHEMA = output_schema

            def execute(self, inputs: dict[str, Any], credentials: Any = None) -> dict[str, Any]:
                return _five_out(inputs)

        return SeedShaped()

    ours, seeds = ToolExecutor(), seed_executor_module.ToolExecutor()
    cases = []
    for shape in SHAPES:
        inputs = shape_inputs(shape)
        tool, theirs = shape_tool(shape), seed_tool(shape)
        cases.append(Case(f"agentkit {shape}", _caller(ours.execute, tool, inputs)))
        cases.append(Case(f"seed {shape}", _caller(seeds.execute, theirs, inputs)))
    runs = [
        best_per_call(cases, number=SEED_NUMBER, rounds=SEED_ROUNDS, clock=time.thread_time)
        for _ in range(SEED_REPEATS)
    ]
    lines = [
        f"{title}: CPU time per call (median of {SEED_REPEATS} runs, each the best of "
        f"{SEED_ROUNDS} interleaved rounds); speed = the seed's time / agentkit's",
    ]
    for shape in SHAPES:
        ours_seconds = statistics.median(run[f"agentkit {shape}"] for run in runs)
        seed_seconds = statistics.median(run[f"seed {shape}"] for run in runs)
        speeds = sorted(run[f"seed {shape}"] / run[f"agentkit {shape}"] for run in runs)
        lines.append(
            f"  {shape}: agentkit {ours_seconds * 1e6:.2f} us, seed {seed_seconds * 1e6:.2f} us"
        )
        lines.append(
            target_line(f"{shape}, speed", statistics.median(speeds), SEED_TARGET, at_least=True)
            + f" (runs: {speeds[0]:.2f}-{speeds[-1]:.2f}x)"
        )
    lines += [
        "  the seed checks each parameter's outer type only (isinstance) and hands the tool",
        "  the caller's dict; agentkit checks every list item and object field, bools apart",
        "  from numbers, finite floats, nesting <= 64, unknown names, and copies in and out.",
    ]
    return lines


def _caller(execute: Callable[..., Any], tool: Any, inputs: dict[str, Any]) -> Callable[[], Any]:
    return lambda: execute(tool, inputs)
