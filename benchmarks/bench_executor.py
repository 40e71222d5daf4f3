"""The executor's per-call cost for a 5-input/5-output Python tool, against a direct call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentkit import Tool, ToolExecutor
from benchmarks.timing import Case, best_per_call, verdict

_TYPES = ("string", "integer", "float", "boolean", "string")


class FiveByFive(Tool):
    TOOL_NAME = "five_by_five"
    TOOL_DESCRIPTION = "Five inputs in, five outputs out, no work in between."
    INPUT_SCHEMA = {"parameters": [{"name": f"in{i}", "type": t} for i, t in enumerate(_TYPES)]}
    OUTPUT_SCHEMA = {"parameters": [{"name": f"out{i}", "type": t} for i, t in enumerate(_TYPES)]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {
            "out0": inputs["in0"],
            "out1": inputs["in1"],
            "out2": inputs["in2"],
            "out3": inputs["in3"],
            "out4": inputs["in4"],
        }


INPUTS: dict[str, Any] = {"in0": "a", "in1": 1, "in2": 2.5, "in3": True, "in4": "b"}


def run() -> list[str]:
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
    )
    direct = best["direct call of execute()"]
    executor = best["ToolExecutor.execute, no listeners"]
    lines = ["executor: per-call cost of a 5-input/5-output tool (best of 7 interleaved rounds)"]
    for label, seconds in best.items():
        lines.append(f"  {label:<40} {seconds * 1e6:7.2f} us  {seconds / direct:5.1f}x direct")
    ratio = executor / direct
    lines.append(
        f"  target: executor <= 10x direct and < 5 us: {ratio:.1f}x, {executor * 1e6:.2f} us "
        f"-> {verdict(ratio <= 10 and executor < 5e-6)}"
    )
    return lines
