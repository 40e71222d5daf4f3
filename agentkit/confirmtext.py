"""What a confirmation shows of a call: its arguments shortened, its text made visible.

A user asked to confirm a call reads what it will send. Every field is shown, each
long value cut saying how much was cut (``shortened``, ``arguments_shown``), and every
character that could hide, reorder or restyle what follows it is spelled out
(``visible``). Text is redacted with the call's active redactor before it is cut, so
no credential reaches the question. ``agentkit.context`` exports these names too.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, Final

from agentkit.redaction import active_redactor

__all__ = [
    "MAX_ENTRIES",
    "MAX_LINES",
    "MAX_VALUE_CHARS",
    "arguments_shown",
    "blank",
    "invisible",
    "redacted_text",
    "shortened",
    "spelled_alike",
    "visible",
]


#: The most characters of one value (a string, a line) a confirmation shows: a longer one
#: is shortened, saying how much was cut, so that every field is shown however long one is.
MAX_VALUE_CHARS: Final = 300
#: The most entries of one list or nested mapping a confirmation shows (the rest are
#: counted); the top-level fields of the arguments or a body are all shown.
MAX_ENTRIES: Final = 20
#: The most lines of a text body a confirmation shows (its first and last ones; the
#: lines between are counted).
MAX_LINES: Final = 40


def arguments_shown(
    inputs: Mapping[str, Any], *, redact: Callable[[str], str] | None = None
) -> str:
    """What a confirmation shows of a call that cannot say what it will send: every one
    of its arguments, as JSON, each long value ``shortened`` (``redact``, by default the
    active redactor, first)."""
    shown = json.dumps(
        shortened(dict(inputs), redact=redact), ensure_ascii=False, indent=2, default=str
    )
    return f"run with these arguments:\n{shown}"


def shortened(
    value: Any, *, limit: int = MAX_VALUE_CHARS, redact: Callable[[str], str] | None = None
) -> Any:
    """``value`` as a confirmation shows it: every string in it (dict keys too) longer
    than ``limit`` characters keeps its start and says how many characters were cut
    (``"Routine refund. Rou… [1,780 more characters]"``); a list or a nested mapping of
    more than ``MAX_ENTRIES`` entries keeps its first ones and says how many more there
    are (``"… [2,990 more items]"``, a ``"…"`` key); every field of a top-level mapping
    is kept, and keys that are alike once cut each keep their entry, told apart by a
    note (``"… [another key shown alike, #2]"``). So no field can be pushed out of
    sight by padding another, nor stand in for another. Each string is
    redacted (``redact``, by default the call's active redactor) before it is cut, so
    that a secret straddling the cut is still whole when it is matched."""
    if redact is None:
        redact = redacted_text

    def short(item: Any, top: bool = False) -> Any:
        if isinstance(item, str):
            text = redact(item) if len(item) > limit else item
            if len(text) <= limit:
                return text
            return f"{text[:limit]}\u2026 [{len(text) - limit:,} more characters]"
        if isinstance(item, Mapping):
            entries = list(item.items())
            kept = entries if top else entries[:MAX_ENTRIES]
            shown: dict[str, Any] = {}
            for key, entry in kept:
                shown[_distinct(short(str(key)), shown)] = short(entry)
            if len(kept) < len(entries):
                more = f"[{len(entries) - len(kept):,} more entries]"
                shown[_distinct("\u2026", shown)] = more
            return shown
        if isinstance(item, (list, tuple)):
            listed = [short(entry) for entry in item[:MAX_ENTRIES]]
            if len(item) > MAX_ENTRIES:
                listed.append(f"\u2026 [{len(item) - MAX_ENTRIES:,} more items]")
            return listed
        if item is None or isinstance(item, (bool, int, float)):
            return item
        return short(str(item))  # shown as text, as json.dumps(default=str) would

    return short(value, top=True)


def _distinct(name: str, shown: Mapping[str, Any]) -> str:
    """``name``, or when an entry shown already has it (two keys sharing their first
    ``MAX_VALUE_CHARS`` characters, ``1`` and ``"1"``) ``name`` with a note that tells
    them apart: one entry never stands for two."""
    if name not in shown:
        return name
    number = 2
    while f"{name} [another key shown alike, #{number}]" in shown:
        number += 1
    return f"{name} [another key shown alike, #{number}]"


#: The kinds of character a confirmation spells out instead of showing (Unicode general
#: categories): controls, format characters (bidi overrides and isolates, zero-width
#: ones), line and paragraph separators, surrogates, private use and unassigned ones.
_HIDDEN: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
#: Unicode's Default_Ignorable_Code_Point ranges that are not format characters (Hangul
#: fillers, the combining grapheme joiner, variation selectors, ...): drawn as nothing.
_IGNORABLE: Final = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)  # fmt: skip
#: Characters drawn blank that are none of the above (U+2800 BRAILLE PATTERN BLANK).
_BLANK: Final = frozenset({"\u2800"})


def invisible(char: str, *, after: str = "") -> bool:
    """Whether a confirmation spells ``char`` out (it could hide, reorder or restyle
    what follows it, or is drawn as nothing): a control, format, separator, surrogate,
    private-use or unassigned character, a space other than U+0020, a Unicode default
    ignorable one (Hangul fillers, variation selectors), U+2800, and a combining mark
    with nothing to combine with (``after``, the last character before it that is no
    combining mark, is missing, blank or spelled out)."""
    if char == "\n":
        return False
    category = unicodedata.category(char)
    if category in _HIDDEN or (category == "Zs" and char != " ") or char in _BLANK:
        return True
    code = ord(char)
    if any(low <= code <= high for low, high in _IGNORABLE):
        return True
    if category in ("Mn", "Me"):
        return not after or after.isspace() or invisible(after)
    return False


def blank(line: str) -> bool:
    """Whether ``line`` shows nothing once ``visible``: it is empty or holds only U+0020
    spaces. A line of characters drawn as nothing is not blank: each is spelled out."""
    return not visible(line).strip(" ")


#: What ``visible`` writes for a character it spells out: ``\u`` and four hex digits,
#: or ``\U`` and eight.
_SPELLED: Final = re.compile(r"\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})")


def spelled_alike(text: str) -> bool:
    """Whether ``text`` holds a backslash sequence that reads as a character ``visible``
    spells out (``\\u200b`` typed as six characters): shown as it is, it could not be
    told from that character, so a confirmation does not count it as shown whole."""
    return "\\" in text and _SPELLED.search(text) is not None


def visible(text: str) -> str:
    """``text`` as a confirmation shows it: every character that could hide, reorder or
    restyle what follows it on the user's screen, or that is drawn as nothing
    (``invisible``), spelled out as ``\\u202e``; only the line breaks (``\\n``) the
    text is laid out with are kept."""
    if text.isascii() and text.isprintable():
        return text
    shown: list[str] = []
    before = ""
    for char in text:
        if invisible(char, after=before):
            code = ord(char)
            shown.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            shown.append(char)
        if unicodedata.category(char) not in ("Mn", "Me"):
            before = char
    return "".join(shown)


def redacted_text(text: str) -> str:
    """``text`` redacted by the call's active redactor; itself when there is none."""
    redactor = active_redactor()
    return redactor.redact(text) if redactor else text
