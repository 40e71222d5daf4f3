"""What a server lists: its tools, less the deferred ones and plus the search tool
that finds them (``agentkit.toolsearch``), and, to a session whose searches found some,
those too.

``listing(registry, patterns)`` makes a ``Listing`` once per served set (at start and
at each reload); ``Listing.listed_for(discovered)`` is a session's listing. The order
is the registry's (the order the tools were loaded in: files sorted by path, each
file's tools in turn), a deferred tool a session found at its own place in it, and the
search tool last; so two listings of the same set and the same discoveries are the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final, final

import mcp_types as types

from agentkit.adapters.export import mcp_tool
from agentkit.tool import Tool
from agentkit.toolerrors import SemanticError
from agentkit.toolregistry import ToolRegistry
from agentkit.toolsearch import SEARCH_TOOL_NAME, SearchTools, matching

__all__ = ["MAX_DISCOVERED", "Listing", "entry", "listing"]

#: The most deferred tools one session's searches add to its listing; past that the
#: ones found longest ago leave it again (they stay callable by name).
MAX_DISCOVERED: Final = 64


def entry(tool: Tool) -> types.Tool:
    """``tool`` as ``tools/list`` gives it (``adapters.export.mcp_tool``), as the SDK's type."""
    exported = mcp_tool(tool)
    hints = exported["annotations"]
    return types.Tool(
        name=exported["name"],
        title=exported["title"],
        description=exported["description"],
        input_schema=exported["inputSchema"],
        output_schema=exported.get("outputSchema"),
        annotations=types.ToolAnnotations(
            title=hints.get("title"),
            read_only_hint=hints.get("readOnlyHint"),
            destructive_hint=hints.get("destructiveHint"),
            idempotent_hint=hints.get("idempotentHint"),
            open_world_hint=hints.get("openWorldHint"),
        ),
    )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Listing:
    """One served set as clients are listed it (see the module's docstring)."""

    registry: ToolRegistry
    #: What every client is listed: the tools not deferred, in the registry's order,
    #: then the search tool when some are deferred.
    listed: tuple[types.Tool, ...]
    #: The names of the registry's deferred tools, and the search tool over them.
    deferred: frozenset[str] = frozenset()
    search: SearchTools | None = None
    #: Listing entries of deferred tools, made when a session first needs them.
    shown: dict[str, types.Tool] = dataclasses.field(default_factory=dict)

    def listed_for(self, discovered: Collection[str]) -> tuple[types.Tool, ...]:
        """The listing of a session whose searches found ``discovered``: ``listed``,
        and those of them still deferred, each at its place in the registry's order."""
        found = self.deferred.intersection(discovered) if discovered else frozenset()
        if not found:
            return self.listed
        up_front = iter(self.listed)
        entries: list[types.Tool] = []
        for tool in self.registry:
            if tool.name not in self.deferred:
                entries.append(next(up_front))
            elif tool.name in found:
                shown = self.shown.get(tool.name)
                if shown is None:
                    shown = self.shown[tool.name] = entry(tool)
                entries.append(shown)
        entries.extend(up_front)  # the search tool
        return tuple(entries)


def listing(registry: ToolRegistry, patterns: frozenset[str] = frozenset()) -> Listing:
    """``registry`` served with the tools ``patterns`` name deferred (see ``ServedTools.defer``).

    Raises ``SemanticError`` when a registered tool would be mistaken for the search tool.
    """
    deferred = matching(registry, patterns) if patterns else frozenset()
    if not deferred:
        return Listing(registry=registry, listed=tuple(entry(tool) for tool in registry))
    taken = registry.colliding(SEARCH_TOOL_NAME)
    if taken is not None:
        raise SemanticError(
            f"Tool '{taken.name}' (defined by {taken.source}) has the name of the search "
            f"tool '{SEARCH_TOOL_NAME}' that the server adds when tools are deferred; "
            "rename the tool, or defer none"
        )
    search = SearchTools(tool for tool in registry if tool.name in deferred)
    up_front = [entry(tool) for tool in registry if tool.name not in deferred]
    return Listing(
        registry=registry, listed=(*up_front, entry(search)), deferred=deferred, search=search
    )
