"""The Python backend of ``tools.d/text_stats.yaml``: plain functions, no agentkit imports."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


def text_stats(text: str, top: int = 3) -> dict[str, Any]:
    """Words, sentences and characters of ``text``, and its ``top`` commonest words."""
    words = [word.lower() for word in _WORD.findall(text)]
    sentences = len(_SENTENCE_END.findall(text.strip() + " ")) if text.strip() else 0
    commonest = [word for word, _ in Counter(words).most_common(top)]
    return {
        "words": len(words),
        "sentences": sentences,
        "characters": len(text),
        "commonest": commonest,
    }
