"""A tool's examples: named calls, each with its inputs and what its answer must be.

An example is part of a tool's declaration (a definition's ``examples:``, a
hand-written tool's ``EXAMPLES``). It says what to call the tool with and one
expectation of the answer:

- ``output``: the whole output, exactly;
- ``output_includes``: some of the output's fields, each exactly (the rest may
  be anything);
- ``fails``: the call fails, in one of ``FAILURE_KINDS``, optionally with an
  HTTP ``status`` and a ``message`` the error must contain.

``parse_examples`` checks examples against the tool's two schemas (the inputs
against the input schema, an expected output against the output schema) and
returns the problems, each with the location of the field at fault.
``check_answer`` says how a ``ToolResult`` falls short of an example, as a diff.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, final

from agentkit.toolerrors import (
    CredentialError,
    HttpCallError,
    Problem,
    SemanticError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolValidationError,
)
from agentkit.toolresult import ToolResult
from agentkit.toolschema import ToolSchema

__all__ = [
    "EXAMPLE_KEYS",
    "FAILURE_KINDS",
    "ToolExample",
    "check_answer",
    "examples_of",
    "failure_kind",
    "parse_examples",
]

#: How a call can fail, from the caller's side: its inputs refused (``validation``), its
#: output refused (``output``), a credential missing (``credential``), out of time
#: (``timeout``), or the tool's own failure (``execution``: an HTTP status, a broken reply).
FAILURE_KINDS: Final = ("validation", "output", "credential", "timeout", "execution")
EXAMPLE_KEYS: Final = (
    "name",
    "description",
    "inputs",
    "output",
    "output_includes",
    "fails",
    "status",
    "message",
)
_EXPECTATIONS: Final = ("output", "output_includes", "fails")
_NAME_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
#: The longest example name: it names a recording's file, as a tool's name names its folder.
MAX_NAME: Final = 64


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExample:
    """One example: a name, the inputs, and one expectation of the answer."""

    name: str
    inputs: Mapping[str, Any]
    description: str = ""
    output: Mapping[str, Any] | None = None
    output_includes: Mapping[str, Any] | None = None
    fails: str | None = None
    status: int | None = None
    message: str | None = None
    #: Where it is written: ``path:line`` for a definition's, else the tool's source.
    source: str = field(default="", compare=False)

    @property
    def expects(self) -> str:
        """Which expectation it has: ``output``, ``output_includes`` or ``fails``."""
        if self.fails is not None:
            return "fails"
        return "output" if self.output is not None else "output_includes"

    def to_dict(self) -> dict[str, Any]:
        """As written: the keys given, in ``EXAMPLE_KEYS`` order."""
        written: dict[str, Any] = {"name": self.name}
        if self.description:
            written["description"] = self.description
        written["inputs"] = dict(self.inputs)
        for key in ("output", "output_includes", "fails", "status", "message"):
            value = getattr(self, key)
            if value is not None:
                written[key] = dict(value) if isinstance(value, Mapping) else value
        return written


def parse_examples(
    raw: Any, inputs: ToolSchema, outputs: ToolSchema, *, source: str = ""
) -> tuple[tuple[ToolExample, ...], list[Problem]]:
    """``raw`` (a list of example mappings) checked; the examples, and the problems found,
    each located from the ``examples`` key (``examples[0].inputs``).

    Examples come back only when there is no problem. ``source`` is given to each.
    """
    problems: list[Problem] = []
    if not isinstance(raw, list):
        problems.append(
            Problem(
                location=("examples",), message="expected a list of examples, each with a 'name'"
            )
        )
        return (), problems
    examples: list[ToolExample] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        example = _parse_one(index, item, inputs, outputs, seen, problems, source)
        if example is not None:
            examples.append(example)
    return (tuple(examples) if not problems else ()), problems


def _parse_one(
    index: int,
    item: Any,
    inputs: ToolSchema,
    outputs: ToolSchema,
    seen: set[str],
    problems: list[Problem],
    source: str,
) -> ToolExample | None:
    def problem(message: str, *where: str | int) -> None:
        problems.append(Problem(location=("examples", index, *where), message=message))

    if not isinstance(item, Mapping):
        problem(
            "expected a mapping with 'name', 'inputs' and one of 'output', "
            "'output_includes' or 'fails'"
        )
        return None
    start = len(problems)
    for key in item:
        if key not in EXAMPLE_KEYS:
            hint = difflib.get_close_matches(str(key), EXAMPLE_KEYS, n=1)
            problem(
                f"unknown key '{key}'"
                + (f"; did you mean '{hint[0]}'?" if hint else f"; use {', '.join(EXAMPLE_KEYS)}"),
                str(key),
            )
    name = item.get("name")
    if (
        not isinstance(name, str)
        or not name
        or len(name) > MAX_NAME
        or not set(name) <= _NAME_CHARS
    ):
        problem(
            "missing 'name': give each example a name of letters, digits, '_' and '-'"
            if name is None
            else f"invalid name {_shown(name)}: use 1 to {MAX_NAME} letters, digits, '_' "
            "and '-' (it names a file)",
            "name",
        )
    elif name.lower() in seen:
        # Recordings are files named after examples: one and One would share one on a
        # file system that ignores case.
        problem(
            f"example '{name}' is named twice (letter case aside); each example needs its own name",
            "name",
        )
    else:
        seen.add(name.lower())
    description = item.get("description", "")
    if not isinstance(description, str):
        problem("expected a string", "description")
    given = item.get("inputs", {})
    if not isinstance(given, Mapping):
        problem("expected a mapping of the tool's inputs", "inputs")
    elif item.get("fails") != "validation":  # such an example's inputs are wrong on purpose
        for message in inputs.validate(json.loads(json.dumps(given, default=str))):
            problem(message, "inputs")
    expectations = [key for key in _EXPECTATIONS if key in item]
    if len(expectations) != 1:
        problem(
            "give exactly one of 'output' (the whole output), 'output_includes' (some of "
            "its fields) or 'fails' (the kind of failure)"
            + (f"; found {', '.join(expectations)}" if expectations else "")
        )
    output = item.get("output")
    if "output" in item:
        if not isinstance(output, Mapping):
            problem("expected a mapping: the tool's whole output", "output")
        else:
            for message in outputs.validate(json.loads(json.dumps(output, default=str))):
                problem(message, "output")
    includes = item.get("output_includes")
    if "output_includes" in item:
        _check_includes(includes, outputs, problem)
    fails = item.get("fails")
    if "fails" in item and fails not in FAILURE_KINDS:
        problem(f"expected one of {', '.join(FAILURE_KINDS)}, got {fails!r}", "fails")
    status, text = item.get("status"), item.get("message")
    for key, kind, value in (("status", int, status), ("message", str, text)):
        if value is None:
            continue
        if "fails" not in item:
            problem(f"'{key}' goes with 'fails'", key)
        elif not isinstance(value, kind) or isinstance(value, bool):
            wanted = "an HTTP status such as 404" if kind is int else "text the error contains"
            problem(f"expected {wanted}, got {_shown(value)}", key)
        elif key == "status" and fails != "execution":
            problem(
                "'status' is the upstream's HTTP status of a failed call: it goes with "
                f"'fails: execution', not 'fails: {fails}'",
                key,
            )
        elif key == "status" and isinstance(value, int) and not 100 <= value <= 599:
            problem(f"expected an HTTP status from 100 to 599, got {value}", key)
    if len(problems) > start:
        return None
    return ToolExample(
        name=str(name),
        description=str(description),
        inputs=dict(given),
        output=dict(output) if isinstance(output, Mapping) else None,
        output_includes=dict(includes) if isinstance(includes, Mapping) else None,
        fails=fails,
        status=status,
        message=text,
        source=source,
    )


def _shown(value: Any, most: int = 60) -> str:
    """``repr(value)``, cut short with "..." past ``most`` characters."""
    text = repr(value)
    return text if len(text) <= most else text[: most - 3] + "..."


def _check_includes(includes: Any, outputs: ToolSchema, problem: Any) -> None:
    if not isinstance(includes, Mapping) or not includes:
        problem("expected a mapping of some of the output's fields", "output_includes")
        return
    for key, value in includes.items():
        param = outputs.get(key) if isinstance(key, str) else None
        if param is None:
            names = ", ".join(outputs.names) or "none"
            problem(f"'{key}' is not an output field (the fields: {names})", "output_includes", key)
            continue
        for message in param.check(json.loads(json.dumps(value, default=str)))[1]:
            problem(message, "output_includes", key)


def examples_of(tool: Any) -> tuple[ToolExample, ...]:
    """A tool's examples, checked: a definition's, or a hand-written class's ``EXAMPLES``
    (mappings in a definition's form, or ``ToolExample`` values). A hand-written tool's
    broken examples raise ``SemanticError`` naming the tool and each problem."""
    declared: Sequence[Any] = getattr(type(tool), "EXAMPLES", ())
    if not isinstance(declared, (list, tuple)):
        raise SemanticError(
            f"Tool '{tool.name}' ({tool.source}): EXAMPLES: expected a list of examples "
            f"(mappings with name, inputs and output), got {type(declared).__name__}"
        )
    if all(isinstance(item, ToolExample) for item in declared):
        return tuple(declared)
    examples, problems = parse_examples(
        list(declared), tool.input_schema, tool.output_schema, source=tool.source
    )
    if problems:
        lines = "\n".join(f"  {problem}" for problem in problems)
        raise SemanticError(f"Tool '{tool.name}' ({tool.source}): EXAMPLES:\n{lines}")
    return examples


def failure_kind(error: BaseException | None) -> str | None:
    """Which of ``FAILURE_KINDS`` a failed call's error is; None for a success."""
    if error is None:
        return None
    if isinstance(error, ToolValidationError):
        return "validation" if error.direction == "input" else "output"
    cause = error.cause if isinstance(error, ToolExecutionError) else error
    if isinstance(cause, CredentialError):
        return "credential"
    if isinstance(cause, ToolTimeoutError):
        return "timeout"
    return "execution"


def _status(error: BaseException | None) -> int | None:
    cause = error.cause if isinstance(error, ToolExecutionError) else error
    return cause.status if isinstance(cause, HttpCallError) else None


def _answer(result: ToolResult) -> dict[str, Any]:
    """The answer as an example compares it: the output, or the failure's kind and message."""
    if result.succeeded:
        return {"output": result.output}
    failure: dict[str, Any] = {"fails": failure_kind(result.error)}
    status = _status(result.error)
    if status is not None:
        failure["status"] = status
    failure["message"] = str(result.error)
    return failure


def check_answer(example: ToolExample, result: ToolResult) -> str | None:
    """None when ``result`` is what ``example`` expects; else why not, with a diff of the
    expected answer and the answer given (``-`` expected, ``+`` got)."""
    got = _answer(result)
    expected: dict[str, Any]
    if example.fails is not None:
        expected = {"fails": example.fails}
        if example.status is not None:
            expected["status"] = example.status
        if example.message is not None:
            expected["message"] = f"... {example.message} ..."
        message = got.get("message", "")
        matches = (
            got.get("fails") == example.fails
            and (example.status is None or got.get("status") == example.status)
            and (example.message is None or example.message in message)
        )
        if matches:
            return None
        shown: dict[str, Any] = (
            got
            if "output" in got
            else {key: got[key] for key in ("fails", "status", "message") if key in got}
        )
        return _diff("the call did not fail as expected", expected, shown)
    output = got.get("output")
    if output is None:
        return _diff("the call failed", _expected_output(example), got)
    if example.output is not None:
        if _plain(output) == _plain(example.output):
            return None
        return _diff("the output differs", {"output": example.output}, {"output": output})
    includes = dict(example.output_includes or {})
    picked = {key: output[key] for key in includes if key in output}
    if _plain(picked) == _plain(includes):
        return None
    return _diff(
        "the output's fields differ", {"output_includes": includes}, {"output_includes": picked}
    )


def _expected_output(example: ToolExample) -> dict[str, Any]:
    if example.output is not None:
        return {"output": example.output}
    return {"output_includes": example.output_includes}


def _plain(value: Any) -> Any:
    """A JSON round trip: 18 and 18.0 compare equal, tuples as lists."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _diff(what: str, expected: Mapping[str, Any], got: Mapping[str, Any]) -> str:
    return f"{what}:\n" + unified_diff(expected, got, "expected", "got")


def unified_diff(old: Any, new: Any, old_name: str, new_name: str) -> str:
    """Two values as indented JSON, diffed line by line (every line, for context)."""
    before = _lines(old)
    after = _lines(new)
    lines: Iterable[str] = difflib.unified_diff(
        before, after, old_name, new_name, n=max(len(before), len(after)), lineterm=""
    )
    return "\n".join(lines)


def _lines(value: Any) -> list[str]:
    return json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False).split("\n")
