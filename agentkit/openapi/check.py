"""Checking a description against the OpenAPI meta-schema of its version.

The meta-schemas are the OpenAPI Initiative's (Swagger 2.0, OpenAPI 3.0, 3.1;
``agentkit/openapi/metaschemas``, Apache-2.0), compiled once with ``jsonschema-rs``.
The library is an extra (``pip install agentkit[openapi]``): without it the import
runs unchecked, and says so.

The check reads nothing but the description already in memory. Validating a
document against a meta-schema treats the description's ``$ref`` as strings to
check, never as references to follow; the meta-schemas' own references name only
themselves and the JSON Schema drafts that ``jsonschema-rs`` bundles, and any other
reference is refused (``_refuse``), so neither a file nor a URL is ever opened.
"""

from __future__ import annotations

import datetime
import functools
import json
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import Any, Final

from agentkit.openapi.literal import shown
from agentkit.openapi.reader import pointer_join, problem
from agentkit.openapi.swagger import ORIGINAL_KEY
from agentkit.toolerrors import Problem

#: At most this many findings are reported, then how many more there are: a broken
#: description has thousands.
MAX_FINDINGS: Final = 50
_MAX_MESSAGE: Final = 240
#: Stands for every value of the description a message would quote: a finding says
#: what rule failed where, and never repeats the description's data (a key it names is
#: shown escaped and clipped, so the user can find it under the finding's pointer).
_MASK: Final = "the value"
#: How deep a finding follows the alternatives of ``oneOf`` / ``anyOf`` inside others.
_MAX_DEPTH: Final = 8
_ALTERNATIVES: Final = ("oneOf", "anyOf")
_SCALARS: Final = (str, int, float, bool, type(None))
#: The errors that name keys of the description, and the word their message starts with.
_UNEXPECTED_KEYS: Final = {
    "additionalProperties": "Additional",
    "unevaluatedProperties": "Unevaluated",
}
#: How many of the keys an error names a finding shows, and how much of each.
_MAX_KEYS: Final = 3
_MAX_KEY: Final = 40
#: A description whose YAML aliases expand it past this many values is not checked.
MAX_VALUES: Final = 5_000_000

_METASCHEMAS: Final = {
    "2.0": "swagger-2.0.json",
    "3.0": "openapi-3.0.json",
    "3.1": "openapi-3.1.json",
}


def check_description(document: dict[str, Any], *, tree: bool = False) -> list[Problem] | None:
    """What the description breaks of its version's meta-schema, each finding located
    by a JSON pointer and naming the rule; None when ``jsonschema-rs`` is not installed.

    A Swagger 2.0 description is checked as the user wrote it, before its conversion.
    ``tree``: the description was read from JSON text (``reader.Description``), so no
    YAML alias can make it contain itself or expand it, and every key is a string: the
    walk that guards against those is left out.
    """
    try:
        import jsonschema_rs  # noqa: F401  (only to know whether the extra is there)
    except ImportError:
        return None
    original = document.get(ORIGINAL_KEY)
    if isinstance(original, dict):
        document, version = original, "2.0"
    else:
        version = "3.1" if str(document.get("openapi", "")).startswith("3.1") else "3.0"
    findings: list[Problem] = []
    more = 0
    # The validator's own failures are findings too: the import goes on and locates
    # its own problems per operation.
    try:
        for finding in _findings(_validator(version), document, tree):
            if len(findings) < MAX_FINDINGS:
                findings.append(finding)
            else:
                more += 1
    except Exception as exc:
        findings.append(problem("#", _short(f"the check stopped: {type(exc).__name__}: {exc}")))
    if more:
        findings.append(problem("#", f"{more} more finding(s) of the schema check not shown"))
    return findings


@functools.cache
def _validator(version: str) -> Any:
    """The meta-schema of ``version``, compiled (once a process)."""
    import jsonschema_rs

    text = (resources.files(__package__) / "metaschemas" / _METASCHEMAS[version]).read_text()
    return jsonschema_rs.validator_for(json.loads(text), retriever=_refuse, mask=_MASK)


def _refuse(uri: str) -> Any:
    """The retriever of every reference the bundled schemas cannot resolve: none is fetched."""
    raise ValueError(f"the schema check fetches nothing; refused {uri}")


def _findings(validator: Any, document: dict[str, Any], tree: bool) -> Iterator[Problem]:
    values, plain = (0, True) if tree else _shape(document)
    if values is None:
        yield problem("#", "not checked: a YAML alias makes the description contain itself")
        return
    if values > MAX_VALUES:
        # The validator copies what a finding is about: an alias bomb would fill memory.
        yield problem("#", f"not checked: YAML aliases expand it to {values:,} values")
        return
    # What JSON cannot hold (YAML's integer keys and dates) the check reads as JSON would.
    for error in validator.iter_errors(document if plain else _as_json(document)):
        yield from _located(error, 0)


def _shape(document: Any) -> tuple[int | None, bool]:
    """How many values the description holds with every YAML alias expanded (None
    when an alias makes it contain itself), and whether all are JSON's own; in time
    linear in the distinct values."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()
    plain = True
    stack: list[tuple[Any, bool]] = [(document, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        children = node.values() if isinstance(node, dict) else node
        if finished:
            open_.discard(key)
            sizes[key] = 1 + sum(sizes.get(id(child), 1) for child in children)
            continue
        if key in sizes:
            continue
        if key in open_:
            return None, plain
        open_.add(key)
        stack.append((node, True))
        if plain and isinstance(node, dict) and not all(type(name) is str for name in node):
            plain = False
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, False))
            elif plain and not isinstance(child, _SCALARS):
                plain = False
    return sizes[id(document)], plain


def _located(error: Any, depth: int) -> Iterator[Problem]:
    """The findings an error stands for: a failed ``oneOf`` / ``anyOf`` whose only
    fitting alternative is not a Reference Object is that alternative's errors."""
    branches = _branches(error, depth)
    if len(branches) == 1:
        for inner in branches[0]:
            yield from _located(inner, depth + 1)
    elif branches:
        tried = "; ".join(_summary(branch[0], depth + 1) for branch in branches)
        yield _finding(error, f"fits none of its {len(branches)} alternatives: {tried}")
    else:
        yield _finding(error, _message(error))


def _branches(error: Any, depth: int) -> list[list[Any]]:
    """The errors of each alternative a failed ``oneOf`` / ``anyOf`` tried, but a
    Reference Object's; none for any other error."""
    if error.kind.name not in _ALTERNATIVES or depth >= _MAX_DEPTH:
        return []
    return [list(b) for b in getattr(error.kind, "context", ()) if b and not _reference(b)]


def _summary(error: Any, depth: int) -> str:
    """What first failed in an alternative, through the alternatives nested in it."""
    branches = _branches(error, depth)
    if len(branches) == 1:
        return _summary(branches[0][0], depth + 1)
    return _short(_message(error), 80)


def _message(error: Any) -> str:
    """What ``error`` says, without the description's data: values are masked by the
    validator; keys it quotes (an unexpected key, a key of the wrong form) are shown
    escaped and clipped (``shown``), and a few of them at most."""
    kind = error.kind.name
    if kind in _UNEXPECTED_KEYS:
        keys = list(getattr(error.kind, "unexpected", ()))
        listed = ", ".join(shown(key, _MAX_KEY) for key in keys[:_MAX_KEYS])
        more = f" and {len(keys) - _MAX_KEYS} more" if len(keys) > _MAX_KEYS else ""
        verb = "was" if len(keys) == 1 else "were"
        what = _UNEXPECTED_KEYS[kind]
        return f"{what} properties are not allowed ({listed}{more} {verb} unexpected)"
    if kind == "propertyNames":
        inner = error.kind.error
        # The inner error is about the key itself, as a value: masked.
        return f"the key {shown(inner.instance, _MAX_KEY)}: {inner.message}"
    return str(error.message)


def _finding(error: Any, message: str) -> Problem:
    pointer = pointer_join("#", *error.instance_path)
    return problem(
        pointer, _short(f"{_rule(error.schema_path)} ({error.kind.name}) failed: {message}")
    )


def _reference(branch: Iterable[Any]) -> bool:
    """Whether an alternative failed for want of ``$ref``: a Reference Object, which
    an object without ``$ref`` was never meant to be."""
    return any(
        error.kind.name == "required" and getattr(error.kind, "property", None) == "$ref"
        for error in branch
    )


def _rule(schema_path: Iterable[object]) -> str:
    """The meta-schema's name for the object whose rule failed (``Operation``,
    ``parameter``), or ``the document`` for the top level."""
    keys = list(schema_path)
    for index in range(len(keys) - 2, -1, -1):
        if keys[index] in ("definitions", "$defs"):
            return str(keys[index + 1])
    return "the document"


def _as_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {_key(key): _as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_json(item) for item in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def _key(key: object) -> str:
    return key if isinstance(key, str) else json.dumps(key, default=str)


def _short(text: object, limit: int = _MAX_MESSAGE) -> str:
    message = " ".join(str(text).split())
    return message if len(message) <= limit else message[: limit - 1] + "…"
