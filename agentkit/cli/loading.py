"""Finding and loading the tools a command works on.

The definitions come from the paths a command is given, else ``--tools``, else
``$AGENTKIT_TOOLS``, else ``./tools.d``; Python backends import from the
``--python-path`` folders and the current folder, searched last.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agentkit.problem import did_you_mean
from agentkit.toolerrors import UsageError

if TYPE_CHECKING:
    from agentkit.tool import Tool
    from agentkit.toolregistry import ToolRegistry
    from agentkit.toolsets import Toolset


def tool_paths(args: argparse.Namespace, given: Sequence[str] = ()) -> list[str]:
    """The definition files and folders to load: ``given`` (a command's own paths), else
    ``--tools``, else ``$AGENTKIT_TOOLS`` (split at ``os.pathsep``), else ``tools.d``."""
    if given:
        return list(given)
    if args.tools:
        return list(args.tools)
    from_env = os.environ.get("AGENTKIT_TOOLS")
    if from_env:
        return [part for part in from_env.split(os.pathsep) if part]
    return ["tools.d"]


def add_python_paths(args: argparse.Namespace) -> None:
    # Python backends import from --python-path folders and the current folder,
    # searched last (``__main__`` drops the current folder Python puts first for
    # `python -m agentkit`).
    from agentkit.declarative.backends.python import add_python_path

    add_python_path([*(args.python_path or []), "."])


def load_registry(
    args: argparse.Namespace, given: Sequence[str] = (), *, toolset: str | None = None
) -> ToolRegistry:
    """The tools defined at ``tool_paths(args, given)``, ``${VAR}`` read from ``--env-file``
    and the environment; a definition that does not load raises its ``AgentKitError``.
    With ``toolset``, only the tools of that set (``choose_toolset``)."""
    from agentkit.declarative import load_tools
    from agentkit.toolregistry import ToolRegistry

    add_python_paths(args)
    registry = ToolRegistry()
    load_tools(*tool_paths(args, given), registry=registry, env_file=args.env_file)
    if toolset is None:
        return registry
    return choose_toolset(load_toolsets(args, registry, given), toolset).restrict(registry)


def load_toolsets(
    args: argparse.Namespace, registry: ToolRegistry, given: Sequence[str] = ()
) -> dict[str, Toolset]:
    """The toolsets defined at ``tool_paths(args, given)``, resolved against ``registry``;
    a problem raises ``DefinitionError``."""
    from agentkit.declarative import load_toolsets as load

    return load(*tool_paths(args, given), registry=registry)


def choose_toolset(toolsets: Mapping[str, Toolset], name: str) -> Toolset:
    """The toolset called ``name``; ``UsageError`` (exit 2) naming the sets defined, and
    the closest, when there is none."""
    toolset = toolsets.get(name)
    if toolset is not None:
        return toolset
    defined = ", ".join(toolsets) or "none (a toolset is a document with a 'toolset:' key)"
    raise UsageError(
        f"--toolset {name!r}: no such toolset{did_you_mean(name, toolsets)}; defined: {defined}"
    )


def select_tools(registry: ToolRegistry, tags: Sequence[str] | None) -> list[Tool]:
    """The tools of ``registry`` with every ``--tag KEY=VALUE`` given (all of them if none);
    ``UsageError`` for a tag that is not ``KEY=VALUE``."""
    wanted: dict[str, str] = {}
    for item in tags or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--tag takes key=value, got {item!r}")
        wanted[key] = value
    return registry.lookup_by_tags(**wanted)
