"""The short ways a YAML definition may write its schemas, written out in full.

A definition's ``input_schema`` and ``output_schema`` take the same mapping as a
Python tool's ``INPUT_SCHEMA`` (``{parameters: [...]}``, each parameter a mapping
with ``name`` and ``type``). In YAML two shorter spellings say the same:

- the schema as its list of parameters: ``input_schema: [...]``;
- a parameter as ``NAME: TYPE``, a mapping of one entry, where ``TYPE`` is a type
  name, ``list[TYPE]`` for a list of that type, and a trailing ``?`` for an
  optional parameter: ``- titles: list[string]``, ``- body: string?``.

``items:`` takes a type the same way (``items: list[string]``, no ``?``).
Everything else (a bound, a pattern, a default, a description) is written in
full. Written out here, before the schema is parsed: the schema layer, the
exports and ``diff`` see one form, and a problem of a short parameter is reported
at its line by the same checks as any other's.
"""

from __future__ import annotations

import re
from typing import Any, Final

from agentkit.declarative.problems import Location, Problems
from agentkit.schema.parse import PARAMETER_KEYS
from agentkit.schema.values import PARAMETER_TYPES

__all__ = ["OPTIONAL_MARK", "expand_schema", "written_in_full"]

#: Ends the type of a parameter written short that the caller may leave out.
OPTIONAL_MARK: Final = "?"
_LIST: Final = re.compile(r"list\s*\[\s*(.*?)\s*\]")
_SHAPE: Final = f"one of {', '.join(PARAMETER_TYPES)}, or list[TYPE]"


def written_in_full(document: dict[str, Any]) -> dict[str, Any]:
    """Tool definition ``document`` with both schemas written out in full (a checked
    document: what cannot be read is left for the loader to report)."""
    schemas: dict[str, Any] = {
        key: expand_schema(document[key], key, None)
        for key in ("input_schema", "output_schema")
        if key in document
    }
    return {**document, **schemas}


def expand_schema(raw: Any, key: str, problems: Problems | None) -> Any:
    """Definition ``key``'s schema ``raw`` with its short forms written out.

    ``raw`` itself when it has none (most schemas), else a new mapping: the
    document stays as written. Problems are reported at the short form's line
    (when ``problems`` is given); what comes back is still parsed and checked in full.
    """
    if isinstance(raw, list):
        return {"parameters": _expand_list(raw, (key,), problems)}
    if isinstance(raw, dict) and isinstance(raw.get("parameters"), list):
        given = raw["parameters"]
        expanded = _expand_list(given, (key, "parameters"), problems)
        if expanded is not given:
            return {**raw, "parameters": expanded}
    return raw


def _expand_list(given: list[Any], location: Location, problems: Problems | None) -> list[Any]:
    """``given`` (a parameter list) with each short entry written out; ``given`` itself
    when none is short."""
    expanded: list[Any] | None = None
    for index, item in enumerate(given):
        new = _expand_parameter(item, (*location, index), problems)
        if new is not item:
            if expanded is None:
                expanded = list(given)
            expanded[index] = new
    return given if expanded is None else expanded


def _expand_parameter(
    item: Any, location: Location, problems: Problems | None, *, named: bool = True
) -> Any:
    """``item``, a parameter (``named``) or a list's element spec, written out in full."""
    if not isinstance(item, dict):
        return item  # a shared parameter's name, or a mistake the schema reports
    if named and len(item) == 1:
        ((name, written),) = item.items()
        if isinstance(written, str) and not isinstance(name, str):
            # YAML reads on/off/yes/no (and numbers) as other things than text.
            if problems is not None:
                problems.add(
                    location,
                    f"the parameter name {name!r} is not text: unquoted, YAML reads on, off, "
                    "yes, no, true and false as booleans and digits as a number; quote the "
                    f'name ("on": {written})',
                )
            return {"name": f"_{location[-1]}", "type": "string"}  # reported
        if isinstance(written, str) and _is_short(name, written):
            return _short_parameter(name, written, (*location, name), problems)
        return item
    new = item
    items = item.get("items")
    if isinstance(items, str) and "[" in items:
        new = {**new, "items": _element(items, (*location, "items"), problems)}
    elif isinstance(items, dict):
        expanded = _expand_parameter(items, (*location, "items"), problems, named=False)
        if expanded is not items:
            new = {**new, "items": expanded}
    nested = item.get("parameters")
    if isinstance(nested, list):
        expanded_list = _expand_list(nested, (*location, "parameters"), problems)
        if expanded_list is not nested:
            new = {**new, "parameters": expanded_list}
    return new


def _is_short(name: Any, written: str) -> bool:
    """True when ``{name: written}`` is a parameter written short.

    ``{use: owner}`` takes a shared parameter. A key the full form has (``name``,
    ``type``, ``description``...) is a short parameter of that name only when
    what it maps to reads as a type: ``- description: string?`` is a parameter
    called ``description``, while ``- name: city`` is a full parameter missing
    its type, and the schema says so.
    """
    if name == "use":
        return False
    if name not in PARAMETER_KEYS:
        return True
    return _reads_as_type(written)


def _reads_as_type(written: str) -> bool:
    text = written.strip().removesuffix(OPTIONAL_MARK).strip()
    while (match := _LIST.fullmatch(text)) is not None:
        text = match.group(1)
    return text in PARAMETER_TYPES


def _short_parameter(name: str, written: str, location: Location, problems: Problems | None) -> Any:
    text = written.strip()
    optional = text.endswith(OPTIONAL_MARK)
    parameter: dict[str, Any] = {"name": name}
    parameter.update(_element(text.removesuffix(OPTIONAL_MARK).strip(), location, problems))
    if optional:
        parameter["required"] = False
    return parameter


def _element(text: str, location: Location, problems: Problems | None) -> dict[str, Any]:
    """The full form of type ``text`` (``string``, ``list[integer]``): a type name is
    passed on as it is, for the schema to check (and say "did you mean"); a ``?``
    or a bracket out of place is reported here."""
    match = _LIST.fullmatch(text)
    if match is not None:
        return {"type": "list", "items": _element(match.group(1), location, problems)}
    if OPTIONAL_MARK in text or "[" in text or "]" in text or not text:
        if problems is None:
            return {"type": text}  # left for the loader to report
        problems.add(
            location,
            f"cannot read the type {text!r}: write {_SHAPE}, with '{OPTIONAL_MARK}' at the "
            "very end for an optional parameter (list[string]?), or write the parameter in "
            "full with name, type and required: false",
        )
        return {"type": "string"}  # reported; keeps the rest of the schema from failing
    return {"type": text}
