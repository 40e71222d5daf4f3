"""The tools the MCP conformance suite calls by name, as Python backends (``make conformance``)."""

from __future__ import annotations

import asyncio
from typing import Any

from agentkit.context import log, report_progress


def simple_text() -> dict[str, Any]:
    return {"text": "This is a simple text response for testing."}


def error_handling() -> dict[str, Any]:
    raise RuntimeError("This tool intentionally returns an error for testing")


async def with_progress() -> dict[str, Any]:
    for done in (0, 50, 100):
        report_progress(done=done, total=100, message=f"{done}% done")
        await asyncio.sleep(0.05)
    return {"text": "Progress complete."}


async def with_logging() -> dict[str, Any]:
    log("info", "Tool execution started")
    await asyncio.sleep(0.05)
    log("info", "Tool processing data")
    await asyncio.sleep(0.05)
    log("info", "Tool execution completed")
    return {"text": "Logging complete."}
