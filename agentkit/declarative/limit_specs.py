"""The ``limits:`` key of a definition, a source or a toolset, checked where it is written.

What the limits mean and how they are counted is ``agentkit.ratelimits``'; this
reports each problem of the YAML at its own ``file:line``.
"""

from __future__ import annotations

from typing import Any

from agentkit.declarative.problems import Problems
from agentkit.ratelimits import Limits, parse_limits

__all__ = ["parse_limits_at"]


def parse_limits_at(
    raw: dict[str, Any], owner: str, key: str, problems: Problems, *, source: bool = False
) -> Limits | None:
    """The limits under ``raw["limits"]``, or None: none given, or problems reported."""
    if "limits" not in raw:
        return None
    limits, found = parse_limits(
        raw["limits"],
        owner=owner,
        key=key,
        where=f"{problems.path}:{problems.start[0]}",
        source=source,
    )
    for keys, message in found:
        problems.add(("limits", *keys), message)
    return limits
