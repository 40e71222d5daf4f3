"""Media types of a description's ``content`` maps."""

from __future__ import annotations

from typing import Any


def media_type(media: object) -> str:
    """``media`` without its parameters, lower-case: ``application/json``."""
    return str(media).split(";")[0].strip().lower()


def json_media(content: dict[str, Any]) -> str | None:
    """The first key of ``content`` that is JSON (``*/*`` counts), or None."""
    for media in content:
        kind = media_type(media)
        if kind == "application/json" or kind.endswith("+json") or kind == "*/*":
            return str(media)
    return None
