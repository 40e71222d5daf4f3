"""Sources: a named HTTP origin and the settings its tools share.

A document whose top-level key is ``source`` defines one::

    source: github
    base_url: ${GITHUB_API_URL:-https://api.github.com}
    credentials: [github-token]
    auth: {bearer: github-token}
    headers: {Accept: application/vnd.github+json}

and a tool uses it with ``backend: {http: {source: github, path: /search/issues}}``.
Sources live in the same folders as tools and load with them, all or nothing.

- **Checked once, where written.** A source's shared keys are checked as an
  HTTP backend of its own (``parse_http_spec``), so a bad timeout is reported
  at the source's line, once, however many tools use it.
- **Merged by key.** A tool's ``headers`` and ``query`` merge over the source's
  by name (header names case-insensitively); every other key a tool gives
  replaces the source's; ``auth: none`` switches the source's auth off (and the
  credentials only it names). The tool's ``path`` is appended to ``base_url``; the
  origin is the source's, literal, and no template of the path can reach it.
- **Credentials.** A tool of a source needs the source's credentials as well
  as its own.
- **Located twice.** A problem about a tool's use of a source names the tool's
  line and the source's ``file:line``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, final
from urllib.parse import urlsplit

from agentkit.declarative.backends.base import SourceTable
from agentkit.declarative.backends.http.oauth2 import TokenCache
from agentkit.declarative.backends.http.spec import parse_http_spec
from agentkit.declarative.backends.http.url import authority, authority_problem
from agentkit.declarative.environment import LiteralText, Substituter, Substitution
from agentkit.declarative.limit_specs import parse_limits_at
from agentkit.declarative.problems import (
    Location,
    Problems,
    check_keys,
    check_named,
    parse_tags,
)
from agentkit.declarative.shorthand import expand_schema, stand_in
from agentkit.declarative.yamlsource import clip
from agentkit.ratelimits import Limits
from agentkit.schema.values import written
from agentkit.toolerrors import SchemaDefinitionError
from agentkit.toolschema import ToolSchema

__all__ = [
    "SHARED_KEYS",
    "SOURCE_KEYS",
    "Source",
    "cause_key",
    "is_source_document",
    "parse_max_output",
    "parse_source",
    "substitute_pairs",
    "use_source",
]

#: The keys a source shares with its tools; a tool's own value merges over each.
SHARED_KEYS: Final = (
    "headers",
    "query",
    "auth",
    "timeout",
    "retry",
    "max_response_bytes",
    "follow_redirects",
    "verify",
    "ca_bundle",
    "proxy",
)
SOURCE_KEYS: Final = (
    "source",
    "description",
    "base_url",
    "tags",
    "credentials",
    "max_output",
    "parameters",
    "limits",
    *SHARED_KEYS,
)
# Characters a URL cannot hold literally, and '{'/'}' so that no template can start in one.
_NOT_IN_URL: Final = frozenset(' "<>\\^`{|}')


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """A checked source: its origin, what it shares, and where it was defined."""

    name: str
    description: str
    base_url: str  # substituted, without a trailing '/'
    credentials: tuple[str, ...]
    shared: Mapping[str, Any]  # the shared keys it gives, substituted, ca_bundle made absolute
    path: str
    line: int
    raw: Mapping[str, Any]
    substitutions: tuple[Substitution, ...] = ()
    #: The answer budget of its tools that declare none (``max_output:``).
    max_output: Mapping[str, int] | None = None
    #: Its shared parameters (``parameters:``) by name, as written: tools take them by name.
    parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: OAuth2 tokens, shared by every tool of this source.
    token_cache: TokenCache = field(default_factory=TokenCache, compare=False)
    #: The limits on all the source's tools together (``limits:``); None: none.
    limits: Limits | None = None
    #: Tags every tool of the source carries, under the tool's own (``tags:``).
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def describe(self) -> dict[str, Any]:
        """What ``agentkit show`` prints of it."""
        return {
            "name": self.name,
            "defined_at": self.location,
            "base_url": self.base_url,
            "credentials": list(self.credentials),
            "definition": json.loads(json.dumps(self.raw, default=str)),
        }


def cause_key(name: str) -> str:
    """What a tool's problems that follow from source ``name``'s own are counted under."""
    return f"source '{clip(name)}'"


def is_source_document(raw: Any) -> bool:
    return isinstance(raw, dict) and "source" in raw


def parse_source(
    raw: dict[str, Any], problems: Problems, substituter: Substituter
) -> Source | None:
    """Check one source document; problems go to ``problems``, None comes back if any."""
    start = len(problems)
    check_keys(raw, SOURCE_KEYS, (), problems, "a source")
    name, description = check_named(raw, "source", problems)
    tags = parse_tags(raw, problems)
    credentials = raw.get("credentials", [])
    if not isinstance(credentials, list) or not all(
        isinstance(item, str) and item for item in credentials
    ):
        problems.add(("credentials",), "expected a list of credential names")
        credentials = []
    base_url = _base_url(raw, problems, substituter)
    max_output = parse_max_output(raw.get("max_output"), problems)
    limits = parse_limits_at(raw, f"source '{name}'", f"source:{name}", problems, source=True)

    shared: dict[str, Any] = {key: raw[key] for key in SHARED_KEYS if key in raw}
    for key in ("headers", "query"):
        if key in shared:
            shared[key] = substitute_pairs(shared[key], (key,), substituter)
    substitute_auth(shared, ("auth",), substituter)
    # The shared keys are checked as an HTTP backend of their own, at the source's lines.
    parse_http_spec(
        {**shared, "url": base_url or "https://source.invalid"},
        (),
        ToolSchema(),
        ToolSchema(),
        tuple(credentials),
        problems,
    )
    if isinstance(shared.get("ca_bundle"), str):
        shared["ca_bundle"] = os.path.join(os.path.dirname(problems.path), shared["ca_bundle"])
    parameters = _shared_parameters(raw.get("parameters", []), problems)
    if len(problems) > start or base_url is None:
        return None
    assert isinstance(name, str)
    return Source(
        name=name,
        description=description,
        base_url=base_url,
        credentials=tuple(dict.fromkeys(credentials)),
        shared=shared,
        path=problems.path,
        line=problems.start[0],
        raw=raw,
        substitutions=tuple(substituter.used),
        max_output=max_output,
        parameters=parameters,
        limits=limits,
        tags=tags,
    )


def parse_max_output(raw: Any, problems: Problems) -> dict[str, int] | None:
    """A tool's or a source's ``max_output: {bytes: N}`` or ``{tokens: N}``, as written;
    None when left out or malformed (a problem at the key, then)."""
    if raw is None:
        return None
    from agentkit.paging import max_output_bytes  # only where a budget is declared

    _, wrong = max_output_bytes(raw)
    if wrong is not None:
        problems.add(("max_output",), wrong)
        return None
    return dict(raw)


def _shared_parameters(raw: Any, problems: Problems) -> dict[str, Mapping[str, Any]]:
    """A source's ``parameters:``, checked as a schema of their own, at the source's lines."""
    if not isinstance(raw, list):
        problems.add(
            ("parameters",),
            "expected a list of parameters (each with name and type) that the source's tools "
            "take by name",
        )
        return {}
    start = len(problems)
    schema = expand_schema(raw, "parameters", problems)
    try:
        ToolSchema.from_dict(schema)
    except SchemaDefinitionError as exc:
        for problem in exc.problems:
            problems.add(problem.location, problem.message)
        return {}
    if len(problems) > start:
        return {}
    return {param["name"]: param for param in schema["parameters"]}


def _base_url(raw: dict[str, Any], problems: Problems, substituter: Substituter) -> str | None:
    given = raw.get("base_url")
    if not isinstance(given, str) or not given:
        problems.add(
            ("base_url",),
            "missing 'base_url': the origin and base path, such as https://api.example.com/v1",
        )
        return None
    text = substituter.text(given, ("base_url",))
    if text is None:
        return None
    if not isinstance(text, LiteralText) and any(d in text for d in ("{{", "{%", "{#")):
        problems.add(
            ("base_url",),
            "templates may not reach a source's base_url; use ${VAR} for a value set at load "
            "time, and put templates in each tool's 'path'",
        )
        return None
    shown = f" (from {given!r})" if text != given else ""
    if "://" in text:
        # Before urlsplit, which raises on some of what this finds (a port out of range).
        problem = authority_problem(authority(text), "base_url")
        if problem is not None:
            problems.add(("base_url",), f"{problem}{shown}")
            return None
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 -- parsing the port is the check
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or "@" in parts.netloc
        or any(char in _NOT_IN_URL or ord(char) < 0x21 or ord(char) == 0x7F for char in text)
    ):
        problems.add(
            ("base_url",),
            f"base_url {clip(text)!r}{shown} is not an http:// or https:// URL with a host "
            "(and no user info, spaces or braces)",
        )
        return None
    if parts.query or parts.fragment or "?" in text or "#" in text:
        problems.add(
            ("base_url",),
            f"base_url {clip(text)!r}{shown} has a query or fragment; put query parameters "
            "under 'query:'",
        )
        return None
    return text.rstrip("/")


def substitute_pairs(raw: Any, location: Location, substituter: Substituter) -> Any:
    """A ``headers``/``query`` mapping with ``${VAR}`` substituted in its literal values."""
    if not isinstance(raw, dict):
        return raw  # the HTTP parser says what is wrong with it
    substituted = dict(raw)
    for name, value in raw.items():
        if not isinstance(value, str) or "${" not in value:
            continue
        text = substituter.text(value, (*location, name))
        if text is not None and any(char in text for char in "\r\n\0"):
            # Caught here, where it can be located, rather than at every call.
            substituter.problems.add(
                (*location, name),
                "the value substituted here holds a line break or NUL, which cannot be sent "
                "(the value is not shown); check the variable",
            )
            text = None
        substituted[name] = text
    return substituted


def substitute_auth(mapping: dict[str, Any], location: Location, substituter: Substituter) -> None:
    """Substitute ``${VAR}`` in the OAuth2 ``token_url`` and ``client_id`` and the
    basic-auth ``username`` of ``mapping["auth"]`` (or in their ``value:``), in place.

    The token endpoint is configuration like a base URL (it differs between staging and
    production), and so is a username or client id that is not secret; they take
    ``${VAR}`` the same way. Credentials stay named credentials. When a substitution
    has a problem, ``auth`` is dropped: the problem is reported and fails the load, and
    the auth parser would only report it a second time.
    """
    auth = mapping.get("auth")
    if not isinstance(auth, dict) or len(auth) != 1:
        return  # the HTTP parser says what is wrong with it
    ((kind, value),) = auth.items()
    names = _SUBSTITUTED_AUTH.get(kind, ()) if isinstance(value, dict) else ()
    for name in names:
        keys = (name, "value") if isinstance(value.get(name), dict) else (name,)
        raw: Any = value
        for key in keys:
            raw = raw.get(key) if isinstance(raw, dict) else None
        if not isinstance(raw, str) or "${" not in raw:
            continue
        text = substituter.text(raw, (*location, kind, *keys))
        if text is None:
            del mapping["auth"]
            return
        value = _replaced(value, keys, text)
        mapping["auth"] = {kind: value}


#: The auth fields that take ``${VAR}``: configuration, not credentials.
_SUBSTITUTED_AUTH: Final = {"oauth2": ("token_url", "client_id"), "basic": ("username",)}


def _replaced(mapping: dict[str, Any], keys: tuple[str, ...], text: str) -> dict[str, Any]:
    """A copy of ``mapping`` with ``text`` at ``keys`` (the mappings on the way copied too)."""
    first, *rest = keys
    return {**mapping, first: _replaced(mapping[first], tuple(rest), text) if rest else text}


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
