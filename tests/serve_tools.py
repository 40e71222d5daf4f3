"""Python backends for the serving tests: slow calls that say what became of them.

Each writes ``<marker>.started`` when it begins and ``<marker>.<fate>`` when it ends
(finished, cancelled), so a test can wait for a call to be running and learn how it
ended without timing anything.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any


def _mark(marker: str, fate: str) -> None:
    if marker:
        Path(f"{marker}.{fate}").write_text(fate)


async def nap(seconds: float, marker: str = "") -> dict[str, Any]:
    """Sleep on the event loop (an async tool, so a deadline or cancel stops it)."""
    _mark(marker, "started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _mark(marker, "cancelled")
        raise
    _mark(marker, "finished")
    return {"slept": seconds}


def doze(seconds: float, marker: str = "") -> dict[str, Any]:
    """Sleep in a thread (a sync tool: a deadline can only abandon it)."""
    _mark(marker, "started")
    time.sleep(seconds)
    _mark(marker, "finished")
    return {"slept": seconds}
