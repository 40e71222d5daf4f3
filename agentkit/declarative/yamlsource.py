"""Reading definition files: safe YAML that remembers where every value came from.

Documents are loaded with PyYAML's safe loader (its C parser where libyaml is
present). Mappings and sequences come back as ``LocatedDict`` and
``LocatedList``, ordinary ``dict`` and ``list`` subclasses that also hold the
line and column of each entry, so a problem found later, while checking the
definition, can still point at its line. Duplicate keys, merge keys, oversized
files and alias bombs are refused here, with positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import yaml

__all__ = [
    "MAX_EXPANDED_NODES",
    "MAX_FILE_BYTES",
    "LocatedDict",
    "LocatedList",
    "Position",
    "YamlProblem",
    "locate",
    "read_documents",
]

MAX_FILE_BYTES: Final = 1024 * 1024
#: The most nodes a document may hold once aliases are expanded (a definition has a few hundred).
MAX_EXPANDED_NODES: Final = 100_000

Position = tuple[int, int]  # 1-based line and column
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LocatedDict(dict[Any, Any]):
    """A mapping from YAML, with ``positions[key]`` the line and column of each value."""

    __slots__ = ("position", "positions")

    position: Position
    positions: dict[Any, Position]


class LocatedList(list[Any]):
    """A sequence from YAML, with ``positions[i]`` the line and column of each item."""

    __slots__ = ("position", "positions")

    position: Position
    positions: list[Position]


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """A problem found while reading YAML: where, and what."""

    line: int
    column: int
    message: str


def _position(node: yaml.Node) -> Position:
    mark = node.start_mark
    return (mark.line + 1, mark.column + 1)


class _Loader(_BaseLoader):  # type: ignore[misc]  # a dynamic base: CSafeLoader or SafeLoader
    """The safe loader, building located containers and noting problems instead of raising."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.problems: list[YamlProblem] = []

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        # PyYAML's resolve, for a loader without path resolvers: the same tags,
        # from one lookup by first character (it runs once for every node).
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in _IMPLICIT.get(value[:1], _WILDCARD):
                    if regexp.match(value):
                        return str(tag)
            return _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def note(self, node: yaml.Node, message: str) -> None:
        line, column = _position(node)
        self.problems.append(YamlProblem(line, column, message))

    def convert(self, node: yaml.Node, memo: dict[int, Any]) -> Any:
        """``node`` as Python values, mappings and sequences located.

        One direct pass instead of PyYAML's general constructor (which made up
        most of the load time): plain strings are read straight off the node,
        other scalars and any non-standard tag go to the safe constructor
        (which refuses unsafe tags), and an alias shares its anchor's object.
        """
        known = memo.get(id(node))
        if known is not None:
            return known
        tag = node.tag
        if isinstance(node, yaml.ScalarNode):
            if tag == _STR:
                return node.value
            # int, float, bool, null, timestamp: the safe constructor's own
            # functions; any other tag goes the long way, and is refused there.
            scalar = _SCALARS.get(tag)
            return scalar(self, node) if scalar else self.construct_object(node, deep=True)
        if isinstance(node, yaml.MappingNode) and tag == _MAP:
            mapping = memo[id(node)] = LocatedDict()
            mapping.position = _position(node)
            mapping.positions = {}
            for key_node, value_node in node.value:
                self._add_entry(mapping, key_node, value_node, memo)
            return mapping
        if isinstance(node, yaml.SequenceNode) and tag == _SEQ:
            sequence = memo[id(node)] = LocatedList()
            sequence.position = _position(node)
            sequence.positions = [_position(item) for item in node.value]
            sequence.extend(self.convert(item, memo) for item in node.value)
            return sequence
        return self.construct_object(node, deep=True)

    def _add_entry(
        self, mapping: LocatedDict, key_node: yaml.Node, value_node: yaml.Node, memo: dict[int, Any]
    ) -> None:
        if key_node.tag == _MERGE:
            self.note(key_node, "merge keys ('<<') are not supported; write the keys out")
            return
        if not isinstance(key_node, yaml.ScalarNode):
            self.note(key_node, "a mapping key must be a plain value, not a list or mapping")
            return
        key = self.convert(key_node, memo)
        if key in mapping.positions:
            line, _ = mapping.positions[key]
            self.note(key_node, f"duplicate key '{key}' (first given on line {line})")
            return
        mapping[key] = self.convert(value_node, memo)
        mapping.positions[key] = _position(value_node)


_STR: Final = "tag:yaml.org,2002:str"
_MAP: Final = "tag:yaml.org,2002:map"
_SEQ: Final = "tag:yaml.org,2002:seq"
_MERGE: Final = "tag:yaml.org,2002:merge"
_WILDCARD: Final = tuple(_BaseLoader.yaml_implicit_resolvers.get(None, []))
_IMPLICIT: Final = {
    first: (*resolvers, *_WILDCARD)
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    if first is not None
}
_SCALARS: Final = {
    f"tag:yaml.org,2002:{name}": yaml.SafeLoader.yaml_constructors[f"tag:yaml.org,2002:{name}"]
    for name in ("int", "float", "bool", "null", "timestamp")
}


def _expanded_size(root: yaml.Node) -> int | None:
    """How many nodes ``root`` holds with aliases expanded; ``None`` when an alias is recursive.

    Counting stops past ``MAX_EXPANDED_NODES``: that alone refuses the document.
    """
    sizes: dict[int, int] = {}
    visiting: set[int] = set()

    def size(node: yaml.Node) -> int | None:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in visiting:
            return None
        visiting.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        for child in children:
            child_size = size(child)
            if child_size is None:
                return None
            total += child_size
            if total > MAX_EXPANDED_NODES:
                break
        visiting.discard(key)
        sizes[key] = total
        return total

    return size(root)


def read_documents(text: str) -> tuple[list[tuple[Any, Position]], list[YamlProblem]]:
    """Every document in ``text`` with the position it starts at, and the problems found.

    Syntax errors stop reading (the parser cannot go on); other problems are
    collected, and the documents still come back so later checks can run too.
    """
    loader = _Loader(text)
    documents: list[tuple[Any, Position]] = []
    # Without an anchor there is no alias (a bare '*x' is a syntax error), so the
    # expansion count -- a walk of every node -- is needed only when '&' appears.
    may_alias = "&" in text
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            size = _expanded_size(node) if may_alias else 0
            if size is None:
                loader.note(
                    node, "a recursive alias ('*name' inside its own anchor) is not allowed"
                )
                continue
            if size > MAX_EXPANDED_NODES:
                loader.note(
                    node,
                    f"this document expands to more than {MAX_EXPANDED_NODES} values through "
                    "aliases; refusing it (an alias bomb?)",
                )
                continue
            documents.append((loader.convert(node, {}), _position(node)))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        loader.problems.append(YamlProblem(line, column, f"YAML syntax error: {what}"))
    except yaml.YAMLError as exc:
        loader.problems.append(YamlProblem(0, 0, f"YAML error: {exc}"))
    finally:
        loader.dispose()
    return documents, loader.problems


def locate(root: Any, location: tuple[str | int, ...], fallback: Position) -> Position:
    """The position of the value at ``location`` under ``root``, or of its nearest ancestor."""
    position = getattr(root, "position", fallback)
    node = root
    for part in location:
        if isinstance(node, LocatedDict):
            if part not in node:
                break
            position = node.positions[part]
        elif isinstance(node, LocatedList) and isinstance(part, int) and 0 <= part < len(node):
            position = node.positions[part]
        else:
            break
        node = node[part]
    return position
