"""Reloading a serving agentkit: add, change and break a definition; SIGHUP; calls in flight."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import mcp_types as types

from tests.support.serving import (
    INITIALIZE,
    Served,
    open_session,
    post,
    server_fixture,
    serving,
    session,
    stdio_process,
    tools_folder,
)

WAIT_SECONDS = 60

NAP = """\
name: nap
version: 1.0.0
description: {description}
input_schema:
  parameters:
    - {{name: seconds, type: float}}
    - {{name: marker, type: string, required: false}}
output_schema: {{parameters: [{{name: {field}, type: float}}]}}
backend: {{python: "tests.support.serve_tools:{function}"}}
"""
STATS = """\
name: stats
version: 1.0.0
description: Count words.
input_schema: {parameters: [{name: text, type: string}]}
output_schema:
  parameters:
    - {name: words, type: integer}
    - {name: sentences, type: integer}
    - {name: characters, type: integer}
    - {name: commonest, type: list, items: string}
backend: {python: "examples.textstats:text_stats"}
"""


def _nap(description: str = "Sleep.", field: str = "slept", function: str = "nap") -> str:
    return NAP.format(description=description, field=field, function=function)


folder = tools_folder({"nap.yaml": _nap()})
server = server_fixture("--reload", "--reload-interval", "0.1", scope="function")


class Notifications:
    """Collects the server's notifications; ``wait`` until ``count`` list_changed came."""

    def __init__(self) -> None:
        self.list_changed = 0
        self.logged: list[tuple[str, str]] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changed += 1
        elif isinstance(message, types.LoggingMessageNotification):
            self.logged.append((message.params.level, str(message.params.data)))

    async def wait(self, count: int) -> None:
        with anyio.fail_after(WAIT_SECONDS):
            while self.list_changed < count:
                await anyio.sleep(0.02)

    async def wait_logged(self, level: str) -> None:
        with anyio.fail_after(WAIT_SECONDS):
            while all(logged != level for logged, _ in self.logged):
                await anyio.sleep(0.02)


def _run(scenario: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(WAIT_SECONDS * 2):
            return await scenario()

    return anyio.run(bounded)


def test_add_change_and_break_a_file(server: Served, folder: Path) -> None:
    notes = Notifications()

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with session(server.url, on_message=notes) as client:
            seen["capabilities"] = client.initialize_result.capabilities
            await client.list_tools()  # the server has seen this session
            (folder / "stats.yaml").write_text(STATS)
            await notes.wait(1)
            seen["added"] = {tool.name for tool in (await client.list_tools()).tools}
            seen["call"] = await client.call_tool("stats", {"text": "one two"})

            (folder / "nap.yaml").write_text(_nap(description="Sleep, renewed."))
            await notes.wait(2)
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            seen["changed"] = listed["nap"].description

            mark = len(server.stderr)
            (folder / "stats.yaml").write_text(STATS.replace("type: string", "type: strin"))
            await anyio.to_thread.run_sync(
                lambda: server.wait_for_output("still serving", after=mark)
            )
            seen["kept"] = {tool.name for tool in (await client.list_tools()).tools}
            seen["still"] = await client.call_tool("stats", {"text": "a b c"})
            await notes.wait_logged("error")
        return seen

    seen = _run(scenario)
    assert seen["capabilities"].tools.list_changed is True
    assert seen["added"] == {"nap", "stats"}
    assert seen["call"].structured_content["words"] == 2
    assert seen["changed"] == "Sleep, renewed."
    assert seen["kept"] == {"nap", "stats"}
    assert seen["still"].structured_content["words"] == 3
    assert notes.list_changed == 2  # the broken file changed nothing a client sees
    log = server.stderr
    assert "reloaded (files changed): 2 tools; added stats" in log
    assert "reloaded (files changed): 2 tools; changed nap" in log
    assert "reload (files changed) failed; still serving the last good set of 2 tools" in log
    assert f"{folder / 'stats.yaml'}:4:" in log  # every problem, located
    assert "unsupported type 'strin'" in log
    # The clients are told the same (notifications/message, the logging capability).
    levels = {text.split(":")[0].split(";")[0]: level for level, text in notes.logged}
    assert levels["reloaded (files changed)"] == "info"
    assert levels["reload (files changed) failed"] == "error"
    [broken] = [text for level, text in notes.logged if level == "error"]
    assert "stats.yaml:4:" in broken  # within the tools folder (tests/mcp/test_reload_paths.py)
    assert str(folder) not in broken
    assert "unsupported type 'strin'" in broken


def test_removing_a_file_removes_its_tool(server: Served, folder: Path) -> None:
    notes = Notifications()
    (folder / "stats.yaml").write_text(STATS)
    mark = server.wait_for_output("added stats")

    async def scenario() -> set[str]:
        async with session(server.url, on_message=notes) as client:
            await client.list_tools()
            (folder / "stats.yaml").unlink()
            await notes.wait(1)
            return {tool.name for tool in (await client.list_tools()).tools}

    assert _run(scenario) == {"nap"}
    server.wait_for_output("removed stats", after=mark)


def test_a_call_in_flight_finishes_on_the_definition_it_started_with(
    server: Served, folder: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "inflight"
    headers = open_session(server.url)
    found: list[str] = []

    def call(arguments: dict[str, Any], call_id: int) -> str:
        message = {"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                   "params": {"name": "nap", "arguments": arguments}}  # fmt: skip
        return post(server.url, message, headers)[2]

    # Raw HTTP, not the SDK's client: that one checks answers against the listing it
    # has, and the listing changes under the call on purpose.
    running = threading.Thread(
        target=lambda: found.append(call({"seconds": 1, "marker": str(marker)}, 2)), daemon=True
    )
    running.start()
    deadline = time.monotonic() + WAIT_SECONDS
    while not Path(f"{marker}.started").exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    # The new definition wants another output field: had the running call switched
    # to it, its output would fail validation.
    (folder / "nap.yaml").write_text(_nap(field="dozed", function="doze"))
    server.wait_for_output("changed nap")
    running.join(WAIT_SECONDS)
    after = call({"seconds": 0}, 3)
    assert '"structuredContent":{"slept":1.0}' in found[0]
    assert '"isError":false' in found[0]
    # The next call is the new definition's (doze answers 'slept', so it fails).
    assert '"isError":true' in after
    assert "dozed" in after


def test_sighup_reloads_without_watching(folder: Path) -> None:
    with serving(["--tools", str(folder)]) as served:
        (folder / "stats.yaml").write_text(STATS)
        served.process.send_signal(signal.SIGHUP)
        served.wait_for_output("reloaded (SIGHUP): 2 tools; added stats")
        served.process.send_signal(signal.SIGHUP)
        served.wait_for_output("reloaded (SIGHUP): 2 tools; no tool changed")


KEYED = """\
name: keyed
version: 1.0.0
credentials: [api-token]
input_schema: {parameters: [{name: levels, type: list, items: string}]}
output_schema: {parameters: [{name: sent, type: integer}]}
backend: {python: "tests.support.serve_tools:chatty"}
"""


def test_a_reload_report_never_shows_a_credential(folder: Path) -> None:
    secret = "tok-reload-secret-0123456789"
    (folder / "keyed.yaml").write_text(KEYED)
    notes = Notifications()
    args = ["--tools", str(folder), "--reload", "--reload-interval", "0.1"]
    with serving(args, env={"API_TOKEN": secret}) as served:

        async def scenario() -> None:
            async with session(served.url, on_message=notes) as client:
                await client.list_tools()  # the server has seen this session
                # A value pasted where it does not belong: the problem quotes it.
                (folder / "leak.yaml").write_text(KEYED.replace("1.0.0", secret))
                await notes.wait_logged("error")

        _run(scenario)
        stderr = served.stderr
    [(_, reported)] = [(level, text) for level, text in notes.logged if level == "error"]
    assert "leak.yaml:2:" in reported
    assert "invalid version '***'" in reported
    assert "invalid version '***'" in stderr
    assert secret not in reported + stderr


def test_only_the_files_loading_reads_cause_a_reload(server: Served, folder: Path) -> None:
    # An editor's swap file, notes, a hidden folder: none is read, so none reloads.
    (folder / ".nap.yaml.swp").write_text("swap")
    (folder / "notes.txt").write_text("notes")
    (folder / ".git").mkdir()
    (folder / ".git" / "config.yaml").write_text("a: 1\n")
    (folder / ".hidden.yaml").write_text(STATS)
    (folder / "stats.yaml").write_text(STATS)
    server.wait_for_output("added stats")
    (folder / "notes.txt").write_text("notes, longer")
    (folder / "nap.yaml").write_text(_nap(description="Sleep, renewed."))
    server.wait_for_output("changed nap")
    assert server.stderr.count("reloaded (") == 2


class _Writer:
    """The files a ``Reloader`` watches, written to on the polls ``writes`` names: a
    poll lists the files (``files()``), and this writes first, as a writer would have
    meanwhile. ``loads`` holds the poll and the file's text at each load."""

    def __init__(self, file: Path, writes: Any) -> None:
        self.file = file
        self.writes = writes
        self.polls = -1  # the first listing is the Reloader's own, before its first load
        self.loads: list[tuple[int, str]] = []

    def files(self) -> list[Path]:
        self.polls += 1
        text = self.writes(self.polls)
        if text is not None:
            self.file.write_text(text)
        return [self.file]

    def load(self) -> Any:
        from agentkit.toolregistry import ToolRegistry

        self.loads.append((self.polls, self.file.read_text()))
        return ToolRegistry()

    def watch(self, until: Any) -> None:
        from agentkit.mcp.reload import Reloader

        reloader = Reloader(
            self.load, self.files, watch=True, interval=0.01, settle=0.01, say=lambda _: None
        )

        async def scenario() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(reloader.watch)
                while not until():
                    await anyio.sleep(0.01)
                group.cancel_scope.cancel()

        _run(scenario)


def test_a_file_being_written_is_loaded_once_it_has_settled(tmp_path: Path) -> None:
    # Written in three parts, one each poll: each part alone would load.
    parts = {1: "one\n", 2: "one\ntwo\n", 3: "one\ntwo\nthree\n"}
    writer = _Writer(tmp_path / "tools.yaml", parts.get)
    writer.file.write_text("")
    writer.watch(until=lambda: writer.polls >= 8)
    assert writer.loads == [(0, ""), (4, "one\ntwo\nthree\n")]


def test_a_file_that_never_settles_is_loaded_after_a_bound(tmp_path: Path) -> None:
    from agentkit.mcp.reload import PATIENCE

    writer = _Writer(tmp_path / "tools.yaml", lambda poll: "x\n" * poll)
    writer.file.write_text("")
    writer.watch(until=lambda: len(writer.loads) >= 2)
    assert writer.loads[1][0] == PATIENCE


SLOW_IMPORT = """\
import pathlib, time
pathlib.Path(__file__).with_suffix(".imported").write_text("")
time.sleep(1.0)


def echo(text):
    return {"text": text}
"""
SLOW_TOOL = """\
name: slow_echo
version: 1.0.0
description: Echo, from a module slow to import.
input_schema: {parameters: [{name: text, type: string}]}
output_schema: {parameters: [{name: text, type: string}]}
backend: {python: "slow_module:echo"}
"""


def test_a_sighup_while_the_tools_load_reloads_once_serving(tmp_path: Path) -> None:
    # SIGHUP's default action ends a process: one that comes while the tools load (a
    # backend module slow to import) must not end the server, but reload it.
    tools = tmp_path / "tools.d"
    tools.mkdir()
    (tools / "slow.yaml").write_text(SLOW_TOOL)
    (tmp_path / "slow_module.py").write_text(SLOW_IMPORT)
    args = ["--tools", str(tools), "--python-path", str(tmp_path)]
    with stdio_process(args) as process:
        deadline = time.monotonic() + WAIT_SECONDS
        while not (tmp_path / "slow_module.imported").exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the backend module was never imported"
            time.sleep(0.01)
        process.send_signal(signal.SIGHUP)
        lines = [
            json.dumps(INITIALIZE),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ]
        out, err = process.communicate("\n".join(lines) + "\n", WAIT_SECONDS)
    assert process.returncode == 0, err
    # The reload's own messages to the client may come before or after the listing.
    [listing] = [answer for answer in map(json.loads, out.splitlines()) if answer.get("id") == 2]
    assert [tool["name"] for tool in listing["result"]["tools"]] == ["slow_echo"]
    assert "reloaded (SIGHUP): 1 tools; no tool changed" in err
