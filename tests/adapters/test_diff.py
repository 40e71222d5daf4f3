"""diff_tools: each change classified, each version bump checked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentkit import Tool, load_tools
from agentkit.adapters.diff import BREAKING, COMPATIBLE, COSMETIC, diff_renamed, diff_tools


def make(
    version: str = "1.0.0",
    *params: dict[str, Any],
    outputs: tuple[dict[str, Any], ...] = (),
    description: str = "d",
    credentials: tuple[str, ...] = (),
    name: str = "t",
) -> Tool:
    def execute(self: Tool, inputs: dict[str, Any], creds: Mapping[str, str]) -> dict[str, Any]:
        return {}

    cls = type(
        "T",
        (Tool,),
        {
            "TOOL_NAME": name,
            "TOOL_VERSION": version,
            "TOOL_DESCRIPTION": description,
            "INPUT_SCHEMA": {"parameters": list(params)},
            "OUTPUT_SCHEMA": {"parameters": list(outputs)},
            "CREDENTIAL_NAMES": credentials,
            "execute": execute,
        },
    )
    return cls()  # type: ignore[no-any-return]


CITY = {"name": "city", "type": "string"}
UNITS = {"name": "units", "type": "string", "required": False, "enum": ["a", "b"]}


@pytest.mark.parametrize(
    ("old", "new", "kind", "message"),
    [
        pytest.param(
            make("1.0.0", CITY), make("1.0.0"), BREAKING, "input 'city' removed", id="input-removed"
        ),
        pytest.param(
            make("1.0.0", {**CITY, "required": False}),
            make("1.0.0", CITY),
            BREAKING,
            "input 'city' became required",
            id="made-required",
        ),
        pytest.param(
            make("1.0.0"),
            make("1.0.0", CITY),
            BREAKING,
            "new required input 'city'",
            id="new-required",
        ),
        pytest.param(
            make("1.0.0", CITY),
            make("1.0.0", {**CITY, "type": "integer"}),
            BREAKING,
            "input 'city' changed type from string to integer",
            id="type",
        ),
        pytest.param(
            make("1.0.0", UNITS),
            make("1.0.0", {**UNITS, "enum": ["a"]}),
            BREAKING,
            "input 'units': enum narrowed",
            id="enum-narrowed",
        ),
        pytest.param(
            make("1.0.0", UNITS),
            make("1.0.0", {**UNITS, "enum": ["a", "b", "c"]}),
            COMPATIBLE,
            "input 'units': enum widened",
            id="enum-widened",
        ),
        pytest.param(
            make("1.0.0", CITY),
            make("1.0.0", {**CITY, "min_length": 2}),
            BREAKING,
            "input 'city': min_length None -> 2",
            id="min-length-added",
        ),
        pytest.param(
            make("1.0.0", {**CITY, "min_length": 2}),
            make("1.0.0", {**CITY, "min_length": 1}),
            COMPATIBLE,
            "input 'city': min_length 2 -> 1",
            id="min-length-lowered",
        ),
        pytest.param(
            make("1.0.0", {**CITY, "max_length": 9}),
            make("1.0.0", {**CITY, "max_length": 8}),
            BREAKING,
            "input 'city': max_length 9 -> 8",
            id="max-length-lowered",
        ),
        pytest.param(
            make("1.0.0", {**CITY, "max_length": 9}),
            make("1.0.0", CITY),
            COMPATIBLE,
            "input 'city': max_length 9 -> None",
            id="max-length-removed",
        ),
        pytest.param(
            make("1.0.0", {"name": "n", "type": "integer", "minimum": 1}),
            make("1.0.0", {"name": "n", "type": "integer", "minimum": 2}),
            BREAKING,
            "input 'n': minimum 1 -> 2",
            id="minimum-raised",
        ),
        pytest.param(
            make("1.0.0", {"name": "n", "type": "integer", "maximum": 1}),
            make("1.0.0", {"name": "n", "type": "integer", "maximum": 2}),
            COMPATIBLE,
            "input 'n': maximum 1 -> 2",
            id="maximum-raised",
        ),
        pytest.param(
            make("1.0.0"),
            make("1.0.0", UNITS),
            COMPATIBLE,
            "new optional input 'units'",
            id="new-optional",
        ),
        pytest.param(
            make("1.0.0", outputs=({"name": "x", "type": "float"},)),
            make("1.0.0"),
            BREAKING,
            "output 'x' removed",
            id="output-removed",
        ),
        pytest.param(
            make("1.0.0", outputs=({"name": "x", "type": "float"},)),
            make("1.0.0", outputs=({"name": "x", "type": "string"},)),
            BREAKING,
            "output 'x' changed type",
            id="output-type",
        ),
        pytest.param(
            make("1.0.0"),
            make("1.0.0", outputs=({"name": "x", "type": "float"},)),
            COMPATIBLE,
            "new output 'x'",
            id="output-added",
        ),
        pytest.param(
            make("1.0.0"),
            make("1.0.0", description="other"),
            COSMETIC,
            "description changed",
            id="description",
        ),
        pytest.param(
            make("1.0.0"),
            make("1.0.0", credentials=("k",)),
            BREAKING,
            "new credential 'k'",
            id="credential",
        ),
    ],
)
def test_changes_are_classified(old: Tool, new: Tool, kind: str, message: str) -> None:
    (diff,) = diff_tools([old], [new])
    assert diff.status == "changed"
    assert any(c.kind == kind and c.message.startswith(message) for c in diff.changes), diff.changes
    assert diff.severity == kind


@pytest.mark.parametrize(
    ("severity_tool", "new_version", "problem"),
    [
        pytest.param(make("1.0.0"), "2.0.0", None, id="major-for-breaking"),
        pytest.param(
            make("1.0.0"),
            "1.1.0",
            "breaking changes need at least a major version bump (1.0.0 -> 2.0.0), but this is a minor bump",
            id="minor-not-enough",
        ),
        pytest.param(make("1.0.0"), "1.0.0", "but the version did not rise", id="no-bump"),
        pytest.param(
            make("1.0.0"),
            "0.9.0",
            "the version went down (1.0.0 -> 0.9.0): breaking changes need at least a major version bump (1.0.0 -> 2.0.0)",
            id="lower",
        ),
    ],
)
def test_breaking_changes_need_a_major_bump(
    severity_tool: Tool, new_version: str, problem: str | None
) -> None:
    (diff,) = diff_tools([make("1.0.0", CITY)], [make(new_version)])
    if problem is None:
        assert diff.version_problem is None
    else:
        assert diff.version_problem is not None
        assert problem in diff.version_problem


def test_compatible_needs_minor_and_cosmetic_patch() -> None:
    (compatible,) = diff_tools([make("1.2.3")], [make("1.2.4", UNITS)])
    assert compatible.required_bump == "minor"
    assert compatible.version_problem is not None
    (cosmetic,) = diff_tools([make("1.2.3")], [make("1.2.4", description="new")])
    assert cosmetic.required_bump == "patch"
    assert cosmetic.version_problem is None


def test_added_and_removed_tools() -> None:
    class Other(Tool):
        TOOL_NAME = "other"

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return {}

    diffs = diff_tools([make()], [Other()])
    assert [(d.name, d.status, d.severity) for d in diffs] == [
        ("other", "added", COMPATIBLE),
        ("t", "removed", BREAKING),
    ]
    assert all(d.version_problem is None for d in diffs)


def test_unchanged_tools_are_not_listed() -> None:
    assert diff_tools([make("1.0.0", CITY)], [make("1.0.0", CITY)]) == []


def test_a_renamed_tool_is_compared_with_itself_under_its_old_name() -> None:
    old = make("1.0.0", CITY)
    new = make("2.0.0", CITY, description="other", name="t_renamed")
    diff = diff_renamed(old, new)
    assert [str(change) for change in diff.changes] == [
        "breaking: renamed from 't'",
        "cosmetic: description changed",
    ]
    assert (diff.name, diff.status, diff.severity, diff.version_problem) == (
        "t_renamed",
        "changed",
        BREAKING,
        None,
    )


def with_examples(version: str, *examples: dict[str, Any]) -> Tool:
    tool = make(version, {"name": "q", "type": "string"})
    type(tool).EXAMPLES = examples
    return tool


def test_examples_added_removed_and_changed_are_cosmetic() -> None:
    kept = {"name": "kept", "inputs": {"q": "a"}, "output": {}}
    gone = {"name": "gone", "inputs": {"q": "b"}, "output": {}}
    changed = {"name": "changed", "inputs": {"q": "c"}, "output": {}}
    old = with_examples("1.0.0", kept, gone, changed)
    new = with_examples(
        "1.0.0",
        kept,
        {**changed, "inputs": {"q": "C"}},
        {"name": "new", "inputs": {"q": "d"}, "fails": "execution"},
    )
    (diff,) = diff_tools([old], [new])
    assert [str(change) for change in diff.changes] == [
        "cosmetic: example 'new' added",
        "cosmetic: example 'gone' removed",
        "cosmetic: example 'changed' changed",
    ]
    assert diff.version_problem is not None  # a patch bump is due
    assert diff_tools([old], [with_examples("1.0.0", kept, gone, changed)]) == []


POLICY_TOOL = """\
name: lookup
version: 1.0.0
annotations: {{read_only: true}}
input_schema:
  parameters:
    - {{name: q, type: string}}
    - {{name: pin, type: string, required: false{sensitive}}}
output_schema: {{parameters: [{{name: n, type: integer}}]}}
{policies}backend:
  http:
    url: https://api.example.com/lookup
    query: {{q: "{{{{ inputs.q }}}}"}}
"""


def _loaded(tmp_path: Any, folder: str, policies: str = "", sensitive: str = "") -> Tool:
    where = tmp_path / folder
    where.mkdir()
    (where / "lookup.yaml").write_text(POLICY_TOOL.format(policies=policies, sensitive=sensitive))
    (cls,) = load_tools(where)
    return cls()


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        pytest.param(
            {"policies": "limits: {per_caller: {requests: 10, per: 1m}}\n"},
            {"policies": "limits: {per_caller: {requests: 1, per: 1m}}\n"},
            "limits changed",
            id="limits-tightened",
        ),
        pytest.param(
            {"policies": "cache: {ttl: 30s}\n"},
            {"policies": "cache: {ttl: 30s, scope: shared}\n"},
            "cache changed",
            id="cache-scope",
        ),
        pytest.param({"policies": "cache: {ttl: 30s}\n"}, {}, "cache changed", id="cache-removed"),
        pytest.param(
            {"policies": "max_output: {bytes: 5000}\n"},
            {"policies": "max_output: {bytes: 300}\n"},
            "answer budget (max_output) changed",
            id="max-output",
        ),
        pytest.param(
            {}, {"sensitive": ", sensitive: true"}, "input 'pin': marked sensitive", id="sensitive"
        ),
        pytest.param(
            {"sensitive": ", sensitive: true"},
            {},
            "input 'pin': no longer marked sensitive",
            id="not-sensitive",
        ),
    ],
)
def test_how_a_tools_calls_are_served_is_a_compatible_change(
    tmp_path: Any, before: dict[str, str], after: dict[str, str], message: str
) -> None:
    # Limits, caches, answer budgets and what the audit masks are the tool's own
    # business as much as its source's: each change needs a minor version.
    (diff,) = diff_tools([_loaded(tmp_path, "old", **before)], [_loaded(tmp_path, "new", **after)])
    assert any(c.kind == COMPATIBLE and c.message == message for c in diff.changes), diff.changes
    assert diff.version_problem is not None
    assert "minor" in diff.version_problem
