"""The tools a server answers with (``ServedTools``): one immutable snapshot, swapped whole.

``replace`` swaps the registry and its listing in one assignment: a call already
running keeps the tool it started with; the next call sees the new set. It also knows
the client sessions it has seen, to tell them ``notifications/tools/list_changed``,
and the level of log messages (``notifications/message``) each asked for. Tools it
``defer``s are left out of the listing and found through the search tool
(``agentkit.toolsearch``); a session that found some has them listed from then on.
What reloads it is ``agentkit.mcp.reload``.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, final

import anyio
import mcp_types as types
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    SubscriptionBus,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agentkit.context import LogLevel, at_least
from agentkit.mcp.listing import MAX_DISCOVERED, listing
from agentkit.problem import did_you_mean
from agentkit.tool import Tool
from agentkit.toolerrors import SemanticError
from agentkit.toolregistry import ToolRegistry
from agentkit.toolsearch import SEARCH_TOOL_NAME, matching

__all__ = ["DEFAULT_LOG_LEVEL", "ServedTools"]

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

    __slots__ = ("_clients", "_current", "_deferred", "bus", "listen", "redact")

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
