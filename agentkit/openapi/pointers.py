"""JSON pointers into a description (RFC 6901), and their way back into the file read.

A pointer is written as a URI fragment (``#/paths/~1pets/get``): ``pointer_join``
writes one that ``pointer_keys`` reads back to the same keys, and ``pointer_keys``
reads any a description's ``$ref`` may hold, percent-encoded or not.

A description read in another form (Swagger 2.0, converted to the 3.0 model)
carries a table of the nodes the conversion moved, converted pointer ->
original pointer; ``Pointers.original`` maps any pointer through it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentkit.toolerrors import PointerError

#: What a key written into a pointer escapes.
_NEEDS_ESCAPE: Final = re.compile("[~/%]")
#: A ``%`` with the two hex digits of the byte it encodes, or a stray one.
_PERCENT: Final = re.compile(r"%(?:[0-9A-Fa-f]{2})?")
#: How many ``$ref`` may follow one another before the chain counts as a loop.
MAX_REF_CHAIN: Final = 32


def pointer_join(pointer: str, *keys: object) -> str:
    """``pointer`` extended by ``keys``, escaped as RFC 6901 says (``~`` -> ``~0``,
    ``/`` -> ``~1``; in a URI fragment, ``%`` -> ``%25``, and every character that is
    not printable percent-encoded, so a key's line break or terminal escape never
    reaches a message whole: ``a\nb`` -> ``a%0Ab``)."""
    for key in keys:
        text = key if type(key) is str else str(key)
        if _NEEDS_ESCAPE.search(text):
            text = text.replace("~", "~0").replace("/", "~1").replace("%", "%25")
        if not text.isprintable():
            text = "".join(char if char.isprintable() else _percent(char) for char in text)
        pointer += "/" + text
    return pointer


def _percent(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


def pointer_keys(ref: str) -> list[str]:
    """The keys a fragment pointer (``#/a~1b/c%7Bd%7D``) names, in order (none for ``#``).

    RFC 6901 section 6: the fragment is percent-decoded first (UTF-8), then split at
    ``/``, then each key unescaped, ``~1`` to ``/`` before ``~0`` to ``~`` (so ``~01``
    is ``~1``; ``%7E1`` is ``/``, ``%2F`` a separator). Characters a fragment should
    percent-encode but a description wrote as they are (``{id}``) are read as written;
    a ``~`` not followed by ``0`` or ``1`` is kept as it is.

    Raises ``PointerError`` for a ref that is no fragment, a ``%`` without two hex
    digits after it, bytes that are not UTF-8, or a pointer not starting with ``/``.
    """
    if not ref.startswith("#"):
        raise PointerError("not a pointer into this file (a local $ref starts with '#')")
    fragment = _percent_decoded(ref[1:])
    if not fragment:
        return []
    if not fragment.startswith("/"):
        raise PointerError(f"the pointer after '#' must start with '/' (got {fragment[:40]!r})")
    return [raw.replace("~1", "/").replace("~0", "~") for raw in fragment[1:].split("/")]


def walk(document: Any, keys: Sequence[str]) -> tuple[Any, int]:
    """The node ``keys`` name in ``document``, and how many of them were found: all of
    them, or the node reached before the first key that names nothing."""
    node = document
    for index, key in enumerate(keys):
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return node, index
    return node, len(keys)


def _percent_decoded(text: str) -> str:
    if "%" not in text:
        return text
    # Runs of %XX are bytes decoded together: a UTF-8 character spans several.
    out: list[str] = []
    pending = bytearray()
    position = 0
    for match in _PERCENT.finditer(text):
        escape = match.group(0)
        if len(escape) != 3:
            shown = text[match.start() : match.start() + 3]
            raise PointerError(
                f"{shown!r} is not a percent-encoded byte ('%' and two hex digits; "
                "'%25' for a '%' itself)"
            )
        if match.start() != position:
            out.append(_utf8(pending))
            pending.clear()
            out.append(text[position : match.start()])
        pending.append(int(escape[1:], 16))
        position = match.end()
    out.append(_utf8(pending))
    out.append(text[position:])
    return "".join(out)


def _utf8(data: bytearray) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        shown = "".join(f"%{byte:02X}" for byte in data)
        raise PointerError(f"the percent-encoded bytes {shown} are not UTF-8 text") from None


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
