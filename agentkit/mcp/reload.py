"""Reloading a running server's tools: on SIGHUP, and when a watched file changes.

``Reloader`` loads the tools, and everything again (``reload``), on SIGHUP or when a
watched file changes (``watch``: polling file names, sizes and modification times,
every ``interval`` seconds). Only a load with no problem is swapped into the
``ServedTools`` (``agentkit.mcp.served_tools``); otherwise the last good set keeps
serving and every problem is logged with its file:line, named to the clients as
``ShownPaths`` (``agentkit.mcp.shown_paths``) shows it. The tools added, changed and
removed are logged, on stderr and to the clients. ``EarlyHangups`` keeps the SIGHUPs
that come before the reloader listens.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Final, final

import anyio
from anyio.abc import TaskStatus

from agentkit.adapters.export import mcp_tool
from agentkit.mcp import heap
from agentkit.mcp.served_tools import ServedTools
from agentkit.mcp.shown_paths import ShownPaths
from agentkit.tool import Tool
from agentkit.toolerrors import AgentKitError, SemanticError
from agentkit.toolregistry import ToolRegistry
from agentkit.toolsets import Toolset

# ``ServedTools`` and ``ShownPaths`` are importable from here too: a reloader's callers
# (``agentkit.cli``) make the one and are shown the other.
__all__ = ["Changes", "EarlyHangups", "Reloader", "ServedTools", "ShownPaths", "file_state"]

DEFAULT_INTERVAL: Final = 1.0
# A change is loaded once the files have looked the same for this long (and on two polls
# in a row at least): a writer's pause (a slow copy, a truncate-then-write save) is not
# taken for the end of the write, and a half-written file is not swapped in.
SETTLE_SECONDS: Final = 2.0
# A change that never settles (a file rewritten without pause) is loaded after this many
# times the settling time.
PATIENCE: Final = 10


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Changes:
    """The tool names a reload added, changed and removed."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def describe(self) -> str:
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("added", self.added),
                ("changed", self.changed),
                ("removed", self.removed),
            )
            if names
        ]
        return "; ".join(parts) or "no tool changed"


def _fingerprint(tool: Tool) -> str:
    """Everything a client sees of ``tool`` and everything its definition says."""
    definition = tool.definition
    written = definition.to_dict() if definition is not None else type(tool).__qualname__
    return json.dumps([mcp_tool(tool), written], sort_keys=True, default=str)


def changes(old: Iterable[Tool], new: Iterable[Tool]) -> Changes:
    before = {tool.name: _fingerprint(tool) for tool in old}
    after = {tool.name: _fingerprint(tool) for tool in new}
    return Changes(
        added=tuple(sorted(after.keys() - before.keys())),
        changed=tuple(
            sorted(name for name in after.keys() & before.keys() if after[name] != before[name])
        ),
        removed=tuple(sorted(before.keys() - after.keys())),
    )


def _say(message: str) -> None:
    print(f"agentkit: {message}", file=sys.stderr, flush=True)


@final
class EarlyHangups:
    """The SIGHUPs that come while a server starts, before ``Reloader.run`` listens:
    noted, for a reload once it does, rather than ending the process (SIGHUP's default).
    A context manager; where it cannot handle the signal (Windows, a thread other than
    the main one) it notes nothing and changes nothing."""

    __slots__ = ("_installed", "_previous", "seen")

    def __init__(self) -> None:
        self.seen = False
        self._previous: Any = None
        self._installed = False

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True

    def __enter__(self) -> EarlyHangups:
        if hasattr(signal, "SIGHUP") and threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGHUP, self._note)
            self._installed = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._installed:
            signal.signal(signal.SIGHUP, self._previous)
            self._installed = False


@final
class Reloader:
    """Loads the tools with ``load()`` (which raises ``AgentKitError`` on a problem), and
    loads them again while a server runs.

    ``files()`` lists the files ``load`` reads (definition files, an env file), which
    ``watch`` polls; ``run`` reloads on SIGHUP at once, and on changes to those files
    when made with ``watch=True`` -- once they have settled: the same files, sizes and
    modification times for ``settle`` seconds, and on two polls in a row at least. The
    files are looked at before the first load, so a change made while it loads is not
    missed.
    ``loaded`` is that first load made already: the registry, and ``file_state`` of
    ``files()`` taken before it (``()`` when not watching).
    ``roots`` are the folders and files the tools are loaded from: a failed reload's
    report names its files relative to them to the clients (``ShownPaths``); without
    them, by their names alone. Stderr gets the paths as loading names them.
    ``toolsets`` gives each toolset to serve, resolved against a loaded registry (it
    raises ``AgentKitError`` on a problem): each is served as ``sets[name]``, its
    ``deferred`` tools left out of the listing, and swapped with the whole. The sets
    served are those of the first load; a reload without one of them fails (the last
    good sets keep serving), and a new one waits for a restart.
    """

    __slots__ = (
        "_files",
        "_interval",
        "_list_files",
        "_load",
        "_lock",
        "_quiet_polls",
        "_say",
        "_shown",
        "_toolsets",
        "_watching",
        "served",
        "sets",
    )

    def __init__(
        self,
        load: Callable[[], ToolRegistry],
        files: Callable[[], Iterable[Path]],
        *,
        watch: bool = False,
        interval: float = DEFAULT_INTERVAL,
        settle: float = SETTLE_SECONDS,
        say: Callable[[str], None] = _say,
        loaded: tuple[ToolRegistry, tuple[tuple[str, int, int], ...]] | None = None,
        roots: Iterable[str | os.PathLike[str]] = (),
        toolsets: Callable[[ToolRegistry], Mapping[str, Toolset]] | None = None,
    ) -> None:
        self._load = load
        self._toolsets = toolsets
        self._shown = ShownPaths(roots)
        self._list_files = files
        self._watching = watch
        self._interval = interval
        # Counted in polls, not read from a clock: a poll that comes late (a busy
        # machine, a slow listing) still counts as one.
        self._quiet_polls = max(1, math.ceil(settle / interval))
        self._say = say
        self._lock = anyio.Lock()
        if loaded is None:
            self._files = self._state() if watch else ()
            registry = load()
        else:
            registry, self._files = loaded
        self.served = ServedTools(registry)
        #: Each toolset served, by name, in the order defined.
        self.sets = {
            name: ServedTools(toolset.restrict(registry), deferred=toolset.deferred)
            for name, toolset in (toolsets(registry) if toolsets else {}).items()
        }

    def _load_all(self) -> tuple[ToolRegistry, Mapping[str, Toolset]]:
        """The tools, and the registry of each toolset served; ``AgentKitError`` for a
        problem, or for a toolset served that is no longer defined."""
        registry = self._load()
        if self._toolsets is None:
            return registry, {}
        sets = self._toolsets(registry)
        gone = [name for name in self.sets if name not in sets]
        if gone:
            raise SemanticError(
                f"toolset '{gone[0]}' is served at a path of its own and no longer defined; "
                "define it again, or restart the server to stop serving it"
            )
        new = [name for name in sets if name not in self.sets]
        if new:
            self._say(f"toolset {', '.join(new)}: new, and served after a restart")
        return registry, sets

    async def reload(self, reason: str) -> Changes | None:
        """Load everything; swap it in if it loaded without a problem. The changes, or
        ``None`` when the last good set was kept."""
        async with self._lock:
            try:
                # Loading reads and parses files: off the loop, so calls go on meanwhile.
                registry, sets = await anyio.to_thread.run_sync(self._load_all)
                before = self.served.registry
                # Refused (the last good set kept) when a tool takes the search tool's name.
                self.served.replace(registry)
            except AgentKitError as exc:
                kept = (
                    f"reload ({reason}) failed; still serving the last good set of "
                    f"{len(self.served)} tools."
                )
                self._say(self.served.redact(f"{kept} {exc.format_message()}"))
                # The files loading reads (the env file among them) may be named in a
                # message: each is shown to clients as a problem's own file is.
                files = await anyio.to_thread.run_sync(self._listed)
                shown = self._shown.error(exc, files)
                await self.served.log("error", self.served.redact(f"{kept} {shown}"))
                return None
            found = changes(before, registry)
            del before
            try:
                message = f"reloaded ({reason}): {len(registry)} tools; {found.describe()}"
                self._say(message)
                await self.served.log("info", message)
                if found:
                    await self.served.announce()
                for name, served in self.sets.items():
                    said = f"reloaded ({reason}): toolset '{name}'"
                    await _swap(served, sets[name].restrict(registry), sets[name].deferred, said)
            finally:
                # Swapped in: the replaced tools' cycles are collected, not kept frozen,
                # whatever becomes of telling the clients (a failure, a cancellation).
                heap.refreeze()
            return found

    def _listed(self) -> list[str]:
        """The watched files' paths, or none when they cannot be listed now."""
        try:
            return [os.fspath(file) for file in self._list_files()]
        except (OSError, AgentKitError):
            return []

    def _state(self) -> tuple[tuple[str, int, int], ...]:
        """Every watched file with its size and modification time."""
        return file_state(self._list_files())

    async def watch(self) -> None:
        """Poll the watched files every ``interval`` seconds; reload once a change has
        settled (or after ``PATIENCE`` times the settling time). Runs until cancelled."""
        pending: tuple[tuple[str, int, int], ...] | None = None
        quiet = unsettled = 0
        while True:
            await anyio.sleep(self._interval)
            now = await anyio.to_thread.run_sync(self._state)
            if now == self._files:
                pending, unsettled = None, 0
                continue
            unsettled += 1
            if now == pending:
                quiet += 1
            else:
                pending, quiet = now, 0  # still being written, perhaps
            if quiet < self._quiet_polls and unsettled < PATIENCE * self._quiet_polls:
                continue
            self._files, pending, unsettled = now, None, 0
            await self.reload("files changed")

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Reload on SIGHUP (and, watching, on file changes) until cancelled; started
        (for ``TaskGroup.start``) once SIGHUP is handled."""
        with anyio.open_signal_receiver(signal.SIGHUP) as signals:
            async with anyio.create_task_group() as group:
                if self._watching:
                    group.start_soon(self.watch)
                task_status.started()
                async for _ in signals:
                    await self.reload("SIGHUP")


async def _swap(
    served: ServedTools, registry: ToolRegistry, deferred: frozenset[str], said: str
) -> None:
    """Serve ``registry`` in place of ``served``'s tools, ``deferred`` (names of its
    tools) left out of the listing; tell its clients what changed."""
    found = changes(served.registry, registry)
    served.replace(registry)
    if deferred != served.deferring:
        served.defer(deferred)
    await served.log("info", f"{said}: {len(registry)} tools; {found.describe()}")
    if found:
        await served.announce()


def file_state(files: Iterable[Path]) -> tuple[tuple[str, int, int], ...]:
    """Each of ``files`` with its size and modification time, sorted; a file gone
    meanwhile is left out (its absence is the change)."""
    seen: list[tuple[str, int, int]] = []
    for path in files:
        try:
            status = path.stat()
        except OSError:
            continue
        seen.append((str(path), status.st_size, status.st_mtime_ns))
    return tuple(sorted(seen))
