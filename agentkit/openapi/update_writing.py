"""The merged documents of an update as text in their files: written as the import
writes them, with the import's comments and the conflicts above, the reviewer's own
comments put back, and where nothing but the version changed, the reviewer's text
with the new version line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.declarative.yamlsource import locate, read_documents
from agentkit.openapi.folder import DOCUMENT_START, Comments, DefinitionFile, Folder, Segment
from agentkit.openapi.importer import render
from agentkit.openapi.merge import Clash, same_but_version
from agentkit.openapi.update_report import Conflict, UpdateReport, resolution

_VERSION_LINE: Final = re.compile(r"^version:[^\n]*$", re.MULTILINE)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Merged:
    """One tool (or the source) after the merge, waiting to be written."""

    file: DefinitionFile
    segment: Segment
    document: dict[str, Any]
    comments: list[str]  # the import's own, above the document
    clashes: list[Clash]
    before_name: str | None  # the reviewer's name for it; None for a new tool
    original: str | None = None  # the reviewer's text, for its comments


def plain(value: Any) -> Any:
    """``value`` read from YAML as plain dicts and lists."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def render_merged(merged: Merged) -> None:
    """The segment's text for the merged document, the reviewer's text where nothing changed."""
    segment = merged.segment
    if not segment.changed:
        return
    ours = plain(segment.document) if merged.before_name is not None else None
    if ours is not None and same_but_version(ours, merged.document):
        version = merged.document.get("version")
        segment.text = _VERSION_LINE.sub(f"version: {version}", segment.text, count=1)
        return
    comments = [*merged.comments]
    for clash in merged.clashes:
        comments.append(
            f"conflict: {_dotted(merged.document, clash.location)}: {resolution(clash)}"
        )
    start = "---\n" if DOCUMENT_START.match(segment.text) else ""
    text = render(comments, merged.document)
    if merged.original is not None:
        text = Comments.read(merged.original).put_back(text)
    segment.text = start + text


def write_merged(folder: Folder, pending: list[Merged], report: UpdateReport) -> None:
    for merged in pending:
        if not merged.clashes:
            continue
        text = merged.segment.text
        documents, _ = read_documents(text)
        root, start = documents[0] if documents else (None, (1, 1))
        name = str(merged.document.get("name") or merged.document.get("source"))
        for clash in merged.clashes:
            line = locate(root, clash.location, start)[0] if root is not None else 1
            report.conflicts.append(
                Conflict(
                    file=merged.file.path,
                    line=merged.file.line_of(merged.segment) + line - 1,
                    tool=name,
                    field=_dotted(merged.document, clash.location),
                    ours=clash.ours,
                    theirs=clash.theirs,
                )
            )
    for file in folder.files.values():
        if not file.touched:
            continue
        if file.empty:
            file.path.unlink(missing_ok=True)
            continue
        file.path.parent.mkdir(parents=True, exist_ok=True)
        file.path.write_text(file.text(), encoding="utf-8")
        report.written.append(file.path)


def _dotted(document: Any, location: tuple[str | int, ...]) -> str:
    """``input_schema.parameters[query_id].description``: a location, parameters by name."""
    text, node = "", document
    for part in location:
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            node = node[part]
            label = node.get("name", part) if isinstance(node, dict) else part
            text += f"[{label}]"
        elif isinstance(node, dict) and part in node:
            node = node[part]
            text += f".{part}" if text else str(part)
        elif isinstance(node, list):
            text += f"[{part}]"
            node = None
        else:
            text += f".{part}" if text else str(part)
            node = None
    return text
