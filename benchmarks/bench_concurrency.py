"""Many slow calls at once: 128 tools that each wait 50 ms, against the 50 ms ideal.

``aexecute_many`` runs async tools on the event loop; until it exists this
prints "not available". ``execute_many`` of sync tools that sleep (a thread
pool capped at 32) is printed alongside, as today's way to do it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from agentkit import STATUS_SUCCESS, Tool, ToolExecutor
from benchmarks.timing import target_line

CALLS = 128
WAIT = 0.05
ROUNDS = 5  # a round lasts ~60 ms: cheap, and a neighbour rarely spoils all five
_SCHEMA = {"parameters": [{"name": "n", "type": "integer"}]}


class SleepingTool(Tool):
    TOOL_NAME = "sleep_50ms"
    TOOL_DESCRIPTION = "Blocks its thread for 50 ms, like a sync HTTP call would."
    INPUT_SCHEMA = _SCHEMA
    OUTPUT_SCHEMA = _SCHEMA

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        time.sleep(WAIT)
        return {"n": inputs["n"]}


async def _await_wait(self: Tool, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
    await asyncio.sleep(WAIT)
    return {"n": inputs["n"]}


def _async_tool() -> Tool:
    # Built with type() so this file type-checks both before and after Tool learns
    # about `async def execute` (a subclass statement would need a type: ignore today
    # and would make it an unused one tomorrow).
    namespace = {
        "TOOL_NAME": "await_50ms",
        "TOOL_DESCRIPTION": "Awaits 50 ms on the event loop, like an async HTTP call would.",
        "INPUT_SCHEMA": _SCHEMA,
        "OUTPUT_SCHEMA": _SCHEMA,
        "execute": _await_wait,
    }
    return cast("type[Tool]", type("AwaitingTool", (Tool,), namespace))()


def _best_seconds(run: Callable[[], float]) -> float:
    return min(run() for _ in range(ROUNDS))


def _bare_gather() -> float:
    async def main() -> float:
        started = time.perf_counter()
        await asyncio.gather(*(asyncio.sleep(WAIT) for _ in range(CALLS)))
        return time.perf_counter() - started

    return asyncio.run(main())


def _aexecute_many() -> float:
    tool = _async_tool()
    executor = ToolExecutor(credentials={})
    calls = [(tool, {"n": index}) for index in range(CALLS)]
    aexecute_many = executor.aexecute_many  # type: ignore[attr-defined,unused-ignore]

    async def main() -> float:
        started = time.perf_counter()
        results = await aexecute_many(calls)
        elapsed = time.perf_counter() - started
        failed = [result for result in results if result.status != STATUS_SUCCESS]
        if len(results) != CALLS or failed:
            raise RuntimeError(f"aexecute_many: {len(failed)} of {len(results)} calls failed")
        return elapsed

    return asyncio.run(main())


def _execute_many() -> float:
    tool = SleepingTool()
    executor = ToolExecutor(credentials={})
    calls = [(tool, {"n": index}) for index in range(CALLS)]
    started = time.perf_counter()
    executor.execute_many(calls)
    return time.perf_counter() - started


def run() -> list[str]:
    lines = [f"concurrency: {CALLS} calls each waiting {WAIT * 1e3:.0f} ms (best of {ROUNDS})"]
    floor = _best_seconds(_bare_gather)
    lines.append(f"  {'asyncio.gather of bare sleeps (floor)':<42} {floor * 1e3:7.1f} ms")
    if hasattr(ToolExecutor, "aexecute_many"):
        seconds = _best_seconds(_aexecute_many)
        lines.append(f"  {'aexecute_many, async tools':<42} {seconds * 1e3:7.1f} ms")
        ratio_line = target_line("aexecute_many / the 50 ms ideal", seconds / WAIT, 1.2)
    else:
        lines.append(f"  {'aexecute_many, async tools':<42} not available")
        ratio_line = "  target: aexecute_many / the 50 ms ideal <= 1.2x: not available -> MISS"
    threaded = _best_seconds(_execute_many)
    lines.append(
        f"  {'execute_many, sync tools (thread pool)':<42} {threaded * 1e3:7.1f} ms  "
        f"{threaded / WAIT:5.2f}x ideal"
    )
    lines.append(ratio_line)
    return lines
