"""Names a package hands on from its modules, each imported when first used (PEP 562).

A package's ``__init__`` keeps its own import cheap this way: ``import agentkit`` loads
none of the executor, and ``import agentkit.mcp`` none of the MCP SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__``: a name of ``homes`` (name -> the module
    that defines it) is imported from its module when first asked for, and kept in
    ``namespace`` (the package's ``globals()``) so it is not looked up again; any other
    name is an ``AttributeError`` naming the package."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace.get("__all__", ()), *homes})

    return __getattr__, __dir__
