"""A pytest plugin: tools' examples collected as tests, replayed from their recordings.

Opt-in, so that installing agentkit changes no one's test run: pytest collects
examples only when given folders or files of definitions, by the command line
(``pytest --agentkit-tools tools.d``, repeatable) or the ini setting
``agentkit_tools`` (a list of paths, relative to the ini file's folder). Each
example is a test item named ``<file>::<tool>::<example>``; a failure shows
the example's ``path:line`` and the diff ``agentkit test`` shows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentkit.toolerrors import AgentKitError

if TYPE_CHECKING:
    # Imported when used: pytest loads this plugin in every run, and without the
    # option it must cost nothing.
    from agentkit.tool import Tool
    from agentkit.toolexamples import ToolExample

_TOOLS_KEY = pytest.StashKey[list["Tool"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentkit", "agentkit tool examples")
    group.addoption(
        "--agentkit-tools",
        action="append",
        default=[],
        metavar="PATH",
        help="collect the examples of the tool definitions at PATH as tests (repeatable)",
    )
    parser.addini(
        "agentkit_tools",
        type="paths",
        default=[],
        help="tool definition files or folders whose examples are collected as tests",
    )


def _configured(config: pytest.Config) -> list[Path]:
    given = [Path(path).resolve() for path in config.getoption("agentkit_tools") or []]
    from_ini = [Path(path).resolve() for path in config.getini("agentkit_tools") or []]
    return list(dict.fromkeys([*given, *from_ini]))


def pytest_configure(config: pytest.Config) -> None:
    paths = _configured(config)
    if not paths:
        return
    for path in paths:
        if str(path) not in config.args:
            config.args.append(str(path))


def _tools(config: pytest.Config) -> list[Tool]:
    """Every configured tool, loaded once for the session (a definition may use a source
    in another file); Python backends import from the current folder, as the CLI's do."""
    if _TOOLS_KEY not in config.stash:
        from agentkit.declarative import load_tools

        folder = str(Path.cwd())
        if folder not in sys.path:
            sys.path.append(folder)
        tools: list[Tool] = [cls() for cls in load_tools(*_configured(config))]
        config.stash[_TOOLS_KEY] = tools
    return config.stash[_TOOLS_KEY]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    roots = _configured(config)
    if file_path.suffix not in (".yaml", ".yml") or not roots:
        return None
    resolved = file_path.resolve()
    if ".recordings" in resolved.parts:
        return None
    if not any(resolved == root or root in resolved.parents for root in roots):
        return None
    return DefinitionFile.from_parent(parent, path=file_path)


class DefinitionFile(pytest.File):
    """A definition file: an item per example of each tool defined in it."""

    def collect(self) -> Iterator[ExampleItem]:
        from agentkit.testing.runner import collect_examples

        here = self.path.resolve()
        tools = [
            tool
            for tool in _tools(self.config)
            if tool.definition is not None
            and Path(tool.source.rpartition(":")[0]).resolve() == here
        ]
        for tool, example in collect_examples(tools):
            yield ExampleItem.from_parent(
                self, name=f"{tool.name}::{example.name}", tool=tool, example=example
            )


class _ExampleFailed(AgentKitError):
    """An example that did not pass; the message is its reason, diff and all."""


class ExampleItem(pytest.Item):
    """One example, run as ``agentkit test`` runs it (replayed, offline)."""

    def __init__(self, *, tool: Tool, example: ToolExample, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool = tool
        self.example = example

    def runtest(self) -> None:
        from agentkit.testing.runner import run_example

        outcome = run_example(self.tool, self.example)
        if not outcome.passed:
            raise _ExampleFailed(f"{outcome.source}: {outcome.reason}")

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        if isinstance(excinfo.value, _ExampleFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.example.source.rpartition(":")[2]
        return self.path, int(line) - 1 if line.isdigit() else None, self.name
