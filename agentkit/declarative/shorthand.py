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

from typing import Any, Final

from agentkit.declarative.problems import Location, Problems
from agentkit.declarative.yamlsource import MAX_DEPTH, clip
from agentkit.schema.parse import PARAMETER_KEYS
from agentkit.schema.values import PARAMETER_TYPES

__all__ = ["OPTIONAL_MARK", "expand_schema", "stand_in", "written_in_full"]

#: Ends the type of a parameter written short that the caller may leave out.
OPTIONAL_MARK: Final = "?"
_SHAPE: Final = f"one of {', '.join(PARAMETER_TYPES)}, or list[TYPE]"


def written_in_full(document: dict[str, Any], problems: Problems | None = None) -> dict[str, Any]:
    """Tool definition ``document`` with both schemas written out in full; problems go to
    ``problems`` (without it, what cannot be read is left for the loader to report)."""
    schemas: dict[str, Any] = {
        key: expand_schema(document[key], key, problems)
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
    if named and "use" not in item and ("name" not in item or len(item) == 1):
        short = _short_entry(item, location, problems)
        if short is not None:
            return short
    new = item
    items = item.get("items")
    if isinstance(items, str) and ("[" in items or OPTIONAL_MARK in items):
        new = {**new, "items": _element(items, (*location, "items"), problems, optional=False)}
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


def stand_in(index: str | int) -> dict[str, Any]:
    """What takes the place of parameter entry ``index`` after a problem reported for it:
    the entries after it keep their index (and line), and it reports nothing more."""
    return {"name": f"_{index}", "type": "string"}


def _short_entry(
    item: dict[Any, Any], location: Location, problems: Problems | None
) -> dict[str, Any] | None:
    """The full form of ``item`` when it is (or was meant as) a parameter written short;
    None for a full parameter (the schema checks it)."""
    placeholder = stand_in(location[-1])
    own = [key for key in item if key not in PARAMETER_KEYS]
    if len(item) == 1:
        ((name, written),) = item.items()
        if not isinstance(name, str):
            # YAML reads on/off/yes/no/true/false, ~/null and digits as other than text.
            if problems is not None:
                problems.add(
                    location,
                    f"the parameter name {_yaml(name)} is not text: unquoted, YAML reads on, "
                    "off, yes, no, true and false as booleans, ~ and null as null, and digits "
                    'as a number; quote the name as you wrote it ("on": boolean)',
                )
            return placeholder
        if isinstance(written, str) and (name not in PARAMETER_KEYS or _reads_as_type(written)):
            return _short_parameter(name, written, (*location, name), problems)
    if len(own) > 1 and "type" not in item and all(_typed(item[key]) for key in own):
        if problems is not None:
            entries = ", then ".join(f"- {key}: ..." for key in own[:3])
            problems.add(
                location,
                f"one entry holds {len(own)} parameters ({', '.join(map(str, own[:3]))}"
                f"{', ...' if len(own) > 3 else ''}): written short, each parameter is an "
                f"entry of its own ({entries})",
            )
        return placeholder
    if len(own) != 1 or (len(item) > 1 and not _meant_short(item[own[0]])):
        return None  # a full parameter with a key it does not take: the schema says so
    # One key of its own beside the full form's keys, or mapping to something other than
    # a type: a short parameter with more on it, which the short form cannot say.
    (name,) = own
    if problems is not None:
        problems.add(
            (*location, name),
            f"a parameter written short is NAME: TYPE and nothing more ({name}: string, "
            f"{name}: list[integer]?); to say more, write it in full: name: {name}, type: ..., "
            "and the other keys (description, default, required, bounds) beside them",
        )
    return placeholder


def _typed(value: Any) -> bool:
    return isinstance(value, str) and _reads_as_type(value)


def _meant_short(value: Any) -> bool:
    """True for what a key beside the full form's keys maps to when it was meant as a
    short parameter (``g: string?`` with a description under it), not a misspelt key
    (``nme: city``)."""
    return _typed(value) or value is None or isinstance(value, (dict, list))


def _yaml(value: Any) -> str:
    """``value`` as YAML writes it: true, null, 3."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _peel(text: str) -> tuple[str, int] | None:
    """``text`` without its ``list[...]`` wrappers, and how many there were; None when
    its brackets are not that shape. A scan, not a regex: bounded by the text's length."""
    depth = 0
    while text.startswith("list") and depth <= MAX_DEPTH:
        rest = text[4:].lstrip()
        if not rest.startswith("[") or not text.endswith("]"):
            break
        text = rest[1:-1].strip()
        depth += 1
    if depth <= MAX_DEPTH and ("[" in text or "]" in text):
        return None
    return text, depth


def _reads_as_type(written: str) -> bool:
    peeled = _peel(written.strip().removesuffix(OPTIONAL_MARK).strip())
    return peeled is not None and peeled[0] in PARAMETER_TYPES


def _short_parameter(
    name: str, written: str, location: Location, problems: Problems | None
) -> dict[str, Any]:
    text = written.strip()
    optional = text.endswith(OPTIONAL_MARK)
    parameter: dict[str, Any] = {"name": name, **_element(text, location, problems, optional=True)}
    if optional:
        parameter["required"] = False
    return parameter


def _element(
    written: str, location: Location, problems: Problems | None, *, optional: bool
) -> dict[str, Any]:
    """The full form of type ``written`` (``string``, ``list[integer]``, with a final
    ``?`` when ``optional`` may be said): a type name is passed on as it is, for the
    schema to check (and say "did you mean"); a ``?``, a bracket or a nesting out of
    bounds is reported here, quoting what was written."""
    text = written.strip()
    if optional:
        text = text.removesuffix(OPTIONAL_MARK).strip()
    peeled = _peel(text)
    if peeled is None or not peeled[0] or OPTIONAL_MARK in peeled[0] or peeled[1] > MAX_DEPTH:
        if problems is None:
            return {"type": text}  # left for the loader to report
        if peeled is not None and peeled[1] > MAX_DEPTH:
            why = f"lists nested more than {MAX_DEPTH} deep; flatten the parameter"
        elif not optional and OPTIONAL_MARK in text:
            why = "a list's items take no '?': an element is there or not; drop the '?'"
        else:
            why = (
                f"write {_SHAPE}, with '{OPTIONAL_MARK}' at the very end for an optional "
                "parameter (list[string]?), or write the parameter in full with name, type "
                "and required: false"
            )
        problems.add(location, f"cannot read the type {clip(written)!r}: {why}")
        return {"type": "string"}  # reported; keeps the rest of the schema from failing
    element: Any = peeled[0]
    for _ in range(peeled[1]):
        # As the importer writes a list: items as a type name when that is all it says.
        element = {"type": "list", "items": element}
    return element if isinstance(element, dict) else {"type": element}
