"""``load_tools``: definition files in, ``DeclarativeTool`` classes out -- all or nothing."""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from agentkit.declarative.backends import backend_kinds, find_backend
from agentkit.declarative.backends.base import SourceTable
from agentkit.declarative.backends.http.sources import (
    cause_key,
    is_source_document,
    parse_source,
)
from agentkit.declarative.backends.python import add_python_path
from agentkit.declarative.definition import ToolDefinition, parse_definition
from agentkit.declarative.environment import Environment, Substituter
from agentkit.declarative.problems import ProblemLog, Problems
from agentkit.declarative.tool import DeclarativeTool, make_tool_class
from agentkit.declarative.toolsets import check_toolsets, is_toolset_document, resolve_toolsets
from agentkit.declarative.yamlsource import SharedValues, clip, read_documents
from agentkit.textfile import TextFileError, read_text_file
from agentkit.toolerrors import PluginError, Problem
from agentkit.toolregistry import ToolRegistry, name_key
from agentkit.toolsets import Toolset

__all__ = ["definition_files", "definition_schema", "load_tools", "load_toolsets"]

_SUFFIXES = (".yaml", ".yml")
#: A top-level ``source: NAME`` line: what a file that does not parse would have defined.
_SOURCE_LINE = re.compile(
    r"^source:[ \t]*[\"']?([A-Za-z][A-Za-z0-9_-]{0,63})[\"']?[ \t]*(?:#.*)?$", re.M
)


def definition_files(*paths: str | os.PathLike[str]) -> tuple[list[Path], list[Problem]]:
    """The files ``paths`` name: files as given, folders searched recursively, sorted.

    In a folder, entries whose names start with ``.`` are skipped (``is_hidden``),
    symbolic links to directories are not followed, and a link to a
    file outside the folder is a problem, not a file: a definition folder cannot
    pull in what its owner did not put there.
    """
    files, problems = _definition_paths(paths)
    return [Path(file) for file in files], problems


def _definition_paths(
    paths: Iterable[str | os.PathLike[str]],
) -> tuple[list[str], list[Problem]]:
    """``definition_files``, as the strings of the paths: a loader reads a thousand
    files by them, and making a ``Path`` of each was a tenth of listing them."""
    files: list[str] = []
    problems: list[Problem] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            folder = path.resolve()
            for file, is_link in _folder_files(path):
                if is_link and _links_out(Path(file), folder):
                    problems.append(
                        Problem(
                            file=str(file),
                            message=(
                                f"a symbolic link to '{clip(os.readlink(file), 200)}', outside "
                                f"the folder '{path}'; copy the file in, or give it as a path "
                                "of its own"
                            ),
                        )
                    )
                else:
                    files.append(file)
        elif os.path.lexists(path):
            files.append(str(path))  # reading it says what is wrong when it is not a file
        else:
            problems.append(Problem(file=str(path), message="no such file or folder"))
    return files, problems


def _links_out(file: Path, folder: Path) -> bool:
    """True when ``file``, a symbolic link, resolves outside ``folder``."""
    try:
        target = file.resolve()
    except (OSError, RuntimeError):  # a loop (RuntimeError before Python 3.13): reading says so
        return False
    return not target.is_relative_to(folder)


def is_hidden(name: str) -> bool:
    """True for a folder entry that loading skips, and ``--reload`` does not watch: a name
    starting with ``.``.

    A Kubernetes ConfigMap mount keeps each file twice (``..2026_12_03_.../x.yaml``
    behind the ``x.yaml`` link), and a repository root holds ``.github/workflows/*.yml``
    and ``.pre-commit-config.yaml``; neither is a tool definition.
    """
    return name.startswith(".")


def _folder_files(folder: Path) -> list[tuple[str, bool]]:
    """Every ``.yaml``/``.yml`` entry under ``folder``, sorted, and whether it is a
    symbolic link; linked folders and hidden entries (``is_hidden``) are not entered."""
    found: list[tuple[str, bool]] = []
    pending = [str(folder)]
    while pending:  # a stack, not recursion: depth is the file system's business
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue  # an unreadable subfolder; its files cannot be listed
        for entry in entries:
            if is_hidden(entry.name):
                continue
            # The entry's type as the listing gave it: no system call per file.
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif entry.name.endswith(_SUFFIXES):
                found.append((entry.path, entry.is_symlink()))
    # In the order of paths (component by component), without building Path objects
    # to compare: sorting a thousand of those was a tenth of listing them.
    found.sort(key=_path_order)
    return found


def _path_order(entry: tuple[str, bool]) -> list[str]:
    return os.path.normcase(entry[0]).split(os.sep)


def load_tools(
    *paths: str | os.PathLike[str],
    registry: ToolRegistry | None = None,
    env_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    python_path: Iterable[str | os.PathLike[str]] = (),
) -> list[type[DeclarativeTool]]:
    """Load every definition and source under ``paths`` into ``Tool`` classes.

    With ``registry``, an instance of each is registered too. Any problem in any
    file raises ``DefinitionError`` listing all of them, and nothing is registered.
    ``${VAR}`` takes its value from ``env_file`` (``NAME=value`` lines), then
    ``environ`` (default ``os.environ``), once, now. Python backends import from
    ``sys.path`` and the ``python_path`` folders, appended to it (searched last), as
    ``agentkit --python-path`` does; the CLI adds the current folder too, this does not.
    """
    add_python_path(python_path)
    with _gc_paused():
        return _load_tools(paths, registry, Environment.load(env_file, environ))


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Cyclic garbage collection paused for the block, unless it was off already.

    Loading builds many objects that live as long as the tools and makes few
    cycles: collection passes over the growing heap were 20-40% of load time
    and made loading superlinear. Left at that, the first young collection
    after the load would still walk every object it made, so those objects go
    straight to the oldest generation (``gc.freeze`` then ``gc.unfreeze``, both
    constant time), where full collections, which run ever more rarely as the
    heap grows, see them. Not done when the process keeps frozen objects of its
    own (a pre-fork server's): unfreezing would release them too.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()


class _Document(NamedTuple):
    """One document read from a definition file, and where it came from."""

    path: str
    value: Any
    start: tuple[int, int]
    text: str  # the whole file's
    number: int  # which of the file's documents, from 0


def _load_tools(
    paths: tuple[str | os.PathLike[str], ...],
    registry: ToolRegistry | None,
    environment: Environment,
) -> list[type[DeclarativeTool]]:
    files, found = _definition_paths(paths)
    log = ProblemLog()
    log.extend(found)
    documents: list[_Document] = []
    shared = SharedValues()  # equal short strings of all the files, kept once
    for file in files:
        documents.extend(_read_file(file, log, shared))
    # Sources first, from every file: a tool may use a source defined in any of them.
    sources = _load_sources(documents, environment, log)
    definitions: list[ToolDefinition] = []
    # Toolsets' shapes are checked with the tools; what they hold, by load_toolsets.
    check_toolsets(documents, log)
    for path, document, start, text, number in documents:
        if is_source_document(document) or is_toolset_document(document):
            continue
        definition = parse_definition(
            document,
            Problems(path, document, start, log, text=text, number=number),
            text=text,
            document=number,
            environment=environment,
            sources=sources,
        )
        if definition is not None:
            definitions.append(definition)

    log.extend(_name_collisions(definitions, registry))
    if log:
        # Reading every file came before checking any: report file by file.
        log.order_by_file(files)
        raise log.error()

    classes = [make_tool_class(definition) for definition in definitions]
    if registry is not None:
        for cls in classes:
            registry.register(cls())
    return classes


def load_toolsets(*paths: str | os.PathLike[str], registry: ToolRegistry) -> dict[str, Toolset]:
    """The toolsets defined under ``paths``, by name in the order they are defined,
    resolved against ``registry``: the tools ``load_tools`` loaded from the same paths
    and any registered by hand (matched by name, glob and ``TOOL_TAGS`` alike).

    Any problem raises ``DefinitionError`` listing all of them, each at its file:line:
    a bad shape, a name defined twice, an entry that matches no tool, a ``deferred``
    entry that matches no tool of its set, a set left empty.
    """
    files, found = _definition_paths(paths)
    log = ProblemLog()
    log.extend(found)
    shared = SharedValues()
    documents: list[_Document] = []
    for file in files:
        text = _read_text(file)
        # Only a file that says "toolset" can hold one: most files are not read again.
        if isinstance(text, str) and "toolset" in text:
            documents.extend(_read_file(file, log, shared, text))
    resolved = resolve_toolsets(check_toolsets(documents, log), registry)
    if log:
        log.order_by_file(files)
        raise log.error()
    return {name: toolset for name, toolset in resolved.items() if toolset is not None}


def _name_collisions(
    definitions: list[ToolDefinition], registry: ToolRegistry | None
) -> Iterable[Problem]:
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
        yield Problem(
            file=definition.path, line=definition.line, column=1, path="name", message=message
        )


def _read_text(file: str) -> str | Problem:
    """The text of definition file ``file`` (``read_text_file``: a regular file of at
    most ``MAX_FILE_BYTES``, UTF-8), or the problem that stops it being read."""
    try:
        return read_text_file(file, what="a definition")
    except TextFileError as exc:
        return Problem(file=file, line=exc.line, column=exc.column, message=exc.message)


def _read_file(
    path: str, log: ProblemLog, shared: SharedValues, text: str | None = None
) -> list[_Document]:
    """The documents of the file at ``path`` (its ``text``, when read already); equal
    short strings shared through ``shared``."""
    read = _read_text(path) if text is None else text
    if isinstance(read, Problem):
        log.add(read)
        return []
    documents, yaml_problems = read_documents(read, shared, located=False)
    since = len(log.shown)
    for problem in yaml_problems:
        log.add(replace(problem, file=path))
    if yaml_problems:
        # A source the file defines is unknown to its tools because of the file's error.
        for name in _SOURCE_LINE.findall(read):
            log.cause(cause_key(name), since)
    return [
        _Document(path, document, start, read, index)
        for index, (document, start) in enumerate(documents)
        if document is not None
    ]


def _load_sources(
    documents: list[_Document], environment: Environment, log: ProblemLog
) -> SourceTable:
    """Every source among ``documents``; a name defined twice is a problem at the second."""
    table = SourceTable()
    for path, document, start, text, number in documents:
        if not is_source_document(document):
            continue
        problems = Problems(path, document, start, log, text=text, number=number)
        since = len(log.shown)
        source = parse_source(document, problems, Substituter(environment, problems))
        name = document.get("source")
        if not isinstance(name, str):
            continue
        if source is None:
            # Its tools' problems about it follow from its first: counted with it.
            log.cause(cause_key(name), since)
        here = f"{path}:{start[0]}"
        earlier = table.sources.get(name) or table.broken.get(name)
        if earlier is not None:
            where = earlier.location if not isinstance(earlier, str) else earlier
            problems.add(
                ("source",),
                f"source '{name}' is already defined at {where}; source names must be unique",
            )
        elif source is None:
            table.broken[name] = here
        else:
            table.sources[name] = source
    return table


def definition_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the definition format, for editors and CI.

    Kinds that packages add (``agentkit.backends``) are in it too: each with the
    JSON Schema its class gives as ``config_schema`` (any value when it gives
    none), so an editor validating against it accepts the kinds installed here.
    """
    import json
    from importlib.resources import files

    text = files("agentkit.declarative").joinpath("tool-definition.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    kinds: dict[str, Any] = schema["properties"]["backend"]["properties"]
    for kind in backend_kinds():
        if kind in kinds:
            continue
        try:
            backend = find_backend(kind)
        except PluginError as exc:
            kinds[kind] = {"description": f"Backend kind '{kind}', unusable here: {exc}"}
            continue
        given = getattr(backend, "config_schema", None)
        shape = dict(given) if isinstance(given, Mapping) else {}
        shape.setdefault("description", f"Backend kind '{kind}' ({_origin(backend)}).")
        kinds[kind] = shape
    return schema


def _origin(backend: object) -> str:
    module = getattr(backend, "__module__", "?")
    return f"{module}.{getattr(backend, '__qualname__', '?')}"
