"""A served call past its deadline: the error names the option that set it and what to do."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from agentkit import AsyncTool, Tool, ToolExecutor, ToolRegistry, ToolTimeoutError

pytest.importorskip("mcp")

from mcp import Client  # after the skip: the MCP SDK is an extra

from agentkit.mcp.admission import CallLimits
from agentkit.mcp.server import build_server

DEADLINE = 0.2
#: Long enough that a tool waiting on it is always past DEADLINE; the tests release it.
HELD_SECONDS = 30
released = threading.Event()
#: Set by the blocking tool once it runs, so a second call can be sent while it holds its slot.
running = threading.Event()


class Stuck(AsyncTool):
    TOOL_NAME = "stuck"
    TOOL_DESCRIPTION = "Waits until cancelled."

    async def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        await asyncio.sleep(HELD_SECONDS)
        return {}


class Blocking(Tool):
    TOOL_NAME = "blocking"
    TOOL_DESCRIPTION = "Blocks its thread until released."

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        running.set()
        released.wait(HELD_SECONDS)
        return {}


class OwnTimeout(Tool):
    TOOL_NAME = "own_timeout"
    TOOL_DESCRIPTION = "Fails with a deadline of its own."

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        raise ToolTimeoutError("inner", 7.0, abandoned=False)


class WithToken(AsyncTool):
    TOOL_NAME = "with_token"
    TOOL_DESCRIPTION = "Waits until cancelled, holding a credential."
    CREDENTIAL_NAMES = ("token",)

    async def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        await asyncio.sleep(HELD_SECONDS)
        return {}


def _call(
    name: str,
    limits: CallLimits | None = None,
    *,
    calls: int = 1,
    call_timeout: float = DEADLINE,
) -> list[Any]:
    """Call ``name`` ``calls`` times; each call after the first once the first is running."""
    registry = ToolRegistry([Stuck(), Blocking(), OwnTimeout(), WithToken()])
    executor = ToolExecutor(credentials={"token": "tok-secret-value"})
    running.clear()

    async def main() -> list[Any]:
        results: list[Any] = []
        server = build_server(registry, executor, call_timeout=call_timeout, limits=limits)
        with anyio.fail_after(HELD_SECONDS / 2):
            async with Client(server) as client, anyio.create_task_group() as group:
                group.start_soon(lambda: _append(client, name, results))
                if calls > 1:
                    await anyio.to_thread.run_sync(running.wait, HELD_SECONDS / 4)
                for _ in range(calls - 1):
                    group.start_soon(lambda: _append(client, name, results))
        return results

    try:
        return anyio.run(main)
    finally:
        released.set()
        executor.close()


async def _append(client: Any, name: str, results: list[Any]) -> None:
    results.append(await client.call_tool(name, {}))


@pytest.mark.parametrize(
    ("name", "fate"),
    [
        pytest.param("stuck", "it was cancelled", id="async-cancelled"),
        pytest.param(
            "blocking",
            "its thread cannot be stopped and runs on, its result will be discarded",
            id="sync-abandoned",
        ),
        pytest.param("with_token", "it was cancelled", id="with-credentials"),
    ],
)
def test_the_deadline_error_names_call_timeout_its_value_and_what_to_do(
    name: str, fate: str
) -> None:
    released.clear()
    [result] = _call(name)
    assert result.is_error is True
    assert result.content[0].text == (
        f"Error: Tool '{name}' did not finish within 0.2 s, the deadline this server sets for "
        f"every call (--call-timeout 0.2); {fate}. If the tool needs longer, restart the "
        "server with a larger --call-timeout (in seconds); if it should not, check what it "
        "waits on."
    )


def test_a_deadline_of_the_tools_own_is_not_blamed_on_call_timeout() -> None:
    [result] = _call("own_timeout")
    assert result.is_error is True
    assert "--call-timeout" not in result.content[0].text
    assert "did not finish within 7.0 s" in result.content[0].text


def test_a_call_that_waited_past_the_deadline_for_room_names_call_timeout() -> None:
    released.clear()
    # The second call is sent once the first holds the only slot, and may wait for room a
    # tenth of the first call's deadline: it is refused long before that slot frees.
    limits = CallLimits(max_in_flight=1, max_queued=1, queue_timeout=DEADLINE)
    results = _call("blocking", limits, calls=2, call_timeout=10 * DEADLINE)
    texts = sorted(result.content[0].text for result in results)
    assert any(
        "busy, retry later: no room within 0.2 s, the call deadline (--call-timeout)" in text
        for text in texts
    ), texts
