"""What the command prints: everything goes through ``terminal_text``.

Names, descriptions and values come from definition files and upstream services,
and a terminal would obey the escape sequences in them. Control characters (C0,
DEL, C1), line and paragraph separators and bidirectional overrides are shown
escaped (``\x1b``, ``\u202e``). A newline is kept only where the output means to
break a line (a multi-line description, a list of problems); inside a one-line
field -- a table cell, a name -- it is escaped too, so a value cannot forge a line
of output.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from agentkit.adapters.diff import ToolDiff


# C0 but newline, DEL and C1, lone surrogates, the bidi marks, embeddings,
# overrides and isolates, and the Unicode line and paragraph separators.
_UNSAFE = (
    r"\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff"
    r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
)
_UNSAFE_IN_LINES: Final = re.compile(f"[{_UNSAFE}]")
_UNSAFE_IN_A_LINE: Final = re.compile(f"[\\n{_UNSAFE}]")


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def terminal_text(text: object, *, one_line: bool = False) -> str:
    """``text`` safe to print: control and bidi characters escaped.

    A newline is kept, unless ``one_line`` (a table cell, a name) asks for it escaped too.
    """
    pattern = _UNSAFE_IN_A_LINE if one_line else _UNSAFE_IN_LINES
    return pattern.sub(_escaped, str(text))


def echo(text: object = "", *, error: bool = False) -> None:
    """Print ``terminal_text(text)`` on stdout, or on stderr if ``error``."""
    print(terminal_text(text), file=sys.stderr if error else sys.stdout)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON, through ``echo``."""
    echo(json.dumps(data, indent=2))


def print_diff(diff: ToolDiff, *, severity: bool = False) -> None:
    """``NAME OLD -> NEW: STATUS[, SEVERITY]``, then a line per change (``KIND: MESSAGE``)."""
    versions = f"{diff.old_version or '-'} -> {diff.new_version or '-'}"
    head = f"{diff.name} {versions}: {diff.status}" + (f", {diff.severity}" if severity else "")
    echo(terminal_text(head, one_line=True))
    for change in diff.changes:
        echo(f"  {terminal_text(str(change), one_line=True)}")
