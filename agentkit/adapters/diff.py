"""Comparing two sets of tool definitions, and checking each version bump.

Each change is classified for the caller of the tool:

- **breaking** -- a tool removed; an input removed, made required, added as
  required, or changed in type; an input's enum narrowed, its minimum raised,
  its maximum lowered or its pattern changed; an output field removed or changed
  in type; a new credential;
- **compatible** -- a tool added; a new optional input; an input's enum widened
  or its bounds relaxed; a default changed; a new output field; a credential
  dropped; a backend changed; a source a tool uses changed;
- **cosmetic** -- descriptions, tags, annotations and examples.

A changed tool's version must rise by at least a major version for breaking
changes, a minor one for compatible changes and a patch for cosmetic ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, final

from agentkit.schema.values import TypeSpec, enum_key, type_members
from agentkit.tool import Tool
from agentkit.toolexamples import examples_of
from agentkit.toolschema import Parameter, ToolSchema

__all__ = [
    "BREAKING",
    "COMPATIBLE",
    "COSMETIC",
    "Change",
    "ToolDiff",
    "diff_renamed",
    "diff_tools",
    "next_version",
]

BREAKING: Final = "breaking"
COMPATIBLE: Final = "compatible"
COSMETIC: Final = "cosmetic"
_RANK: Final = {COSMETIC: 1, COMPATIBLE: 2, BREAKING: 3}
_BUMP_FOR: Final = {BREAKING: "major", COMPATIBLE: "minor", COSMETIC: "patch"}
_BUMP_RANK: Final = {"none": 0, "patch": 1, "minor": 2, "major": 3}
_SEMVER: Final = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    kind: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDiff:
    """One tool's difference between the old and the new set."""

    name: str
    status: str  # "added", "removed" or "changed"
    old_version: str | None
    new_version: str | None
    changes: tuple[Change, ...] = field(default=())

    @classmethod
    def added(cls, name: str, version: str | None) -> ToolDiff:
        """A new tool: a compatible change, whatever it holds."""
        change = Change(kind=COMPATIBLE, message="tool added")
        return cls(
            name=name, status="added", old_version=None, new_version=version, changes=(change,)
        )

    @classmethod
    def removed(cls, name: str, version: str | None) -> ToolDiff:
        """A tool gone: breaking for every caller."""
        change = Change(kind=BREAKING, message="tool removed")
        return cls(
            name=name, status="removed", old_version=version, new_version=None, changes=(change,)
        )

    @property
    def severity(self) -> str | None:
        """The most serious kind among the changes."""
        return max((c.kind for c in self.changes), key=_RANK.__getitem__, default=None)

    @property
    def required_bump(self) -> str | None:
        return _BUMP_FOR[self.severity] if self.status == "changed" and self.severity else None

    @property
    def bump(self) -> str | None:
        if self.old_version is None or self.new_version is None:
            return None
        return _bump(self.old_version, self.new_version)

    @property
    def version_problem(self) -> str | None:
        """Why the version bump is not enough, or None when it is."""
        needed = self.required_bump
        if _lowered(self.old_version, self.new_version):
            lowered = f"the version went down ({self.old_version} -> {self.new_version})"
            if needed is None:
                return (
                    f"{lowered}: a version only rises; give version: {self.old_version} or "
                    "higher (a definition without a version is at 1.0.0)"
                )
            return (
                f"{lowered}: {self.severity} changes need at least a {needed} version bump "
                f"({self.old_version} -> {next_version(self.old_version or '0.0.0', needed)})"
            )
        if needed is None:
            return None
        got = self.bump or "none"
        if _BUMP_RANK[got] >= _BUMP_RANK[needed]:
            return None
        return (
            f"{self.severity} changes need at least a {needed} version bump "
            f"({self.old_version} -> {next_version(self.old_version or '0.0.0', needed)}), "
            + ("but the version did not rise" if got == "none" else f"but this is a {got} bump")
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "severity": self.severity,
            "required_bump": self.required_bump,
            "bump": self.bump,
            "version_problem": self.version_problem,
            "changes": [change.to_dict() for change in self.changes],
        }


def diff_tools(old: Iterable[Tool], new: Iterable[Tool]) -> list[ToolDiff]:
    """The differences between two sets of tools, by name, in sorted order."""
    before = {tool.name: tool for tool in old}
    after = {tool.name: tool for tool in new}
    diffs = []
    for name in sorted(before.keys() | after.keys()):
        if name not in after:
            diffs.append(ToolDiff.removed(name, before[name].version))
        elif name not in before:
            diffs.append(ToolDiff.added(name, after[name].version))
        else:
            changes = tuple(_tool_changes(before[name], after[name]))
            if changes or _lowered(before[name].version, after[name].version):
                diffs.append(
                    ToolDiff(
                        name=name,
                        status="changed",
                        old_version=before[name].version,
                        new_version=after[name].version,
                        changes=changes,
                    )
                )
    return diffs


def diff_renamed(old: Tool, new: Tool) -> ToolDiff:
    """``old`` renamed to ``new``: breaking (callers ask for it by name), with every
    other change between the two, as ``diff_tools`` finds them for one name."""
    renamed = Change(kind=BREAKING, message=f"renamed from '{old.name}'")
    return ToolDiff(
        name=new.name,
        status="changed",
        old_version=old.version,
        new_version=new.version,
        changes=(renamed, *_tool_changes(old, new)),
    )


def _tool_changes(old: Tool, new: Tool) -> Iterable[Change]:
    if old.description != new.description:
        yield Change(kind=COSMETIC, message="description changed")
    if old.tags != new.tags:
        yield Change(kind=COSMETIC, message="tags changed")
    if old.annotations != new.annotations:
        yield Change(kind=COSMETIC, message="annotations changed")
    yield from _example_changes(old, new)
    for name in sorted(set(new.credential_names) - set(old.credential_names)):
        yield Change(kind=BREAKING, message=f"new credential '{name}' (callers must provide it)")
    for name in sorted(set(old.credential_names) - set(new.credential_names)):
        yield Change(kind=COMPATIBLE, message=f"credential '{name}' no longer needed")
    yield from _schema_changes(old.input_schema, new.input_schema, "input", "")
    yield from _schema_changes(old.output_schema, new.output_schema, "output", "")
    yield from _policy_changes(old, new)
    old_backend, old_source = _backend_of(old)
    new_backend, new_source = _backend_of(new)
    if old_backend != new_backend:
        yield Change(kind=COMPATIBLE, message="backend changed")
    if old_source != new_source:
        if new_source is not None:
            yield Change(kind=COMPATIBLE, message=f"source '{new_source['name']}' changed")
        elif old_source is not None:
            yield Change(kind=COMPATIBLE, message=f"source '{old_source['name']}' no longer used")


#: What a definition says of how its calls are served, beside what they do: a change
#: is compatible (a minor version), as a change of its source is.
_POLICIES: Final = (
    ("max_output", "answer budget (max_output)"),
    ("limits", "limits"),
    ("cache", "cache"),
)


def _policy_changes(old: Tool, new: Tool) -> Iterable[Change]:
    """A change of the answer budget, the limits or the cache of a tool."""
    before, after = _policies(old), _policies(new)
    for key, said in _POLICIES:
        if before.get(key) != after.get(key):
            yield Change(kind=COMPATIBLE, message=f"{said} changed")


def _policies(tool: Tool) -> dict[str, Any]:
    definition = tool.definition
    if definition is not None:
        written = definition.to_dict()
        return {key: written.get(key) for key, _ in _POLICIES}
    return {"max_output": getattr(tool, "MAX_OUTPUT", None)}


def _example_changes(old: Tool, new: Tool) -> Iterable[Change]:
    """Examples added, removed or changed, by name: cosmetic (callers see their inputs
    only as hints, in exports)."""
    before = {example.name: example for example in examples_of(old)}
    after = {example.name: example for example in examples_of(new)}
    for name in sorted(after.keys() - before.keys()):
        yield Change(kind=COSMETIC, message=f"example '{name}' added")
    for name in sorted(before.keys() - after.keys()):
        yield Change(kind=COSMETIC, message=f"example '{name}' removed")
    for name in sorted(before.keys() & after.keys()):
        if before[name] != after[name]:
            yield Change(kind=COSMETIC, message=f"example '{name}' changed")


def _backend_of(tool: Tool) -> tuple[Any, Any]:
    """What runs ``tool``: its definition's ``backend`` as written (or its class), and the
    source it uses, as loaded: a source's change is a change of every tool that uses it
    (but for its shared parameters, compared in each tool's input schema)."""
    definition = tool.definition
    if definition is None:
        return type(tool).__qualname__, None
    source = definition.loaded_with().get("http_source")
    if source is not None:
        # Where it is defined, and its description (for people: an API's version
        # string, say), are not what it does.
        source = {key: value for key, value in source.items() if key != "defined_at"}
        written = source.get("definition")
        if isinstance(written, dict):
            # Its shared parameters and tags count where a tool takes them: in the tool's
            # input schema and its tags.
            source["definition"] = {
                k: v for k, v in written.items() if k not in ("description", "parameters", "tags")
            }
    return definition.to_dict().get("backend"), source


def _schema_changes(old: ToolSchema, new: ToolSchema, side: str, prefix: str) -> Iterable[Change]:
    for param in old:
        path = prefix + param.name
        if param.name not in new:
            yield Change(kind=BREAKING, message=f"{side} '{path}' removed")
            continue
        yield from _parameter_changes(param, new[param.name], side, path)
    for param in new:
        if param.name in old:
            continue
        path = prefix + param.name
        if side == "output":
            yield Change(kind=COMPATIBLE, message=f"new output '{path}'")
        elif param.required:
            yield Change(kind=BREAKING, message=f"new required input '{path}'")
        else:
            yield Change(kind=COMPATIBLE, message=f"new optional input '{path}'")


def _parameter_changes(old: Parameter, new: Parameter, side: str, path: str) -> Iterable[Change]:
    what = f"{side} '{path}'"
    # A union's order is not significant: callers can send and get the same values.
    if set(type_members(old.type)) != set(type_members(new.type)):
        yield _type_change(old.type, new.type, side, what)
        return
    if old.description != new.description:
        yield Change(kind=COSMETIC, message=f"{what}: description changed")
    if old.sensitive != new.sensitive:
        # What the audit trail keeps of it changes: a reviewer must see that.
        marked = "marked sensitive" if new.sensitive else "no longer marked sensitive"
        yield Change(kind=COMPATIBLE, message=f"{what}: {marked}")
    if side == "input":
        yield from _input_constraints(old, new, what)
    elif _enum_keys(old) != _enum_keys(new):
        yield Change(kind=COMPATIBLE, message=f"{what}: enum changed")
    if old.items is not None and new.items is not None:
        yield from _parameter_changes(old.items, new.items, side, f"{path}[]")
    elif (old.items is None) != (new.items is None):
        yield Change(kind=BREAKING, message=f"{what}: element type changed")
    if old.parameters is not None and new.parameters is not None:
        yield from _schema_changes(old.parameters, new.parameters, side, f"{path}.")
    elif (old.parameters is None) != (new.parameters is None):
        yield Change(kind=BREAKING, message=f"{what}: nested parameters changed")


#: The bounds of an input, each with whether it is a lower one.
_BOUNDS: Final = (
    ("minimum", True),
    ("maximum", False),
    ("min_length", True),
    ("max_length", False),
)


def _input_constraints(old: Parameter, new: Parameter, what: str) -> Iterable[Change]:
    if old.name and not old.required and new.required:
        yield Change(kind=BREAKING, message=f"{what} became required")
    elif old.name and old.required and not new.required:
        yield Change(kind=COMPATIBLE, message=f"{what} became optional")
    before, after = _enum_keys(old), _enum_keys(new)
    if before != after:
        if before is None or (after is not None and not before <= after):
            yield Change(kind=BREAKING, message=f"{what}: enum narrowed")
        else:
            yield Change(kind=COMPATIBLE, message=f"{what}: enum widened")
    for key, lower in _BOUNDS:
        before, after = getattr(old, key), getattr(new, key)
        if before == after:
            continue
        # A bound added, a lower bound raised or an upper one lowered refuses values.
        narrowed = after is not None and (
            before is None or (after > before if lower else after < before)
        )
        yield Change(
            kind=BREAKING if narrowed else COMPATIBLE,
            message=f"{what}: {key} {before} -> {after}",
        )
    if old.pattern != new.pattern:
        kind = COMPATIBLE if new.pattern is None else BREAKING
        yield Change(kind=kind, message=f"{what}: pattern changed")
    if old.default != new.default:
        yield Change(kind=COMPATIBLE, message=f"{what}: default changed")


def _version(text: str) -> tuple[int, int, int]:
    match = _SEMVER.match(text)
    if match is None:
        return (0, 0, 0)
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch)


def _lowered(old: str | None, new: str | None) -> bool:
    """True when ``new`` is a lower version than ``old`` (both semantic versions)."""
    if old is None or new is None or not (_SEMVER.match(old) and _SEMVER.match(new)):
        return False
    return _version(new) < _version(old)


def _bump(old: str, new: str) -> str:
    before, after = _version(old), _version(new)
    if after <= before:
        return "none"
    if after[0] > before[0]:
        return "major"
    if after[1] > before[1]:
        return "minor"
    return "patch"


def next_version(old: str, needed: str) -> str:
    """``old`` raised by a ``needed`` bump: ``major``, ``minor`` or ``patch``."""
    major, minor, patch = _version(old)
    if needed == "major":
        return f"{major + 1}.0.0"
    if needed == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def summary(diffs: Iterable[ToolDiff]) -> Mapping[str, int]:
    counts = {"added": 0, "removed": 0, "changed": 0, "version_problems": 0}
    for diff in diffs:
        counts[diff.status] += 1
        counts["version_problems"] += diff.version_problem is not None
    return counts


def _type_change(old: TypeSpec, new: TypeSpec, side: str, what: str) -> Change:
    """Widening an input's types (string -> string or integer) is compatible; else breaking.

    An output's readers break on a type they did not expect, so for outputs only
    narrowing is compatible.
    """
    before, after = set(type_members(old)), set(type_members(new))
    wider, narrower = after > before, after < before
    text = f"{what} changed type from {_label(old)} to {_label(new)}"
    if (side == "input" and wider) or (side == "output" and narrower):
        return Change(kind=COMPATIBLE, message=text)
    return Change(kind=BREAKING, message=text)


def _enum_keys(param: Parameter) -> frozenset[tuple[str, Any]] | None:
    """The enum's values as JSON tells them apart (``1`` is not ``true``), in no order."""
    return None if param.enum is None else frozenset(enum_key(value) for value in param.enum)


def _label(declared: TypeSpec) -> str:
    return declared if isinstance(declared, str) else "|".join(declared)
