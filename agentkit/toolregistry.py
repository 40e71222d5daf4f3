"""The set of tools an agent can call, by name."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator

from agentkit.problem import closest
from agentkit.tool import Tool
from agentkit.toolerrors import SemanticError, UnknownToolError

__all__ = ["ToolRegistry", "name_key"]


def name_key(name: str) -> str:
    """What two tool names must differ in: ``fetch_weather``, ``fetch-weather`` and
    ``FetchWeather`` share the key ``fetchweather``.

    A model tells tools apart by name, providers normalise some spellings, and a
    definition's class name (``FetchWeatherTool``) is its name without case or
    ``-``/``_``: names that differ only there are one name.
    """
    return name.replace("-", "").replace("_", "").casefold()


class ToolRegistry:
    """Tools by name; a name is taken once. Safe to use from several threads.

    Iteration, ``names()`` and ``lookup_by_tags`` see the tools in the order
    they were registered, as a snapshot: registering during iteration is safe.
    """

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._lock = threading.RLock()
        self._tools: dict[str, Tool] = {}
        self._by_key: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> Tool:
        """Add ``tool``; a name already taken raises ``SemanticError`` naming both sources.

        A name is taken when another tool's differs only in case, ``-`` or ``_``.
        """
        if isinstance(tool, type) and issubclass(tool, Tool):
            raise SemanticError(
                f"register() takes a Tool instance, got the class {tool.__name__}; "
                f"register {tool.__name__}() instead"
            )
        if not isinstance(tool, Tool):
            raise SemanticError(f"register() takes a Tool instance, got {type(tool).__name__}")
        name = tool.name
        with self._lock:
            existing = self._by_key.get(name_key(name))
            if existing is not None and existing.name == name:
                raise SemanticError(
                    # The first sentence is the chapter's, which callers may match on.
                    "Duplicate tool registration attempted. "
                    f"Tool '{name}' is already registered (defined by {existing.source}); "
                    f"cannot register a second tool of that name (defined by {tool.source}). "
                    "Rename one of them, or unregister the first."
                )
            if existing is not None:
                raise SemanticError(
                    f"Tool '{name}' (defined by {tool.source}) collides with the registered "
                    f"tool '{existing.name}' (defined by {existing.source}): names must differ "
                    "in more than case, '-' and '_'. Rename one of them."
                )
            self._tools[name] = tool
            self._by_key[name_key(name)] = tool
        return tool

    def unregister(self, name: str) -> Tool:
        """Remove and return the tool called ``name``; ``UnknownToolError`` when there is none."""
        with self._lock:
            try:
                tool = self._tools.pop(name)
            except KeyError:
                raise UnknownToolError(name, self._tools) from None
            del self._by_key[name_key(name)]
            return tool

    def lookup(self, tool_name: str) -> Tool | None:
        """The tool called ``tool_name``, or ``None``."""
        return self._tools.get(tool_name)

    def __getitem__(self, name: str) -> Tool:
        """The tool called ``name``; ``UnknownToolError`` (a ``KeyError``) when there is none."""
        tool = self._tools.get(name)
        if tool is None:
            raise UnknownToolError(name, self.names())
        return tool

    def colliding(self, name: str) -> Tool | None:
        """The registered tool whose name is ``name`` or differs from it only in case, -, _."""
        return self._by_key.get(name_key(name))

    def lookup_by_tags(self, **tags: str) -> list[Tool]:
        """The tools whose tags include every ``key=value`` given (all tools when none are)."""
        wanted = tags.items()
        return [tool for tool in self._snapshot() if wanted <= tool.tags.items()]

    def names(self) -> list[str]:
        with self._lock:
            return list(self._tools)

    def suggest(self, name: str) -> str | None:
        """The registered name closest to ``name``, for "did you mean" hints."""
        return closest(name, self.names())

    def _snapshot(self) -> list[Tool]:
        with self._lock:
            return list(self._tools.values())

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._snapshot())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, Tool):
            return self._tools.get(item.name) is item
        return item in self._tools

    def __repr__(self) -> str:
        return f"ToolRegistry({self.names()!r})"
