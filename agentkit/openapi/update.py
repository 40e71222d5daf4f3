"""``agentkit import openapi --update``: a newer description over a folder a reviewer edited.

The import left ``SOURCE.openapi-lock.json`` beside the files (``base``): what it
generated for the source and for each operation (keyed by ``METHOD /path``, with its
``operationId``), and the tool's name and file as last written. An update

1. generates the newer description in memory (``theirs``);
2. finds each tracked tool in the folder (``ours``): by its name as last written,
   else by what it calls (source, method, path), so a tool the reviewer renamed or
   moved is found; one found nowhere was deleted by the reviewer and stays deleted;
3. merges each key three ways (``merge.py``): the reviewer's edits are kept, the
   description's changes are taken, and where both changed a key the reviewer's
   value wins and the clash is reported with its file and line;
4. adds new operations, removes operations gone from the description when the
   reviewer had not edited them (an edited one is kept and no longer tracked);
5. loads the folder before and after, classifies each tool's change as
   ``agentkit diff`` does, and bumps its version by as much as the change needs.

Nothing is written unless the result loads.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from agentkit.adapters.diff import ToolDiff, diff_renamed, diff_tools, next_version
from agentkit.declarative import load_tools
from agentkit.declarative.backends.http.sources import is_source_document
from agentkit.declarative.shorthand import written_in_full
from agentkit.openapi.base import Entry, Lock
from agentkit.openapi.budgets import Budgets
from agentkit.openapi.folder import (
    DefinitionFile,
    Folder,
    Segment,
    located,
)
from agentkit.openapi.importer import Generated, entry_of, generate, lock_path
from agentkit.openapi.merge import merge_documents, same_but_version
from agentkit.openapi.naming import NameTable
from agentkit.openapi.selection import Selection, as_layout
from agentkit.openapi.update_report import Operation, UpdateReport
from agentkit.openapi.update_writing import Merged, plain, render_merged, write_merged
from agentkit.openapi.verify import Verifier
from agentkit.tool import Tool
from agentkit.toolerrors import DefinitionError, UsageError

#: The problems of a folder that does not load shown before "... and N more".
_PROBLEMS_SHOWN: Final = 10


# -- the update ------------------------------------------------------------------------------


def update_openapi(
    spec: str | Path, *, source: str, out: str | Path, budgets: Budgets | None = None
) -> UpdateReport:
    """Import ``spec`` over ``out``, which an earlier import wrote, keeping the reviewer's edits.

    ``budgets``: the import's budgets from now on; None keeps the lock's (those of the
    import that wrote ``out``).

    Raises ``UsageError`` when ``out`` holds no lock file for ``source`` or does
    not load, and ``OpenAPIError`` when the description cannot be read. Writes
    nothing when it raises.
    """
    out = Path(out)
    lock_file = lock_path(out, source)
    lock = Lock.read(lock_file)
    if lock.source != source:
        raise UsageError(f"{lock_file} is the lock of source {lock.source!r}, not {source!r}")
    keep = {key for entry in lock.entries.values() for key in (entry.key, entry.operation_id)}
    generation = generate(
        spec,
        source=source,
        out=out,
        selection=Selection.from_json(lock.selection),
        keep={key for key in keep if key},
        layout=as_layout(lock.layout),
        server_variables=lock.server_variables,
        from_lock=True,
        budgets=budgets or Budgets.from_json(lock.budgets),
        auth=lock.auth,
    )
    report = UpdateReport(generation=generation.report)
    folder = Folder(out)
    _check_folder(folder)
    pending: list[Merged] = []
    new_lock = Lock(
        description=Path(spec).name,
        source=source,
        selection=lock.selection,
        source_file=lock.source_file,
        source_generated=generation.source.document,
        layout=generation.layout,
        server_variables=lock.server_variables,
        budgets=generation.budgets.to_json(),
        auth=lock.auth,
    )
    # The source first: its file is where new tools' neighbours are.
    found_source = folder.find_source(lock)
    if found_source is None:
        file = folder.new_file(generation.source.file)
        pending.append(_fresh(file, generation.source))
        new_lock.source_file = file.path.relative_to(out).as_posix()
    else:
        file, segment = found_source
        new_lock.source_file = file.path.relative_to(out).as_posix()
        pending.append(_merge(file, segment, lock.source_generated, generation.source))

    matched = _match(lock, generation.tools)
    ours = folder.find_tools([entry for entry in lock.entries.values() if not entry.deleted])
    for entry in lock.entries.values():
        tool = matched.get(entry.key)
        where = Operation(name=entry.name, key=entry.key)
        if entry.deleted:
            if tool is not None:
                new_lock.entries[tool.key] = _deleted(tool)
                report.deleted.append(Operation(name=str(tool.document["name"]), key=tool.key))
            continue
        found = ours.get(entry.key)
        if found is None:
            if tool is not None:
                new_lock.entries[tool.key] = _deleted(tool)
                report.deleted.append(where)
            continue
        file, segment = found
        if tool is not None:
            merged = _merge(file, segment, entry.generated, tool)
            pending.append(merged)
            new_lock.entries[tool.key] = _tracked_entry(tool, file, merged.document, out)
        elif entry.key in generation.skipped_keys:
            new_lock.entries[entry.key] = entry  # kept as it is; the report says why
        elif same_but_version(dict(segment.document), entry.generated):
            segment.removed = True
            report.removed.append(Operation(name=str(segment.document.get("name")), key=entry.key))
        else:
            report.kept_gone.append(
                Operation(name=str(segment.document.get("name")), key=entry.key)
            )

    # Names: tools the folder keeps hold theirs; new tools take what is left.
    table = NameTable(
        tuple(
            str(segment.document["name"])
            for _, segment in folder.segments()
            if not segment.removed
            and isinstance(segment.document.get("name"), str)
            and not any(merged.segment is segment for merged in pending)
        )
        + tuple(str(merged.document.get("name")) for merged in pending if merged.before_name)
    )
    tracked = {tool.key for tool in matched.values()}
    for tool in generation.tools:
        if tool.key in tracked:
            continue
        document = dict(tool.document)
        wanted = str(document["name"])
        document["name"] = table.claim(wanted)
        if document["name"] != wanted:
            report.generation.renamed.append(_renamed(wanted, document["name"], tool))
        # One file per tool is named after it; a file several tools share (one per
        # tag) takes the new tool as one more document.
        shared = tool.file.stem != wanted
        renamed = Generated(
            file=tool.file if shared else tool.file.with_name(f"{document['name']}.yaml"),
            document=document,
            comments=tool.comments,
            method=tool.method,
            path=tool.path,
            operation_id=tool.operation_id,
        )
        existing = folder.files.get(renamed.file)
        file = existing if shared and existing is not None else folder.new_file(renamed.file)
        pending.append(_fresh(file, renamed))
        new_lock.entries[tool.key] = _tracked_entry(tool, file, document, out)
        report.added.append(Operation(name=document["name"], key=tool.key))

    _classify(folder, pending, report)
    write_merged(folder, pending, report)
    new_lock.write(lock_file)
    return report


def _match(lock: Lock, tools: list[Generated]) -> dict[str, Generated]:
    """Each tracked entry's new generation: by ``operationId``, else by ``METHOD /path``."""
    ids: dict[str, list[Entry]] = {}
    for tracked in lock.entries.values():
        if tracked.operation_id:
            ids.setdefault(tracked.operation_id, []).append(tracked)
    matched: dict[str, Generated] = {}
    for tool in tools:
        same_id = ids.get(tool.operation_id or "", [])
        entry: Entry | None = same_id[0] if len(same_id) == 1 else lock.entries.get(tool.key)
        if entry is not None and entry.key not in matched:
            matched[entry.key] = tool
    return matched


def _tracked_entry(
    tool: Generated, file: DefinitionFile, written: dict[str, Any], out: Path
) -> Entry:
    """The lock's entry: ``tool`` as generated, with its name and file as written."""
    return replace(
        entry_of(tool, out),
        name=str(written.get("name")),
        file=file.path.relative_to(out).as_posix(),
    )


def _deleted(tool: Generated) -> Entry:
    return Entry(
        method=tool.method,
        path=tool.path,
        operation_id=tool.operation_id,
        name="",
        file="",
        generated={},
        deleted=True,
    )


def _renamed(wanted: str, name: str, tool: Generated) -> Any:
    from agentkit.openapi.import_report import Renamed

    pointer = tool.comments[1] if len(tool.comments) > 1 else tool.key
    return Renamed(wanted=wanted, name=name, pointer=pointer)


def _fresh(file: DefinitionFile, generated: Generated) -> Merged:
    segment = Segment(text=generated.text(), document=generated.document, changed=True)
    file.append(segment)
    return Merged(
        file=file,
        segment=segment,
        document=dict(generated.document),
        comments=list(generated.comments),
        clashes=[],
        before_name=None,
    )


def _merge(
    file: DefinitionFile, segment: Segment, base: dict[str, Any], theirs: Generated
) -> Merged:
    # Compared as the generator writes it: a parameter the reviewer wrote short is the same.
    ours = written_in_full(plain(segment.document))
    document, clashes = merge_documents(base, ours, theirs.document)
    name = str(ours.get("name", ""))
    merged = Merged(
        file=file,
        segment=segment,
        document=document,
        comments=list(theirs.comments),
        clashes=clashes,
        before_name=name,
        original=segment.text,
    )
    segment.changed = document != ours
    return merged


# -- checking and classifying ----------------------------------------------------------------


def _classify(folder: Folder, pending: list[Merged], report: UpdateReport) -> None:
    """Load the files before and after, classify each tool's change, bump its version.

    Only the files that change are loaded, with the source's; when the source
    changes, every tool that uses it changes too, so then all of them.
    """
    source = pending[0]  # update_openapi merges the source first
    every = source.segment.changed
    files = [
        file
        for file in folder.files.values()
        if file.touched or file is source.file or (every and _tracked(file, pending))
    ]
    before = _load([file.path for file in files if not file.new], folder.out, "as it is")
    for merged in pending:
        render_merged(merged)
    with tempfile.TemporaryDirectory(prefix="agentkit-update-") as staging:
        root = Path(staging)
        staged = []
        for file in files:
            if file.empty:
                continue
            target = root / file.path.relative_to(folder.out)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(file.text(), encoding="utf-8")
            staged.append(target)
        after = _load(staged, folder.out, "after the update", staging=root)
    diffs = {diff.name: diff for diff in diff_tools(before.values(), after.values())}
    for merged in pending:
        name = merged.document.get("name")
        if not isinstance(name, str):
            continue  # the source: its change shows in each tool that uses it
        if merged.before_name is None:
            report.classified.append(ToolDiff.added(name, str(merged.document.get("version"))))
            continue
        old = before.get(merged.before_name)
        diff = diffs.get(name)
        if merged.before_name != name and old is not None and name in after:
            diff = diff_renamed(old, after[name])
        if diff is None or diff.status != "changed" or old is None:
            report.unchanged += 1
            continue
        version = old.version
        if diff.version_problem is not None and diff.required_bump is not None:
            version = next_version(old.version, diff.required_bump)
            merged.document["version"] = version
            merged.segment.changed = True
            render_merged(merged)
        elif diff.new_version:
            version = diff.new_version
        report.classified.append(replace(diff, new_version=version))
    for removed in report.removed:
        old = before.get(removed.name)
        report.classified.append(ToolDiff.removed(removed.name, old.version if old else None))


def _tracked(file: DefinitionFile, pending: list[Merged]) -> bool:
    return any(merged.file is file for merged in pending)


def _check_folder(folder: Folder) -> None:
    """``UsageError`` when a document in the folder would not load.

    A malformed tool (an edited ``input_schema``, a document made a list) is the
    reviewer's to fix: merging over it would guess, or take it for a deletion.
    The documents ``Folder`` read are checked in memory, as ``agentkit validate``
    checks them, without building tools (loading the folder doubled an update's
    time).
    """
    documents = [
        (file, segment)
        for file in folder.files.values()
        for segment in file.segments
        if segment.document is not None
    ]
    verifier = Verifier(
        (
            (str(file.path), located(segment))
            for file, segment in documents
            if is_source_document(segment.document)
        ),
        environ=os.environ,
    )
    problems = list(verifier.source_problems)
    for file, segment in documents:
        if is_source_document(segment.document):
            continue
        found = verifier.problems(segment.document, path=str(file.path))
        if not found:
            continue
        # The folder was read without positions: the document is read again to say where.
        found = verifier.problems(located(segment), path=str(file.path))
        # Lines count from the segment's start; the file's are wanted.
        offset = file.line_of(segment) - 1
        problems += [replace(problem, line=problem.line + offset) for problem in found]
    if problems:
        shown = "\n".join(f"  {problem}" for problem in problems[:_PROBLEMS_SHOWN])
        more = (
            f"\n  ... and {len(problems) - _PROBLEMS_SHOWN} more"
            if len(problems) > _PROBLEMS_SHOWN
            else ""
        )
        raise UsageError(
            f"{folder.out} does not load as it is, so the update cannot tell what changes; "
            f"fix it first (agentkit validate):\n{shown}{more}"
        )


def _load(
    paths: list[Path], out: Path, when: str, *, staging: Path | None = None
) -> dict[str, Tool]:
    try:
        tools = [cls() for cls in load_tools(*paths)]
        return {tool.name: tool for tool in tools}
    except DefinitionError as exc:
        message = exc.format_message()
        if staging is not None:
            message = message.replace(str(staging), str(out))
            raise UsageError(
                f"the update of {out} would not load, so nothing was written:\n{message}"
            ) from exc
        raise UsageError(
            f"{out} does not load {when}, so the update cannot tell what changes; "
            f"fix it first (agentkit validate):\n{message}"
        ) from exc
