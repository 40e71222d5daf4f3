"""JSON pointers into a description (RFC 6901), and their way back into the file read.

A description read in another form (Swagger 2.0, converted to the 3.0 model)
carries a table of the nodes the conversion moved, converted pointer ->
original pointer; ``Pointers.original`` maps any pointer through it.
"""

from __future__ import annotations

from collections.abc import Mapping


def pointer_join(pointer: str, *keys: object) -> str:
    """``pointer`` extended by ``keys``, escaped as RFC 6901 says (``/`` -> ``~1``)."""
    for key in keys:
        pointer += "/" + str(key).replace("~", "~0").replace("/", "~1")
    return pointer


class Pointers:
    """Maps a pointer into the document read back to the file it came from."""

    def __init__(self, moved: Mapping[str, str] | None = None) -> None:
        self._moved = dict(moved or {})

    def original(self, pointer: str) -> str:
        """``pointer`` under the longest moved prefix (whole segments) replaced; as given
        when nothing above it moved."""
        if not self._moved:
            return pointer
        head, tail = pointer, ""
        while head in self._moved or "/" in head[2:]:
            if head in self._moved:
                return self._moved[head] + tail
            cut = head.rfind("/")
            head, tail = head[:cut], head[cut:] + tail
        return pointer
