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
from dataclasses import dataclass, field
from typing import Any, Final, final
from urllib.parse import urlsplit

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
from agentkit.declarative.shorthand import expand_schema
from agentkit.declarative.yamlsource import clip
from agentkit.ratelimits import Limits
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
