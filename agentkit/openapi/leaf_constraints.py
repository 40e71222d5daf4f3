"""What a parameter spec keeps of a schema's values: its enum, bounds, pattern, lengths,
format and default, each one it cannot keep told to ``note`` (one message, in words).

These read one flat schema and never recurse; ``schemas`` calls them for the leaves
of what it converts, with a ``note`` that records where the message belongs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from agentkit.openapi.descriptions import sentence
from agentkit.openapi.keywords import INVALID, bounds, fits, fitting_default, lengths, whole_match
from agentkit.openapi.literal import literal

#: Told what a spec leaves out of a schema, as one message.
Note = Callable[[str], None]

#: String formats in words for the description; None: nothing worth saying.
_FORMATS: Final[dict[str, str | None]] = {
    "date-time": "an RFC 3339 date-time (2024-01-31T12:00:00Z)",
    "date": "a date (2024-01-31)",
    "time": "a time (12:00:00)",
    "byte": "base64-encoded",
    "binary": None,
    "password": None,
}


def default(spec: dict[str, Any], value: Any, note: Note) -> None:
    """``value`` as the default of ``spec`` when it fits, with a note when it does not.

    A string default is read for ``${VAR}`` at load time: it is written so the loader
    reads it back as the description gave it, never filled from the environment.
    """
    fitting = fitting_default(value, spec)
    if fitting is INVALID:
        note("default left out: it does not fit the type")
        return
    if isinstance(fitting, str):
        fitting = literal(fitting)
        if fitting is None:
            note("default left out: a template ('{{') holding '${' cannot be written")
            return
    spec["default"] = fitting


def drop_values(enum: Any, kinds: list[str], note: Note) -> None:
    """Note each enum value no member takes: an object, a list, one of another type."""
    if not isinstance(enum, list):
        return
    for value in enum:
        if value is not None and not any(fits(value, kind) for kind in kinds):
            note(f"enum value {_shown(value)} left out: {_unfit(kinds)}")


def constraints(spec: dict[str, Any], schema: dict[str, Any], note: Note) -> None:
    """The enum, bounds, pattern, lengths and format of a scalar ``schema`` into ``spec``
    (of its type), as far as a spec of that type can hold them."""
    kind = spec["type"]
    enum = schema.get("enum")
    if isinstance(enum, list) and kind == "boolean":  # agentkit's booleans take no enum
        if {value for value in enum if isinstance(value, bool)} != {True, False}:
            note(f"enum {_shown(enum)} left out: a boolean has none")
    elif isinstance(enum, list):
        values = [value for value in enum if value is not None and fits(value, kind)]
        if values:
            spec["enum"] = values
        drop_values(enum, [kind], note)
    if kind in ("integer", "float"):
        bounds(spec, schema, kind, note)
    if kind != "string":
        return
    if isinstance(schema.get("pattern"), str):
        pattern = whole_match(schema["pattern"])
        if pattern is None:
            note("pattern left out: not a Python regular expression")
        else:
            spec["pattern"] = pattern
    lengths(spec, schema)
    described = _FORMATS.get(str(schema.get("format")), f"format: {schema.get('format')}")
    if isinstance(schema.get("format"), str) and described:
        spec["description"] = sentence(spec.get("description"), described)


def _shown(value: Any) -> str:
    """A value of the description as a note quotes it: its JSON, cut at 40 characters."""
    shown = json.dumps(value, default=str)
    return shown if len(shown) <= 40 else shown[:39] + "…"


def _unfit(kinds: list[str]) -> str:
    if not kinds:
        return "an enum value is a string, a number or a boolean"
    return f"not of the type{'s' if len(kinds) > 1 else ''} {', '.join(kinds)}"
