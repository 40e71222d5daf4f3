"""What declared limits and a kept answer cost per call, as ratios to a call without them.

One definition-file tool (a Python backend that echoes its input) called through
the executor four ways: plain; with a per-caller and a total window (``limits:``);
with those and a concurrency lease; answered from its cache (``cache:``). In this
process's store, then in a Redis on loopback when ``redis-server`` and the
``redis`` client are installed (wall-clock time: the round trip is the cost).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.timing import Case, best_per_call

_TOOL = """\
name: {name}
version: 1.0.0
input_schema: {{parameters: [{{name: key, type: string}}]}}
output_schema: {{parameters: [{{name: echoed, type: string}}]}}
annotations: {{read_only: true}}
{extra}
backend: {{python: "benchmarks.bench_limits:echo"}}
"""
_WINDOWS = "limits: {per_caller: {requests: 1000000, per: 1h}, total: {requests: 1000000, per: 1h}}"
_EXTRAS = {
    "plain": "",
    "windows": _WINDOWS,
    "lease": _WINDOWS.replace("per: 1h}, total", "per: 1h, concurrent: 64}, total"),
    "cached": "cache: {ttl: 1h}",
}


def echo(key: str) -> dict[str, Any]:
    return {"echoed": key}


@contextmanager
def _redis() -> Iterator[str | None]:
    """A redis-server on a free loopback port (its URL), or None when it cannot be had."""
    binary = shutil.which("redis-server")
    try:
        import redis  # noqa: F401
    except ImportError:
        binary = None
    if binary is None:
        yield None
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):  # up to 10 s for it to listen
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.kill()
        server.wait(10)


def _lines(where: str, figures: dict[str, float]) -> list[str]:
    plain = figures["plain"]
    return [
        f"  {where + ', ' + label:<34} {seconds * 1e6:8.2f} us  {seconds / plain:5.2f}x plain"
        for label, seconds in figures.items()
    ]


def run() -> list[str]:
    from agentkit import ToolExecutor, ToolRegistry, load_tools
    from agentkit.callers import Caller, calling_as
    from agentkit.ratelimits import LocalStore, use_store

    folder = Path(tempfile.mkdtemp(prefix="bench-limits-"))
    (folder / "tools.yaml").write_text(
        "---\n".join(_TOOL.format(name=name, extra=extra) for name, extra in _EXTRAS.items())
    )
    registry = ToolRegistry()
    load_tools(folder, registry=registry)
    executor = ToolExecutor(credentials={})
    inputs = {"key": "k"}

    def cases() -> list[Case]:
        def call(tool: Any) -> Any:
            return lambda: executor.execute(tool, inputs)

        return [Case(name, call(registry[name])) for name in _EXTRAS]

    lines = ["limits and cache: per call of a definition-file tool (best of 7 rounds)"]
    before = use_store(LocalStore())
    try:
        with calling_as(Caller(name="bench", via="token")):
            lines += _lines("in process", best_per_call(cases(), number=5000))
            with _redis() as url:
                if url is None:
                    lines.append("  with Redis: skipped, no redis-server or redis client")
                else:
                    from agentkit.ratelimits_redis import RedisStore

                    use_store(RedisStore(url))
                    lines += _lines("Redis on loopback", best_per_call(cases(), number=500))
    finally:
        use_store(before)
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
