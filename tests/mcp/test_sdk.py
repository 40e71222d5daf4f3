"""The SDK internals the HTTP fast path relies on: checked once, and a change to them
turns the fast path off (logged) instead of breaking it silently."""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("uvicorn")

from agentkit.mcp import sdk as mcp_sdk
from agentkit.mcp.sdk import TESTED_SDK, contract
from agentkit.toolregistry import ToolRegistry
from tests.mcp.test_fast import ECHO, WAIT_SECONDS, registry, running
from tests.support.serving import session

__all__ = ["registry"]  # the fixture, shared with the fast path's tests


@pytest.fixture
def fresh_contract() -> Iterator[None]:
    contract.cache_clear()
    yield
    contract.cache_clear()


def test_the_installed_sdk_keeps_the_contract() -> None:
    # Fails in CI the day an SDK release moves what the fast path relies on.
    assert contract() is None


def test_the_pinned_range_is_the_tested_one() -> None:
    requirement = next(
        line
        for line in importlib.metadata.requires("agentkit") or []
        if line.startswith("mcp") and "extra" in line
    )
    for minor in TESTED_SDK:
        major, number = minor.split(".")
        assert f">={minor}" in requirement
        assert f"<{major}.{int(number) + 1}" in requirement


def test_an_untested_sdk_version_is_a_reason(
    fresh_contract: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "2.9.0")
    with caplog.at_level(logging.WARNING, logger="agentkit.serve"):
        reason = contract()
        contract()
    assert reason == "mcp 2.9.0 is not a version it was tested with (2.3.x)"
    [record] = caplog.records  # once a process, however often asked
    assert "the HTTP fast path is off: mcp 2.9.0" in record.getMessage()
    assert "as with --no-fast-path" in record.getMessage()


@pytest.mark.parametrize(
    ("owner", "attribute", "reason"),
    [
        (
            "mcp.server.streamable_http_manager.StreamableHTTPSessionManager",
            "_server_instances",
            "keeps its sessions' transports",
        ),
        (
            "mcp.server.streamable_http.StreamableHTTPServerTransport",
            "_requests_in_flight",
            "counts its requests in flight",
        ),
        ("mcp.server.session.ServerSession", "_connection", "keeps its Connection"),
    ],
)
def test_a_moved_internal_is_a_reason(
    fresh_contract: None,
    monkeypatch: pytest.MonkeyPatch,
    owner: str,
    attribute: str,
    reason: str,
) -> None:
    module_name, class_name = owner.rsplit(".", 1)
    cls = getattr(importlib.import_module(module_name), class_name)
    original = cls.__init__

    def renamed(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        object.__setattr__(self, f"{attribute}_moved", self.__dict__.pop(attribute))

    monkeypatch.setattr(cls, "__init__", renamed)
    assert reason in (contract() or "")


def test_with_the_contract_broken_the_sdk_answers_every_call(
    fresh_contract: None, monkeypatch: pytest.MonkeyPatch, registry: ToolRegistry
) -> None:
    monkeypatch.setattr(mcp_sdk, "_broken", lambda: "a test says so")
    with running(registry) as (url, fast):

        async def use() -> Any:
            with anyio.fail_after(WAIT_SECONDS):
                async with session(url) as client:
                    await client.list_tools()
                    return await client.call_tool("echo", ECHO)

        result = anyio.run(use)
    assert fast.enabled is False
    assert result.is_error is False
    assert result.structured_content == ECHO
    assert not fast.answered  # nothing went the fast way
