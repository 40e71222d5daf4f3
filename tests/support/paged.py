"""Tools whose answers come in pages (``MAX_OUTPUT``), and putting the pages back together."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from agentkit import Tool, ToolExecutor, ToolResult
from agentkit.paging import CONTINUATION

REPORT_SCHEMA: dict[str, Any] = {
    "parameters": [
        {"name": "title", "type": "string"},
        {
            "name": "rows",
            "type": "list",
            "items": {
                "type": "dictionary",
                "parameters": [
                    {"name": "id", "type": "integer"},
                    {"name": "name", "type": "string"},
                    {"name": "note", "type": "string"},
                ],
            },
        },
    ]
}


#: The definition of a tool like ``Report`` (its ``tests.support.serve_tools:report``
#: counts its runs in ``<marker>.runs``); ``{budget}`` is its ``max_output``.
REPORT_DEFINITION = """\
name: report
version: 1.0.0
description: A report of many rows.
max_output: {budget}
input_schema:
  parameters:
    - {{name: rows, type: integer}}
    - {{name: marker, type: string, required: false, default: ""}}
output_schema:
  parameters:
    - {{name: title, type: string}}
    - name: rows
      type: list
      items:
        type: dictionary
        parameters:
          - {{name: id, type: integer}}
          - {{name: name, type: string}}
          - {{name: note, type: string}}
backend: {{python: "tests.support.serve_tools:report"}}
"""


def report_rows(count: int) -> dict[str, Any]:
    """The answer of ``Report``: a title and ``count`` rows, some with non-ASCII notes."""
    return {
        "title": f"{count} rows",
        "rows": [
            {"id": row, "name": f"row {row}", "note": "é" * (row % 7)} for row in range(count)
        ],
    }


class Report(Tool):
    """Gives ``rows`` rows; its answers are paged past 1,000 bytes. Counts its runs."""

    TOOL_NAME = "report"
    TOOL_DESCRIPTION = "A report of many rows."
    INPUT_SCHEMA: ClassVar[Any] = {"parameters": [{"name": "rows", "type": "integer"}]}
    OUTPUT_SCHEMA: ClassVar[Any] = REPORT_SCHEMA
    MAX_OUTPUT: ClassVar[Any] = {"bytes": 1000}

    def __init__(self) -> None:
        super().__init__()
        self.runs = 0

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        self.runs += 1
        return report_rows(inputs["rows"])


def every_page(
    call: Callable[[Mapping[str, Any]], ToolResult], inputs: Mapping[str, Any], most: int = 1000
) -> list[ToolResult]:
    """The first result of ``call(inputs)`` and each next page, followed to the last
    (at most ``most`` pages)."""
    results = [call(inputs)]
    for _ in range(most):
        page = results[-1].page
        if page is None or page.continuation is None:
            return results
        results.append(call({CONTINUATION: page.continuation}))
    raise AssertionError(f"more than {most} pages")


def pages_of(executor: ToolExecutor, tool: Tool, inputs: Mapping[str, Any]) -> list[ToolResult]:
    return every_page(lambda given: executor.execute(tool, given), inputs)


def merged(results: list[ToolResult]) -> dict[str, Any]:
    """The whole answer from its pages: each cut field's pieces concatenated, in order."""
    first = results[0]
    assert first.output is not None
    if first.page is None:
        return first.output
    whole = copy.deepcopy(first.output)
    for result in results[1:]:
        assert result.page is not None
        assert result.output is not None
        for part in result.page.parts:
            keys = part.path.split(".")
            target, source = whole, result.output
            for key in keys[:-1]:
                target, source = target[key], source[key]
            target[keys[-1]] = target[keys[-1]] + source[keys[-1]]
    return whole


def output_of(result: ToolResult) -> dict[str, Any]:
    """The output of a call that succeeded."""
    assert result.output is not None, result.error
    return result.output
