"""A fast-path request's session as the SDK's transport sees it (``agentkit.mcp.fastpath_channel``)."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest

pytest.importorskip("mcp")

from agentkit.mcp.fastpath_channel import FastPathSession


class _IdleClock:
    """A transport's idle bookkeeping, as the SDK's transport keeps it."""

    def __init__(self) -> None:
        self.idle_scope = anyio.CancelScope()
        self._idle_timeout = 1800.0
        self._requests_in_flight = 0


def test_a_fast_call_holds_its_session_open_as_the_sdk_does() -> None:
    """The SDK closes a session after 30 idle minutes, counting the requests its own
    transport serves; a fast-path call counts too, with the same counter and clock."""

    async def hold() -> tuple[tuple[float, int], _IdleClock]:
        clock = _IdleClock()
        session = FastPathSession(cast(Any, None), cast(Any, None), None, clock)
        with session.held():
            during = clock.idle_scope.deadline, clock._requests_in_flight
        return during, clock

    during, clock = anyio.run(hold)
    assert during == (float("inf"), 1)
    assert clock._requests_in_flight == 0
    assert clock.idle_scope.deadline != float("inf")
