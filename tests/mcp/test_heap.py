"""The server's start-up heap, frozen out of the collector's full collections."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit.mcp import heap

HEAP = """\
name: heap
version: 1.0.0
description: How many objects are frozen.
input_schema: {parameters: []}
output_schema: {parameters: [{name: frozen, type: integer}]}
backend: {python: "tests.support.serve_tools:heap"}
"""


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    """Each test starts and ends with nothing frozen."""
    gc.unfreeze()
    yield
    heap.thaw()
    gc.unfreeze()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_freeze_keeps_the_heap_from_collections_until_thawed() -> None:
    assert heap.freeze() is True
    assert gc.get_freeze_count() > 0
    assert heap.freeze() is False  # once is enough
    heap.thaw()
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_itself_keeps_its_arrangement() -> None:
    kept = _Cycle()
    alive = weakref.ref(kept)
    gc.freeze()  # the process's own, with the cycle in it
    assert heap.freeze() is False
    heap.refreeze()
    heap.thaw()
    del kept
    gc.collect()
    # Still frozen: nothing here thawed or collected what the process froze (the
    # number of frozen objects is no witness: one freed by its count leaves it).
    assert alive() is not None
    assert gc.get_freeze_count() > 0


def test_young_garbage_is_collected_before_freezing() -> None:
    garbage = _Cycle()
    gone = weakref.ref(garbage)
    del garbage
    heap.freeze()
    assert gone() is None


def test_refreeze_collects_what_became_garbage_among_the_frozen() -> None:
    kept = _Cycle()
    gone = weakref.ref(kept)
    heap.freeze()
    del kept
    gc.collect()
    assert gone() is not None  # frozen: no collection looks at it
    heap.refreeze()
    assert gone() is None
    assert gc.get_freeze_count() > 0


def test_refreeze_and_thaw_do_nothing_when_freeze_did_not_freeze() -> None:
    heap.refreeze()
    heap.thaw()
    assert gc.get_freeze_count() == 0


def test_a_reload_lets_the_replaced_tools_go(tmp_path: Path) -> None:
    from agentkit import load_tools
    from agentkit.mcp.reload import Reloader
    from agentkit.toolregistry import ToolRegistry

    (tmp_path / "heap.yaml").write_text(HEAP)

    def load() -> ToolRegistry:
        registry = ToolRegistry()
        load_tools(tmp_path, registry=registry)
        return registry

    reloader = Reloader(load, list, say=lambda _: None)
    first = weakref.ref(type(reloader.served.registry["heap"]))
    heap.freeze()  # as serving does once it is ready
    (tmp_path / "heap.yaml").write_text(HEAP.replace("How many", "The number of"))
    changes = anyio.run(reloader.reload, "SIGHUP")
    assert changes is not None
    assert changes.changed == ("heap",)
    assert first() is None  # the replaced class was frozen, and is collected all the same
    assert gc.get_freeze_count() > 0


def _frozen(result: Any) -> int:
    assert not result.is_error, result.content
    return int(result.structured_content["frozen"])


def test_a_stdio_server_freezes_its_heap_once_ready(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from tests.support.serving import stdio_session

    (tmp_path / "heap.yaml").write_text(HEAP)

    async def scenario() -> int:
        with anyio.fail_after(60):
            async with stdio_session(["--tools", str(tmp_path)]) as client:
                return _frozen(await client.call_tool("heap", {}))

    assert anyio.run(scenario) > 10_000  # the modules, the SDK, the tools


def test_an_http_server_freezes_its_heap_once_ready(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    pytest.importorskip("uvicorn")
    from tests.support.serving import serving, session

    (tmp_path / "heap.yaml").write_text(HEAP)

    async def scenario(url: str) -> int:
        with anyio.fail_after(60):
            async with session(url) as client:
                return _frozen(await client.call_tool("heap", {}))

    with serving(["--tools", str(tmp_path)]) as served:
        assert anyio.run(scenario, served.url) > 10_000


def test_a_reload_lets_the_replaced_tools_go_when_telling_the_clients_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentkit import load_tools
    from agentkit.mcp.reload import Reloader
    from agentkit.mcp.served_tools import ServedTools
    from agentkit.toolregistry import ToolRegistry

    (tmp_path / "heap.yaml").write_text(HEAP)

    def load() -> ToolRegistry:
        registry = ToolRegistry()
        load_tools(tmp_path, registry=registry)
        return registry

    async def unreachable(self: ServedTools, level: str, message: str) -> None:
        raise ConnectionError("the clients are gone")

    reloader = Reloader(load, list, say=lambda _: None)
    first = weakref.ref(type(reloader.served.registry["heap"]))
    heap.freeze()
    monkeypatch.setattr(ServedTools, "log", unreachable)
    (tmp_path / "heap.yaml").write_text(HEAP.replace("How many", "The number of"))
    with pytest.raises(ConnectionError):
        anyio.run(reloader.reload, "SIGHUP")
    assert first() is None  # swapped in, then collected although the reload raised
