"""``load_tools``: definition files in, ``DeclarativeTool`` classes out -- all or nothing."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from agentkit.declarative.definition import ToolDefinition, parse_definition
from agentkit.declarative.problems import Problems
from agentkit.declarative.tool import DeclarativeTool, make_tool_class
from agentkit.declarative.yamlsource import MAX_FILE_BYTES, read_documents
from agentkit.toolerrors import DefinitionError, DefinitionProblem
from agentkit.toolregistry import ToolRegistry, name_key

__all__ = ["definition_files", "definition_schema", "load_tools"]

_SUFFIXES = (".yaml", ".yml")


def definition_files(*paths: str | os.PathLike[str]) -> tuple[list[Path], list[DefinitionProblem]]:
    """The files ``paths`` name: files as given, folders searched recursively, sorted."""
    files: list[Path] = []
    problems: list[DefinitionProblem] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES and p.is_file())
            )
        elif path.is_file():
            files.append(path)
        else:
            problems.append(DefinitionProblem(str(path), 0, 0, "", "no such file or folder"))
    return files, problems


def load_tools(
    *paths: str | os.PathLike[str], registry: ToolRegistry | None = None
) -> list[type[DeclarativeTool]]:
    """Load every definition under ``paths`` into ``Tool`` classes.

    With ``registry``, an instance of each is registered too. Any problem in any
    file raises ``DefinitionError`` listing all of them, and nothing is registered.
    """
    files, problems = definition_files(*paths)
    definitions: list[ToolDefinition] = []
    for file in files:
        definitions.extend(_load_file(file, problems))

    problems.extend(_name_collisions(definitions, registry))
    if problems:
        raise DefinitionError(problems)

    classes = [make_tool_class(definition) for definition in definitions]
    if registry is not None:
        for cls in classes:
            registry.register(cls())
    return classes


def _name_collisions(
    definitions: list[ToolDefinition], registry: ToolRegistry | None
) -> Iterable[DefinitionProblem]:
    """A problem for each definition whose name is taken, naming where it was taken.

    Names that differ only in case, ``-`` or ``_`` are the same name (``name_key``).
    """
    first_by_key: dict[str, ToolDefinition] = {}
    for definition in definitions:
        key = name_key(definition.name)
        earlier = first_by_key.get(key)
        existing = registry.colliding(definition.name) if registry is not None else None
        if earlier is not None:
            other, where = earlier.name, earlier.source
        elif existing is not None:
            other, where = existing.name, f"{existing.source}, already registered"
        else:
            first_by_key[key] = definition
            continue
        if other == definition.name:
            message = f"tool '{other}' is already defined by {where}; tool names must be unique"
        else:
            message = (
                f"tool '{definition.name}' collides with '{other}' defined by {where}; "
                "tool names must differ in more than case, '-' and '_'"
            )
        yield DefinitionProblem(definition.path, definition.line, 1, "name", message)


def _load_file(file: Path, problems: list[DefinitionProblem]) -> Iterable[ToolDefinition]:
    path = str(file)
    try:
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            problems.append(
                DefinitionProblem(
                    path,
                    0,
                    0,
                    "",
                    f"the file is {size} bytes; definitions are at most {MAX_FILE_BYTES}",
                )
            )
            return []
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        problems.append(DefinitionProblem(path, 0, 0, "", f"cannot read: {exc.strerror or exc}"))
        return []
    except UnicodeDecodeError:
        problems.append(DefinitionProblem(path, 0, 0, "", "not UTF-8 text"))
        return []
    documents, yaml_problems = read_documents(text)
    problems.extend(DefinitionProblem(path, p.line, p.column, "", p.message) for p in yaml_problems)
    loaded = []
    for document, start in documents:
        if document is None:
            continue
        collected = Problems(path, document, start)
        definition = parse_definition(document, collected)
        problems.extend(collected.found)
        if definition is not None:
            loaded.append(definition)
    return loaded


def definition_schema() -> dict[str, object]:
    """The JSON Schema (draft 2020-12) of the definition format, for editors and CI."""
    import json
    from importlib.resources import files

    text = files("agentkit.declarative").joinpath("tool-definition.schema.json").read_text("utf-8")
    schema: dict[str, object] = json.loads(text)
    return schema
