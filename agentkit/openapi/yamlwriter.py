"""YAML text of plain data, written the way libyaml's emitter writes it, in one pass.

The import writes thousands of definitions; handing each to libyaml through
PyYAML costs a node object per value and two calls back into Python per
scalar, and was most of an import. ``Writer`` writes the text itself, for the
values a definition holds (mappings, lists, strings, integers, floats,
booleans, None), choosing what libyaml's emitter chooses with the import's
options (``emit.OPTIONS``: keys in order, block style, no line width, Unicode
written as it is, indent 2):

- each scalar's style (plain, single- or double-quoted) from the same analysis
  of its characters (``yamlscalar``), and whether it would read back as another
  type (PyYAML's resolver says);
- the same layout: block mappings and lists, a list under a key not indented,
  an empty one ``{}`` or ``[]``, ``? `` keys for those over 128 bytes or of
  several lines;
- each scalar on one line, with the same escapes; a single-quoted one's own
  line breaks written as libyaml writes them.

A writer remembers each distinct string's analysis, and the text of a
collection met again at the same place (converted schemas are shared between
the tools of one import), for the documents of one import. Anything outside
those values makes ``Writer.dump`` give ``None``: ``emit.dump`` then writes the
document through PyYAML, as before. ``tests/openapi/test_yamlwriter.py`` holds it to
libyaml's text, value by value and on whole imports.
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import ScalarNode
from yaml.representer import SafeRepresenter
from yaml.resolver import Resolver

from agentkit.openapi.yamlscalar import (
    BREAKS,
    FLOAT_TAG,
    INDENT,
    PLAIN,
    STR_TAG,
    SURROGATE,
    Scalar,
    analyze,
)
from agentkit.toolerrors import AgentKitError


class _Unsupported(AgentKitError):
    """A value the writer does not write as libyaml would (another type, a lone surrogate):
    ``Writer.dump`` gives ``None`` for the document then."""


class Writer:
    """Writes documents as YAML text (``dump``), remembering what it learnt for the next.

    It knows a collection met again by its identity: a document given to a writer
    must not change while the writer is in use (an import's documents do not).
    """

    def __init__(self) -> None:
        self._strings: dict[str, Scalar] = {}
        self._others: dict[tuple[type, str], Scalar] = {}
        # PyYAML's implicit resolvers (untyped): the type a plain scalar would read as.
        self._resolver: Any = Resolver()
        self._representer = SafeRepresenter()
        #: Texts of block collections met again, by (id, indent, how they were entered);
        #: each keeps its value, so no other value takes its id while the writer lives.
        self._collections: dict[tuple[int, int, int], tuple[Any, str, int]] = {}
        self._seen: dict[int, Any] = {}
        #: How many collections were written from their kept text.
        self.replayed = 0
        self._reset()

    def _reset(self) -> None:
        self._out: list[str] = []
        self._column = 0
        self._whitespace = True
        self._indention = True

    def dump(self, document: Any) -> str | None:
        """``document`` as libyaml writes it with ``emit.OPTIONS``; ``None`` when it
        holds a value this writer does not write."""
        self._reset()
        try:
            self._node(document, -1, mapping=False)
        except _Unsupported:
            return None
        self._write_indent(0)
        text = "".join(self._out)
        self._out = []
        return text

    # -- nodes ------------------------------------------------------------------------------

    def _node(self, value: Any, indent: int, *, mapping: bool) -> None:
        kind = type(value)
        if kind is dict:
            self._mapping(value, indent)
        elif kind is list:
            self._sequence(value, indent, mapping=mapping)
        else:
            self._value(self._analysis(value), indent)

    def _mapping(self, value: dict[Any, Any], indent: int) -> None:
        if not value:
            self._indicator("{}", True, False, False)
            return
        inner = 0 if indent < 0 else indent + INDENT
        entered = self._entry()
        if self._replay(value, inner, entered):
            return
        start = len(self._out)
        out = self._out
        strings = self._strings
        line = "\n" + " " * inner
        for key, item in value.items():
            self._write_indent(inner, line)
            scalar = strings.get(key) if type(key) is str else None
            if scalar is None:
                scalar = self._key_analysis(key)
            if scalar.simple:
                out.append(scalar.block_key)
                self._column = inner + len(scalar.block_key) + 1
                out.append(":")
                self._whitespace = self._indention = False
            else:
                self._indicator("?", True, False, True)
                self._value(scalar, inner)
                self._write_indent(inner)
                self._indicator(":", True, False, True)
            if type(item) is not str:
                self._node(item, inner, mapping=True)
                continue
            # A string, most values: written here unless it has line breaks to write.
            scalar = strings.get(item) or self._analysis(item)
            if not scalar.broken:
                out.append(" ")
                out.append(scalar.block)
                self._column += 1 + len(scalar.block)
                self._indention = False  # after a "? " key's ":"
            else:
                self._value(scalar, inner)
        self._remember(value, inner, entered, start)

    def _sequence(self, value: list[Any], indent: int, *, mapping: bool) -> None:
        if not value:
            self._indicator("[]", True, False, False)
            return
        if indent < 0:
            inner = 0
        elif mapping and not self._indention:
            inner = indent  # a list under a key starts at the key's column
        else:
            inner = indent + INDENT
        entered = self._entry()
        if self._replay(value, inner, entered):
            return
        start = len(self._out)
        out = self._out
        line = "\n" + " " * inner
        for item in value:
            self._write_indent(inner, line)
            out.append("-")
            self._column = inner + 1
            self._whitespace = False
            self._node(item, inner, mapping=False)
        self._remember(value, inner, entered, start)

    # -- collections met again --------------------------------------------------------------

    def _entry(self) -> int:
        """How a block collection is entered, as far as its text depends on it: after a
        key's ``:`` (-1: its first line is a new one), else at which column, after what."""
        return 2 * self._column + self._whitespace if self._indention else -1

    def _replay(self, value: Any, inner: int, entered: int) -> bool:
        """Write the text a block collection had when it was last entered the same way."""
        kept = self._collections.get((id(value), inner, entered))
        if kept is None or kept[0] is not value:
            return False
        _, text, column = kept
        self.replayed += 1
        self._out.append(text)
        self._column = column
        self._whitespace = self._indention = False
        return True

    def _remember(self, value: Any, inner: int, entered: int, start: int) -> None:
        """Keep the text of a block collection written a second time (a shared one)."""
        if self._whitespace or self._indention:
            return  # it did not end as a replay leaves the writer
        identity = id(value)
        if self._seen.get(identity) is not value:
            self._seen[identity] = value
            return
        text = "".join(self._out[start:])
        del self._out[start:]
        self._out.append(text)
        self._collections[(identity, inner, entered)] = (value, text, self._column)

    # -- scalars ----------------------------------------------------------------------------

    def _key_analysis(self, key: Any) -> Scalar:
        if type(key) is dict or type(key) is list:
            raise _Unsupported("a collection as a key")
        return self._analysis(key)

    def _analysis(self, value: Any) -> Scalar:
        if type(value) is str:
            found = self._strings.get(value)
            if found is None:
                found = self._strings[value] = self._string(value)
            return found
        # By type and text: 0.0 == -0.0, and each is written its own way.
        key = (type(value), repr(value))
        found = self._others.get(key)
        if found is None:
            found = self._others[key] = self._other(value)
        return found

    def _string(self, text: str) -> Scalar:
        if SURROGATE.search(text):
            raise _Unsupported("a lone surrogate cannot be written as UTF-8")
        implicit = self._resolver.resolve(ScalarNode, text, (True, False)) == STR_TAG
        return analyze(text, plain_implicit=implicit)

    def _other(self, value: Any) -> Scalar:
        kind = type(value)
        if kind is bool:
            text = "true" if value else "false"
        elif kind is int:
            text = str(value)
        elif value is None:
            text = "null"
        elif kind is float:
            text = self._representer.represent_float(value).value
            if self._resolver.resolve(ScalarNode, text, (True, False)) != FLOAT_TAG:
                raise _Unsupported(f"the float {text} would need a tag")
        else:
            raise _Unsupported(f"a value of type {kind.__name__}")
        scalar = analyze(text, plain_implicit=True)
        if scalar.styles != (PLAIN, PLAIN):
            raise _Unsupported(f"{text} would be quoted and tagged")
        return scalar

    def _value(self, scalar: Scalar, indent: int) -> None:
        """A scalar that is no simple key, where the writer is: on one line, but a
        single-quoted one's own line breaks (libyaml's ``process_scalar`` without a width)."""
        if not self._whitespace:
            self._out.append(" ")
            self._column += 1
        if scalar.broken:
            self._out.append("'")
            self._column += 1
            self._whitespace = self._indention = False
            self._single_quoted(scalar.text, INDENT if indent < 0 else indent + INDENT)
            self._out.append("'")
            self._column += 1
        else:
            self._out.append(scalar.block)
            self._column += len(scalar.block)
        self._whitespace = self._indention = False

    def _single_quoted(self, text: str, indent: int) -> None:
        """libyaml's ``write_single_quoted_scalar`` for a text with line breaks, never
        breaking a line at a space."""
        breaks = False
        for char in text:
            if char in BREAKS:
                if not breaks and char == "\n":
                    self._put_break()
                self._put_break(char)
                self._indention = True
                breaks = True
            else:
                if breaks:
                    self._write_indent(indent)
                self._put("''" if char == "'" else char)
                self._indention = False
                breaks = False
        if breaks:
            self._write_indent(indent)

    # -- writing ----------------------------------------------------------------------------

    def _put(self, text: str) -> None:
        self._out.append(text)
        self._column += len(text)

    def _put_break(self, char: str = "\n") -> None:
        self._out.append(char)
        self._column = 0

    def _write_indent(self, indent: int, line: str = "") -> None:
        """libyaml's ``write_indent``: a new line at ``indent`` (``line``, when given, is
        that line break and indent), unless at the start of one (after ``- ``)."""
        indent = max(indent, 0)
        if (
            self._indention
            and self._column <= indent
            and (self._column < indent or self._whitespace)
        ):
            if self._column < indent:
                self._out.append(" " * (indent - self._column))
        else:
            self._out.append(line or "\n" + " " * indent)
        self._column = indent
        self._whitespace = self._indention = True

    def _indicator(
        self, text: str, need_whitespace: bool, is_whitespace: bool, is_indention: bool
    ) -> None:
        if need_whitespace and not self._whitespace:
            self._out.append(" ")
            self._column += 1
        self._out.append(text)
        self._column += len(text)
        self._whitespace = is_whitespace
        self._indention = self._indention and is_indention
