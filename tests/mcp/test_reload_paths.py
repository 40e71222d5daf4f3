"""A failed reload, as clients hear of it: files named within the tools folder, never by
the server's own absolute paths (which its stderr keeps, for the operator)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from tests.mcp.test_reload import STATS, Notifications, _nap, _run
from tests.support.serving import Served, server_fixture, session, tools_folder

folder = tools_folder({"nap.yaml": _nap(), "stats.yaml": STATS})
server = server_fixture("--reload", "--reload-interval", "0.1", scope="function")

BROKEN = STATS.replace("type: string", "type: strin")


def _reported(notes: Notifications) -> str:
    [reported] = [text for level, text in notes.logged if level == "error"]
    return reported


def _break(server: Served, folder: Path, files: dict[str, str]) -> str:
    """Write ``files`` (name -> text) into the served folder; what a client is told of
    the reload that fails on them."""
    notes = Notifications()

    async def scenario() -> None:
        async with session(server.url, on_message=notes) as client:
            await client.list_tools()  # the server has seen this session
            for name, text in files.items():
                (folder / name).write_text(text)
            await notes.wait_logged("error")

    _run(scenario)
    return _reported(notes)


def test_a_problem_is_located_within_the_tools_folder(server: Served, folder: Path) -> None:
    reported = _break(server, folder, {"stats.yaml": BROKEN})
    assert "stats.yaml:4:" in reported
    assert "unsupported type 'strin'" in reported
    assert str(folder.parent) not in reported
    # The server's own log keeps where the file is on its disk.
    assert f"{folder / 'stats.yaml'}:4:" in server.stderr


def test_a_nested_file_is_named_from_the_folder_given_to_serve(
    server: Served, folder: Path
) -> None:
    (folder / "text").mkdir(exist_ok=True)
    try:
        reported = _break(
            server, folder, {"text/more.yaml": BROKEN.replace("name: stats", "name: more")}
        )
    finally:
        (folder / "text" / "more.yaml").unlink(missing_ok=True)
    assert "text/more.yaml:4:" in reported
    assert str(folder) not in reported


def test_a_path_in_a_problem_message_is_shown_so_too(server: Served, folder: Path) -> None:
    # A second definition of 'nap': the problem names the file of the first one.
    reported = _break(server, folder, {"repeat.yaml": _nap()})
    assert "repeat.yaml:1:1: name: tool 'nap' is already defined by nap.yaml:1" in reported
    assert str(folder.parent) not in reported
    assert str(folder / "nap.yaml") in server.stderr


@contextlib.asynccontextmanager
async def _serving_in_process(
    roots: Sequence[Path], files: Sequence[Path]
) -> AsyncIterator[tuple[str, Any]]:
    """``build_app`` with a ``Reloader`` of ``roots`` (folders and files), served by
    uvicorn on 127.0.0.1 on this loop: its URL and the reloader."""
    import uvicorn

    from agentkit.declarative import load_tools
    from agentkit.mcp import HttpOptions, build_app
    from agentkit.mcp.http_serving import _bind
    from agentkit.mcp.reload import Reloader
    from agentkit.toolexecutor import ToolExecutor
    from agentkit.toolregistry import ToolRegistry

    def load() -> ToolRegistry:
        registry = ToolRegistry()
        load_tools(*roots, registry=registry)
        return registry

    reloader = Reloader(load, lambda: files, roots=roots, say=lambda _: None)
    sock = _bind("127.0.0.1", 0)
    with ToolExecutor() as executor, sock:
        app = build_app(reloader.served, executor, HttpOptions())
        config = uvicorn.Config(app, log_level="warning", lifespan="on", ws="none")
        server = uvicorn.Server(config)
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            while not server.started:
                await anyio.sleep(0.01)
            try:
                yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", reloader
            finally:
                server.should_exit = True


def test_several_roots_and_a_file_root(tmp_path: Path) -> None:
    first, second = tmp_path / "team" / "tools.d", tmp_path / "shared"
    (first / "text").mkdir(parents=True)
    second.mkdir()
    (first / "nap.yaml").write_text(_nap())
    (first / "text" / "stats.yaml").write_text(STATS)
    single = second / "doze.yaml"
    single.write_text(_nap(description="Doze.").replace("name: nap", "name: doze"))
    roots = [first, single]
    files = [first / "nap.yaml", first / "text" / "stats.yaml", single]
    notes = Notifications()

    async def scenario() -> None:
        async with (
            _serving_in_process(roots, files) as (url, reloader),
            session(url, on_message=notes) as client,
        ):
            await client.list_tools()  # the server has seen this session
            (first / "text" / "stats.yaml").write_text(BROKEN)
            single.write_text(_nap().replace("version: 1.0.0", "version: one"))
            await reloader.reload("files changed")
            await notes.wait_logged("error")

    _run(scenario)
    reported = _reported(notes)
    assert "text/stats.yaml:4:" in reported  # within its folder
    assert "\n  doze.yaml:2:" in reported  # a file given as a root: its name
    assert str(tmp_path) not in reported


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        pytest.param("/srv/team/tools.d/weather.yaml", "weather.yaml", id="in-a-root"),
        pytest.param("/srv/team/tools.d/sub/weather.yaml", "sub/weather.yaml", id="nested"),
        pytest.param("/srv/one.yaml", "one.yaml", id="a-file-root"),
        pytest.param("/etc/agentkit/tools.env", "tools.env", id="outside-every-root"),
        pytest.param("/srv/team/tools.dx/a.yaml", "a.yaml", id="a-longer-name-is-no-root"),
        pytest.param("local/a.yaml", "a.yaml", id="a-relative-root"),
    ],
)
def test_shown_paths(path: str, shown: str) -> None:
    from agentkit.mcp.reload import ShownPaths

    paths = ShownPaths(["/srv/team/tools.d", "/srv/one.yaml", "local"])
    assert paths.path(path) == shown


def test_shown_paths_in_text() -> None:
    from agentkit.mcp.reload import ShownPaths

    paths = ShownPaths(["/srv/team/tools.d"])
    text = (
        "defined by /srv/team/tools.d/sub/a.yaml:3, outside the folder '/srv/team/tools.d'; "
        "env /etc/tools.env; see https://example.com/srv/team/tools.d/a"
    )
    assert paths.text(text, ["/etc/tools.env"]) == (
        "defined by sub/a.yaml:3, outside the folder 'tools.d'; "
        "env tools.env; see https://example.com/srv/team/tools.d/a"
    )
