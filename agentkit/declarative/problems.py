"""Collecting definition problems against the YAML they came from.

Every problem of a load goes through one ``ProblemLog``, which is what keeps a
hostile file's report small: a problem is kept once however many aliases reach
its YAML node, a message or field is cut to ``MAX_MESSAGE_CHARS``, and at most
``MAX_PROBLEMS_PER_FILE`` per file and ``MAX_PROBLEMS`` in all are kept, the
rest counted ("N more problems not shown").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Final

from agentkit.declarative.yamlsource import Position, clip, locate, read_documents
from agentkit.problem import did_you_mean, format_location
from agentkit.tool import TOOL_NAME_PATTERN
from agentkit.toolerrors import DefinitionError, Problem

__all__ = [
    "HINT_BUDGET",
    "MAX_MESSAGE_CHARS",
    "MAX_PROBLEMS",
    "MAX_PROBLEMS_PER_FILE",
    "Location",
    "ProblemLog",
    "Problems",
    "check_keys",
    "check_named",
    "parse_tags",
    "value_kind",
]

Location = tuple[str | int, ...]

MAX_PROBLEMS_PER_FILE: Final = 50
MAX_PROBLEMS: Final = 200
MAX_MESSAGE_CHARS: Final = 500
#: How many names one document's "did you mean" hints may compare against in all.
HINT_BUDGET: Final = 20_000


def _cut(text: str) -> str:
    """``text`` at most about ``MAX_MESSAGE_CHARS`` long, keeping its start and its end.

    The end of a message usually says what would be right, so the middle goes.
    """
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    tail = MAX_MESSAGE_CHARS // 4
    return f"{text[: MAX_MESSAGE_CHARS - tail]} [...] {text[-tail:]}"


class ProblemLog:
    """The problems of one load: each kept once, cut short, and capped per file and in all."""

    def __init__(self) -> None:
        self.shown: list[Problem] = []
        self.not_shown = 0
        # Hashes, not the problems: what was seen stays small however many there were.
        self._seen: set[int] = set()
        self._per_file: dict[str, int] = {}
        # Files read again with positions (``located``), each once for the whole load.
        self._located: dict[str, list[tuple[Any, Position]]] = {}
        # Problems that cause others (a broken source), by key: the index of the cause in
        # ``shown`` and how many problems that follow from it were left out.
        self._causes: dict[str, list[int]] = {}

    def located(self, path: str, text: str) -> list[tuple[Any, Position]]:
        """The documents of file ``path`` (its ``text``) read with positions: read at the
        first problem of any of its documents and kept for the others, so a file with
        thousands of broken documents is read again once, not once for each."""
        documents = self._located.get(path)
        if documents is None:
            documents, _ = read_documents(text)
            self._located[path] = documents
        return documents

    def add(self, problem: Problem) -> None:
        # The path is left out of the identity: aliases reach one YAML node by
        # many paths, and it is one problem, at the node's line and column.
        identity = hash((problem.file, problem.line, problem.column, problem.message))
        if identity in self._seen:
            return
        self._seen.add(identity)
        in_file = self._per_file.get(problem.file, 0)
        if in_file >= MAX_PROBLEMS_PER_FILE or len(self.shown) >= MAX_PROBLEMS:
            self.not_shown += 1
            return
        self._per_file[problem.file] = in_file + 1
        self.shown.append(
            Problem(
                file=problem.file,
                line=problem.line,
                column=problem.column,
                path=_cut(problem.path),
                message=_cut(problem.message),
            )
        )

    def cause(self, key: str, since: int) -> None:
        """Mark the first problem added since ``len(shown)`` was ``since`` as the cause of
        problems that will name ``key`` (``follow``); nothing when none was added."""
        if len(self.shown) > since and key not in self._causes:
            self._causes[key] = [since, 0]

    def follow(self, key: str, problem: Problem) -> None:
        """Add ``problem``, unless it follows from the cause marked as ``key``: then it is
        counted with that cause ("and N problems that follow from it")."""
        cause = self._causes.get(key)
        if cause is None:
            self.add(problem)
        else:
            cause[1] += 1

    def extend(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.add(problem)

    def order_by_file(self, paths: Sequence[str]) -> None:
        """Group the problems by file in the order of ``paths`` (others first), stably."""
        self._tell_consequences()
        rank = {path: index for index, path in enumerate(paths)}
        self.shown.sort(key=lambda problem: rank.get(problem.file, -1))

    def full(self, path: str) -> bool:
        """True when no further problem of ``path`` would be shown."""
        return (
            self._per_file.get(path, 0) >= MAX_PROBLEMS_PER_FILE or len(self.shown) >= MAX_PROBLEMS
        )

    def __bool__(self) -> bool:
        return bool(self.shown)

    def error(self) -> DefinitionError:
        self._tell_consequences()
        return DefinitionError(self.shown, not_shown=self.not_shown)

    def _tell_consequences(self) -> None:
        """Each cause's message ends saying how many problems follow from it (once)."""
        for key, (index, following) in self._causes.items():
            if following:
                first = self.shown[index]
                many = "problem that follows" if following == 1 else "problems that follow"
                self.shown[index] = replace(
                    first,
                    message=f"{first.message}; and {following} {many} from it, in the tools "
                    f"that use {key}",
                )
        self._causes.clear()


class Problems:
    """The problems of one document: each located at the line its key or value is on.

    ``root`` is the document as ``read_documents`` gave it. Read without
    positions (``located=False``, faster), ``text`` and ``number`` say where
    it came from: the first problem reads that document again, located.
    """

    def __init__(
        self,
        path: str,
        root: Any,
        start: Position,
        log: ProblemLog,
        *,
        text: str | None = None,
        number: int = 0,
    ) -> None:
        self.path = path
        self.root = root
        self.start = start
        self.log = log
        self._unread = text  # the text of an unlocated root, until it is read located
        self._number = number
        # Every problem reported, kept or not: callers compare counts to see whether
        # a part had problems, so a capped or repeated one must still count.
        self.count = 0
        # Keyed by the identity of ``choices``, kept alive with the hint so no other
        # list can take over that identity while the document is checked.
        self._hints: dict[tuple[str, int, str], tuple[Sequence[str], str]] = {}
        self._hint_budget = HINT_BUDGET

    def add(self, location: Location, message: str, *, follows: str | None = None) -> None:
        """A problem at ``location``; ``follows``: the key of the cause it follows from
        (``ProblemLog.follow``), when there is one."""
        self.count += 1
        if self._unread is not None:
            self.root = self.log.located(self.path, self._unread)[self._number][0]
            self._unread = None
        if "parameters" in location:
            location = _as_written(self.root, location)
        line, column = locate(self.root, location, self.start)
        problem = Problem(
            file=self.path,
            line=line,
            column=column,
            path=format_location(location),
            message=message,
        )
        if follows is None:
            self.log.add(problem)
        else:
            self.log.follow(follows, problem)

    def did_you_mean(self, word: str, choices: Sequence[str], prefix: str = "") -> str:
        """``toolerrors.did_you_mean``, at a cost bounded for the whole document.

        A hint costs a pass over ``choices``, which a definition can make long
        (its own inputs, outputs, credentials): asked for each of thousands of
        unknown names that is quadratic. So hints are remembered (aliases ask
        the same question again), and none is worked out once no more problems
        of this file would be shown or the document's ``HINT_BUDGET`` of
        comparisons is spent. Pass the same ``choices`` object each time.
        """
        key = (word, id(choices), prefix)
        known = self._hints.get(key)
        if known is not None:
            return known[1]
        if self.log.full(self.path) or len(choices) > self._hint_budget:
            return ""
        self._hint_budget -= len(choices)
        hint = did_you_mean(word, choices, prefix)
        self._hints[key] = (choices, hint)
        return hint

    def __bool__(self) -> bool:
        return bool(self.count)

    def __len__(self) -> int:
        return self.count


def _as_written(root: Any, location: Location) -> Location:
    """``location`` as the document writes it: a schema given as its list of parameters
    (``input_schema: [...]``) has no ``parameters`` key, so a problem of its third
    parameter is at ``input_schema[2]``, not ``input_schema.parameters[2]``."""
    node = root
    for index, part in enumerate(location):
        if part == "parameters" and isinstance(node, list):
            return (*location[:index], *_as_written(node, location[index + 1 :]))
        inside = part in node if isinstance(node, dict) else _is_index(node, part)
        if not inside:
            break
        node = node[part]
    return location


def _is_index(node: Any, part: str | int) -> bool:
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def parse_tags(raw: dict[str, Any], problems: Problems) -> dict[str, str]:
    """The ``tags:`` of a tool or source document, checked: strings to strings."""
    tags = raw.get("tags", {})
    if not isinstance(tags, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in tags.items()
    ):
        problems.add(("tags",), "tags must map strings to strings (quote numbers: '1')")
        return {}
    return dict(tags)


def value_kind(value: Any) -> str:
    """What a YAML value is, in the words of a definition's author: ``a list``, not the
    reader's ``LocatedList``."""
    if value is None:
        return "null"
    for kinds, word in _KINDS:
        if isinstance(value, kinds):
            return word
    return f"a {type(value).__name__}"


# bool before int: True is an int to Python, a boolean to the author.
_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (dict, "a mapping"),
    (list, "a list"),
    (str, "a string"),
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a number"),
)


def check_keys(
    raw: Any, allowed: Sequence[str], location: Location, problems: Problems, what: str
) -> bool:
    """Report unknown keys of mapping ``raw``; False (and a problem) when it is not a mapping."""
    if not isinstance(raw, dict):
        problems.add(location, f"{what} must be a mapping, got {value_kind(raw)}")
        return False
    for key in raw:
        if key not in allowed:
            problems.add(
                (*location, str(key)),
                f"unknown key '{clip(key)}'{problems.did_you_mean(str(key), allowed)}; "
                f"{what} takes: {', '.join(allowed)}",
            )
    return True


def check_named(
    raw: dict[str, Any], key: str, problems: Problems, note: str = ""
) -> tuple[str | None, str]:
    """The name under ``key`` of a named document (a source, a toolset), spelt as tool
    names are, and its ``description``; a problem for each that is not (``note`` added
    to the name's), and None or ``""`` for it."""
    name = raw.get(key)
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        problems.add(
            (key,),
            f"invalid {key} name '{clip(name)}': use letters, digits, '_' and '-', starting "
            f"with a letter{note}",
        )
        name = None
    description = raw.get("description", "")
    if not isinstance(description, str):
        problems.add(("description",), "expected a string")
        description = ""
    return name, description
