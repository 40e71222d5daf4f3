"""A description's text as a definition writes it: its first paragraph within a budget,
and a sentence added to it (a format, a length) in the same voice."""

from __future__ import annotations

from typing import Any, Final

#: A cut description ends with this.
CUT: Final = "…"


def trim(text: object, limit: int) -> str:
    """The first paragraph of ``text``, its whitespace collapsed, within ``limit`` characters.

    A longer one is cut after its last whole sentence that fits, else after its last
    whole word, and ends with ``…``; a cut that would keep less than half is made
    where the limit falls instead (one long word, a URL).
    """
    if not isinstance(text, str):
        return ""
    paragraph = " ".join(text.strip().split("\n\n", 1)[0].split())
    if len(paragraph) <= limit:
        return paragraph
    room = paragraph[: limit - len(CUT) - 1]
    sentence_end = max(room.rfind(end) for end in (". ", "! ", "? "))
    if sentence_end + 1 >= limit // 2:
        return f"{room[: sentence_end + 1]} {CUT}"
    word_end = room.rfind(" ")
    if word_end >= limit // 2:
        return room[:word_end].rstrip(",;:") + CUT
    return paragraph[: limit - len(CUT)] + CUT


def sentence(description: Any, extra: str) -> str:
    """``description`` with ``extra`` added as a sentence of its own."""
    text = description.rstrip() if isinstance(description, str) else ""
    addition = extra[0].upper() + extra[1:] + "."
    if not text:
        return addition
    return f"{text} {addition}" if text.endswith((".", "…", "!", "?")) else f"{text}. {addition}"
