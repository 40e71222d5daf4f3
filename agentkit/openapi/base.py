"""The lock file: what the import generated last, the base of ``--update``'s three-way merge.

``DIR/SOURCE.openapi-lock.json`` sits beside the files it describes. It is JSON, not
YAML, so the loader never reads it as a definition. For the source and for each
operation it keeps the document as generated (before any edit), the tool name and
file as last written, and whether the reviewer deleted the tool. Operations are
keyed by ``METHOD /path`` and carry their ``operationId``; never by tool name, which
the reviewer may change.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, final

from agentkit.toolerrors import UsageError

FORMAT: Final = "agentkit-openapi-lock/1"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One operation the import tracks: what it generated, and where the tool is now."""

    method: str
    path: str
    operation_id: str | None
    name: str
    file: str
    generated: dict[str, Any]
    deleted: bool = False

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"operation_id": self.operation_id}
        if self.deleted:
            data["deleted"] = True
            return data
        data.update(name=self.name, file=self.file, generated=self.generated)
        return data


@final
@dataclass(slots=True, kw_only=True)
class Lock:
    """The whole lock file; ``entries`` keyed by ``METHOD /path``."""

    description: str
    source: str
    selection: dict[str, Any]
    source_file: str
    source_generated: dict[str, Any]
    entries: dict[str, Entry] = field(default_factory=dict)
    #: The import's ``layout``: ``operation`` (a file each) or ``tag`` (a file per tag).
    layout: str = "operation"
    #: The server variables read from the environment (``--server-variable``).
    server_variables: list[str] = field(default_factory=list)
    #: The import's budgets (``Budgets.to_json``); empty: the defaults.
    budgets: dict[str, Any] = field(default_factory=dict)
    #: The security scheme ``--auth`` chose for the source (None: the description's).
    auth: str | None = None

    def write(self, path: Path) -> None:
        data = {
            "format": FORMAT,
            "about": (
                "Written by `agentkit import openapi`: what it generated last, so --update "
                "can keep your edits. Do not edit; commit it with the definitions."
            ),
            "description": self.description,
            "source": self.source,
            "selection": self.selection,
            "source_file": self.source_file,
            "source_generated": self.source_generated,
            "layout": self.layout,
            "server_variables": self.server_variables,
            "budgets": self.budgets,
            **({"auth": self.auth} if self.auth is not None else {}),
            "operations": {key: entry.to_json() for key, entry in sorted(self.entries.items())},
        }
        with path.open("w", encoding="utf-8") as file:
            file.writelines(_lock_text(data))

    @classmethod
    def read(cls, path: Path) -> Lock:
        """The lock in ``path``; ``UsageError`` saying what is wrong when it cannot be used."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise UsageError(
                f"{path.parent} has no {path.name}: --update needs the lock file a previous "
                "`agentkit import openapi` wrote there (import into a new folder first)"
            ) from exc
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UsageError(f"{path}: cannot read the lock file: {exc}") from exc
        try:
            return cls._from_json(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UsageError(
                f"{path}: not a lock file agentkit wrote ({type(exc).__name__}: {exc}); "
                "restore it from version control"
            ) from exc

    @classmethod
    def _from_json(cls, data: Any) -> Lock:
        if _mapping(data, "the file").get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT!r}")
        lock = cls(
            description=_text(data["description"], "description"),
            source=_text(data["source"], "source"),
            selection=_selection(data["selection"]),
            source_file=_text(data["source_file"], "source_file"),
            source_generated=_mapping(data["source_generated"], "source_generated"),
            layout=_text(data.get("layout", "operation"), "layout"),
            server_variables=_texts(data.get("server_variables", []), "server_variables"),
            budgets=_mapping(data.get("budgets", {}), "budgets"),
            auth=_text(data["auth"], "auth") if data.get("auth") is not None else None,
        )
        for key, raw in _mapping(data["operations"], "operations").items():
            where = f"operations.{key}"
            method, _, path = str(key).partition(" ")
            _mapping(raw, where)
            operation_id = raw.get("operation_id")
            deleted = raw.get("deleted") is True
            lock.entries[key] = Entry(
                method=method,
                path=path,
                operation_id=None
                if operation_id is None
                else _text(operation_id, f"{where}.operation_id"),
                name="" if deleted else _text(raw["name"], f"{where}.name"),
                file="" if deleted else _text(raw["file"], f"{where}.file"),
                generated={} if deleted else _mapping(raw["generated"], f"{where}.generated"),
                deleted=deleted,
            )
        return lock


def _selection(data: Any) -> dict[str, Any]:
    """A lock's ``selection``: each filter a list of strings, ``deprecated`` a boolean."""
    selection = _mapping(data, "selection")
    for key, value in selection.items():
        if key == "deprecated":
            if not isinstance(value, bool):
                raise ValueError(f"selection.deprecated is {value!r}, expected true or false")
        else:
            _texts(value, f"selection.{key}")
    return selection


def _lock_text(data: dict[str, Any]) -> Iterator[str]:
    """``data`` as JSON, a line for each top-level key and for each operation, in pieces.

    Each line is written by the json module's C encoder: with ``indent`` it falls
    back to its pure-Python one, which took 1.5 s of a 3 s import of GitHub's
    description. A line per operation still diffs per operation. The pieces are
    written as they are made: Kubernetes' lock, joined, was 44 MB held three times
    over at an update's peak.
    """

    def line(key: str, value: Any, indent: str) -> str:
        text = json.dumps(value, ensure_ascii=False)
        return f"{indent}{json.dumps(key, ensure_ascii=False)}: {text}"

    yield "{\n"
    yield ",\n".join(line(key, value, " ") for key, value in data.items() if key != "operations")
    operations = data["operations"]
    yield ',\n "operations": {' + ("\n" if operations else "")
    for index, (key, value) in enumerate(operations.items()):
        yield (",\n" if index else "") + line(key, value, "  ")
    yield "\n }\n}\n" if operations else "}\n}\n"


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _texts(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{where} is {value!r}, expected a list of strings")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a string, got {type(value).__name__}")
    return value
