"""Mappings and sequences from YAML that remember where each of their values came from.

``LocatedDict`` and ``LocatedList`` are ordinary ``dict`` and ``list``
subclasses that also hold the line and column of each entry, so a problem
found later, while checking a definition, can still point at its line;
``locate`` finds the position of a value by its path.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LocatedDict", "LocatedList", "Position", "locate"]

Position = tuple[int, int]  # 1-based line and column


class LocatedDict(dict[Any, Any]):
    """A mapping from YAML, with ``positions[key]`` the line and column of each value."""

    __slots__ = ("position", "positions")

    position: Position
    positions: dict[Any, Position]


class LocatedList(list[Any]):
    """A sequence from YAML, with ``positions[i]`` the line and column of each item."""

    __slots__ = ("position", "positions")

    position: Position
    positions: list[Position]


def locate(root: Any, location: tuple[str | int, ...], fallback: Position) -> Position:
    """The position of the value at ``location`` under ``root``, or of its nearest ancestor."""
    position = getattr(root, "position", fallback)
    node = root
    for part in location:
        if isinstance(node, LocatedDict):
            if part not in node:
                break
            position = node.positions[part]
        elif isinstance(node, LocatedList) and isinstance(part, int) and 0 <= part < len(node):
            position = node.positions[part]
        else:
            break
        node = node[part]
    return position
