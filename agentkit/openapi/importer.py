"""The import: select operations, name them, build and write their definitions."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentkit.openapi.check import check_description
from agentkit.openapi.emit import dump
from agentkit.openapi.naming import NameTable, operation_name
from agentkit.openapi.operations import Operation, OperationConverter, operations
from agentkit.openapi.reader import Resolver, load_description, problem
from agentkit.openapi.schemas import Notes
from agentkit.openapi.source import NO_AUTH, Security, base_url, source_document
from agentkit.toolerrors import (
    DescriptionProblem,
    OpenAPIError,
    UnexpressibleOperation,
    UsageError,
)

_SOURCE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True, slots=True)
class Renamed:
    """A tool whose name was taken: it got ``name`` instead of ``wanted``."""

    wanted: str
    name: str
    pointer: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """An operation left out, and why (``problem`` locates it in the description)."""

    operation: str
    problem: DescriptionProblem


@dataclass
class ImportReport:
    """What an import wrote, left out and renamed."""

    written: list[Path] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    renamed: list[Renamed] = field(default_factory=list)
    deprecated: list[str] = field(default_factory=list)
    notes: int = 0
    #: What ``openapi-spec-validator`` found; None when it is not installed.
    findings: list[DescriptionProblem] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """Which operations to import: each given filter must match (an empty one matches all)."""

    tags: Sequence[str] = ()
    operations: Sequence[str] = ()
    methods: Sequence[str] = ()
    exclude: Sequence[str] = ()
    deprecated: bool = False

    def wants(self, op: Operation) -> bool:
        ids = {op.name, op.operation_id or ""}
        if self.tags and not set(self.tags) & set(op.tags):
            return False
        if self.operations and not ids & set(self.operations):
            return False
        if self.methods and op.method not in {method.upper() for method in self.methods}:
            return False
        return not ids & set(self.exclude)


def import_openapi(
    spec: str | Path,
    *,
    source: str,
    out: str | Path,
    selection: Selection | None = None,
    check: bool = True,
) -> ImportReport:
    """Write one source file and one definition file per selected operation into ``out``.

    ``check``: check the description with ``openapi-spec-validator`` first (when it is
    installed; ``report.findings`` is None otherwise, or when ``check`` is false).

    Raises ``OpenAPIError`` when the description cannot be read, a filter names no
    operation, or a file to write exists already (nothing is written then).
    """
    selection = selection or Selection()
    if not _SOURCE_NAME.fullmatch(source):
        message = f"invalid source name {source!r}: letters, digits, '_' and '-', a letter first"
        raise UsageError(message)
    document = load_description(spec)
    resolver = Resolver(document)
    found = operations(document)
    _name(found, report := ImportReport())
    report.findings = check_description(document) if check else None
    _check_filters(str(spec), found, selection)
    source_notes = Notes()
    security = Security(document, source, resolver, source_notes)
    try:
        source_auth = security.choose(document.get("security"), "#/security")
    except UnexpressibleOperation as exc:
        source_notes.add("auth", exc.problem.pointer, exc.problem.message)
        source_auth = NO_AUTH
    files: dict[Path, str] = {}
    out = Path(out)
    url = base_url(document, source, source_notes)
    header = f"Imported from {Path(spec).name} by `agentkit import openapi`; review before use."
    files[out / f"{source}.source.yaml"] = _text(
        header, source_notes, source_document(document, source, url, source_auth)
    )
    for op in found:
        if not selection.wants(op):
            continue
        if op.deprecated and not selection.deprecated:
            report.deprecated.append(op.name)
            continue
        converter = OperationConverter(resolver, security, source, source_auth)
        try:
            definition = converter.definition(op)
        except UnexpressibleOperation as exc:
            report.skipped.append(Skipped(op.name, exc.problem))
            continue
        where = f"{op.method} {op.path} ({op.pointer})"
        files[out / f"{op.name}.yaml"] = _text(header, converter.notes, definition, where)
        report.notes += len(converter.notes.lines)
    existing = [path for path in files if path.exists()]
    if existing:
        shown = ", ".join(path.name for path in existing[:3])
        more = ", ..." if len(existing) > 3 else ""
        raise UsageError(
            f"{len(existing)} file(s) to write exist already in {out} ({shown}{more}); "
            "import into a new folder"
        )
    out.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        report.written.append(path)
    report.notes += len(source_notes.lines)
    return report


def _name(found: list[Operation], report: ImportReport) -> None:
    """Names for every operation, taken in the description's order, so each run agrees."""
    table = NameTable()
    for op in found:
        wanted = operation_name(op.operation_id, op.method, op.path)
        op.name = table.claim(wanted)
        if op.name != wanted:
            report.renamed.append(Renamed(wanted, op.name, op.pointer))


def _check_filters(spec: str, found: list[Operation], selection: Selection) -> None:
    known = sorted({op.name for op in found} | {op.operation_id for op in found if op.operation_id})
    problems: list[DescriptionProblem] = []
    for given in (*selection.operations, *selection.exclude):
        if given not in known:
            close = difflib.get_close_matches(given, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(problem("#/paths", f"no operation {given!r}{hint}"))
    tags = {tag for op in found for tag in op.tags}
    for tag in selection.tags:
        if tag not in tags:
            close = difflib.get_close_matches(tag, sorted(tags), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(problem("#/paths", f"no operation has tag {tag!r}{hint}"))
    if problems:
        raise OpenAPIError(spec, problems)


def _text(header: str, notes: Notes, document: dict[str, Any], *comments: str) -> str:
    lines = [header, *comments, *(f"note: {line}" for line in notes.lines)]
    body = dump(document)
    return "".join(f"# {_one_line(line)}\n" for line in lines) + body


def _one_line(text: str) -> str:
    """``text`` safe in a YAML comment: a line break from the description would end the
    comment and let the description write keys of its own."""
    if text.isprintable():
        return text
    return "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        for char in text
    )
