"""Collecting definition problems against the YAML they came from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkit.declarative.yamlsource import Position, locate
from agentkit.toolerrors import DefinitionProblem, did_you_mean, format_location

Location = tuple[str | int, ...]


class Problems:
    """The problems of one document: each located at the line its key or value is on."""

    def __init__(self, path: str, root: Any, start: Position) -> None:
        self.path = path
        self.root = root
        self.start = start
        self.found: list[DefinitionProblem] = []

    def add(self, location: Location, message: str) -> None:
        line, column = locate(self.root, location, self.start)
        self.found.append(
            DefinitionProblem(self.path, line, column, format_location(location), message)
        )

    def __bool__(self) -> bool:
        return bool(self.found)

    def __len__(self) -> int:
        return len(self.found)


def check_keys(
    raw: Any, allowed: Sequence[str], location: Location, problems: Problems, what: str
) -> bool:
    """Report unknown keys of mapping ``raw``; False (and a problem) when it is not a mapping."""
    if not isinstance(raw, dict):
        problems.add(location, f"{what} must be a mapping, got '{type(raw).__name__}'")
        return False
    for key in raw:
        if key not in allowed:
            problems.add(
                (*location, str(key)),
                f"unknown key '{key}'{did_you_mean(str(key), allowed)}; "
                f"{what} takes: {', '.join(allowed)}",
            )
    return True
