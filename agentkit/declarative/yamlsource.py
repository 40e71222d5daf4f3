"""Reading definition files: safe YAML that remembers where every value came from.

Documents are loaded with PyYAML's safe loader (its C parser where libyaml is
present). Mappings and sequences come back as ``LocatedDict`` and
``LocatedList``, ordinary ``dict`` and ``list`` subclasses that also hold the
line and column of each entry, so a problem found later, while checking the
definition, can still point at its line.

Reading is one pass over the parser's events, linear in the file, and what it
builds is bounded: duplicate and merge keys, nesting past ``MAX_DEPTH``,
documents that aliases expand past ``MAX_EXPANDED_NODES`` values or
``MAX_EXPANDED_CHARS`` characters, numbers longer than ``MAX_NUMBER_CHARS`` and
any tag but the JSON-compatible core ones (``!!binary``, ``!!set``,
``!!timestamp``, ``!!python/...``, ``!custom``) are refused here, with positions.
Dates and YAML 1.1 base-60 numbers (``2024-01-01``, ``1:30``) stay strings.

This module reads a text's documents and is the path callers import; the work
is done below it: ``yamlcomposer`` builds one document from the parser's
events, ``yamlscalars`` says what a scalar's tag and value are, and
``yamllocated`` holds the located containers and ``locate``.
"""

from __future__ import annotations

from typing import Any

import yaml

from agentkit.declarative.yamlcomposer import (
    MAX_DEPTH,
    MAX_EXPANDED_CHARS,
    MAX_EXPANDED_NODES,
    MAX_SHARED_CHARS,
    Composer,
    SharedValues,
)
from agentkit.declarative.yamllocated import LocatedDict, LocatedList, Position, locate
from agentkit.declarative.yamlscalars import MAX_NUMBER_CHARS, Loader, clip
from agentkit.textfile import MAX_FILE_BYTES
from agentkit.toolerrors import Problem

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPANDED_CHARS",
    "MAX_EXPANDED_NODES",
    "MAX_FILE_BYTES",
    "MAX_NUMBER_CHARS",
    "MAX_SHARED_CHARS",
    "LocatedDict",
    "LocatedList",
    "Position",
    "SharedValues",
    "clip",
    "locate",
    "read_documents",
]


def read_documents(
    text: str, shared: SharedValues | None = None, *, located: bool = True
) -> tuple[list[tuple[Any, Position]], list[Problem]]:
    """Every document in ``text`` with the position it starts at, and the problems found.

    A loader passes one ``SharedValues`` for all its files: equal short
    strings come back as one object, and the files read faster.

    With ``located`` (the default), mappings and sequences are ``LocatedDict``
    and ``LocatedList``. Without, they are plain ``dict`` and ``list``, read
    faster, and a later check that finds a problem reads ``text`` again,
    located, to say where (``Problems``); the documents and problems are
    the same either way, and when there are problems, so is everything else:
    the text is read again, located.

    Syntax errors stop reading (the parser cannot go on); other problems are
    collected and reading goes on with the next document. A document with a
    problem does not come back: a value refused here (a tag, a huge number)
    would only cause follow-on problems in the checks that read it.
    """
    if shared is None:
        shared = SharedValues()
    loader: Loader | None = None
    documents: list[tuple[Any, Position]] = []
    problems: list[Problem] = []
    try:
        loader = Loader(text)  # the pure-Python reader checks every character here
        loader.get_event()  # StreamStartEvent
        while not loader.check_event(yaml.StreamEndEvent):
            loader.get_event()  # DocumentStartEvent
            before = len(problems)
            document = Composer(loader, problems, shared, located=located).compose()
            if document is not None and len(problems) == before:
                documents.append(document)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        problems.append(Problem(line=line, column=column, message=f"YAML syntax error: {what}"))
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - text.rfind("\n", 0, exc.position)
        character = exc.character if isinstance(exc.character, int) else ord(exc.character)
        problems.append(
            Problem(
                line=line,
                column=column,
                message=f"character #x{character:04x} is not allowed ({exc.reason}); remove it",
            )
        )
    except yaml.YAMLError as exc:
        problems.append(Problem(message=f"YAML error: {exc}"))
    finally:
        if loader is not None:
            loader.dispose()
    if problems and not located:
        return read_documents(text, shared, located=True)  # with the lines messages name
    return documents, problems
