"""What ``agentkit import openapi --update`` reports: each tracked operation added,
removed, kept or deleted, each tool's change as ``agentkit diff`` classifies it, and
the keys both sides changed, where the reviewer's value was kept."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, final

from agentkit.adapters.diff import ToolDiff
from agentkit.openapi.import_report import ImportReport
from agentkit.openapi.merge import MISSING, Clash

_SHOWN: Final = 80


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Conflict:
    """A key both the reviewer and the description changed: the reviewer's value was kept."""

    file: Path
    line: int
    tool: str
    field: str
    ours: Any
    theirs: Any

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.tool}: {self.field}: {resolution(self)}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Operation:
    """A tracked operation the update reports on: its tool name and ``METHOD /path``."""

    name: str
    key: str

    def __str__(self) -> str:
        return f"{self.name} ({self.key})"


@final
@dataclass(slots=True, kw_only=True)
class UpdateReport:
    """What an update changed, kept and could not reconcile."""

    generation: ImportReport
    #: Each tool's change as ``agentkit diff`` classifies it, with the version it got.
    classified: list[ToolDiff] = field(default_factory=list)
    added: list[Operation] = field(default_factory=list)
    removed: list[Operation] = field(default_factory=list)
    #: Gone from the description but edited by the reviewer: kept, no longer tracked.
    kept_gone: list[Operation] = field(default_factory=list)
    #: Deleted by the reviewer: not written again (``newly`` the ones deleted since last time).
    deleted: list[Operation] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    unchanged: int = 0


def resolution(clash: Clash | Conflict) -> str:
    """What a clash was resolved to: always the reviewer's side, and what was not taken."""
    if clash.ours is MISSING:
        return f"kept removed, as you left it; the description now gives {_shown(clash.theirs)}"
    if clash.theirs is MISSING:
        return f"kept yours ({_shown(clash.ours)}); the description no longer has it"
    return f"kept yours ({_shown(clash.ours)}); the description now gives {_shown(clash.theirs)}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
