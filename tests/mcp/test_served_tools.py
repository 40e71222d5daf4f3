"""``ServedTools``: the served set as one snapshot, the clients it has seen, and what it
tells them.

Deferred tools over a real server, and a session's found tools bounded, are in
``test_discovery.py``; reloads in ``test_reload.py``. Here the set's own contract, with
stand-ins for the SDK's per-connection session objects (their protocol version and the
two sends it makes).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.server.subscriptions import InMemorySubscriptionBus, ToolsListChanged

from agentkit.mcp.served_tools import DEFAULT_LOG_LEVEL, MAX_SESSIONS, ServedTools
from agentkit.toolerrors import SemanticError
from agentkit.toolregistry import ToolRegistry
from agentkit.toolsearch import SEARCH_TOOL_NAME
from tests.support.helpers import SECRET, generated_tool

HANDSHAKE_ERA = "2025-11-25"
MODERN = "2026-07-28"


class Session:
    """What ``ServedTools`` uses of the SDK's session object: what it was sent."""

    def __init__(self, protocol_version: str = HANDSHAKE_ERA, *, gone: bool = False) -> None:
        self.protocol_version = protocol_version
        self.gone = gone
        self.sent: list[Any] = []

    async def send_tool_list_changed(self) -> None:
        if self.gone:
            raise ConnectionResetError("the client went away")
        self.sent.append("tools/list_changed")

    async def send_notification(self, notification: Any) -> None:
        if self.gone:
            raise ConnectionResetError("the client went away")
        self.sent.append(notification)


def _registry(*names: str) -> ToolRegistry:
    return ToolRegistry(generated_tool(name, f"The {name} tool.", "id") for name in names)


def _names(listing: Any) -> list[str]:
    return [tool.name for tool in listing]


# -- the set -------------------------------------------------------------------------------------


def test_a_set_with_nothing_deferred_lists_every_tool_and_no_search_tool() -> None:
    served = ServedTools(_registry("jira_get", "jira_put", "weather"))
    assert len(served) == 3
    assert _names(served.listed) == ["jira_get", "jira_put", "weather"]
    assert served.deferred == frozenset()
    assert served.lookup(SEARCH_TOOL_NAME) is None
    assert served.lookup("nothing") is None


def test_deferred_tools_are_callable_by_name_and_the_search_tool_is_its_own() -> None:
    served = ServedTools(_registry("jira_get", "jira_put", "weather"))
    served.defer(frozenset({"jira_*"}))
    assert _names(served.listed) == ["weather", SEARCH_TOOL_NAME]
    assert served.deferred == {"jira_get", "jira_put"}
    assert served.deferring == {"jira_*"}
    assert len(served) == 3  # the search tool is no served tool of the registry
    jira = served.lookup("jira_get")
    assert jira is not None
    assert not served.is_search(jira)
    search = served.lookup(SEARCH_TOOL_NAME)
    assert search is not None
    assert served.is_search(search)


def test_a_pattern_naming_no_tool_is_refused_and_the_set_serves_on() -> None:
    served = ServedTools(_registry("jira_get", "weather"), deferred=frozenset({"weather"}))
    before = served.listed
    with pytest.raises(SemanticError) as info:
        served.defer(frozenset({"jira_get", "wether"}))
    assert str(info.value) == (
        "deferred 'wether' names no served tool (did you mean 'weather'?); "
        "give a tool's name or a pattern such as 'jira_*'"
    )
    assert served.listed is before
    assert served.deferring == {"weather"}


def test_deferring_nothing_lists_everything_again() -> None:
    served = ServedTools(_registry("jira_get", "weather"), deferred=frozenset({"jira_get"}))
    served.defer(frozenset())
    assert _names(served.listed) == ["jira_get", "weather"]
    assert served.lookup(SEARCH_TOOL_NAME) is None


def test_a_replaced_set_is_served_whole_and_a_lookup_made_before_keeps_its_tool() -> None:
    served = ServedTools(_registry("weather"))
    running = served.lookup("weather")
    registry = served.registry
    served.replace(_registry("forecast"))
    assert served.lookup("weather") is None
    assert served.lookup("forecast") is not None
    assert running is not None
    assert registry.lookup("weather") is running  # the old snapshot is untouched


# -- clients -------------------------------------------------------------------------------------


def test_found_names_that_are_not_deferred_change_nothing() -> None:
    served = ServedTools(_registry("jira_get", "weather"), deferred=frozenset({"jira_*"}))
    served.seen("s1", Session())
    assert served.discover("s1", ["weather", "nothing"]) is False
    assert _names(served.listed_for("s1")) == ["weather", SEARCH_TOOL_NAME]
    assert served.discover("s1", ["jira_get"]) is True
    assert _names(served.listed_for("s1")) == ["jira_get", "weather", SEARCH_TOOL_NAME]
    assert served.discover("", ["jira_get"]) is False  # no connection: nothing kept


def test_a_client_wants_info_and_up_until_it_sets_its_level() -> None:
    served = ServedTools(_registry("weather"))
    assert DEFAULT_LOG_LEVEL == "info"
    served.set_log_level("unseen", "debug")  # a connection not seen: nothing kept
    assert served.log_level("unseen") == "info"
    served.seen("s1", Session())
    served.set_log_level("s1", "error")
    assert served.log_level("s1") == "error"
    served.seen("s1", Session())  # a new session object of the same connection
    assert served.log_level("s1") == "error"


def test_the_oldest_connections_are_forgotten_past_the_bound() -> None:
    served = ServedTools(_registry("weather"))
    served.seen("first", Session())
    served.set_log_level("first", "debug")
    served.seen("second", Session())
    served.set_log_level("second", "debug")
    served.seen("first", Session())  # seen again: now the newest
    for number in range(MAX_SESSIONS - 1):
        served.seen(f"c{number}", Session())
    assert served.log_level("first") == "debug"
    assert served.log_level("second") == DEFAULT_LOG_LEVEL  # forgotten


# -- telling them --------------------------------------------------------------------------------


def test_a_change_is_announced_on_the_bus_and_to_each_handshake_era_session() -> None:
    bus = InMemorySubscriptionBus()
    published: list[Any] = []
    bus.subscribe(published.append)
    served = ServedTools(_registry("weather"), bus=bus)
    old, latest, modern, gone = Session(), Session(), Session(MODERN), Session(gone=True)
    served.seen("s1", old)
    served.seen("s1", latest)  # the latest session object reaches the connection
    served.seen("s2", modern)
    served.seen("s3", gone)
    assert anyio.run(served.announce) == 1
    assert latest.sent == ["tools/list_changed"]
    assert old.sent == modern.sent == gone.sent == []
    assert [type(event) for event in published] == [ToolsListChanged]  # the modern one hears


def test_a_log_message_goes_redacted_to_each_client_that_wants_its_level() -> None:
    served = ServedTools(_registry("weather"))
    served.redact = lambda text: text.replace(SECRET, "***")
    chatty, quiet, modern, gone = Session(), Session(), Session(MODERN), Session(gone=True)
    for name, session in [("a", chatty), ("b", quiet), ("c", modern), ("d", gone)]:
        served.seen(name, session)
    served.set_log_level("a", "debug")
    served.set_log_level("b", "error")

    assert anyio.run(served.log, "warning", f"reload failed, key {SECRET}") == 1
    [notification] = chatty.sent
    assert notification.params.level == "warning"
    assert notification.params.logger == "agentkit"
    assert notification.params.data == "reload failed, key ***"
    assert quiet.sent == modern.sent == []

    assert anyio.run(served.log, "error", "tools folder gone") == 2
    assert [sent.params.data for sent in quiet.sent] == ["tools folder gone"]


def test_no_client_seen_is_told_nothing() -> None:
    served = ServedTools(_registry("weather"))
    assert anyio.run(served.announce) == 0
    assert anyio.run(served.log, "emergency", "nobody hears") == 0
