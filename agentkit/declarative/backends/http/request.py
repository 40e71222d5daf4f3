"""Building an HTTP backend's request from its spec and a call's inputs, safely.

- The scheme, host and port are literal; each path template becomes one
  percent-encoded segment (``| segments`` one per ``/``-separated part), and a
  segment that renders empty, ``.`` or ``..`` fails the call.
- A header value with CR, LF or NUL, or a character outside Latin-1, fails the
  call before anything is sent; the value is never shown.
- Every string of a value rendered by a template that reads ``credentials``
  (in a list or mapping too, keys included) joins the call's redactor: it may
  be a form derived from a secret that the credential's own spellings do not
  match. The template's own text and the call's arguments are left out.

``build_request`` makes the ``Request`` that ``sending`` sends; what a confirmation
(``confirm: true``) shows of it is ``agentkit.declarative.backends.http.preview``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias
from urllib.parse import quote

from agentkit.declarative.backends.http.multipart import MultipartBody
from agentkit.declarative.backends.http.spec import HttpSpec
from agentkit.declarative.backends.http.url import Segments
from agentkit.declarative.backends.http.values import (
    FormBody,
    JsonArray,
    JsonBody,
    JsonNode,
    JsonObject,
    OAuth2Auth,
)
from agentkit.declarative.templates import Template
from agentkit.redaction import MIN_SECRET_LENGTH, redact_also
from agentkit.toolerrors import HttpCallError

__all__ = ["Request", "build_request", "header_value_problem", "made_from_credentials"]

#: URL, query pairs, headers, and the body as ``requests`` keywords (json/data/files).
Request: TypeAlias = tuple[str, list[tuple[str, str]], dict[str, str], dict[str, Any]]


def build_request(
    spec: HttpSpec, inputs: dict[str, Any], credentials: Mapping[str, str], deadline: float
) -> Request:
    """The request ``spec`` makes of ``inputs``: URL, query, headers and body keywords.

    Fails the call (``HttpCallError``) before anything is sent when a value cannot go
    where it would: a path segment rendering empty, ``.`` or ``..``, a header with a
    line break, NUL or a character outside Latin-1, a value of a type a URL, header or
    form field cannot carry.
    """
    context = {"inputs": inputs, "credentials": dict(credentials)}
    url = spec.origin + _path(spec, context, deadline)
    params = _fields(spec.query, "query", context, deadline)
    headers: dict[str, str] = {}
    for name, value in spec.headers:
        rendered = _render(value, context, deadline)
        if rendered is None:
            continue
        text = _text(rendered, f"header '{name}'")
        if text:  # an empty value (a ``${VAR:-}`` left unset, say) is left out, not sent
            headers[name] = text
    body: dict[str, Any] = {}
    if isinstance(spec.body, JsonBody):
        rendered_body = _render_json(spec.body.value, context, deadline)
        # Every field of the body absent: an empty object is sent, never no body.
        body["json"] = (
            {} if rendered_body is None and spec.body.value is not None else rendered_body
        )
    elif isinstance(spec.body, FormBody):
        body["data"] = _fields(spec.body.fields, "form field", context, deadline)
    elif isinstance(spec.body, MultipartBody):
        fields = _fields(spec.body.fields, "multipart field", context, deadline)
        body["files"] = spec.body.parts(fields, lambda value: _render(value, context, deadline))
    elif spec.body is not None:
        text = _text(_render(spec.body.template, context, deadline), "body")
        body["data"] = text.encode("utf-8")
    if spec.body is not None and spec.body.content_type:
        headers["Content-Type"] = spec.body.content_type
    if spec.auth is not None and not isinstance(spec.auth, OAuth2Auth):  # that one: at send
        value = spec.auth.value(credentials)
        if spec.auth.placement == "query":
            params.append((spec.auth.name, value))
        else:
            headers[spec.auth.name] = value
    for name, value in headers.items():
        problem = header_value_problem(value)
        if problem is not None:
            raise HttpCallError(
                "request",
                f"header '{name}' {problem}; refusing to send (the value is not shown)",
            )
    return url, params, headers, body


def header_value_problem(value: str) -> str | None:
    """Why ``value`` cannot go out as an HTTP header's value (RFC 9110 field values:
    no control characters but HTAB, no leading or trailing whitespace, Latin-1), in
    words that follow "header 'NAME' " and never quote the value; ``None`` when it can."""
    if any(char in value for char in "\r\n\0"):
        return "would contain a line break or NUL"
    if not value.isascii() and not _is_latin1(value):
        return "has a character outside Latin-1, which an HTTP header cannot carry"
    bad = next((char for char in value if _is_control(char)), None)
    if bad is not None:
        return (
            f"would contain the control character U+{ord(bad):04X}, which an HTTP header "
            "must not hold"
        )
    if value != value.strip(" \t") or value[:1].isspace():  # requests refuses U+00A0 in front
        return "would start or end with whitespace, which HTTP drops or refuses"
    return None


def _is_control(char: str) -> bool:
    # C0 but HTAB, DEL, and C1 (U+0080-U+009F: Latin-1 bytes some proxies take for
    # line ends or whitespace).
    code = ord(char)
    return (code < 0x20 and char != "\t") or 0x7F <= code <= 0x9F


def _path(spec: HttpSpec, context: Mapping[str, Any], deadline: float) -> str:
    path = ""
    for index, segment in enumerate(spec.path, start=1):
        if segment and isinstance(segment[0], Segments):
            path += _segments(segment[0], index, context, deadline)
            continue
        text = "".join(
            piece
            if isinstance(piece, str)
            else quote(
                _text(_render(piece, context, deadline), f"URL path segment {index}"), safe=""
            )
            for piece in segment
        )
        if text in ("", ".", "..") and any(isinstance(piece, Template) for piece in segment):
            raise HttpCallError(
                "request",
                f"URL path segment {index} rendered to {text!r}; a path argument must be a "
                "non-empty name, not '.' or '..'",
            )
        path += "/" + text
    return path


def _text(value: Any, where: str) -> str:
    """A rendered value as it goes into a URL, header or form field."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise HttpCallError("request", f"{where}: cannot send a {type(value).__name__} here")


def _is_latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def _render(value: Any, context: Mapping[str, Any], deadline: float) -> Any:
    """A request template's value; when the template reads ``credentials``, every
    string in the value joins the call's redactor (``made_from_credentials``).

    Such text is a form derived from a secret (``token=abc; v=2``, a value a
    filter changed, an item of a list or a key or value of a mapping the
    template built) that the credential's own spellings may not match. Every
    value of a request passes here: path segments, query, headers, bodies of
    each kind, multipart fields and files.
    """
    if not isinstance(value, Template):
        return value
    rendered = value.render(context, deadline=deadline)
    if any(root == "credentials" for root, _ in value.references):
        redact_also(*made_from_credentials(rendered, value, context.get("inputs")))
    return rendered


def made_from_credentials(rendered: Any, template: Template, inputs: Any) -> list[str]:
    """Every string in ``rendered`` (nested in lists and mappings, keys too, numbers as
    text), the value of a template that reads ``credentials``: what may be a secret in
    a new spelling. One shorter than ``MIN_SECRET_LENGTH`` is left out, as a redactor
    would not take it.

    Left out too: what the template itself writes (``template.literals``) and the
    strings of the call's own ``inputs``, which the caller gave and so knows; both
    are public, and registering them would withhold every answer holding
    "application/json" or the user name the caller passed.
    """
    public: set[str] | None = None
    found: list[str] = []
    pending = [rendered]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            text = item
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            text = str(item)
        elif isinstance(item, Mapping):
            pending += [*item.keys(), *item.values()]
            continue
        elif isinstance(item, (list, tuple)):
            pending += item
            continue
        else:
            continue
        if len(text) < MIN_SECRET_LENGTH or text in template.literals:
            continue
        if public is None:
            public = _strings(inputs)
        if text not in public:
            found.append(text)
    return found


def _strings(value: Any) -> set[str]:
    """Every string in ``value`` (nested, keys too), numbers as text."""
    found: set[str] = set()
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            found.add(str(item))
        elif isinstance(item, Mapping):
            pending += [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple)):
            pending += item
    return found


def _fields(
    pairs: tuple[tuple[str, Any], ...], what: str, context: Mapping[str, Any], deadline: float
) -> list[tuple[str, str]]:
    """Query parameters or form fields: a name once per value, a list's items each
    their own field (``tag=a&tag=b``), a value of ``null`` left out."""
    fields: list[tuple[str, str]] = []
    for name, value in pairs:
        values = value if isinstance(value, tuple) else (value,)
        for item in values:
            rendered = _render(item, context, deadline)
            items = rendered if isinstance(rendered, (list, tuple)) else (rendered,)
            fields.extend(
                (name, _text(one, f"{what} '{name}'")) for one in items if one is not None
            )
    return fields


def _segments(segment: Segments, index: int, context: Mapping[str, Any], deadline: float) -> str:
    """``/a/b/c`` from a value ``a/b/c``: each part percent-encoded on its own."""
    where = f"URL path segment {index} ({segment.source})"
    value = _text(_render(segment.template, context, deadline), where)
    parts = value.split("/")
    for number, part in enumerate(parts, start=1):
        if part in ("", ".", ".."):
            raise HttpCallError(
                "request",
                f"{where}: part {number} of {len(parts)} is {part!r}; each part of the path "
                "must be a non-empty name, not '.' or '..' (no leading, trailing or double '/')",
            )
    return "".join("/" + quote(part, safe="") for part in parts)


def _render_json(node: JsonNode, context: Mapping[str, Any], deadline: float) -> Any:
    """A JSON body's value: a member that renders ``null`` left out, and an object whose
    members were all left out is itself ``None``, so that its parent leaves it out too
    (an item of a list stays, as ``{}``: positions in a list mean something)."""
    if isinstance(node, Template):
        return _render(node, context, deadline)
    if isinstance(node, JsonObject):
        rendered = ((key, _render_json(value, context, deadline)) for key, value in node.members)
        kept = {key: value for key, value in rendered if value is not None}
        return kept if kept or not node.members else None
    if isinstance(node, JsonArray):
        items = (_render_json(item, context, deadline) for item in node.items)
        return [
            {} if item is None and isinstance(source, JsonObject) else item
            for item, source in zip(items, node.items, strict=True)
        ]
    return node
