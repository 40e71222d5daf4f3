"""The definitions of tools that stop as they are told (``serve_tools.stops``), and what
a caller should be told of each: shared by the command's and the server's tests."""

from __future__ import annotations

from pathlib import Path

#: The credential the tools hold, which no answer nor error may show.
KEY = "A1b2C3d4e5F6g7H8"
ENV = {"API_KEY": KEY}

_DEFINITION = """\
name: {name}
version: 1.0.0
description: Stops as it is told.
credentials: [api-key]
input_schema: {{parameters: [{{name: how, type: string}}]}}
output_schema: {{parameters: [{{name: data, type: dictionary}}]}}
backend: {{python: "tests.support.serve_tools:{function}"}}
"""
#: A sync tool (the server runs it in its thread pool) and an async one (on its loop).
TOOLS = {
    "stops": _DEFINITION.format(name="stops", function="stops"),
    "stops_async": _DEFINITION.format(name="stops_async", function="stops_async"),
}

INSTEAD = "a tool should raise an exception instead (that fails only its call)"
NOT_AN_EXCEPTION = "a BaseException that is not an Exception"
#: How a tool stops -> what its failure says, after "Tool '<name>' ".
TOLD = {
    "exit": f"failed: SystemExit: the tool called sys.exit() with exit code 3; {INSTEAD}",
    "exit-text": (
        "failed: SystemExit: the tool called sys.exit() with exit code 1 and the message "
        f'"bad key ***"; {INSTEAD}'
    ),
    "generator-exit": f"failed: GeneratorExit: closing ***; the tool raised GeneratorExit, {NOT_AN_EXCEPTION}",
    "halt": f"failed: Halt: halted at ***; the tool raised Halt, {NOT_AN_EXCEPTION}",
    "bytes": (
        "returned invalid output:\n  - Parameter 'data.blob': expected a JSON value (a string, "
        "number, boolean, null, list or dictionary), got 'bytes'"
    ),
}


def write_tools(folder: Path) -> Path:
    for name, text in TOOLS.items():
        (folder / f"{name}.yaml").write_text(text)
    return folder
