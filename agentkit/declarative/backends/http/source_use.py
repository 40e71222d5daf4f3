"""A tool's use of its source: the shared keys merged into its ``backend.http``, and
the shared parameters it takes by name written out in full.

What a source is and how one is read is ``sources``; this is the other side, run
for each tool that names one. A problem here names the tool's line and, where the
source is to blame, the source's ``file:line``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Final

from agentkit.declarative.backends.base import SourceTable
from agentkit.declarative.backends.http.sources import Source, cause_key
from agentkit.declarative.problems import Location, Problems, check_keys
from agentkit.declarative.shorthand import stand_in
from agentkit.declarative.yamlsource import clip
from agentkit.schema.values import written

__all__ = ["USE_KEYS", "resolve_shared_parameters", "use_source"]


def use_source(
    raw: dict[str, Any],
    location: Location,
    table: SourceTable,
    problems: Problems,
) -> tuple[dict[str, Any], Source] | None:
    """A tool's ``backend.http`` with its source's shared keys merged in, and the source.

    ``raw`` names ``source``; the result names ``path`` as the whole URL (the
    source's ``base_url`` and the tool's path) and no longer names ``source``.
    None (and problems) when the source cannot be used.
    """

    def at(*keys: str) -> Location:
        return (*location, *keys)

    name = raw["source"]
    if not isinstance(name, str):
        problems.add(at("source"), "expected the name of a source")
        return None
    source = table.sources.get(name)
    if source is None:
        if name in table.broken:
            problems.add(
                at("source"),
                f"source '{clip(name)}' ({table.broken[name]}) has problems, listed with it",
                follows=cause_key(name),
            )
        else:
            names = table.names()
            defined = ", ".join(names) if names else "none"
            problems.add(
                at("source"),
                f"unknown source '{clip(name)}'{problems.did_you_mean(name, names)}; "
                f"sources defined: {defined} (a source is a document with a top-level "
                "'source:' key in the same folders)",
                # A file that could not be read may have defined it.
                follows=cause_key(name),
            )
        return None
    where = f"source '{name}' ({source.location})"
    if not isinstance(source, Source):
        problems.add(at("source"), f"{where} is not an HTTP source; an http backend needs one")
        return None
    if "url" in raw:
        problems.add(
            at("url"),
            f"give 'url' or 'source' with 'path', not both; {where} has the base URL "
            f"{source.base_url}",
        )
        return None
    path = raw.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        problems.add(
            at("path") if "path" in raw else location,
            f"'path' must be a string starting with '/', such as /items/{{{{ inputs.id }}}}; "
            f"it is appended to the base URL {source.base_url} of {where}",
        )
        return None
    merged = {key: value for key, value in raw.items() if key != "source"}
    merged["path"] = source.base_url + path
    for key, value in source.shared.items():
        if key not in raw:
            merged[key] = value
        elif key == "auth" and raw[key] == "none":
            del merged[key]
            source = _without_auth(source)
        elif key in ("headers", "query") and isinstance(value, dict):
            own = raw[key]
            if isinstance(own, dict):
                merged[key] = _merge_pairs(value, own, fold=key == "headers")
    return merged, source


def _without_auth(source: Source) -> Source:
    """``source`` as a tool that switches its auth off uses it: without the credentials
    only the auth names, so the tool does not need a secret it never sends."""
    auth_names = set(_strings(source.shared.get("auth")))
    others = json.dumps([source.shared.get("headers"), source.shared.get("query")], default=str)
    kept = tuple(name for name in source.credentials if name not in auth_names or name in others)
    return replace(source, credentials=kept)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    return []


def _merge_pairs(shared: dict[str, Any], own: dict[str, Any], *, fold: bool) -> dict[str, Any]:
    """``own`` over ``shared`` by name; header names compare case-insensitively (``fold``)."""
    if not fold:
        return {**shared, **own}
    replaced = {str(name).lower() for name in own}
    kept = {name: value for name, value in shared.items() if str(name).lower() not in replaced}
    return {**kept, **own}


#: What a tool may change of a shared parameter it takes (``{use: owner, required: false}``).
USE_KEYS: Final = ("use", "required", "description")


def resolve_shared_parameters(
    raw: dict[str, Any], table: SourceTable, problems: Problems
) -> tuple[Any, bool]:
    """A tool's ``input_schema`` with each shared parameter it takes written out in full.

    An entry of ``input_schema.parameters`` that is a name (``owner``) or
    ``{use: owner}`` (optionally with ``required`` or ``description``) takes the
    parameter of that name from the source of the tool's HTTP backend. Returns
    the schema (``raw``'s own when it takes none) and whether it took any;
    problems go to ``problems``, and an entry that cannot be resolved keeps its place
    with a stand-in, so that the problems of the entries after it are at their lines.
    """
    schema = raw.get("input_schema")
    given = schema.get("parameters") if isinstance(schema, dict) else None
    if not isinstance(given, list) or not any(_takes_shared(item) for item in given):
        return schema, False
    assert isinstance(schema, dict)
    backend = raw.get("backend")
    http = backend.get("http") if isinstance(backend, dict) else None
    name = http.get("source") if isinstance(http, dict) else None
    found = table.sources.get(name) if isinstance(name, str) else None
    # Another kind's source has no shared parameters: the backend reports it, once.
    source = found if isinstance(found, Source) else None
    resolved: list[Any] = []
    for index, item in enumerate(given):
        if not _takes_shared(item):
            resolved.append(item)
            continue
        resolved.append(stand_in(index))  # until it is resolved
        at: Location = ("input_schema", "parameters", index)
        wanted = item if isinstance(item, str) else item["use"]
        if not isinstance(wanted, str):
            problems.add(
                (*at, "use"),
                f"expected the name of a shared parameter of the tool's source, such as "
                f"'owner', got {written(wanted)}",
            )
            continue
        if isinstance(item, dict) and not check_keys(
            item, USE_KEYS, at, problems, "a shared parameter taken with 'use'"
        ):
            continue
        if source is None:
            if isinstance(name, str):
                continue  # the backend reports the unknown or broken source, once
            problems.add(
                at,
                f"'{clip(wanted)}' names a shared parameter, but the tool has no source to "
                "take it from: give backend: {http: {source: NAME}}, or write the parameter "
                "out as a mapping with name and type",
            )
            continue
        shared = source.parameters.get(wanted)
        if shared is None:
            names = sorted(source.parameters)
            declared = ", ".join(names) if names else "none"
            problems.add(
                at,
                f"unknown shared parameter '{clip(wanted)}'"
                f"{problems.did_you_mean(wanted, names)}; source '{source.name}' "
                f"({source.location}) declares: {declared}",
            )
            continue
        overrides = {
            key: item[key] for key in USE_KEYS[1:] if isinstance(item, dict) and key in item
        }
        resolved[-1] = {**shared, **overrides}
    return {**schema, "parameters": resolved}, True


def _takes_shared(item: Any) -> bool:
    """True for a parameter entry that names a shared parameter: ``owner`` or ``{use: owner}``."""
    return isinstance(item, str) or (isinstance(item, dict) and "use" in item)
