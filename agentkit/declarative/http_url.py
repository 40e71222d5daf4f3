"""The ``url`` of an HTTP backend (or a source's base URL and a tool's ``path``), at load time.

- The scheme, host and port are literal: no template may reach them.
- Each ``{{ }}`` in the path fills one segment; ``{{ x | segments }}``, a whole
  segment, may fill several (``HttpBackend`` encodes each part on its own).
- A literal query string is kept as pairs, a repeated name as a tuple, and
  merged with ``query:`` (``merge_query``); a template in it is refused.
- A ``#fragment`` is refused: it never reaches a server.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, final
from urllib.parse import parse_qsl, urlsplit

from agentkit.declarative.problems import Location, Problems
from agentkit.declarative.template_base import DELIMITER_PATTERN
from agentkit.declarative.templates import Template

__all__ = ["PathSegment", "Segments", "merge_query", "parse_url"]

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
    parts = urlsplit(origin_text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        problems.add(
            location, f"the URL must start with http:// or https:// and a host, got {raw!r}"
        )
        return None, (), ()
    origin = f"{parts.scheme}://{parts.netloc}"
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
