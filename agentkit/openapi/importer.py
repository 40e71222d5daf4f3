"""The import: build the selected operations' definitions, and write them with their lock.

``generate`` builds every definition in memory (``selection`` chooses and names the
operations, ``import_report`` says what was left out); ``import_openapi`` writes
them; ``update`` merges what ``generate`` builds into a folder a reviewer edited.
"""

from __future__ import annotations

import functools
import gc
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, final

from agentkit.openapi.base import Entry, Lock
from agentkit.openapi.budgets import Budgets, Fitted, fit
from agentkit.openapi.check import check_description
from agentkit.openapi.emit import dump
from agentkit.openapi.import_report import ImportReport, Skipped, nothing_imported
from agentkit.openapi.memo import Conversions
from agentkit.openapi.operations import Operation, OperationConverter, operations
from agentkit.openapi.reader import Resolver, read_description
from agentkit.openapi.schemas import Notes
from agentkit.openapi.selection import (
    Layout,
    Selection,
    as_layout,
    check_filters,
    is_kept,
    name_operations,
    tag_files,
)
from agentkit.openapi.source import Auth, Security, base_url, source_document
from agentkit.openapi.verify import Verifier, unloadable
from agentkit.openapi.yamlwriter import Writer
from agentkit.toolerrors import OpenAPIError, UnexpressibleOperation, UsageError

_SOURCE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
#: The allocations between two collections of the youngest generation while an
#: import runs (Python's default is 700).
_COLLECT_AFTER: Final = 100_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Generated:
    """One generated definition: the file it goes in, its comment lines and its document.

    ``method`` and ``path`` locate the operation (empty for the source file);
    ``comments`` are the lines written above the document, without ``# ``.
    """

    file: Path
    document: dict[str, Any]
    comments: tuple[str, ...]
    method: str = ""
    path: str = ""
    operation_id: str | None = None

    @property
    def key(self) -> str:
        """What ``--update`` knows the operation by: ``METHOD /path``."""
        return f"{self.method} {self.path}" if self.method else "source"

    def text(self, writer: Writer | None = None) -> str:
        """The file's text for this document (``writer``: as ``emit.dump`` says)."""
        return render(self.comments, self.document, writer)


@final
@dataclass(slots=True, kw_only=True)
class Generation:
    """What one run of the import made: the source, the tools, and the report."""

    source: Generated
    tools: list[Generated]
    report: ImportReport
    #: The keys (``METHOD /path``) of operations skipped as unexpressible.
    skipped_keys: set[str] = field(default_factory=set)
    layout: Layout = "operation"
    #: The server variables read from the environment (``--server-variable``).
    server_variables: tuple[str, ...] = ()
    budgets: Budgets = field(default_factory=Budgets)
    #: The security scheme ``--auth`` chose for the source.
    auth: str | None = None


def lock_path(out: str | Path, source: str) -> Path:
    """Where the import keeps what it generated, for ``--update``."""
    return Path(out) / f"{source}.openapi-lock.json"


def import_openapi(
    spec: str | Path,
    *,
    source: str,
    out: str | Path,
    selection: Selection | None = None,
    layout: Layout = "operation",
    check: bool = True,
    server_variables: Sequence[str] = (),
    budgets: Budgets | None = None,
    auth: str | None = None,
) -> ImportReport:
    """Write one source file and one definition file per selected operation into ``out``
    (with ``layout="tag"``, one file per tag: ``SOURCE.TAG.yaml``, a YAML stream).

    Also writes ``SOURCE.openapi-lock.json``, what was generated, so a later
    ``update_openapi`` can tell the reviewer's edits from the generator's.
    ``check``: check the description against its OpenAPI meta-schema first (when the extra is
    installed; ``report.findings`` is None otherwise, or when ``check`` is false).
    ``server_variables``: the first server's variables to read from the environment, as
    ``SOURCE_SERVER_NAME`` (``agentkit.openapi.source.base_url``); the others are their
    defaults. ``budgets``: how big each tool may grow (``Budgets``; its defaults when None).
    ``auth``: the security scheme the source authenticates with, when the description
    has several (``UsageError`` when it has no such scheme); else the first of its
    top-level ``security``, or the one the most operations accept.

    Raises ``OpenAPIError`` when the description cannot be read, a filter names no
    operation, or a file to write exists already (nothing is written then).
    """
    with _fewer_collections():
        return _import(
            spec,
            source,
            Path(out),
            selection or Selection(),
            layout,
            check,
            server_variables,
            budgets or Budgets(),
            auth,
        )


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Python's cycle collector run less often while an import runs.

    An import builds hundreds of thousands of containers that live until it ends
    (the description's, the definitions'), and each collection walked them all
    again: a tenth of an import. Collections still run, a hundred times less often.
    """
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], _COLLECT_AFTER), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def _import(
    spec: str | Path,
    source: str,
    out: Path,
    selection: Selection,
    layout: Layout,
    check: bool,
    server_variables: Sequence[str],
    budgets: Budgets,
    auth: str | None,
) -> ImportReport:
    generation = generate(
        spec,
        source=source,
        out=out,
        selection=selection,
        layout=layout,
        check=check,
        server_variables=server_variables,
        budgets=budgets,
        auth=auth,
    )
    pieces: dict[Path, list[str]] = {}
    writer = Writer()
    for piece in (generation.source, *generation.tools):
        pieces.setdefault(piece.file, []).append(piece.text(writer))
    # Documents that share a file (one per tag, say) are written one after another.
    files = {path: "---\n".join(texts) for path, texts in pieces.items()}
    lock = lock_path(out, source)
    if lock.exists():
        raise UsageError(
            f"{out} holds an import of {source!r} already ({lock.name}); give --update "
            "to import the description over it, keeping your edits"
        )
    existing = [path for path in files if path.exists()]
    if existing:
        shown = ", ".join(path.name for path in existing[:3])
        more = ", ..." if len(existing) > 3 else ""
        raise UsageError(
            f"{len(existing)} file(s) to write exist already in {out} ({shown}{more}); "
            "import into a new folder"
        )
    out.mkdir(parents=True, exist_ok=True)
    report = generation.report
    report.tools = len(generation.tools)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        report.written.append(path)
    lock_of(spec, selection, generation).write(lock)
    return report


def lock_of(spec: str | Path, selection: Selection, generation: Generation) -> Lock:
    """The lock of ``generation`` as written: every tool unedited."""
    folder = generation.source.file.parent
    lock = Lock(
        description=Path(spec).name,
        source=str(generation.source.document["source"]),
        selection=selection.to_json(),
        source_file=generation.source.file.relative_to(folder).as_posix(),
        source_generated=generation.source.document,
        layout=generation.layout,
        server_variables=list(generation.server_variables),
        budgets=generation.budgets.to_json(),
        auth=generation.auth,
    )
    for tool in generation.tools:
        lock.entries[tool.key] = entry_of(tool, folder)
    return lock


def entry_of(tool: Generated, folder: Path) -> Entry:
    return Entry(
        method=tool.method,
        path=tool.path,
        operation_id=tool.operation_id,
        name=str(tool.document["name"]),
        file=tool.file.relative_to(folder).as_posix(),
        generated=tool.document,
    )


def generate(
    spec: str | Path,
    *,
    source: str,
    out: str | Path,
    selection: Selection,
    keep: Collection[str] = (),
    layout: Layout = "operation",
    check: bool = True,
    server_variables: Sequence[str] = (),
    from_lock: bool = False,
    budgets: Budgets | None = None,
    auth: str | None = None,
) -> Generation:
    """Every selected operation's definition, built in memory; nothing is written.

    Operations whose ``operationId`` or ``METHOD /path`` is in ``keep`` are built
    whatever the selection and deprecation say (``--update`` keeps what it tracks).
    ``layout`` says which file each tool goes in (``tag``: the file of its first tag).
    ``check`` and ``server_variables``: as ``import_openapi`` says; ``from_lock``: the
    server variables are an earlier import's, and one the URL no longer has is a note.
    ``budgets`` and ``auth``: as ``import_openapi`` says.
    """
    budgets = budgets or Budgets()
    layout = as_layout(layout)
    if not _SOURCE_NAME.fullmatch(source):
        message = f"invalid source name {source!r}: letters, digits, '_' and '-', a letter first"
        raise UsageError(message)
    description = read_description(spec)
    document = description.document
    resolver = Resolver(document)
    found = operations(document)
    name_operations(found, report := ImportReport(), keep)
    files = tag_files(found, source) if layout == "tag" else {}
    report.findings = check_description(document, tree=description.from_json) if check else None
    check_filters(str(spec), found, selection)
    source_notes = Notes()
    security = Security(document, source, resolver, source_notes)
    out = Path(out)
    url = base_url(
        document,
        source,
        source_notes,
        expose=server_variables,
        reserved=security.environment_names(),
        gone_ok=from_lock,
    )
    # A host variable the operator exposed without a default is theirs to set: checked
    # as if set, to a host name.
    unset = dict.fromkeys(re.findall(r"\$\{([A-Za-z0-9_]+)\}", url), "example")
    source_file_name = f"{source}.source.yaml"

    def loads(candidate: Auth) -> bool:
        document_of = source_document(document, source, url, candidate)
        checked = Verifier([(source_file_name, document_of)], environ=unset, unchanging=True)
        return not checked.source_problems

    source_auth, scheme = security.shared(
        document,
        [(op.node["security"], op.pointer) for op in found if "security" in op.node],
        auth,
        loads=loads,
    )
    header = f"Imported from {Path(spec).name} by `agentkit import openapi`; review before use."
    source_file = Generated(
        file=out / source_file_name,
        document=source_document(document, source, url, source_auth),
        comments=(header, *(f"note: {line}" for line in source_notes.lines)),
    )
    verifier = Verifier(
        [(source_file.file.name, source_file.document)], environ=unset, unchanging=True
    )
    if verifier.source_problems:
        raise OpenAPIError(
            str(spec),
            [unloadable("#/servers", found) for found in verifier.source_problems],
        )
    tools: list[Generated] = []
    skipped: set[str] = set()
    selected = 0
    conversions = Conversions()
    make = functools.partial(
        OperationConverter,
        resolver,
        security,
        source,
        source_auth,
        scheme,
        memo=conversions,
        budgets=budgets,
    )
    for op in found:
        kept = is_kept(op, keep)
        if not kept and not selection.wants(op):
            continue
        selected += 1
        if op.deprecated and not selection.deprecated and not kept:
            report.deprecated.append(op.name)
            continue
        try:
            converter, fitted = _fitted(op, budgets, make)
        except UnexpressibleOperation as exc:
            report.skipped.append(Skipped(operation=op.name, problem=exc.problem))
            skipped.add(f"{op.method} {op.path}")
            continue
        definition = fitted.document
        for message in fitted.notes(budgets):
            converter.notes.add("schemas", op.pointer, message)
        if fitted.depths:
            report.fitted.append(op.name)
        if fitted.size.total > budgets.schema_bytes:
            report.over_budget.append(op.name)
        report.streaming += len(converter.streaming)
        if broken := verifier.problems(definition):
            report.skipped.append(
                Skipped(operation=op.name, problem=unloadable(op.pointer, broken[0]))
            )
            skipped.add(f"{op.method} {op.path}")
            continue
        where = f"{op.method} {op.path} ({op.pointer})"
        notes = (f"note: {line}" for line in converter.notes.lines)
        tools.append(
            Generated(
                file=out / files.get(op.name, f"{op.name}.yaml"),
                document=definition,
                comments=(header, where, *notes),
                method=op.method,
                path=op.path,
                operation_id=op.operation_id,
            )
        )
        report.notes += len(converter.notes.lines)
    report.notes += len(source_notes.lines)
    report.tags = list(dict.fromkeys(tag for op in found for tag in op.tags))
    if not tools:
        raise OpenAPIError(str(spec), nothing_imported(document, found, selected, report))
    return Generation(
        source=source_file,
        tools=tools,
        report=report,
        skipped_keys=skipped,
        layout=layout,
        server_variables=tuple(server_variables),
        budgets=budgets,
        auth=auth,
    )


def _fitted(
    op: Operation, budgets: Budgets, make: Callable[..., OperationConverter]
) -> tuple[OperationConverter, Fitted]:
    """``op``'s definition within the schema budget, and the converter that made it."""
    converters: list[OperationConverter] = []

    def build(depths: dict[str, int]) -> dict[str, Any]:
        converters.append(make(depths=depths))
        return converters[-1].definition(op)

    fitted = fit(build({}), budgets, build)
    return converters[-1], fitted


def render(comments: Sequence[str], document: dict[str, Any], writer: Writer | None = None) -> str:
    """``document`` as YAML under ``comments``, one ``# `` line each."""
    return "".join(f"# {_one_line(line)}\n" for line in comments) + dump(document, writer)


def _one_line(text: str) -> str:
    """``text`` safe in a YAML comment: a line break from the description would end the
    comment and let the description write keys of its own."""
    if text.isprintable():
        return text
    return "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        for char in text
    )
