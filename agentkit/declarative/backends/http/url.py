"""The ``url`` of an HTTP backend (or a source's base URL and a tool's ``path``), at load time.

- The scheme, host and port are literal: no template may reach them.
- Each ``{{ }}`` in the path fills one segment; ``{{ x | segments }}``, a whole
  segment, may fill several (``HttpBackend`` encodes each part on its own).
- A literal query string is kept as pairs, a repeated name as a tuple, and
  merged with ``query:`` (``merge_query``); a template in it is refused.
- A ``#fragment`` is refused: it never reaches a server.
- ``proxy:`` is ``direct`` (the default), ``environment`` or a proxy's
  ``http(s)://host:port`` URL without user info (``parse_proxy``).
- The host is a valid host name (ASCII letters, digits, ``-`` and ``_``; labels
  of 1 to 63 characters, 253 in all), a dotted-quad IPv4 address or a
  bracketed IPv6 address, and a port is written ``1`` to ``65535`` without
  leading zeros (``authority_problem``): a URL that would fail at every call,
  or go to another origin than the one written, fails the load instead.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, final
from urllib.parse import parse_qsl

from agentkit.declarative.problems import Location, Problems
from agentkit.declarative.templates import Template
from agentkit.declarative.templates.base import DELIMITER_PATTERN
from agentkit.declarative.yamlsource import clip

__all__ = [
    "DIRECT",
    "ENVIRONMENT",
    "PathSegment",
    "Segments",
    "authority",
    "authority_problem",
    "merge_query",
    "parse_proxy",
    "parse_url",
]

#: ``proxy: direct``: connect to the API itself, whatever the environment says (the default).
DIRECT: Final = "direct"
#: ``proxy: environment``: the proxy HTTP_PROXY / HTTPS_PROXY / ALL_PROXY name, unless
#: NO_PROXY exempts the host, as curl and requests read them (never .netrc).
ENVIRONMENT: Final = "environment"

#: RFC 1035 section 2.3.4: a label is at most 63 octets, a name at most 255 on the wire,
#: which is 253 characters written out (without a trailing dot).
MAX_LABEL: Final = 63
MAX_HOST_NAME: Final = 253

# What a host name's labels may hold: DNS's letters, digits and hyphens, and the
# underscore many internal names (containers, services) use and resolvers accept.
_LABEL: Final = re.compile(r"[A-Za-z0-9_-]+")
_TEMPLATE_SPAN: Final = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_AUTHORITY_END: Final = re.compile(r"[/?#]")
# ``{{ inputs.path | segments }}``: a whole path segment that may span several.
_SEGMENTS: Final = re.compile(r"\{\{(.*?)\|\s*segments\s*\}\}", re.DOTALL)

# Compiles a request template (inputs, credentials), reporting its problems; None if broken.
Compile = Callable[[str, Location], "Template | None"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Segments:
    """A URL path segment written ``{{ expression | segments }}``: its value may
    span several segments (``docs/README.md``), each percent-encoded on its own."""

    template: Template
    source: str  # as written, for errors


PathSegment = tuple[str | Template, ...] | tuple[Segments]


def parse_url(
    raw: Any, location: Location, compile_: Compile, problems: Problems
) -> tuple[str | None, tuple[PathSegment, ...], tuple[tuple[str, Any], ...]]:
    """The literal origin, the path's segments and the literal query string's pairs;
    templates (in path segments only) compile with ``compile_``."""
    if not isinstance(raw, str) or not raw:
        problems.add(
            location, "missing 'url': the endpoint, such as https://api.example.com/v1/items"
        )
        return None, (), ()
    scheme_end = raw.find("://")
    authority_end = _AUTHORITY_END.search(raw, scheme_end + 3) if scheme_end >= 0 else None
    origin_text = raw if authority_end is None else raw[: authority_end.start()]
    if DELIMITER_PATTERN.search(origin_text):
        problems.add(
            location,
            "templates may not reach the scheme, host or port; keep the origin literal "
            "and template only path segments",
        )
        return None, (), ()
    scheme = origin_text[:scheme_end].lower() if scheme_end >= 0 else ""
    netloc = authority(origin_text)
    if scheme not in ("http", "https") or not netloc:
        problems.add(
            location, f"the URL must start with http:// or https:// and a host, got {raw!r}"
        )
        return None, (), ()
    problem = authority_problem(netloc)
    if problem is not None:
        problems.add(location, problem)
        return None, (), ()
    origin = f"{scheme}://{netloc}"
    rest, _, query_string = raw[len(origin_text) :].partition("?")
    if "#" in rest or "#" in query_string:
        problems.add(location, "a URL sent to a server has no '#fragment'; remove it")
        return None, (), ()
    if DELIMITER_PATTERN.search(query_string):
        problems.add(
            location,
            "templates may not reach the URL's query string; put templated parameters "
            "under 'query:', such as query: {q: \"{{ inputs.q }}\"}",
        )
        return None, (), ()
    if "{%" in rest or "{#" in rest:
        problems.add(location, "the URL path may hold only '{{ ... }}' expressions")
        return None, (), ()
    segments = tuple(
        _parse_segment(segment, location, compile_, problems)
        for segment in rest.split("/")[1:]
        if rest
    )
    if _TEMPLATE_SPAN.sub("", rest).count("{{"):
        problems.add(location, "an unclosed '{{' in the URL path")
    return origin, segments, _parse_query_string(query_string)


def parse_proxy(raw: Any, location: Location, problems: Problems) -> str:
    """``proxy:``: ``direct``, ``environment`` or a proxy's ``http(s)://host:port`` URL."""
    if raw in (DIRECT, ENVIRONMENT):
        return str(raw)
    # A password never shows, even in a value that is not a URL at all.
    got = "a value with user info (not shown)" if "@" in str(raw) else repr(clip(raw))
    scheme, separator, rest = raw.partition("://") if isinstance(raw, str) else ("", "", "")
    netloc = authority(raw) if separator else ""
    problem: str | None
    if not separator:
        problem = (
            f"expected '{DIRECT}' (the default), '{ENVIRONMENT}' (HTTPS_PROXY, HTTP_PROXY and "
            "NO_PROXY as curl reads them) or a proxy URL such as "
            f"http://proxy.example.com:3128, got {got}"
        )
    elif scheme.lower() not in ("http", "https"):
        problem = (
            "a proxy URL starts with http:// or https:// (the scheme of the proxy itself; "
            f"SOCKS proxies are not supported), got {got}"
        )
    elif "@" in netloc:
        problem = (
            "a proxy URL in a definition must not hold user info (user:password@): a "
            "password does not belong in a definition file; set HTTPS_PROXY with it and "
            f"write 'proxy: {ENVIRONMENT}'"
        )
    else:
        problem = authority_problem(netloc, "the proxy URL")
        if problem is None and rest[len(netloc) :] not in ("", "/"):
            problem = "the proxy URL has a path, query or fragment; give only http(s)://host:port"
    if problem is not None:
        problems.add(location, problem)
        return DIRECT
    return f"{scheme.lower()}://{netloc}"


def authority(url: str) -> str:
    """The host and port of ``url`` as written: from ``://`` to the first ``/``, ``?`` or
    ``#`` (what ``urlsplit`` calls the netloc, without its checks, which raise)."""
    rest = url.partition("://")[2]
    end = _AUTHORITY_END.search(rest)
    return rest if end is None else rest[: end.start()]


def authority_problem(netloc: str, what: str = "the URL") -> str | None:
    """What is wrong with a URL's host and port (``netloc``), in words that name the
    part (of ``what``: "the URL's host ..."); None when a request can go there as written.

    Checked: no user info; the host a valid host name, a dotted-quad IPv4 address (a
    name whose last label is digits is taken for one) or a bracketed IPv6 address
    without a zone; the port, when given, ``1``-``65535`` written without leading
    zeros (``00080`` is sent as ``80``, ``0`` not at all: another origin than written).
    """
    if "@" in netloc:
        return (
            f"{what} holds user info (user:password@): give credentials under 'auth:', "
            "never in a URL"
        )
    port: str | None
    if netloc.startswith("["):
        host, bracket, after = netloc[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            return (
                f"{what}'s host {clip(netloc, 80)!r} has an unclosed '[' or text after ']'; "
                "write an IPv6 host as [address] or [address]:port"
            )
        problem = _ipv6_problem(host, what)
        port = after[1:] if after else None
    else:
        host, colon, given_port = netloc.partition(":")
        port = given_port if colon else None
        problem = host_problem(host, what)
    if problem is not None:
        return problem
    return None if port is None else _port_problem(port, what)


def host_problem(host: str, what: str = "the URL") -> str | None:
    """What is wrong with ``host`` as a URL's host name or IPv4 address; None when fine."""
    if not host:
        return f"{what} names no host"
    said = f"{what}'s host {clip(host, 80)!r}"
    if not host.isascii():
        return (
            f"{said} is not ASCII; write it as the ASCII name it resolves as ({_ascii_name(host)})"
        )
    name = host[:-1] if host.endswith(".") else host  # a trailing dot: fully qualified
    labels = name.split(".")
    if labels[-1].isdigit():
        try:
            ipaddress.IPv4Address(name)
        except ValueError:
            return (
                f"{said} is not a valid IPv4 address: write four numbers from 0 to 255 "
                "without leading zeros, such as 192.0.2.10"
            )
        return None
    for number, label in enumerate(labels, start=1):
        where = f"label {number} of {len(labels)}"
        if not label:
            return (
                f"{said} is not a valid host name: {where} is empty (a leading dot or two "
                "dots in a row); remove the extra dot"
            )
        if len(label) > MAX_LABEL:
            return (
                f"{said} is not a valid host name: {where} is {len(label)} characters "
                f"long, over the {MAX_LABEL} a label may have; check the host"
            )
        if not _LABEL.fullmatch(label):
            bad = next(char for char in label if not _LABEL.fullmatch(char))
            return (
                f"{said} is not a valid host name: {bad!r} in {where}; a host name has "
                "letters, digits, '-' and '_' between its dots"
            )
    if len(name) > MAX_HOST_NAME:
        return (
            f"{said} is not a valid host name: {len(name)} characters long, over the "
            f"{MAX_HOST_NAME} a host name may have; check the host"
        )
    return None


def _ipv6_problem(host: str, what: str) -> str | None:
    said = f"{what}'s host {clip('[' + host + ']', 80)!r}"
    if "%" in host:
        return (
            f"{said} has a zone (%25...), which cannot be sent; use an address without one "
            "or a host name"
        )
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        return f"{said} is not a valid IPv6 address; check the address between the brackets"
    return None


def _port_problem(port: str, what: str) -> str | None:
    if not port:
        return f"{what} has an empty port after ':'; give the port or remove the ':'"
    if not (port.isascii() and port.isdigit()):
        return f"{what}'s port {clip(port, 20)!r} is not a number; give one from 1 to 65535"
    digits = port.lstrip("0") or "0"
    number = int(digits) if len(digits) <= 5 else 65536  # int() refuses thousands of digits
    if not 1 <= number <= 65535:
        return f"{what}'s port {clip(port, 20)} is out of range; give one from 1 to 65535"
    if port != str(number):
        return f"{what}'s port {clip(port, 20)!r} has leading zeros; write it {number}"
    return None


def _ascii_name(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return "its IDNA 'xn--' form"


def _parse_segment(
    segment: str, location: Location, compile_: Compile, problems: Problems
) -> PathSegment:
    if "{" not in segment:  # literal text (most segments)
        return (segment,) if segment else ()
    spans = list(_TEMPLATE_SPAN.finditer(segment))
    # Each span on its own: one regex over the whole segment would be quadratic.
    spreads = [spread for span in spans if (spread := _SEGMENTS.fullmatch(span.group(0)))]
    if spreads and spans[0].group(0) == segment:
        expression = "{{" + spreads[0].group(1) + "}}"
        template = compile_(expression, location)
        return (Segments(template=template, source=segment),) if template is not None else ()
    if spreads:
        problems.add(
            location,
            "'| segments' must fill a whole path segment, such as "
            "/repos/{{ inputs.path | segments }}",
        )
        return ()
    pieces: list[str | Template] = []
    position = 0
    for match in spans:
        if match.start() > position:
            pieces.append(segment[position : match.start()])
        template = compile_(match.group(0), location)
        if template is not None:
            pieces.append(template)
        position = match.end()
    if position < len(segment):
        pieces.append(segment[position:])
    return tuple(pieces)


def _parse_query_string(text: str) -> tuple[tuple[str, Any], ...]:
    """``a=1&b=2&b=3`` as pairs; a repeated name's values as one tuple, in order."""
    if not text:
        return ()
    values: dict[str, list[str]] = {}
    for name, value in parse_qsl(text, keep_blank_values=True):
        values.setdefault(name, []).append(value)
    return tuple(
        (name, found[0] if len(found) == 1 else tuple(found)) for name, found in values.items()
    )


def merge_query(
    from_url: tuple[tuple[str, Any], ...],
    given: tuple[tuple[str, Any], ...],
    at: Any,
    problems: Problems,
) -> tuple[tuple[str, Any], ...]:
    """The URL's literal query string first, then ``query:``; a name may be in one only."""
    in_url = {name for name, _ in from_url}
    for name, _ in given:
        if name in in_url:
            problems.add(
                at("query", name),
                f"'{name}' is also in the URL's query string; give it in one place",
            )
    return from_url + given
