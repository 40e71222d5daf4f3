"""Every import path the README and docs/ show resolves: a module, or a name in one.

A path is any dotted name starting ``agentkit.`` in a page's inline code or code
blocks (``agentkit.mcp.serve``, ``agentkit.toolerrors.CallError``), and every
``from agentkit... import ...`` in a code block. Moving a module without keeping its
documented path (or fixing the page) fails here, naming the page and the line.
"""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
_DOTTED = re.compile(r"(?<![\w./-])agentkit(?:\.[A-Za-z_]\w*)+")
_FROM = re.compile(r"^\s*from (agentkit(?:\.\w+)*) import \(?([\w, ]+)\)?\s*$")
#: Named on a page, but not a path to import: a logger's name, a plugin group, an
#: OpenTelemetry attribute or event name.
NOT_PATHS = frozenset(
    {
        "agentkit.http",
        "agentkit.serve",
        "agentkit.backends",
        "agentkit.export_formats",
        "agentkit.caller",
        "agentkit.outcome",
        "agentkit.tool.call",
    }
)


def _documented() -> list[tuple[str, str]]:
    """Each (path, where) the pages show, once per path."""
    seen: dict[str, str] = {}
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            where = f"{page.relative_to(ROOT)}:{number}"
            paths = list(_DOTTED.findall(line))
            imported = _FROM.match(line)
            if imported:
                module, names = imported.groups()
                paths += [f"{module}.{name.strip()}" for name in names.split(",") if name.strip()]
            for path in paths:
                if path not in NOT_PATHS:
                    seen.setdefault(path, where)
    return sorted(seen.items())


def _resolve(path: str) -> Any:
    """The module or object ``path`` names; ``LookupError`` saying what is missing."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            with warnings.catch_warnings():  # a deprecated path still counts as a path
                warnings.simplefilter("ignore", DeprecationWarning)
                found: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for index, attribute in enumerate(parts[cut:], start=cut):
            if not hasattr(found, attribute):
                raise LookupError(f"{'.'.join(parts[:index])} has no {attribute!r}")
            found = getattr(found, attribute)
        return found
    raise LookupError(f"no module of {path}")


def test_the_pages_show_paths() -> None:
    # Guards the test below against reading nothing.
    paths = dict(_documented())
    assert {"agentkit.mcp.serve", "agentkit.dispatch"} <= set(paths)


@pytest.mark.parametrize(("path", "where"), _documented(), ids=lambda value: str(value))
def test_a_documented_path_resolves(path: str, where: str) -> None:
    try:
        _resolve(path)
    except LookupError as exc:
        pytest.fail(f"{where}: {path} does not resolve: {exc}")
