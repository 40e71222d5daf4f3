"""The output folder as the reviewer left it: its files, their documents, their comments.

Each file is read as text split into segments, one YAML document each with the
comment lines above it, so an update rewrites only the documents that changed
and leaves every other byte as it was. PyYAML drops comments; ``Comments`` keeps
the reviewer's by the key or parameter they sit at, to put them back at the same
key or parameter (by name) in a rewritten document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, final

from agentkit.declarative import definition_files
from agentkit.declarative.yamlsource import SharedValues, read_documents
from agentkit.openapi.base import Entry, Lock
from agentkit.openapi.merge import signature
from agentkit.toolerrors import UsageError

DOCUMENT_START: Final = re.compile(r"---(\s|$)")
#: Comment lines the import writes; on an update they are written afresh, the rest kept.
_GENERATED_COMMENT: Final = re.compile(
    r"(Imported from .* by `agentkit import openapi`|note: |conflict: |[A-Z]+ /\S* \(#/paths)"
)
_KEY_LINE: Final = re.compile(r"( *)([A-Za-z_][\w-]*|'[^']*'|\"[^\"]*\")\s*:(\s|$)")
_ITEM_LINE: Final = re.compile(r"( *)- ")
_ITEM_NAME: Final = re.compile(r"- \{?\s*name:\s*([^\s,}#]+)")

Path_ = tuple[str, ...]


@final
@dataclass(slots=True, kw_only=True)
class Segment:
    """One YAML document of a file, with the lines above it, as text."""

    text: str
    document: Any = None
    changed: bool = False
    removed: bool = False


@final
@dataclass(slots=True, kw_only=True)
class DefinitionFile:
    path: Path
    segments: list[Segment]
    new: bool = False

    def text(self) -> str:
        return "".join(segment.text for segment in self.segments if not segment.removed)

    @property
    def touched(self) -> bool:
        return self.new or any(segment.changed or segment.removed for segment in self.segments)

    @property
    def empty(self) -> bool:
        return all(segment.removed or segment.document is None for segment in self.segments)

    def line_of(self, segment: Segment) -> int:
        """The line ``segment`` starts at, as the file will be written."""
        line = 1
        for other in self.segments:
            if other is segment:
                break
            if not other.removed:
                line += other.text.count("\n")
        return line

    def append(self, segment: Segment) -> None:
        if any(not other.removed and other.text.strip() for other in self.segments):
            if not self.text().endswith("\n"):
                self.segments[-1].text += "\n"
            segment.text = "---\n" + segment.text
        self.segments.append(segment)


def read_file(path: Path, shared: SharedValues | None = None) -> DefinitionFile:
    """``path`` split into its documents; ``UsageError`` at the first line that does not parse.

    The documents are plain dicts and lists, without positions (``read_documents``'
    ``located=False``), the short strings of every file read with one ``shared`` kept
    once: an update holds every document of the folder at once, and Kubernetes'
    92 MB of definitions took 300 MB so. ``locate`` reads one again with positions.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it: {exc}") from exc
    pieces: list[list[str]] = [[]]
    for line in text.splitlines(keepends=True):
        if DOCUMENT_START.match(line) and any(
            not piece.startswith("#") and piece.strip() for piece in pieces[-1]
        ):
            pieces.append([])
        pieces[-1].append(line)
    segments: list[Segment] = []
    first_line = 1
    for piece in pieces:
        segment = Segment(text="".join(piece))
        documents, problems = read_documents(segment.text, shared, located=False)
        if problems:
            first = problems[0]
            raise UsageError(
                f"{path}:{first.line + first_line - 1}: {first.message}; fix the file first "
                "(agentkit validate), then update"
            )
        if len(documents) == 1:
            segment.document = documents[0][0]
        segments.append(segment)
        first_line += len(piece)
    return DefinitionFile(path=path, segments=segments)


def located(segment: Segment) -> Any:
    """``segment``'s document read again with positions, for problems that need lines."""
    documents, _ = read_documents(segment.text)
    return documents[0][0] if len(documents) == 1 else segment.document


class Folder:
    """Every definition file under the output folder, read once."""

    def __init__(self, out: Path) -> None:
        self.out = out
        paths, _ = definition_files(out) if out.is_dir() else ([], [])
        shared = SharedValues()
        self.files = {path: read_file(path, shared) for path in paths}
        self._claimed: set[int] = set()

    def segments(self) -> Iterator[tuple[DefinitionFile, Segment]]:
        for file in self.files.values():
            for segment in file.segments:
                if isinstance(segment.document, dict) and not segment.removed:
                    yield file, segment

    def find_tools(self, entries: list[Entry]) -> dict[str, tuple[DefinitionFile, Segment]]:
        """The reviewer's document for each entry, by ``METHOD /path``.

        First by the tool's name as last written, then (for the rest) by what it
        calls, so a tool the reviewer renamed, or moved to another file, is found.
        A document in the file the entry names is preferred.
        """
        found: dict[str, tuple[DefinitionFile, Segment]] = {}
        by_name: dict[Any, list[tuple[DefinitionFile, Segment]]] = {}
        by_call: dict[Any, list[tuple[DefinitionFile, Segment]]] = {}
        for file, segment in self.segments():
            if "name" in segment.document:
                by_name.setdefault(segment.document["name"], []).append((file, segment))
                by_call.setdefault(signature(segment.document), []).append((file, segment))
        by_call.pop(None, None)
        keys: tuple[Callable[[Entry], Any], ...] = (
            lambda entry: entry.name,
            lambda entry: signature(entry.generated),
        )
        for index, key in zip((by_name, by_call), keys, strict=True):
            for entry in entries:
                if entry.key in found:
                    continue
                recorded = self.out / entry.file
                candidates = sorted(
                    (
                        pair
                        for pair in index.get(key(entry), ())
                        if id(pair[1]) not in self._claimed
                    ),
                    key=lambda pair: pair[0].path != recorded,
                )
                if candidates:
                    self._claimed.add(id(candidates[0][1]))
                    found[entry.key] = candidates[0]
        return found

    def find_source(self, lock: Lock) -> tuple[DefinitionFile, Segment] | None:
        recorded = self.out / lock.source_file
        found = [
            (file, segment)
            for file, segment in self.segments()
            if segment.document.get("source") == lock.source and "name" not in segment.document
        ]
        found.sort(key=lambda pair: pair[0].path != recorded)
        return found[0] if found else None

    def new_file(self, path: Path) -> DefinitionFile:
        """A new file at ``path``, or beside it when that name is taken."""
        candidate, number = path, 1
        while candidate.exists() or candidate in self.files:
            number += 1
            candidate = path.with_name(f"{path.stem}_{number}{path.suffix}")
        file = DefinitionFile(path=candidate, segments=[], new=True)
        self.files[candidate] = file
        return file


# -- comments --------------------------------------------------------------------------------


@final
@dataclass(slots=True, kw_only=True)
class Comments:
    """The reviewer's comments in one document: above it, and at keys and parameters inside."""

    header: list[str] = field(default_factory=list)
    #: Comment lines above a key or parameter, by its path (``input_schema/parameters/[id]``).
    above: dict[Path_, list[str]] = field(default_factory=dict)
    #: A comment at the end of a key's or parameter's line.
    after: dict[Path_, str] = field(default_factory=dict)

    @classmethod
    def read(cls, text: str) -> Comments:
        comments = cls()
        pending: list[str] = []
        in_body = False
        for line, path in zip(text.splitlines(), _line_paths(text), strict=True):
            stripped = line.strip()
            if stripped.startswith("#"):
                comment = stripped[1:].strip()
                if in_body:
                    pending.append(line.strip())
                elif comment and not _GENERATED_COMMENT.match(comment):
                    comments.header.append(comment)
                continue
            if not stripped or DOCUMENT_START.match(stripped):
                continue
            in_body = True
            if path is None:
                continue
            if pending:
                comments.above.setdefault(path, []).extend(pending)
                pending = []
            trailing = _trailing_comment(line)
            if trailing:
                comments.after[path] = trailing
        comments.header.extend(line[1:].strip() for line in pending)  # after the last key
        return comments

    def put_back(self, text: str) -> str:
        """``text`` (a rendered document) with the comments at the same keys; the ones
        whose key is gone join the header, so no comment is lost."""
        lines = text.splitlines()
        paths = _line_paths(text)
        placed: set[Path_] = set()
        out: list[str] = []
        for line, path in zip(lines, paths, strict=True):
            if path is not None and path not in placed:
                placed.add(path)
                indent = line[: len(line) - len(line.lstrip())]
                out.extend(indent + comment for comment in self.above.get(path, ()))
                if path in self.after and "#" not in line:
                    line = f"{line}  {self.after[path]}"
            out.append(line)
        lost = [
            comment.lstrip("#").strip()
            for path, block in self.above.items()
            if path not in placed
            for comment in block
        ]
        lost += [
            comment.lstrip("#").strip()
            for path, comment in self.after.items()
            if path not in placed
        ]
        header_end = next(
            (index for index, line in enumerate(out) if not line.startswith("#")), len(out)
        )
        extra = [f"# {comment}" for comment in [*self.header, *lost]]
        return "\n".join([*out[:header_end], *extra, *out[header_end:]]) + "\n"


def _trailing_comment(line: str) -> str:
    """The ``# ...`` at the end of a YAML line, outside quotes; empty when there is none."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and index > 0 and line[index - 1] in " \t":
            return line[index:].strip()
    return ""


def _line_paths(text: str) -> list[Path_ | None]:
    """For each line, the key or list item it starts (``None`` for any other line).

    A light reading by indentation, enough for block YAML as the import and most
    people write it: ``key:`` lines, and ``- ...`` items named by their ``name``.
    """
    stack: list[tuple[int, str, bool]] = []  # column, label, is an item
    counts: dict[Path_, int] = {}
    paths: list[Path_ | None] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or DOCUMENT_START.match(stripped):
            paths.append(None)
            continue
        item = _ITEM_LINE.match(line)
        key = _KEY_LINE.match(line)
        if item:
            column = len(item.group(1))
            while stack and (stack[-1][0] > column or (stack[-1][0] == column and stack[-1][2])):
                stack.pop()
            parent = tuple(label for _, label, _ in stack)
            named = _ITEM_NAME.match(line[column:])
            if named:
                label = f"[{named.group(1)}]"
            else:
                counts[parent] = counts.get(parent, -1) + 1
                label = f"[#{counts[parent]}]"
            stack.append((column, label, True))
        elif key:
            column = len(key.group(1))
            while stack and stack[-1][0] >= column:
                stack.pop()
            stack.append((column, key.group(2).strip("'\""), False))
        else:
            paths.append(None)
            continue
        paths.append(tuple(label for _, label, _ in stack))
    return paths
