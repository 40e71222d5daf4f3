"""The table of backend kinds: the built-in ``http`` and ``python``, and what packages add.

``register_backend(QueueBackend)`` adds a kind in code; a package adds one with
an entry point in the ``agentkit.backends`` group, named after its kind::

    [project.entry-points."agentkit.backends"]
    queue = "agentkit_queue:QueueBackend"

Either way the class must satisfy ``Backend`` (``backends.base``). A definition
then says ``backend: {queue: ...}``. An entry point is imported the first time
a definition names its kind; one that cannot be used is a located problem of
that definition, naming the entry point and what was wrong.
"""

from __future__ import annotations

import inspect
from typing import Final

from agentkit.declarative.backends.base import Backend, BackendContext
from agentkit.declarative.backends.http.backend import HttpBackend
from agentkit.declarative.backends.python import PythonBackend
from agentkit.plugins import PluginTable
from agentkit.tool import TOOL_NAME_PATTERN

__all__ = [
    "BACKENDS",
    "BACKEND_GROUP",
    "Backend",
    "BackendContext",
    "backend_kinds",
    "find_backend",
    "register_backend",
    "unregister_backend",
]

BACKEND_GROUP: Final = "agentkit.backends"
# "class" names a hand-written tool's backend_kind; a kind of that name would be ambiguous.
_RESERVED: Final = frozenset({"class"})


def _check(kind: str, value: object) -> str | None:
    """Why ``value`` cannot be the backend kind ``kind``; None when it can."""
    if not inspect.isclass(value):
        return f"expected a class implementing agentkit's Backend, got {type(value).__name__}"
    if kind in _RESERVED or not TOOL_NAME_PATTERN.fullmatch(kind):
        return (
            f"{kind!r} cannot name a backend kind: use letters, digits, '_' and '-', "
            "starting with a letter (and not 'class')"
        )
    declared = getattr(value, "kind", None)
    if declared != kind:
        return f"the class's kind is {declared!r}, not {kind!r}; they must be the same"
    for method in ("parse", "call"):
        if not callable(getattr(value, method, None)):
            return f"{value.__module__}.{value.__qualname__} has no '{method}' method"
    if not hasattr(value, "default_annotations"):
        return f"{value.__module__}.{value.__qualname__} has no 'default_annotations'"
    return None


#: The backend kinds, by name.
BACKENDS: Final[PluginTable[type[Backend]]] = PluginTable(BACKEND_GROUP, _check)


def register_backend(backend: type[Backend], *, replace: bool = False) -> None:
    """Make ``backend.kind`` a backend kind definitions can name.

    Raises ``PluginError`` when the class breaks the ``Backend`` rules or the
    kind is taken (unless ``replace``).
    """
    origin = f"register_backend({backend.__module__}.{backend.__qualname__})"
    BACKENDS.register(str(getattr(backend, "kind", "")), backend, origin=origin, replace=replace)


def unregister_backend(kind: str) -> None:
    """Forget the kind ``kind`` (definitions naming it no longer load)."""
    BACKENDS.unregister(kind)


def backend_kinds() -> tuple[str, ...]:
    """Every kind a definition can name: the registered ones, then the entry points'."""
    return BACKENDS.names()


def find_backend(kind: str) -> type[Backend] | None:
    """The class of ``kind``, importing its entry point the first time; None if unknown.

    Raises ``PluginError`` when the kind's entry point cannot be used.
    """
    return BACKENDS.get(kind)


register_backend(HttpBackend)
register_backend(PythonBackend)
