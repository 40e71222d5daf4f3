"""Toolset documents: a named subset of the tools, declared beside them.

A document whose top-level key is ``toolset`` defines one::

    toolset: triage
    description: What the triage agent may use.
    tools: [get_issue, "list_*", {tags: {domain: github}}]
    exclude: ["*_delete"]
    deferred: ["list_*"]

``tools`` entries choose tools (``agentkit.toolsets.Selector``: a name, a glob, or
tags), ``exclude`` takes some out again, and ``deferred`` marks members to be found
on demand rather than listed up front. A tool may be in several sets.

Checked in two steps. Its shape (keys, types, a unique name) is checked with the
tools, by ``load_tools``: a broken toolset stops the load like a broken tool. What
it holds is resolved by ``load_toolsets`` against a registry, the loaded tools and
any registered by hand: an entry that matches nothing, or a set left empty, is a
problem at its ``file:line``, with the closest name as a hint.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.declarative.limit_specs import parse_limits_at
from agentkit.declarative.problems import (
    Location,
    ProblemLog,
    Problems,
    check_keys,
    check_named,
)
from agentkit.declarative.tool import DeclarativeTool
from agentkit.declarative.yamlsource import clip
from agentkit.ratelimits import Limits
from agentkit.tool import Tool
from agentkit.toolregistry import ToolRegistry
from agentkit.toolsets import Selector, Toolset

__all__ = [
    "TOOLSET_KEYS",
    "ToolsetDefinition",
    "check_toolsets",
    "is_toolset_document",
    "parse_toolset",
    "resolve_toolsets",
]

TOOLSET_KEYS: Final = ("toolset", "description", "tools", "exclude", "deferred", "limits")
_LISTS: Final = ("tools", "exclude", "deferred")

#: One entry of a list, and where it is in its document.
_Entry = tuple[Selector, Location]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolsetDefinition:
    """A toolset document whose shape is right, not yet resolved against tools."""

    name: str
    description: str
    tools: tuple[_Entry, ...]
    exclude: tuple[_Entry, ...]
    deferred: tuple[_Entry, ...]
    problems: Problems  # where a problem found when resolving it is reported
    #: Limits on all the set's tools together (``limits:``); None: none.
    limits: Limits | None = None

    @property
    def location(self) -> str:
        return f"{self.problems.path}:{self.problems.start[0]}"


def is_toolset_document(raw: Any) -> bool:
    return isinstance(raw, dict) and "toolset" in raw and "source" not in raw


def parse_toolset(raw: dict[str, Any], problems: Problems) -> ToolsetDefinition | None:
    """Check one toolset document's shape; problems go to ``problems``, None if any."""
    start = len(problems)
    check_keys(raw, TOOLSET_KEYS, (), problems, "a toolset")
    name, description = check_named(raw, "toolset", problems, " (it is part of a URL)")
    if "tools" not in raw:
        problems.add(
            ("toolset",),
            "missing 'tools': a list of tool names, globs (list_*) or tags (tag:key=value)",
        )
    lists = {key: _entries(raw, key, problems) for key in _LISTS}
    limits = parse_limits_at(raw, f"toolset '{name}'", f"toolset:{name}", problems)
    if len(problems) > start:
        return None
    assert isinstance(name, str)
    return ToolsetDefinition(
        name=name,
        description=description,
        tools=lists["tools"],
        exclude=lists["exclude"],
        deferred=lists["deferred"],
        problems=problems,
        limits=limits,
    )


def _entries(raw: dict[str, Any], key: str, problems: Problems) -> tuple[_Entry, ...]:
    if key not in raw:
        return ()
    given = raw[key]
    if not isinstance(given, list) or (key == "tools" and not given):
        problems.add(
            (key,),
            f"'{key}' takes a list of entries: tool names, globs (list_*), tag:key=value "
            "or {tags: {key: value}}",
        )
        return ()
    entries: list[_Entry] = []
    for index, item in enumerate(given):
        try:
            entries.append((Selector.parse(item), (key, index)))
        except ValueError as exc:
            problems.add((key, index), str(exc))
    return tuple(entries)


def check_toolsets(
    documents: Iterable[tuple[str, Any, tuple[int, int], str, int]], log: ProblemLog
) -> list[ToolsetDefinition]:
    """The toolset documents among ``documents`` (path, value, start, text, number)
    checked; a name defined twice is a problem at the second."""
    found: dict[str, ToolsetDefinition] = {}
    for path, document, start, text, number in documents:
        if not is_toolset_document(document):
            continue
        problems = Problems(path, document, start, log, text=text, number=number)
        definition = parse_toolset(document, problems)
        if definition is None:
            continue
        earlier = found.get(definition.name)
        if earlier is not None:
            problems.add(
                ("toolset",),
                f"toolset '{definition.name}' is already defined at {earlier.location}; "
                "toolset names must be unique",
            )
            continue
        found[definition.name] = definition
    return list(found.values())


def resolve_toolsets(
    definitions: Iterable[ToolsetDefinition], registry: ToolRegistry
) -> dict[str, Toolset | None]:
    """Each of ``definitions`` resolved against the tools of ``registry``, by name; None
    for one with problems, each reported to its own ``problems``."""
    tools = list(registry)
    return {definition.name: _resolve(definition, tools) for definition in definitions}


def _resolve(definition: ToolsetDefinition, tools: list[Tool]) -> Toolset | None:
    """``definition``'s tools among ``tools``; a problem for each entry that matches none."""
    problems = definition.problems
    start = len(problems)
    chosen = set(_matched(definition.tools, tools, problems, ""))
    excluded = set(_matched(definition.exclude, tools, problems, ""))
    members = [tool for tool in tools if tool.name in chosen and tool.name not in excluded]
    if not members and len(problems) == start:
        problems.add(
            ("toolset",),
            f"toolset '{definition.name}' holds no tool: 'exclude' takes out every tool "
            f"'tools' chose ({', '.join(sorted(chosen)[:10])}); exclude fewer",
        )
    within = f" of the set '{definition.name}'"
    deferred = set(_matched(definition.deferred, members, problems, within, tools))
    if definition.limits is not None:
        _limit(definition.limits, members, problems)
    if len(problems) > start:
        return None
    return Toolset(
        name=definition.name,
        description=definition.description,
        tools=tuple(tool.name for tool in members),
        deferred=frozenset(deferred),
        source=definition.location,
    )


def _limit(limits: Limits, members: list[Tool], problems: Problems) -> None:
    """Apply a set's ``limits`` to each member; a tool registered in code cannot take them."""
    coded = [tool.name for tool in members if not isinstance(tool, DeclarativeTool)]
    if coded:
        problems.add(
            ("limits",),
            f"limits apply to tools from definition files; {', '.join(coded[:10])} "
            f"{'is' if len(coded) == 1 else 'are'} registered in code: exclude "
            f"{'it' if len(coded) == 1 else 'them'}, or give the set no limits",
        )
        return
    for tool in members:
        type(tool).limiter().add(limits)  # type: ignore[attr-defined]


def _matched(
    entries: tuple[_Entry, ...],
    tools: list[Tool],
    problems: Problems,
    within: str,
    everything: Sequence[Tool] = (),
) -> Iterator[str]:
    """The names the entries match among ``tools``; a problem for an entry matching none,
    with the closest name or tag as a hint, or the tools of ``everything`` it matches."""
    names: list[str] = []
    tags: list[str] = []
    for selector, location in entries:
        matched = selector.select(tools)
        if matched:
            yield from (tool.name for tool in matched)
            continue
        outside = [tool.name for tool in selector.select(everything)]
        if outside:
            shown = ", ".join(outside[:10]) + (" ..." if len(outside) > 10 else "")
            problems.add(
                location,
                f"'{clip(str(selector))}' matches no tool{within}, only tools outside it "
                f"({shown}); defer only members, or add them to 'tools'",
            )
            continue
        if selector.kind == "tags":
            tags = tags or sorted({f"tag:{k}={v}" for tool in tools for k, v in tool.tags.items()})
            hint = problems.did_you_mean(str(selector), tags)
            known = f"the tags in use{within}: {', '.join(tags[:10]) or 'none'}"
            known += " ..." if len(tags) > 10 else ""
        else:
            names = names or [tool.name for tool in tools]
            hint = problems.did_you_mean(selector.pattern.replace("*", ""), names)
            known = (
                f"the set holds: {', '.join(names[:10])}{' ...' if len(names) > 10 else ''}"
                if within
                else f"{len(names)} tools are loaded (agentkit list shows them)"
            )
        problems.add(location, f"'{clip(str(selector))}' matches no tool{within}{hint}; {known}")
