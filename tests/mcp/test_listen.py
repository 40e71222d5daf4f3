"""Hearing of a reload: every kind of session the protocol can reach, with the SDK's clients.

- a 2026-07-28 client keeps a ``subscriptions/listen`` request open and hears on it,
  stateful or stateless, over HTTP and stdio;
- a handshake-era client (2025-11-25 and before) of a stateful server hears on its GET
  stream right after ``initialize``, with no request of its own;
- a handshake-era client of a stateless server has no stream outside its requests, so
  it is not promised ``listChanged`` (it re-lists, see docs/serving.md).
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from mcp import Client  # after the skips: the SDK is an extra
from mcp.shared.subscriptions import ToolsListChanged

from tests.mcp.test_reload import STATS, Notifications, _nap
from tests.support.serving import serving, session, stdio_parameters, tools_folder

ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 60
RELOAD = ["--reload", "--reload-interval", "0.1"]


folder = tools_folder({"nap.yaml": _nap()})


def _run(scenario: Any, *args: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(WAIT_SECONDS):
            return await scenario(*args)

    return anyio.run(bounded)


async def _listen_through_a_reload(server: Any, folder: Path) -> dict[str, Any]:
    """A 2026-07-28 client listens, a file is added, and it hears and re-lists."""
    seen: dict[str, Any] = {}
    async with Client(server) as client:
        seen["version"] = client.protocol_version
        tools = client.server_capabilities.tools
        seen["list_changed"] = tools.list_changed if tools is not None else None
        async with client.listen(tools_list_changed=True) as subscription:
            (folder / "stats.yaml").write_text(STATS)
            async for event in subscription:
                seen["event"] = event
                break
        seen["tools"] = {tool.name for tool in (await client.list_tools()).tools}
    return seen


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
def test_a_2026_client_hears_of_a_reload_on_its_listen_stream(
    folder: Path, stateless: bool
) -> None:
    args = ["--tools", str(folder), *RELOAD, *(["--stateless"] if stateless else [])]
    with serving(args) as served:
        seen = _run(_listen_through_a_reload, served.url, folder)
    assert seen["version"] == "2026-07-28"
    assert seen["list_changed"] is True
    assert seen["event"] == ToolsListChanged()
    assert seen["tools"] == {"nap", "stats"}


def test_a_2026_client_over_stdio_hears_of_a_reload(folder: Path) -> None:
    params = stdio_parameters(["--tools", str(folder), *RELOAD])
    seen = _run(_listen_through_a_reload, params, folder)
    assert seen["event"] == ToolsListChanged()
    assert seen["tools"] == {"nap", "stats"}


def test_a_handshake_era_client_hears_on_its_get_stream_right_after_initialize(
    folder: Path,
) -> None:
    notes = Notifications()

    async def scenario(url: str) -> Any:
        async with session(url, on_message=notes) as client:
            # No request past initialize: the GET stream the client opened carries it.
            (folder / "stats.yaml").write_text(STATS)
            await notes.wait(1)
            return client.initialize_result.capabilities.tools

    with serving(["--tools", str(folder), *RELOAD]) as served:
        tools = _run(scenario, served.url)
    assert tools.list_changed is True
    assert notes.list_changed == 1


def test_a_stateless_server_promises_handshake_era_clients_no_list_changed(
    folder: Path,
) -> None:
    async def scenario(url: str) -> Any:
        async with session(url) as client:
            return client.initialize_result.capabilities.tools

    with serving(["--tools", str(folder), *RELOAD, "--stateless"]) as served:
        tools = _run(scenario, served.url)
    assert tools.list_changed is False


def test_sigterm_ends_a_listen_stream_gracefully(folder: Path) -> None:
    def stop(served: Any) -> None:
        served.process.send_signal(signal.SIGTERM)

    async def scenario(served: Any) -> list[Any]:
        events: list[Any] = []
        async with (
            Client(served.url) as client,
            client.listen(tools_list_changed=True) as subscription,
        ):
            await anyio.to_thread.run_sync(stop, served)
            # A graceful close ends the loop; a dropped stream would raise SubscriptionLost.
            events.extend([event async for event in subscription])
        return events

    with serving(["--tools", str(folder)]) as served:
        assert _run(scenario, served) == []
        assert served.process.wait(WAIT_SECONDS) == 0
