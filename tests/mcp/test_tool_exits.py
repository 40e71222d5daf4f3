"""A served tool that exits (``sys.exit()``, ``GeneratorExit``, a ``BaseException`` of its
own) or answers a value JSON has no form for: the call is a tool failure that says so,
redacted, and the server goes on serving -- over stdio, and over streamable HTTP on the
fast path and through the SDK (``--no-fast-path``), with the SDK's own clients."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from tests.support.leaks import leaked_in_any_case
from tests.support.serving import serving, session, stdio_session
from tests.support.stopping import ENV, KEY, TOLD, TOOLS, write_tools

WAIT_SECONDS = 60


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tools(tmp_path_factory.mktemp("tools"))


async def _every_stop(client: Any) -> dict[tuple[str, str], Any]:
    seen = {}
    for name in TOOLS:
        for how in TOLD:
            seen[name, how] = await client.call_tool(name, {"how": how})
            # After each: the server is there, and serves.
            seen[name, f"after {how}"] = await client.call_tool(name, {"how": "fine"})
    return seen


def _check(seen: dict[tuple[str, str], Any]) -> None:
    for name in TOOLS:
        for how, told in TOLD.items():
            result = seen[name, how]
            assert result.is_error is True, (name, how)
            [block] = result.content
            assert block.text.startswith(f"Error: Tool '{name}' {told}"), block.text
            assert leaked_in_any_case(block.text, [KEY]) == []
            after = seen[name, f"after {how}"]
            assert after.is_error is False
            assert after.structured_content == {"data": {"how": "fine"}}


def test_over_stdio(folder: Path) -> None:
    async def run() -> dict[tuple[str, str], Any]:
        with anyio.fail_after(WAIT_SECONDS):
            async with stdio_session(["--tools", str(folder)], ENV) as client:
                return await _every_stop(client)

    _check(anyio.run(run))


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "no-fast-path"])
def test_over_http(folder: Path, fast_path: bool) -> None:
    args = ["--tools", str(folder), *([] if fast_path else ["--no-fast-path"])]
    with serving(args, env=ENV) as served:

        async def run() -> dict[tuple[str, str], Any]:
            with anyio.fail_after(WAIT_SECONDS):
                async with session(served.url) as client:
                    return await _every_stop(client)

        _check(anyio.run(run))
        assert served.process.poll() is None
        assert "Traceback" not in served.stderr
        assert leaked_in_any_case(served.stderr, [KEY]) == []
