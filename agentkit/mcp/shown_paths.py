"""How a file of the server is named to its clients (``ShownPaths``): relative to the
tools folder it is in, else by its name alone, never by the server's own (absolute)
path. Stderr, the operator's, keeps the paths as loading gave them.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from typing import Final, final

from agentkit.toolerrors import AgentKitError, DefinitionError

__all__ = ["ShownPaths"]

# Where a path written in a message may start and end: not inside a longer name or path.
# A full stop ends one unless a name goes on after it (``tools.d.bak``): a sentence
# may end with a path.
_BEFORE: Final = r"(?<![\w.~/\\-])"
_AFTER: Final = r"(?![\w~-]|\.[\w~-])"


@final
class ShownPaths:
    """Paths of the server's files as its clients are shown them: relative to the root
    they are under (``roots``: the folders and files the tools are loaded from, as
    ``--tools`` gives them, once or more), the root itself and any path outside every
    root by its name alone. A client learns where a problem is in the tools it was
    given, not how the server's disk is laid out."""

    __slots__ = ("_roots",)

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
