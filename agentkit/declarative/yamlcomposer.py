"""One YAML document built from the parser's events: in one pass, bounded, with positions.

What it builds is bounded: duplicate and merge keys, nesting past
``MAX_DEPTH``, documents that aliases expand past ``MAX_EXPANDED_NODES``
values or ``MAX_EXPANDED_CHARS`` characters, and any tag but the
JSON-compatible core ones are refused here, each with its position, and the
rest of the document is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import yaml

from agentkit.declarative.yamllocated import LocatedDict, LocatedList, Position
from agentkit.declarative.yamlscalars import (
    BUILDERS,
    CORE_PREFIX,
    IMPLICIT,
    MAP_TAG,
    MERGE_TAG,
    SEQ_TAG,
    STR_TAG,
    WILDCARD,
    Loader,
    clip,
)
from agentkit.textfile import MAX_FILE_BYTES
from agentkit.toolerrors import AgentKitError, Problem

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPANDED_CHARS",
    "MAX_EXPANDED_NODES",
    "MAX_SHARED_CHARS",
    "Composer",
    "SharedValues",
]

#: The most values a document may hold once aliases are expanded (a definition has a few hundred).
MAX_EXPANDED_NODES: Final = 100_000
#: The most scalar characters a document may hold once aliases are expanded.
MAX_EXPANDED_CHARS: Final = 4 * MAX_FILE_BYTES
#: The deepest a value may be nested (a schema nests two levels per dictionary parameter).
MAX_DEPTH: Final = 64
#: Strings up to this long are shared between equal values (``read_documents``).
MAX_SHARED_CHARS: Final = 64


class SharedValues:
    """What files read one after another share: equal short strings, and plain scalars' values.

    Equal short strings (names, types, keys) come back as one object, so a
    thousand tools that each have a parameter ``id`` keep one string for it,
    not a thousand. The value of each short plain scalar (``type``,
    ``string``, ``true``, ``5``) read without a problem is kept by its text:
    most scalars of a set of definitions are the same few, and resolving a
    scalar's tag was a third of reading it. Both tables hold only texts of at
    most ``MAX_SHARED_CHARS`` characters.
    """

    __slots__ = ("plain", "strings")

    def __init__(self) -> None:
        self.strings: dict[str, str] = {}
        self.plain: dict[str, Any] = {}


def _position(event: yaml.Event) -> Position:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


class _Refused(AgentKitError):
    """The rest of a document is not read; the problem that says why is noted already."""


_NO_KEY: Final[Any] = object()  # a mapping waits for a key
_BAD_KEY: Final[Any] = object()  # the key was refused: drop the value that follows


@dataclass(slots=True)
class _Open:
    """A mapping or sequence being built, and what its anchor needs once it is closed."""

    value: dict[Any, Any] | list[Any]  # LocatedDict or LocatedList when positions are kept
    position: Position
    anchor: str | None
    nodes_before: int
    chars_before: int
    key: Any = _NO_KEY


@dataclass(frozen=True, slots=True, kw_only=True)
class _Anchor:
    value: Any
    position: Position
    nodes: int  # values under it, itself included, with aliases expanded
    chars: int  # characters of the scalars under it, with aliases expanded
    container: bool


class Composer:
    """One document from the parser's events: values built in one pass, without recursion.

    Each event is handled once, so reading is linear in the file; an alias
    shares its anchor's value and adds the anchor's expanded size to the
    document's, so what later checks walk is bounded too. Nesting depth, the
    expanded size, recursive, undefined and duplicate anchors, and tags other
    than the JSON-compatible core ones are refused with the position they occur at.
    With ``located``, mappings and sequences are ``LocatedDict`` and
    ``LocatedList``; without, plain ``dict`` and ``list`` (the same problems found).
    """

    def __init__(
        self,
        loader: Loader,
        problems: list[Problem],
        shared: SharedValues,
        *,
        located: bool,
    ) -> None:
        self.loader = loader
        self.problems = problems
        self.strings = shared.strings
        self.plain = shared.plain
        self.located = located
        self.anchors: dict[str, _Anchor | None] = {}  # None: still open
        self.stack: list[_Open] = []
        self.nodes = 0
        self.chars = 0
        self.root: Any = _NO_KEY
        self.start: Position = (0, 0)

    def note(self, position: Position, message: str) -> None:
        line, column = position
        self.problems.append(Problem(line=line, column=column, message=message))

    def compose(self) -> tuple[Any, Position] | None:
        """The document's value and where it starts; ``None`` for an empty or refused one."""
        try:
            self._read_events()
        except _Refused:
            # Skip the rest of the document flat: no values, no recursion.
            while not isinstance(self.loader.get_event(), yaml.DocumentEndEvent):
                pass
            return None
        return None if self.root is _NO_KEY else (self.root, self.start)

    def _read_events(self) -> None:
        # Names bound once: this loop runs for every value of every file. The
        # common cases are handled right here (a scalar without anchor or tag,
        # quoted or plain and seen before, so it cannot be a problem; a mapping
        # or list opened and closed): a method call and the attribute lookups
        # for each value were most of reading a file. The rest goes to methods.
        # The open container and the counts are locals too (the counts are
        # handed to and taken back from the methods that use them); without
        # ``located``, a value's position is not even worked out.
        get_event, scalar, attach = self.loader.get_event, self._scalar, self._attach
        stack, shared, plain = self.stack, self.strings.setdefault, self.plain
        known = plain.get
        max_nodes, max_chars, max_shared = MAX_EXPANDED_NODES, MAX_EXPANDED_CHARS, MAX_SHARED_CHARS
        scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
        mapping_start, sequence_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
        ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
        located, no_key, bad_key = self.located, _NO_KEY, _BAD_KEY
        resolvers, wildcard = IMPLICIT.get, WILDCARD
        new_dict: Any = LocatedDict if located else dict
        new_list: Any = LocatedList if located else list
        position: Position = (0, 0)
        value: Any
        top: Any = None  # stack[-1] (an _Open), and its value
        target: Any = None
        in_list = False
        nodes, chars = self.nodes, self.chars
        while True:
            event = get_event()
            kind = type(event)
            if kind is scalar_event:
                if event.anchor is not None or event.tag is not None or top is None:
                    self.nodes, self.chars = nodes, chars
                    scalar(event)
                    nodes, chars = self.nodes, self.chars
                    continue
                text = event.value
                if event.implicit[0]:
                    value = known(text, no_key)
                    if value is no_key:
                        # Text when no resolver's pattern matches it (a name, a sentence);
                        # else the resolved value, from the method.
                        for _, pattern in resolvers(text[:1], wildcard):
                            if pattern.match(text):
                                self.nodes, self.chars = nodes, chars
                                scalar(event)
                                nodes, chars = self.nodes, self.chars
                                break
                        else:
                            pattern = None
                        if pattern is not None:
                            continue
                        if len(text) <= max_shared:
                            value = plain[text] = shared(text, text)
                        else:
                            value = text
                else:
                    value = shared(text, text) if len(text) <= max_shared else text
                nodes += 1
                chars += len(text)
                if nodes > max_nodes or chars > max_chars:
                    self.nodes, self.chars = nodes, chars
                    self._count(_position(event), 0, 0)  # says so, and refuses the document
                if located:
                    mark = event.start_mark
                    position = (mark.line + 1, mark.column + 1)
                container = False
            elif kind in ends:
                done = stack.pop()
                value = done.value
                position = done.position
                if done.anchor is not None:
                    self.nodes, self.chars = nodes, chars
                    self._close_anchor(done)
                if not stack:
                    top = None
                    attach(value, position, container=True)
                    continue
                top = stack[-1]
                target = top.value
                in_list = type(target) is new_list
                container = True
            elif kind is mapping_start or kind is sequence_start:
                mark = event.start_mark
                position = (mark.line + 1, mark.column + 1)
                if event.anchor is not None or event.tag is not None or len(stack) >= MAX_DEPTH:
                    self.nodes, self.chars = nodes, chars
                    self._check_open(event, position)
                    nodes, chars = self.nodes, self.chars
                else:
                    nodes += 1
                    if nodes > max_nodes:
                        self.nodes = nodes
                        self._count(position, 0, 0)
                in_list = kind is sequence_start
                if in_list:
                    target = new_list()
                    if located:
                        target.positions = []
                        target.position = position
                else:
                    target = new_dict()
                    if located:
                        target.positions = {}
                        target.position = position
                top = _Open(target, position, event.anchor, nodes, chars)
                stack.append(top)
                continue
            elif kind is alias_event:
                self.nodes, self.chars = nodes, chars
                self._alias(event)
                nodes, chars = self.nodes, self.chars
                continue
            else:  # DocumentEndEvent: the parser allows nothing else here
                self.nodes, self.chars = nodes, chars
                return
            # _attach, inline for a value whose parent is open and fine so far.
            if in_list:
                target.append(value)
                if located:
                    target.positions.append(position)
                continue
            key = top.key
            if key is no_key:
                if container or value in target:  # _attach says what is wrong
                    where = position if located or container else _position(event)
                    attach(value, where, container=container)
                else:
                    top.key = value
                continue
            top.key = no_key
            if key is not bad_key:
                target[key] = value
                if located:
                    target.positions[key] = position

    def _count(self, position: Position, nodes: int, chars: int) -> None:
        self.nodes += nodes
        self.chars += chars
        if self.nodes > MAX_EXPANDED_NODES or self.chars > MAX_EXPANDED_CHARS:
            self.note(
                position,
                f"this document holds more than {MAX_EXPANDED_NODES} values or "
                f"{MAX_EXPANDED_CHARS} characters, counting each alias as all it repeats; "
                "a definition needs far fewer (an alias bomb?)",
            )
            raise _Refused

    def _define(self, event: yaml.NodeEvent, position: Position) -> None:
        anchor = event.anchor
        if anchor is None:
            return
        if anchor in self.anchors:
            earlier = self.anchors[anchor]
            where = f" (first on line {earlier.position[0]})" if earlier is not None else ""
            self.note(position, f"anchor '&{clip(anchor)}' is defined twice{where}; rename one")
            raise _Refused
        self.anchors[anchor] = None

    def _scalar(self, event: yaml.ScalarEvent) -> None:
        position = _position(event)
        text = event.value  # the common scalar is placed by _read_events
        self._define(event, position)
        self._count(position, 1, len(text))
        tag = event.tag
        if tag is None:
            tag = self.loader.resolve(yaml.ScalarNode, text, event.implicit)
        elif tag == "!":  # the non-specific tag: a string, as the YAML spec says
            tag = STR_TAG
        if tag == MERGE_TAG and self.stack and self.stack[-1].key is _NO_KEY:
            self.note(position, "merge keys ('<<') are not supported; write the keys out")
            self.stack[-1].key = _BAD_KEY
            return
        build = BUILDERS.get(tag)
        if build is None:
            self._refuse_tag(position, tag)
            value = text
        else:
            try:
                value = build(text)
            except ValueError as exc:  # the builder says why the text is not its value
                self.note(position, str(exc))
                value = text
                build = None  # not kept for the next one: it has its own problem
        if type(value) is str and len(value) <= MAX_SHARED_CHARS:
            value = self.strings.setdefault(value, value)
        if (
            build is not None
            and event.tag is None
            and event.anchor is None
            and event.implicit[0]
            and len(text) <= MAX_SHARED_CHARS
        ):
            self.plain[text] = value
        if event.anchor is not None:
            self.anchors[event.anchor] = _Anchor(
                value=value, position=position, nodes=1, chars=len(text), container=False
            )
        self._attach(value, position, container=False)

    def _refuse_tag(self, position: Position, tag: str) -> None:
        shown = "!!" + tag[len(CORE_PREFIX) :] if tag.startswith(CORE_PREFIX) else tag
        self.note(
            position,
            f"the tag '{clip(shown)}' is not supported; a definition holds only strings, "
            "numbers, true/false, null, lists and mappings (quote the value to keep it as text)",
        )

    def _alias(self, event: yaml.AliasEvent) -> None:
        position = _position(event)
        name = event.anchor
        if name not in self.anchors:
            self.note(position, f"alias '*{clip(name)}' names no anchor defined before it")
            raise _Refused
        anchor = self.anchors[name]
        if anchor is None:
            self.note(
                position,
                f"a recursive alias ('*{clip(name)}' inside its own anchor) is not allowed",
            )
            raise _Refused
        self._count(position, anchor.nodes, anchor.chars)
        # The alias's own position, not the anchor's: a problem with this value is
        # reported where it is used; problems inside it, at the anchor, once.
        self._attach(anchor.value, position, container=anchor.container)

    def _check_open(self, event: yaml.CollectionStartEvent, position: Position) -> None:
        """Check and count a mapping or list with an anchor or tag, or nested too deep."""
        if len(self.stack) >= MAX_DEPTH:
            self.note(
                position,
                f"values are nested more than {MAX_DEPTH} levels deep; flatten the definition",
            )
            raise _Refused
        self._define(event, position)
        tag = event.tag
        expected = MAP_TAG if type(event) is yaml.MappingStartEvent else SEQ_TAG
        if tag is not None and tag != "!" and tag != expected:
            self._refuse_tag(position, tag)
        self._count(position, 1, 0)

    def _close_anchor(self, done: _Open) -> None:
        """Note the anchor of the mapping or sequence just read, and all it holds."""
        assert done.anchor is not None
        self.anchors[done.anchor] = _Anchor(
            value=done.value,
            position=done.position,
            nodes=self.nodes - done.nodes_before + 1,
            chars=self.chars - done.chars_before,
            container=True,
        )

    def _attach(self, value: Any, position: Position, *, container: bool) -> None:
        if not self.stack:
            self.root = value
            self.start = position
            return
        parent = self.stack[-1]
        target = parent.value
        if isinstance(target, list):
            target.append(value)
            if self.located:
                target.positions.append(position)  # type: ignore[attr-defined]
            return
        key = parent.key
        if key is _NO_KEY:
            if container:
                self.note(position, "a mapping key must be a plain value, not a list or mapping")
                parent.key = _BAD_KEY
            elif value in target:
                # Unlocated, the line is unknown; read_documents reads located again.
                first = target.positions[value][0] if self.located else 0  # type: ignore[attr-defined]
                self.note(position, f"duplicate key '{clip(value)}' (first given on line {first})")
                parent.key = _BAD_KEY
            else:
                parent.key = value
            return
        parent.key = _NO_KEY
        if key is not _BAD_KEY:
            target[key] = value
            if self.located:
                target.positions[key] = position  # type: ignore[attr-defined]
