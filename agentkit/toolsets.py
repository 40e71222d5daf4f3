"""Toolsets: named subsets of a registry's tools, one for each agent that needs fewer.

A ``Toolset`` is a resolved value: its tools' names, in the registry's order, and
those of them found on demand rather than listed up front (``deferred``).
``Selector`` is one entry of a set's ``tools``, ``exclude`` or ``deferred`` list, as
``toolset:`` documents write them (``agentkit.declarative.load_toolsets``):

- ``get_issue``: the tool of that exact name;
- ``list_*``: a glob (``*``, ``?``, ``[...]``) over tool names, case-sensitive;
- ``tag:domain=github``, or the mapping ``{tags: {domain: github}}``: the tools with
  every tag given.

Hand-written tools match as YAML ones do: by name, glob, and their ``TOOL_TAGS``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, final

from agentkit.tool import TOOL_NAME_PATTERN, Tool
from agentkit.toolerrors import SemanticError
from agentkit.toolregistry import ToolRegistry

__all__ = ["Selector", "Toolset"]

_GLOB_CHARS: Final = frozenset("*?[")
_GLOB_TEXT: Final = re.compile(r"[A-Za-z0-9_*?\[\]!-]+")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Selector:
    """One entry of a toolset: a tool ``name``, a ``glob`` over names, or ``tags``."""

    kind: Literal["name", "glob", "tags"]
    pattern: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, entry: object) -> Selector:
        """The selector ``entry`` writes; ``ValueError`` saying what it takes otherwise."""
        if isinstance(entry, Mapping):
            tags = entry.get("tags")
            if (
                set(entry) == {"tags"}
                and isinstance(tags, Mapping)
                and tags
                and all(isinstance(k, str) and isinstance(v, str) for k, v in tags.items())
            ):
                return cls(kind="tags", tags=dict(tags))
            raise ValueError(_TAKES)
        if not isinstance(entry, str):
            raise ValueError(_TAKES)
        if entry.startswith("tag:"):
            key, sep, value = entry[4:].partition("=")
            if not sep or not key:
                raise ValueError(f"'{entry}' is not a tag entry; write tag:key=value")
            return cls(kind="tags", tags={key: value})
        if _GLOB_CHARS & set(entry):
            if not _GLOB_TEXT.fullmatch(entry):
                raise ValueError(
                    f"'{entry}' is not a glob over tool names: use name characters "
                    "(letters, digits, '_', '-') with '*', '?' and '[...]'"
                )
            return cls(kind="glob", pattern=entry)
        if not TOOL_NAME_PATTERN.fullmatch(entry):
            raise ValueError(f"'{entry}' is not a tool name. {_TAKES}")
        return cls(kind="name", pattern=entry)

    def matches(self, tool: Tool) -> bool:
        if self.kind == "name":
            return tool.name == self.pattern
        if self.kind == "glob":
            return fnmatch.fnmatchcase(tool.name, self.pattern)
        return self.tags.items() <= tool.tags.items()

    def select(self, tools: Iterable[Tool]) -> list[Tool]:
        """The tools of ``tools`` this selects, in their order."""
        return [tool for tool in tools if self.matches(tool)]

    def __str__(self) -> str:
        if self.kind == "tags":
            return ", ".join(f"tag:{key}={value}" for key, value in self.tags.items())
        return self.pattern


_TAKES: Final = (
    "An entry is a tool name (get_issue), a glob over names (list_*), "
    "tag:key=value, or {tags: {key: value}}"
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Toolset:
    """A named set of tools: ``tools`` in the order of the registry they were chosen
    from, ``deferred`` (a subset) found on demand rather than listed up front, and
    ``source``, where it was defined (``file:line``), for messages."""

    name: str
    tools: tuple[str, ...]
    description: str = ""
    deferred: frozenset[str] = frozenset()
    source: str = ""

    def __post_init__(self) -> None:
        outside = sorted(self.deferred.difference(self.tools))
        if outside:
            raise SemanticError(
                f"Toolset '{self.name}': deferred names tools outside the set: "
                f"{', '.join(outside)}; defer only tools the set holds"
            )

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __len__(self) -> int:
        return len(self.tools)

    def restrict(self, registry: ToolRegistry) -> ToolRegistry:
        """A new registry of ``registry``'s tools in this set, the same instances, in
        the set's order; ``UnknownToolError`` when ``registry`` lacks one of them."""
        return ToolRegistry(registry[name] for name in self.tools)

    def summary(self, most: int = 10) -> str:
        """``N tools: a, b, c`` (at most ``most`` names, then ``and N more``)."""
        noun = "tool" if len(self.tools) == 1 else "tools"
        shown = ", ".join(self.tools[:most])
        rest = len(self.tools) - most
        more = f" and {rest} more" if rest > 0 else ""
        return f"{len(self.tools)} {noun}: {shown}{more}"
