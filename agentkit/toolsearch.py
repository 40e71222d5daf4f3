"""Finding tools by what they do: the ranking behind progressive discovery.

A large catalog is not shown to a model whole. Some tools are *deferred*: not listed
up front, found on demand through one tool, ``search_tools``, that takes a query and
answers with the best matches (name, one-line description, input schema), ranked.

- ``ToolIndex(tools)`` ranks ``tools`` for a query with BM25 over fields: the name
  (weight 3), the tags (2), the description (1.5), the parameters' names (1.5) and
  descriptions (1). Words are split at case changes, ``_``, ``-`` and punctuation,
  folded to lower case, with plural endings taken off; a query word of three letters
  or more also matches, at half weight, the words it begins (``repo`` finds
  ``repository``) and those of three letters or more that begin it (``repository``
  finds ``repo``). Equal scores rank by name, so a ranking never depends on load order.
- ``SearchTools(tools)`` is the search tool: a ``Tool`` like any other, so the MCP
  server lists it, ``agentkit.export`` exports it and ``agentkit.dispatch`` runs it.
- ``matching(tools, patterns)``: the tools a set of names and shell-style patterns
  (``jira_*``) names, as ``--defer`` and ``deferred=`` take them.

No model, no network, nothing to install: the index is a few dictionaries, built in
milliseconds for a thousand tools and answering a query in about a millisecond.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, final

from agentkit.tool import AsyncTool, Tool

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "SEARCH_TOOL_NAME",
    "SearchTools",
    "ToolIndex",
    "matching",
    "one_line",
]

#: The search tool's name.
SEARCH_TOOL_NAME: Final = "search_tools"
#: How many matches a search gives unless asked for another number, and the most it gives.
DEFAULT_LIMIT: Final = 5
MAX_LIMIT: Final = 20
#: A one-line description is cut here (at a word), with an ellipsis.
ONE_LINE: Final = 160

# Okapi BM25's usual constants: how soon a repeated word stops adding, and how much a
# long field is discounted.
_K1: Final = 1.2
_B: Final = 0.75
_FIELDS: Final = (
    ("name", 3.0),
    ("tags", 2.0),
    ("description", 1.5),
    ("parameters", 1.5),
    ("parameter_descriptions", 1.0),
)
_PREFIX_WEIGHT: Final = 0.5
_MIN_PREFIX: Final = 3
#: A query is the model's text, so untrusted: its first words count, and a word's
#: first letters. A few words describe a task; thousands would only cost time.
MAX_QUERY_WORDS: Final = 32
_MAX_WORD: Final = 40
_CHUNK: Final = re.compile(r"[^\W_]+")
_STOP_WORDS: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "for",
        "from",
        "how",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "this",
        "to",
        "use",
        "used",
        "uses",
        "using",
        "via",
        "was",
        "what",
        "when",
        "which",
        "will",
        "with",
    ]
)


def words(text: str) -> list[str]:
    """``text``'s words as the index compares them: ``listOpenPullRequests`` ->
    ``["list", "open", "pull", "request"]``."""
    found = []
    for chunk in _CHUNK.findall(text):
        for part in _camel_parts(chunk):
            word = _singular(part.lower())
            if word not in _STOP_WORDS:
                found.append(word)
    return found


def _camel_parts(chunk: str) -> list[str]:
    """``chunk`` (letters and digits) split where its case or kind changes:
    ``getHTTPServer2`` -> ``get``, ``HTTP``, ``Server``, ``2``."""
    parts: list[str] = []
    start = 0
    for at in range(1, len(chunk)):
        before, here = chunk[at - 1], chunk[at]
        after = chunk[at + 1] if at + 1 < len(chunk) else ""
        if (
            (before.islower() and here.isupper())
            or (before.isupper() and here.isupper() and after.islower())
            or (before.isdigit() != here.isdigit())
        ):
            parts.append(chunk[start:at])
            start = at
    parts.append(chunk[start:])
    return parts


def _singular(word: str) -> str:
    """A plural's usual ending taken off (``issues`` -> ``issue``, ``policies`` ->
    ``policy``), so that a query and a description need not agree in number."""
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def one_line(description: str) -> str:
    """A description's first line, at most ``ONE_LINE`` characters (cut at a word)."""
    line = next((part.strip() for part in description.splitlines() if part.strip()), "")
    if len(line) <= ONE_LINE:
        return line
    cut = line[: ONE_LINE - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


def _schema_text(schema: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Every property name and description in a JSON Schema, at any depth."""
    names: list[str] = []
    descriptions: list[str] = []
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                names.extend(str(name) for name in properties)
            description = node.get("description")
            if isinstance(description, str):
                descriptions.append(description)
            stack.extend(value for value in node.values() if isinstance(value, (Mapping, list)))
        elif isinstance(node, list):
            stack.extend(node)
    return names, descriptions


def _fields(tool: Tool) -> dict[str, list[str]]:
    names, descriptions = _schema_text(tool.input_schema.to_json_schema())
    tags = " ".join(f"{key} {value}" for key, value in tool.tags.items())
    return {
        "name": words(tool.name),
        "tags": words(tags),
        "description": words(tool.description),
        "parameters": words(" ".join(names)),
        "parameter_descriptions": words(" ".join(descriptions)),
    }


@final
class ToolIndex:
    """``tools`` ranked for a query (BM25 over their fields; see the module's docstring).

    Immutable once built: it holds the tools it was given, not a registry that may
    change. Safe to search from several threads.
    """

    __slots__ = ("_average", "_idf", "_lengths", "_postings", "_tools", "_vocabulary")

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: tuple[Tool, ...] = tuple(tools)
        # word -> [(document, field weight x saturated frequency)], built once.
        self._lengths: list[dict[str, int]] = []
        frequencies: list[dict[str, Counter[str]]] = []
        for tool in self._tools:
            fields = _fields(tool)
            self._lengths.append({field: len(found) for field, found in fields.items()})
            frequencies.append({field: Counter(found) for field, found in fields.items()})
        count = len(self._tools) or 1
        self._average = {
            field: (sum(lengths[field] for lengths in self._lengths) / count) or 1.0
            for field, _ in _FIELDS
        }
        postings: dict[str, list[tuple[int, float]]] = {}
        for document, counted in enumerate(frequencies):
            weighted: dict[str, float] = {}
            for field, weight in _FIELDS:
                norm = 1 - _B + _B * self._lengths[document][field] / self._average[field]
                for word, tf in counted[field].items():
                    saturated = tf * (_K1 + 1) / (tf + _K1 * norm)
                    weighted[word] = weighted.get(word, 0.0) + weight * saturated
            for word, value in weighted.items():
                postings.setdefault(word, []).append((document, value))
        self._postings = postings
        self._idf = {
            word: math.log(1 + (count - len(found) + 0.5) / (len(found) + 0.5))
            for word, found in postings.items()
        }
        self._vocabulary = tuple(sorted(postings))

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def search(self, query: str, *, limit: int = DEFAULT_LIMIT) -> list[Tool]:
        """The ``limit`` tools that best match ``query``, best first; ``[]`` when no
        word of it matches anything. Equal scores are ordered by name. Only the first
        ``MAX_QUERY_WORDS`` different words of ``query`` count."""
        scores: dict[int, float] = {}
        asked = dict.fromkeys(word[:_MAX_WORD] for word in words(query[: MAX_QUERY_WORDS * 64]))
        for word in list(asked)[:MAX_QUERY_WORDS]:
            for match, weight in self._matches(word):
                idf = self._idf[match]
                for document, value in self._postings[match]:
                    scores[document] = scores.get(document, 0.0) + weight * idf * value
        ranked = sorted(scores, key=lambda doc: (-round(scores[doc], 9), self._tools[doc].name))
        return [self._tools[document] for document in ranked[: max(limit, 0)]]

    def _matches(self, word: str) -> Iterator[tuple[str, float]]:
        """The indexed words ``word`` matches: itself, the words it begins, and the
        words that begin it (a name's ``repo`` for ``repository``)."""
        if word in self._postings:
            yield word, 1.0
        if len(word) < _MIN_PREFIX:
            return
        for end in range(_MIN_PREFIX, len(word)):
            if word[:end] in self._postings:
                yield word[:end], _PREFIX_WEIGHT
        # The vocabulary is sorted: the words ``word`` begins sit together after it.
        start = _bisect(self._vocabulary, word)
        for candidate in self._vocabulary[start:]:
            if not candidate.startswith(word):
                break
            if candidate != word:
                yield candidate, _PREFIX_WEIGHT


def _bisect(items: tuple[str, ...], key: str) -> int:
    low, high = 0, len(items)
    while low < high:
        middle = (low + high) // 2
        if items[middle] < key:
            low = middle + 1
        else:
            high = middle
    return low


def matching(tools: Iterable[Tool], patterns: Iterable[str]) -> frozenset[str]:
    """The names of ``tools`` that ``patterns`` name: each a tool's name, or a
    shell-style pattern (``jira_*``, ``*_delete``, ``get_?``) matched against names,
    case-sensitively. A tool name holds no ``*``, ``?`` or ``[``, so a name is a
    pattern that matches itself alone."""
    wanted = tuple(patterns)
    return frozenset(
        tool.name
        for tool in tools
        if any(fnmatch.fnmatchcase(tool.name, pattern) for pattern in wanted)
    )


class SearchTools(AsyncTool):
    """The search tool: a query in, the best-matching tools out (name, one-line
    description, input schema), best first, from ``tools`` (the deferred ones).

    Its answer is ``{"tools": [...], "more": N}``: ``more`` counts the tools a larger
    ``limit`` would have added. A call of a match is made by its name, as for any tool.
    """

    TOOL_NAME = SEARCH_TOOL_NAME
    TOOL_DESCRIPTION = (
        "Find tools by what they do. Not every tool is listed: describe the task in a few "
        "words (such as 'close a github issue') and get the best-matching tools, best "
        "first, each with its name, a one-line description and its input schema. Then "
        "call the tool you chose by its name, as any listed tool."
    )
    TOOL_ANNOTATIONS = {"read_only": True, "idempotent": True, "open_world": False}
    INPUT_SCHEMA = {
        "parameters": [
            {
                "name": "query",
                "type": "string",
                "description": "What the tool should do, in a few words",
            },
            {
                "name": "limit",
                "type": "integer",
                "required": False,
                "default": DEFAULT_LIMIT,
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": "How many tools to return at most",
            },
        ]
    }
    OUTPUT_SCHEMA = {
        "parameters": [
            {
                "name": "tools",
                "type": "list",
                "description": "The matching tools, best first",
                "items": {
                    "type": "dictionary",
                    "parameters": [
                        {"name": "name", "type": "string", "description": "Call it by this"},
                        {"name": "description", "type": "string"},
                        {
                            "name": "input_schema",
                            "type": "dictionary",
                            "description": "The JSON Schema of its arguments",
                        },
                    ],
                },
            },
            {
                "name": "more",
                "type": "integer",
                "description": "How many more tools matched than were returned",
            },
        ]
    }

    def __init__(self, tools: Iterable[Tool] | ToolIndex) -> None:
        super().__init__()
        self.index = tools if isinstance(tools, ToolIndex) else ToolIndex(tools)

    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
        """The answer to ``query``, as ``execute`` gives it."""
        ranked = self.index.search(query, limit=len(self.index))
        return {
            "tools": [
                {
                    "name": tool.name,
                    "description": one_line(tool.description),
                    "input_schema": tool.input_schema.to_json_schema(),
                }
                for tool in ranked[:limit]
            ],
            "more": max(len(ranked) - limit, 0),
        }

    async def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        return self.search(str(inputs["query"]), int(inputs.get("limit", DEFAULT_LIMIT)))
