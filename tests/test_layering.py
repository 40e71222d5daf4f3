"""No agentkit module traffics in another module's private names.

A name with one leading underscore is its module's implementation detail: the
module may change it at will, so no other module imports it
(``from agentkit.x import _y``), reads it off the module (``x._y``) or reaches
for it on an object the other module made (``schema._check``). The import layering
itself (what may import what, no cycles) is checked by ``lint-imports`` in
``make lint``, from the contracts in ``pyproject.toml``.

The scan is by text, not by type: an attribute ``obj._y`` counts as traffic
when ``_y`` is a private name some other agentkit module defines (a function,
class, module constant, class attribute, slot or ``self._y``) and the module
reading it defines no ``_y`` of its own. Private names of other libraries
(``sys._getframe``) are not agentkit's to police here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "agentkit"

# Known debt: (module, private name) pairs still read across modules, each to be
# removed by the change that gives the name a public spelling. Only ever shrinks
# (``test_known_debt_is_still_debt``); empty since the executor reads ``tool.spec``.
KNOWN_DEBT: frozenset[tuple[str, str]] = frozenset()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, ast.Module]:
    return {
        _module_name(path): ast.parse(path.read_text(encoding="utf-8"), str(path))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def _assigned_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _assigned_names(element)
    elif (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id in ("self", "cls")
    ):
        yield target.attr


def _defined_private(tree: ast.Module) -> set[str]:
    """Private names a module defines: its own to read on any object."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(_assigned_names(target))
            slots = [t for t in node.targets if isinstance(t, ast.Name) and t.id == "__slots__"]
            if slots and isinstance(node.value, (ast.Tuple, ast.List)):
                names.update(
                    element.value
                    for element in node.value.elts
                    if isinstance(element, ast.Constant) and isinstance(element.value, str)
                )
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            names.update(_assigned_names(node.target))
    return {name for name in names if _is_private(name)}


def _traffic() -> set[tuple[str, str]]:
    modules = _modules()
    defined = {name: _defined_private(tree) for name, tree in modules.items()}
    found: set[tuple[str, str]] = set()
    for module, tree in modules.items():
        elsewhere = set().union(*(names for other, names in defined.items() if other != module))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentkit"):
                found.update(
                    (module, alias.name) for alias in node.names if _is_private(alias.name)
                )
            elif (
                isinstance(node, ast.Attribute)
                and _is_private(node.attr)
                and node.attr in elsewhere
                and node.attr not in defined[module]
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.add((module, node.attr))
    return found


def test_no_module_reads_another_modules_private_names() -> None:
    traffic = _traffic()
    assert sorted(traffic - KNOWN_DEBT) == [], "private names read across modules"


def test_known_debt_is_still_debt() -> None:
    # An entry whose traffic is gone must leave the list, so the list only shrinks.
    assert sorted(KNOWN_DEBT - _traffic()) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(
            "from agentkit.tool import _source_of\n", {("probe", "_source_of")}, id="from-import"
        ),
        pytest.param(
            "def f(schema):\n    return schema._generate\n",
            {("probe", "_generate")},
            id="attribute",
        ),
        pytest.param(
            "class A:\n    def f(self):\n        return self._generate\n", set(), id="own-self"
        ),
        pytest.param("import sys\nsys._getframe()\n", set(), id="foreign-library"),
    ],
)
def test_the_scan_sees_traffic(
    source: str, expected: set[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scanner itself, on a module planted beside the real ones.
    real = _modules()
    monkeypatch.setattr(f"{__name__}._modules", lambda: {**real, "probe": ast.parse(source)})
    assert {pair for pair in _traffic() if pair[0] == "probe"} == expected
