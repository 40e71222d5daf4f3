"""Changing a running server's tools: the served set, swapped whole, and what reloads it.

- ``ServedTools`` holds the tools a server answers with, as one immutable snapshot
  (registry and listing). ``replace`` swaps it in one assignment: a call already
  running keeps the tool it started with; the next call sees the new set. It also
  knows the client sessions it has seen, to tell them ``notifications/tools/list_changed``,
  and the level of log messages (``notifications/message``) each asked for. Tools it
  ``defer``s are left out of the listing and found through the search tool
  (``agentkit.toolsearch``); a session that found some has them listed from then on.
- ``Reloader`` loads the tools, and everything again (``reload``), on SIGHUP or when a watched file
  changes (``watch``: polling file names, sizes and modification times, every
  ``interval`` seconds). Only a load with no problem is swapped in; otherwise the last
  good set keeps serving and every problem is logged with its file:line. The tools
  added, changed and removed are logged, on stderr and to the clients (``log``).
- ``ShownPaths``: how a file of the server is named to its clients: relative to the tools
  folder it is in, else by its name alone, never by the server's own (absolute) path.
  Stderr, the operator's, keeps the paths as loading gave them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import signal
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Final, final

import anyio
import mcp_types as types
from anyio.abc import TaskStatus
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    SubscriptionBus,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agentkit.adapters.export import mcp_tool
from agentkit.context import LogLevel, at_least
from agentkit.mcp.listing import MAX_DISCOVERED, listing
from agentkit.tool import Tool
from agentkit.toolerrors import AgentKitError, DefinitionError, SemanticError, did_you_mean
from agentkit.toolregistry import ToolRegistry
from agentkit.toolsearch import SEARCH_TOOL_NAME, matching
from agentkit.toolsets import Toolset

__all__ = ["Changes", "EarlyHangups", "Reloader", "ServedTools", "ShownPaths", "file_state"]

DEFAULT_INTERVAL: Final = 1.0
# A change is loaded once the files have looked the same for this long (and on two polls
# in a row at least): a writer's pause (a slow copy, a truncate-then-write save) is not
# taken for the end of the write, and a half-written file is not swapped in.
SETTLE_SECONDS: Final = 2.0
# A change that never settles (a file rewritten without pause) is loaded after this many
# times the settling time.
PATIENCE: Final = 10
#: The most client connections a reload is announced to (the SDK's own session cap).
MAX_SESSIONS: Final = 10_000
#: How long one client may take to accept the announcement.
ANNOUNCE_SECONDS: Final = 5.0
#: The least severe log message a client gets before it sends ``logging/setLevel``.
DEFAULT_LOG_LEVEL: Final[LogLevel] = "info"


@final
@dataclass(slots=True)
class _Client:
    """One client connection: the latest session object that reaches it, and the least
    severe log message it wants (``logging/setLevel``)."""

    session: Any
    log_level: LogLevel = DEFAULT_LOG_LEVEL
    #: The deferred tools its searches found, oldest first (at most ``MAX_DISCOVERED``).
    discovered: OrderedDict[str, None] = dataclasses.field(default_factory=OrderedDict)


@final
class ServedTools:
    """The tools a server answers with; ``replace`` swaps them all at once."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        bus: SubscriptionBus | None = None,
        deferred: frozenset[str] = frozenset(),
    ) -> None:
        self._deferred = frozenset(deferred)
        self._current = listing(registry, self._deferred)
        #: Where ``announce`` publishes a change for 2026-07-28 clients; ``listen``
        #: serves their ``subscriptions/listen`` streams from it. A bus of your own (over
        #: Redis, say) carries one instance's reload to the streams of all of them.
        self.bus: SubscriptionBus = bus if bus is not None else InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        # The SDK's session object is a per-request proxy; the latest one of each
        # connection reaches it. Bounded: the oldest connections are forgotten first.
        self._clients: OrderedDict[str, _Client] = OrderedDict()
        #: Applied to every message ``log`` sends: the server sets it to redact the
        #: credentials its tools use.
        self.redact: Callable[[str], str] = str

    @property
    def registry(self) -> ToolRegistry:
        return self._current.registry

    @property
    def listed(self) -> tuple[types.Tool, ...]:
        return self._current.listed

    @property
    def deferred(self) -> frozenset[str]:
        """The names of the served tools that are deferred (not listed up front)."""
        return self._current.deferred

    @property
    def deferring(self) -> frozenset[str]:
        """What ``defer`` was given: names and patterns, matched again at each reload."""
        return self._deferred

    def __len__(self) -> int:
        return len(self._current.registry)

    def replace(self, registry: ToolRegistry) -> None:
        """Serve ``registry`` from now on, deferring what ``defer`` named (its patterns
        are matched again: a tool a reload adds may be deferred too). Raises
        ``SemanticError`` (and serves on as before) when a tool takes the search
        tool's name."""
        # One assignment: a reader sees the old snapshot or the new one, never a mix.
        self._current = listing(registry, self._deferred)

    def defer(self, patterns: frozenset[str]) -> None:
        """Leave the tools ``patterns`` name out of the listing: each pattern a tool's
        name or a shell-style pattern (``jira_*``) matched against names. They stay
        callable by name, and the search tool (``search_tools``) finds them.

        Raises ``SemanticError`` for a pattern that matches no served tool (a typo
        would otherwise list what was meant to be deferred), or a tool that takes the
        search tool's name.
        """
        registry = self._current.registry
        names = registry.names()
        for pattern in sorted(patterns):
            if not matching(registry, (pattern,)):
                raise SemanticError(
                    f"deferred {pattern!r} names no served tool{did_you_mean(pattern, names)}; "
                    "give a tool's name or a pattern such as 'jira_*'"
                )
        snapshot = listing(registry, frozenset(patterns))
        self._deferred = frozenset(patterns)
        self._current = snapshot

    def lookup(self, name: str) -> Tool | None:
        """The served tool called ``name``, listed or deferred, or the search tool."""
        snapshot = self._current
        if snapshot.search is not None and name == SEARCH_TOOL_NAME:
            return snapshot.search
        return snapshot.registry.lookup(name)

    def is_search(self, tool: Tool) -> bool:
        """Whether ``tool`` is the search tool of the tools served now."""
        return tool is self._current.search

    def listed_for(self, connection: str) -> tuple[types.Tool, ...]:
        """The listing of client ``connection``: ``listed``, and the deferred tools its
        searches found, each at its place in the registry's order."""
        client = self._clients.get(connection) if connection else None
        return self._current.listed_for(client.discovered if client is not None else ())

    def discover(self, connection: str, names: Iterable[str]) -> bool:
        """Client ``connection`` found ``names`` (deferred tools): list them to it from
        now on. Whether its listing changed; never for a client not seen (a stateless
        server's, which keeps nothing between requests)."""
        client = self._clients.get(connection) if connection else None
        if client is None:
            return False
        deferred = self._current.deferred
        added = False
        for name in names:
            if name not in deferred:
                continue
            added = added or name not in client.discovered
            client.discovered[name] = None
            client.discovered.move_to_end(name)
        while len(client.discovered) > MAX_DISCOVERED:
            client.discovered.popitem(last=False)
        return added

    def seen(self, connection: str, session: Any) -> None:
        """Remember ``session`` as the way to reach client ``connection`` (an HTTP
        session id; one name for stdio's single client), to announce changes to it."""
        client = self._clients.get(connection)
        if client is None:
            self._clients[connection] = _Client(session)
        else:
            client.session = session
            self._clients.move_to_end(connection)
        while len(self._clients) > MAX_SESSIONS:
            self._clients.popitem(last=False)

    def set_log_level(self, connection: str, level: LogLevel) -> None:
        """Client ``connection`` wants log messages at ``level`` and up (``logging/setLevel``)."""
        client = self._clients.get(connection)
        if client is not None:
            client.log_level = level

    def log_level(self, connection: str) -> LogLevel:
        """The least severe log message client ``connection`` wants."""
        client = self._clients.get(connection)
        return client.log_level if client is not None else DEFAULT_LOG_LEVEL

    async def announce(self) -> int:
        """Tell every client the tools changed; how many handshake-era sessions got it.

        A 2026-07-28 client is told on each ``subscriptions/listen`` stream it holds open
        (stateless or not); a handshake-era session (2025-11-25 and before) gets
        ``notifications/tools/list_changed`` outside its requests, on its GET stream.
        """
        await self.bus.publish(ToolsListChanged())

        def send(client: _Client) -> Any:
            # A 2026-07-28 connection has no stream outside a request: its listen
            # stream (above) is how it hears.
            if client.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
                return None
            return client.session.send_tool_list_changed()

        return await self._tell(send)

    async def log(self, level: LogLevel, message: str) -> int:
        """Send ``message`` as ``notifications/message`` (logger ``agentkit``) to every
        client that wants ``level``; how many got it. Redacted first (``redact``)."""
        notification = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level=level, data=self.redact(message), logger="agentkit"
            )
        )

        def send(client: _Client) -> Any:
            # A 2026-07-28 connection has no logging/setLevel and no stream for a
            # message outside a request: it gets none.
            if client.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
                return None
            if not at_least(level, client.log_level):
                return None
            return client.session.send_notification(notification)

        return await self._tell(send)

    async def _tell(self, send: Callable[[_Client], Any]) -> int:
        told = 0
        for client in list(self._clients.values()):
            try:
                sending = send(client)
                if sending is None:
                    continue
                with anyio.move_on_after(ANNOUNCE_SECONDS):
                    await sending
            except Exception:  # a session that went away meanwhile: nothing to tell
                continue
            told += 1
        return told


@final
@dataclass(frozen=True, slots=True)
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


# Where a path written in a message may start and end: not inside a longer name or path.
_BEFORE: Final = r"(?<![\w.~/\\-])"
_AFTER: Final = r"(?![\w.~-])"


@final
class ShownPaths:
    """Paths of the server's files as its clients are shown them: relative to the root
    they are under (``roots``: the folders and files the tools are loaded from, as
    ``--tools`` gives them, once or more), the root itself and any path outside every
    root by its name alone. A client learns where a problem is in the tools it was
    given, not how the server's disk is laid out."""

    def __init__(self, roots: Iterable[str | os.PathLike[str]] = ()) -> None:
        spellings: set[str] = set()
        for root in roots:
            given = os.fspath(root)
            for spelling in (given, os.path.abspath(given), os.path.realpath(given)):
                spellings.add(spelling.rstrip(os.sep) or os.sep)
        # The longest first: a root inside another shows its files from the nearer one.
        self._roots = sorted(spellings, key=len, reverse=True)

    def path(self, path: str) -> str:
        """``path`` (as loading names it) as a client is shown it."""
        for root in self._roots:
            if path.startswith(root) and path[len(root) : len(root) + 1] == os.sep:
                return path[len(root) + 1 :]
        return _name(path)

    def text(self, text: str, paths: Iterable[str] = ()) -> str:
        """``text`` with every root, and every one of ``paths`` (files ``text`` may
        name), as ``path`` shows it."""
        known = {path: self.path(path) for path in paths}
        known.update((root, _name(root)) for root in self._roots)
        if not known:
            return text
        spellings = "|".join(re.escape(path) for path in sorted(known, key=len, reverse=True))
        pattern = re.compile(f"{_BEFORE}({spellings})(?:({re.escape(os.sep)})|{_AFTER})")

        def shown(match: re.Match[str]) -> str:
            found, under = match.group(1), match.group(2)
            if under and found in self._roots:
                return ""  # what follows is the path within the root
            return known[found] + (under or "")

        return pattern.sub(shown, text)

    def error(self, exc: AgentKitError, paths: Iterable[str] = ()) -> str:
        """``exc``'s message as a client is shown it: each problem of a
        ``DefinitionError`` located by ``path``, and every path ``text`` knows of
        (``paths``, the roots, the problems' files) shown so in any message."""
        if not isinstance(exc, DefinitionError):
            return self.text(exc.format_message(), paths)
        files = {*paths, *(problem.file for problem in exc.problems)}
        shown = DefinitionError(
            [
                dataclasses.replace(
                    problem,
                    file=self.path(problem.file),
                    message=self.text(problem.message, files),
                )
                for problem in exc.problems
            ],
            not_shown=exc.not_shown,
        )
        return shown.format_message()


def _name(path: str) -> str:
    return os.path.basename(path.rstrip(os.sep)) or path


@final
class EarlyHangups:
    """The SIGHUPs that come while a server starts, before ``Reloader.run`` listens:
    noted, for a reload once it does, rather than ending the process (SIGHUP's default).
    A context manager; where it cannot handle the signal (Windows, a thread other than
    the main one) it notes nothing and changes nothing."""

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
            message = f"reloaded ({reason}): {len(registry)} tools; {found.describe()}"
            self._say(message)
            await self.served.log("info", message)
            if found:
                await self.served.announce()
            for name, served in self.sets.items():
                said = f"reloaded ({reason}): toolset '{name}'"
                await _swap(served, sets[name].restrict(registry), sets[name].deferred, said)
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
