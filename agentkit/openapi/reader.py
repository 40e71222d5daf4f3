"""Reading an OpenAPI 3.0 / 3.1 description: the file, its version, and local ``$ref``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, final

import yaml

from agentkit.openapi import swagger
from agentkit.openapi.pointers import MAX_REF_CHAIN, Pointers, pointer_join, pointer_keys, walk
from agentkit.toolerrors import (
    OpenAPIError,
    PointerError,
    Problem,
    UnexpressibleOperation,
)

__all__ = [
    "Description",
    "Resolver",
    "load_description",
    "pointer_join",
    "problem",
    "read_description",
    "unexpressible",
]

#: libyaml's parser when PyYAML has it: the same values as ``yaml.safe_load``, faster.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def problem(pointer: str, message: str) -> Problem:
    return Problem(path=pointer, message=message)


def unexpressible(pointer: str, message: str) -> UnexpressibleOperation:
    """The error that skips an operation, located at ``pointer``."""
    return UnexpressibleOperation(problem(pointer, message))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Description:
    """A description as read: the document, and whether it was JSON text.

    JSON text reads as a tree of JSON's own values (string keys; no node shared,
    as a YAML alias shares one): ``check`` has no alias to look for in it.
    """

    document: dict[str, Any]
    from_json: bool


def load_description(path: str | Path) -> dict[str, Any]:
    """The description in ``path`` (JSON or YAML), checked to be OpenAPI 3.0 or 3.1, or
    Swagger 2.0 converted to 3.0 (``agentkit.openapi.swagger``).

    Raises ``OpenAPIError`` for a file that cannot be read or parsed, and for any
    other format or version.
    """
    return read_description(path).document


def read_description(path: str | Path) -> Description:
    """``load_description``, saying whether the file was JSON text."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OpenAPIError(name, [problem("#", f"cannot read the file: {exc}")]) from exc
    from_json = text.lstrip().startswith("{")
    try:
        data = json.loads(text) if from_json else yaml.load(text, _LOADER)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise OpenAPIError(name, [problem("#", f"invalid JSON at {where}: {exc.msg}")]) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or "cannot be parsed"
        raise OpenAPIError(name, [problem("#", f"invalid YAML{where}: {reason}")]) from exc
    if not isinstance(data, dict):
        raise OpenAPIError(name, [problem("#", "expected a mapping (an OpenAPI document)")])
    if swagger.is_swagger(data):
        if str(data.get("swagger")) != "2.0":
            message = f"Swagger version {data.get('swagger')!r} is not supported; expected 2.0"
            raise OpenAPIError(name, [problem("#/swagger", message)])
        _check_paths(name, data)
        return Description(document=swagger.convert(data), from_json=from_json)
    version = str(data.get("openapi", ""))
    if not version.startswith(("3.0", "3.1")):
        message = (
            f"OpenAPI version {version!r} is not supported; expected 3.0.x or 3.1.x"
            if version
            else "missing 'openapi': not an OpenAPI 3 description"
        )
        raise OpenAPIError(name, [problem("#/openapi", message)])
    _check_paths(name, data)
    return Description(document=data, from_json=from_json)


def _check_paths(name: str, data: dict[str, Any]) -> None:
    paths = data.get("paths", {})
    if not isinstance(paths, dict):
        given = "null" if paths is None else f"a {type(paths).__name__}"
        message = (
            f"expected a mapping of paths to their operations (such as '/pets': "
            f"{{get: {{responses: ...}}}}), got {given}"
        )
        raise OpenAPIError(name, [problem("#/paths", message)])


class Resolver:
    """Follows local ``$ref`` (``#/components/...``) in one description."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        moved = document.get(swagger.POINTERS_KEY)
        #: Maps a pointer into ``document`` back into the file read (Swagger 2.0).
        self.pointers = Pointers(moved if isinstance(moved, dict) else None)
        # What each ref named, once found: a large description names a component
        # from hundreds of places, and the document does not change while it is read.
        self._found: dict[str, tuple[Any, str]] = {}

    def original(self, pointer: str) -> str:
        """``pointer`` as it is in the file read."""
        return self.pointers.original(pointer)

    def lookup(self, ref: str, pointer: str) -> Any:
        """The node ``ref`` (a ``$ref`` written at ``pointer``) names in this description.

        Only pointers into this file are followed: another file or a URL is never opened.
        Raises ``UnexpressibleOperation`` located at ``pointer`` when ``ref`` points
        outside the file, is no valid pointer, or names nothing.
        """
        return self._target(ref, pointer)[0]

    def _target(self, ref: str, pointer: str) -> tuple[Any, str]:
        """The node ``ref`` names and its pointer as ``pointer_join`` writes it (one
        spelling for each node, whatever escapes the description chose)."""
        found = self._found.get(ref)
        if found is None:
            found = self._found[ref] = self._find(ref, pointer)
        return found

    def _find(self, ref: str, pointer: str) -> tuple[Any, str]:
        if not ref.startswith("#"):
            raise unexpressible(pointer, f"$ref {ref!r} points outside this file; not supported")
        try:
            keys = pointer_keys(ref)
        except PointerError as exc:
            raise unexpressible(
                pointer, f"$ref {ref!r} is not a valid JSON pointer: {exc}"
            ) from None
        node, found = walk(self.document, keys)
        if found < len(keys):
            reached = pointer_join("#", *keys[:found])
            message = f"$ref {ref!r} points at nothing: {reached} has no {keys[found]!r}"
            raise unexpressible(pointer, message)
        return node, pointer_join("#", *keys)

    def resolve(self, node: Any, pointer: str) -> tuple[Any, str, tuple[str, ...]]:
        """``node`` with its ``$ref`` chain followed: the target, its pointer, the refs passed
        (each as ``pointer_join`` writes it, so two spellings of one ref are one)."""
        refs: list[str] = []
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            node, target = self._target(ref, pointer)
            if target in refs:
                raise unexpressible(pointer, f"$ref {ref!r} refers to itself")
            if len(refs) >= MAX_REF_CHAIN:
                message = f"$ref {ref!r} is the {MAX_REF_CHAIN + 1}th of a chain; at most "
                raise unexpressible(pointer, f"{message}{MAX_REF_CHAIN} are followed")
            refs.append(target)
            pointer = target
        return node, pointer, tuple(refs)
