"""Extensions from installed packages: entry points, loaded when first used.

A package adds a backend kind or an export format by declaring an entry point
in its ``pyproject.toml``; the entry point's name is the kind or format::

    [project.entry-points."agentkit.backends"]
    queue = "agentkit_queue:QueueBackend"

    [project.entry-points."agentkit.export_formats"]
    bedrock = "agentkit_bedrock:BEDROCK"

A ``PluginTable`` is one such group: the extensions registered in code
(``register()``: agentkit's own, or an application's) and those of the
group's entry points, which are listed without importing anything and imported
the first time their name is asked for. A registered name (agentkit's own)
wins: an entry point of the same name is never used. What a broken extension
does -- an import that raises, an object that breaks the group's rules, a name
declared twice -- is a ``PluginError`` naming the group, the name, where it came from
(the entry point and its distribution, or the registration) and what was wrong.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

from agentkit.toolerrors import PluginError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

# importlib.metadata is imported when a table first reads its entry points:
# importing agentkit, or registering, does not scan the installed packages.

__all__ = ["PluginTable", "describe_entry_point"]

T = TypeVar("T")


def describe_entry_point(entry_point: EntryPoint) -> str:
    """``entry point queue = pkg:Cls from agentkit-queue 1.0``: where a plugin came from."""
    text = f"entry point {entry_point.name} = {entry_point.value}"
    dist = entry_point.dist
    return f"{text} from {dist.name} {dist.version}" if dist is not None else text


class PluginTable(Generic[T]):
    """The extensions of one entry point group, by name.

    ``check(name, value)`` says why ``value`` cannot be the extension ``name``
    (a sentence, such as "has no 'call' method"), or returns None when it can;
    it judges registrations and loaded entry points alike.
    """

    def __init__(self, group: str, check: Callable[[str, object], str | None]) -> None:
        self.group = group
        self._check = check
        self._registered: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._entry_points: dict[str, list[EntryPoint]] | None = None
        self._lock = threading.RLock()

    def register(self, name: str, value: T, *, origin: str, replace: bool = False) -> None:
        """Add ``value`` as ``name``; a taken name is a ``PluginError`` unless ``replace``."""
        with self._lock:
            problem = self._check(name, value)
            if problem is None and name in self._registered and not replace:
                problem = (
                    f"the name is taken by {self._origins[name]}; choose another name, "
                    "or pass replace=True to replace it"
                )
            if problem is not None:
                raise PluginError(group=self.group, name=name, origin=origin, problem=problem)
            self._registered[name] = value
            self._origins[name] = origin

    def unregister(self, name: str) -> None:
        """Forget a registered ``name`` (a built-in comes back only by registering it again)."""
        with self._lock:
            self._registered.pop(name, None)
            self._origins.pop(name, None)

    def names(self) -> tuple[str, ...]:
        """Every name, registered first, then the entry points not loaded yet (sorted)."""
        with self._lock:
            pending = sorted(set(self._discovered()) - set(self._registered))
            return (*self._registered, *pending)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        with self._lock:
            return name in self._registered or name in self._discovered()

    def __iter__(self) -> Iterator[str]:
        """The names (a table can be argparse's ``choices``, read only when needed)."""
        return iter(self.names())

    def get(self, name: str) -> T | None:
        """The extension ``name``, importing its entry point the first time; None if unknown.

        A registered name is answered without reading the entry points: reading
        them scans every installed package (tens of milliseconds), paid only when
        a name is not registered. So an entry point named like a registered
        extension (a built-in one) is never used. Raises ``PluginError`` when
        the entry point cannot be used.
        """
        with self._lock:
            if name in self._registered:
                return self._registered[name]
            candidates = self._discovered().get(name, [])
            if not candidates:
                return None
            first = candidates[0]
            if len(candidates) > 1:
                others = "; ".join(describe_entry_point(other) for other in candidates[1:])
                raise PluginError(
                    group=self.group,
                    name=name,
                    origin=describe_entry_point(first),
                    problem=f"the name is also declared by {others}; uninstall one of them",
                )
            value = self._load(first)
            self.register(name, value, origin=describe_entry_point(first))
            return value

    def rescan(self) -> None:
        """Read the entry points again (after installing a package at run time, or in tests).

        Entry points loaded before stay registered.
        """
        with self._lock:
            self._entry_points = None

    def _discovered(self) -> dict[str, list[EntryPoint]]:
        if self._entry_points is None:
            from importlib.metadata import entry_points

            found: dict[str, list[EntryPoint]] = {}
            for entry_point in entry_points(group=self.group):
                found.setdefault(entry_point.name, []).append(entry_point)
            self._entry_points = found
        return self._entry_points

    def _load(self, entry_point: EntryPoint) -> T:
        origin = describe_entry_point(entry_point)
        try:
            value: T = entry_point.load()
        except Exception as exc:  # a plugin's import can raise anything; it is reported
            raise PluginError(
                group=self.group,
                name=entry_point.name,
                origin=origin,
                problem=f"loading it raised {type(exc).__name__}: {exc}",
            ) from exc
        return value
