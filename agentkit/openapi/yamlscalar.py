"""One scalar as libyaml's emitter writes it: its analysis, its style, its text.

libyaml reads a scalar's characters once (``yaml_emitter_analyze_scalar``):
indicators at its start or inside (``: ``, `` #``), spaces and line breaks at
its edges or next to each other, characters it does not print. From that and
the context (a key or a value of a block collection; the import writes no flow
ones) it picks the style (``select_scalar_style``): plain where the text would
read back as the same string, else single-quoted, else double-quoted with
escapes. ``analyze`` does the same with regular expressions, once per distinct
text; ``Scalar`` keeps the outcome, and the text as a value and as a key.
Nothing is folded: the import writes with no line width.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, final

#: The indent the import writes with (``emit.OPTIONS``).
INDENT: Final = 2
#: libyaml writes a key after ``? `` when it is longer than this (in UTF-8 bytes).
_SIMPLE_KEY: Final = 128

STR_TAG: Final = "tag:yaml.org,2002:str"
FLOAT_TAG: Final = "tag:yaml.org,2002:float"

#: Characters libyaml writes as they are (with ``allow_unicode``): the line feed,
#: printable ASCII, and the Basic Multilingual Plane's but surrogates, BOM, FFFE, FFFF.
_UNPRINTABLE: Final = re.compile("[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
BREAKS: Final = "\r\n\x85\u2028\u2029"
_BREAK: Final = re.compile(f"[{BREAKS}]")
#: libyaml's "blank or break or end": what makes ``: `` and `` #`` indicators.
_BLANKZ: Final = " \t\x00" + BREAKS
_COLON_BLANK: Final = re.compile(f":(?:[{_BLANKZ}]|\\Z)")
_BLANK_HASH: Final = re.compile(f"[{_BLANKZ}]#")
_BREAK_SPACE: Final = re.compile(f"[{BREAKS}] ")
_SPACE_BREAK: Final = re.compile(f" [{BREAKS}]")
_FIRST_INDICATORS: Final = frozenset("#,[]{}&*!|>'\"%@`")
#: Printable ASCII that libyaml writes plain (in a block and in flow alike): no
#: indicator first (nor ``-`` or ``.``, which may start ``---`` or ``...``), none of
#: ``,[]{}:#?`` inside, no space last.
_PLAIN_ANYWHERE: Final = re.compile(
    r"[A-Za-z0-9$()+/;<=\\^_~]"
    r"[\x20-\x22\x24-\x2b\x2d-\x39\x3b-\x3e\x40-\x5a\x5c\x5e-\x7a\x7c\x7e]*(?<! )"
)
SURROGATE: Final = re.compile("[\ud800-\udfff]")
_ESCAPES: Final = {
    "\x00": "0",
    "\x07": "a",
    "\x08": "b",
    "\x09": "t",
    "\x0a": "n",
    "\x0b": "v",
    "\x0c": "f",
    "\x0d": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}

PLAIN: Final = 0
SINGLE: Final = 1
DOUBLE: Final = 2


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Scalar:
    """A scalar's text, what libyaml's analysis says of it, and how it is written."""

    text: str
    multiline: bool
    #: The style as a value and as a key.
    styles: tuple[int, int]
    #: Whether it may be a simple key (one line, at most 128 bytes).
    simple: bool
    #: As written on one line (quoted, escaped) as a value and as a key.
    block: str
    block_key: str
    #: Single-quoted with line breaks of its own: ``block`` is not what is written,
    #: ``Writer._value`` writes it as libyaml does.
    broken: bool


def _escape(char: str) -> str:
    short = _ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code <= 0xFF:
        return f"x{code:02X}"
    if code <= 0xFFFF:
        return f"u{code:04X}"
    return f"U{code:08X}"


def analyze(text: str, *, plain_implicit: bool) -> Scalar:
    """libyaml's ``analyze_scalar`` and ``select_scalar_style`` for ``text`` (allow_unicode)."""
    if not text:
        # Plain only where a value may be empty; quoted as a key.
        return _scalar(text, False, (PLAIN if plain_implicit else SINGLE, SINGLE), True)
    if _PLAIN_ANYWHERE.fullmatch(text):  # most names, types and words: nothing to look for
        style = PLAIN if plain_implicit else SINGLE
        return _scalar(text, False, (style, style), len(text) <= _SIMPLE_KEY)
    first = text[0]
    followed = len(text) == 1 or text[1] in _BLANKZ
    indicators = (
        text.startswith(("---", "..."))
        or first in _FIRST_INDICATORS
        or (first in "?:-" and followed)
        or _COLON_BLANK.search(text, 1) is not None
        or _BLANK_HASH.search(text) is not None
    )
    special = _UNPRINTABLE.search(text) is not None
    line_breaks = _BREAK.search(text) is not None
    last = text[-1]
    edges = first == " " or first in BREAKS or last == " " or last in BREAKS
    break_space = line_breaks and _BREAK_SPACE.search(text) is not None
    space_break = line_breaks and _SPACE_BREAK.search(text) is not None
    plain = not (edges or break_space or line_breaks or indicators)
    single = not break_space
    if space_break or special:
        plain = single = False
    block = _style(plain, single, plain_implicit)
    key = DOUBLE if line_breaks else block
    simple = not line_breaks and (
        len(text) <= _SIMPLE_KEY // 4 or len(text.encode("utf-8")) <= _SIMPLE_KEY
    )
    return _scalar(text, line_breaks, (block, key), simple)


def _scalar(text: str, multiline: bool, styles: tuple[int, int], simple: bool) -> Scalar:
    block = _written(text, styles[0])
    return Scalar(
        text=text,
        multiline=multiline,
        styles=styles,
        simple=simple,
        block=block,
        block_key=block if styles[1] == styles[0] else _written(text, styles[1]),
        broken=multiline and styles[0] == SINGLE,
    )


def _written(text: str, style: int) -> str:
    """``text`` in ``style`` on one line (no folding)."""
    if style == PLAIN:
        return text
    if style == SINGLE:
        return "'" + text.replace("'", "''") + "'"
    return '"' + "".join(escaped(char) for char in text) + '"'


def escaped(char: str) -> str:
    """``char`` as a double-quoted scalar holds it: itself, or its escape."""
    if _UNPRINTABLE.match(char) or char in BREAKS or char in '"\\':
        return "\\" + _escape(char)
    return char


def _style(plain_allowed: bool, single_allowed: bool, plain_implicit: bool) -> int:
    if plain_allowed and plain_implicit:
        return PLAIN
    return SINGLE if single_allowed else DOUBLE
