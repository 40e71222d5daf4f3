"""Which operations an import takes (``Selection``), the name each tool gets, and the
file each goes in (``Layout``): decided in the description's order, so each run agrees."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from agentkit.openapi.import_report import ImportReport, Renamed
from agentkit.openapi.naming import NameTable, identifier, operation_name
from agentkit.openapi.operations import Operation
from agentkit.openapi.reader import problem
from agentkit.toolerrors import OpenAPIError, Problem, UsageError

#: How tools are laid out in files: one file per operation, or one per tag.
Layout = Literal["operation", "tag"]
LAYOUTS: Final[tuple[Layout, ...]] = ("operation", "tag")
#: The file of the operations without a tag, in the ``tag`` layout.
UNTAGGED: Final = "untagged"
_SELECTION_KEYS = ("tags", "operations", "methods", "exclude")


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """Which operations to import: each given filter must match (an empty one matches all)."""

    tags: Sequence[str] = ()
    operations: Sequence[str] = ()
    methods: Sequence[str] = ()
    exclude: Sequence[str] = ()
    deprecated: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {key: list(getattr(self, key)) for key in _SELECTION_KEYS}
        data["deprecated"] = self.deprecated
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Selection:
        """The selection ``to_json`` wrote (a lock file's); unknown keys are ignored."""
        values = {key: tuple(str(item) for item in data.get(key) or ()) for key in _SELECTION_KEYS}
        return cls(**values, deprecated=data.get("deprecated") is True)

    def wants(self, op: Operation) -> bool:
        ids = {op.name, op.operation_id or ""}
        if self.tags and not set(self.tags) & set(op.tags):
            return False
        if self.operations and not ids & set(self.operations):
            return False
        if self.methods and op.method not in {method.upper() for method in self.methods}:
            return False
        return not ids & set(self.exclude)


def as_layout(value: object) -> Layout:
    """``value`` as a layout; ``UsageError`` naming the layouts for anything else."""
    for layout in LAYOUTS:
        if value == layout:
            return layout
    raise UsageError(f"unknown layout {value!r}: expected one of {', '.join(LAYOUTS)}")


def is_kept(op: Operation, keep: Collection[str]) -> bool:
    return f"{op.method} {op.path}" in keep or (op.operation_id or "") in keep


def name_operations(
    found: list[Operation], report: ImportReport, keep: Collection[str] = ()
) -> None:
    """Names for every operation, taken in the description's order, so each run agrees.

    Operations in ``keep`` (an update's tracked ones) choose first: a new operation
    that wants the same name gets ``_2``, not the tool that had it.
    """
    table = NameTable()
    for op in sorted(found, key=lambda op: not is_kept(op, keep)):
        wanted = operation_name(op.operation_id, op.method, op.path)
        op.name = table.claim(wanted)
        if op.name != wanted:
            report.renamed.append(Renamed(wanted=wanted, name=op.name, pointer=op.pointer))


def tag_files(found: list[Operation], source: str) -> dict[str, str]:
    """Tool name -> its file in the ``tag`` layout: ``SOURCE.TAG.yaml`` for its first tag,
    ``SOURCE.untagged.yaml`` without one. Tags take file names in the description's
    order (unique as tool names are, never ``source``), so each run agrees."""
    table = NameTable(("source",))
    stems: dict[str | None, str] = {}
    files: dict[str, str] = {}
    for op in found:
        tag = op.tags[0] if op.tags else None
        if tag not in stems:
            wanted = identifier(tag, fallback="tag", prefix="tag") if tag is not None else UNTAGGED
            stems[tag] = table.claim(wanted)
        files[op.name] = f"{source}.{stems[tag]}.yaml"
    return files


def check_filters(spec: str, found: list[Operation], selection: Selection) -> None:
    known = sorted({op.name for op in found} | {op.operation_id for op in found if op.operation_id})
    problems: list[Problem] = []
    for given in (*selection.operations, *selection.exclude):
        if given not in known:
            close = difflib.get_close_matches(given, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(problem("#/paths", f"no operation {given!r}{hint}"))
    tags = {tag for op in found for tag in op.tags}
    for tag in selection.tags:
        if tag not in tags:
            close = difflib.get_close_matches(tag, sorted(tags), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(problem("#/paths", f"no operation has tag {tag!r}{hint}"))
    if problems:
        raise OpenAPIError(spec, problems)
