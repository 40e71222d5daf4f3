"""What an import reports: the tools it wrote, left out and renamed, and why it wrote none."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, final

from agentkit.openapi import swagger
from agentkit.openapi.operations import METHODS, Operation, path_items
from agentkit.openapi.reader import problem
from agentkit.toolerrors import Problem

#: How many skipped operations the error of an import that writes nothing lists.
_SHOWN_SKIPPED: Final = 10


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Renamed:
    """A tool whose name was taken: it got ``name`` instead of ``wanted``."""

    wanted: str
    name: str
    pointer: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """An operation left out, and why (``problem`` locates it in the description)."""

    operation: str
    problem: Problem


@final
@dataclass(slots=True, kw_only=True)
class ImportReport:
    """What an import wrote, left out and renamed."""

    written: list[Path] = field(default_factory=list)
    #: How many tools the written files hold (a file may hold several: ``layout="tag"``).
    tools: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    renamed: list[Renamed] = field(default_factory=list)
    deprecated: list[str] = field(default_factory=list)
    notes: int = 0
    #: What the schema check (``agentkit.openapi.check``) found; None when it did not run.
    findings: list[Problem] | None = None
    #: Tools generated with less depth to fit the schema budget, and those still over it.
    fitted: list[str] = field(default_factory=list)
    over_budget: list[str] = field(default_factory=list)
    #: Streaming query parameters left out (``watch``, ``follow``), over all tools.
    streaming: int = 0
    #: The tags of the operations the description has, for choosing among many tools.
    tags: list[str] = field(default_factory=list)


def nothing_imported(
    document: dict[str, Any], found: list[Operation], selected: int, report: ImportReport
) -> list[Problem]:
    """Why an import would write no tool: what the description lacks, or each reason
    the selected operations were left out (a source alone is no import)."""
    original = document.get(swagger.ORIGINAL_KEY)
    written = original if isinstance(original, dict) else document
    if not found:
        return [problem("#/paths", _no_operations(written))]
    if not selected:
        return [problem("#/paths", "no operation matches the selection; widen the filters")]
    reasons = []
    if report.skipped:
        reasons.append(f"{len(report.skipped)} cannot be expressed (each reason below)")
    if report.deprecated:
        reasons.append(f"{len(report.deprecated)} deprecated (give --include-deprecated)")
    headline = problem(
        "#/paths",
        f"none of the {selected} selected operation(s) can be imported: {'; '.join(reasons)}",
    )
    shown = [
        problem(item.problem.path, f"{item.operation}: {item.problem.message}")
        for item in report.skipped[:_SHOWN_SKIPPED]
    ]
    if len(report.skipped) > _SHOWN_SKIPPED:
        more = len(report.skipped) - _SHOWN_SKIPPED
        shown.append(problem("#/paths", f"and {more} more operation(s) skipped"))
    return [headline, *shown]


def _no_operations(document: dict[str, Any]) -> str:
    """What is wrong with a description without a single operation, and what would do."""
    fix = (
        "an import needs at least one operation under 'paths' (such as "
        "'/pets': {get: {responses: ...}})"
    )
    paths = document.get("paths")
    if "paths" not in document:
        webhooks = (
            " ('webhooks' are calls the API makes, not tools)" if "webhooks" in document else ""
        )
        return f"missing 'paths': the description defines no operation{webhooks}; {fix}"
    items = path_items(paths) if isinstance(paths, dict) else {}
    if not items:
        only = " but for x- extensions" if paths else ""
        return f"'paths' is empty{only}: the description defines no operation; {fix}"
    by_ref = sum(1 for item in items.values() if isinstance(item, dict) and "$ref" in item)
    ref_note = f" ({by_ref} given by a path item $ref, which is not followed)" if by_ref else ""
    methods = ", ".join(METHODS)
    return f"none of the {len(items)} path(s) has an operation ({methods}){ref_note}; {fix}"
