"""Python backends that count their calls, for the tests of kept answers."""

from __future__ import annotations

from typing import Any

CALLS: list[str] = []


async def counted(key: str) -> dict[str, Any]:
    """An async tool: how many calls reached it so far, this one included."""
    CALLS.append(key)
    return {"n": len(CALLS)}
