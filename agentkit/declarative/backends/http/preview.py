"""What a confirmation (``confirm: true``) shows of an HTTP tool's request, before it is sent.

``preview`` spells out the request ``build_request`` made (``agentkit.declarative.
backends.http.request``): its method, URL, headers and body as sent, each long value
shortened, every secret masked, and, whenever anything made from the call's
arguments is not shown whole, the arguments themselves; for a paginated tool, the
further pages it may fetch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from agentkit.context import MAX_LINES, arguments_shown, blank, shortened, spelled_alike
from agentkit.declarative.backends.http.multipart import MultipartBody
from agentkit.declarative.backends.http.spec import HttpSpec
from agentkit.declarative.backends.http.url import Segments
from agentkit.declarative.backends.http.values import (
    FormBody,
    JsonArray,
    JsonBody,
    JsonObject,
    OAuth2Auth,
    TextBody,
)
from agentkit.declarative.templates import Template

if TYPE_CHECKING:
    from agentkit.declarative.backends.http.request import Request

__all__ = ["FETCHED_ONCE_ALLOWED", "preview"]

#: What the auth header of an OAuth2 tool says of its token in a confirmation.
FETCHED_ONCE_ALLOWED: Final = "an OAuth2 token, fetched once you allow it"


def preview(
    spec: HttpSpec,
    request: Request,
    inputs: Mapping[str, Any] | None = None,
    *,
    token: str = FETCHED_ONCE_ALLOWED,
) -> str:
    """What a confirmation shows of ``request``: its method, URL, headers and body, as
    sent, and, for a paginated tool, the further pages it may fetch.

    A credential-bearing header (the auth header, one whose template uses
    ``credentials``) shows ``***`` for its secret part; the call's redactor, active
    while ``confirm`` asks, masks every other secret. An OAuth2 tool's auth header,
    not made yet, says ``token`` of its token. Every header and every field of the
    body is shown, each long value shortened (``agentkit.context.shortened``): a JSON
    body's strings (its lists and nested mappings bounded), a form's fields, any other
    text body's lines (a run of more than two blank ones said in one line; past
    ``MAX_LINES`` its first and last ones). A line is blank when it shows nothing once
    spelled out (``agentkit.context.blank``): empty or U+0020 spaces only; a line of
    characters drawn as nothing is shown, each spelled out by ``agentkit.context.
    visible``, which ``agentkit.context.confirm`` (and ``agentkit call --dry-run``)
    applies to all of it. Whenever anything made from ``inputs`` is not shown whole
    (a value cut, lines or entries counted, blank lines said in one, a masked header
    that also holds an argument, a binary body, a header or text holding a backslash
    sequence that reads as a spelled-out character), every one of ``inputs``, the
    arguments the request was made of, is listed after it, as JSON: a long argument
    cannot carry another out of sight on its line, in its header or in its string."""
    import requests

    url, params, headers, body = request
    try:
        prepared = requests.Request(
            spec.method, url, params=params, headers=headers, **body
        ).prepare()
    except (requests.RequestException, ValueError):  # sending it will say what is wrong
        said = "It cannot be built as it is, so sending it will fail; it was to be made"
        return (
            f"send this request:\n{spec.method} {url}{_made_of(inputs, said)}{_pages_shown(spec)}"
        )
    lines = [f"{prepared.method} {prepared.url}"]
    secret = _secret_headers(spec)
    # A masked header made from an argument too hides that argument; so does any value
    # made from a credential and an argument, which the call's redactor masks whole.
    cut = _credential_with_an_input(spec) or any(
        _masks_an_input(spec, name, secret) for name in prepared.headers
    )
    for name, value in prepared.headers.items():
        shown_value = _header_shown(value, secret=name.lower() in secret)
        cut = cut or (name.lower() not in secret and (shown_value != value or spelled_alike(value)))
        lines.append(f"{name}: {shown_value}")
    if isinstance(spec.auth, OAuth2Auth):
        lines.append(f"Authorization: Bearer *** ({token})")
    shown = "send this request:\n" + "\n".join(lines)
    payload = prepared.body
    if payload:
        if isinstance(payload, bytes):
            try:
                payload = payload.decode("utf-8")
            except UnicodeDecodeError:
                kind = prepared.headers.get("Content-Type", "a binary body")
                shown += f"\n\n({len(payload)} bytes of {kind}, not shown)"
                payload, cut = None, True
        if payload is not None:
            text, body_cut = _body_shown(body, str(payload))
            shown += f"\n\n{text}"
            cut = cut or body_cut
    if cut:
        shown += _made_of(inputs, "Not all of it is shown above; the request was made")
    return shown + _pages_shown(spec)


def _made_of(inputs: Mapping[str, Any] | None, said: str) -> str:
    """``said`` and every one of ``inputs`` (as JSON, each long value shortened), for a
    request not shown whole; nothing when there are none."""
    if not inputs:
        return ""
    made = arguments_shown(inputs).partition("\n")[2]
    return f"\n\n({said} from these arguments:\n{made})"


def _masks_an_input(spec: HttpSpec, name: str, secret: set[str]) -> bool:
    """Whether header ``name`` is shown masked although an argument is part of it."""
    if name.lower() not in secret:
        return False
    return any(
        isinstance(value, Template) and any(root == "inputs" for root, _ in value.references)
        for header, value in spec.headers
        if header.lower() == name.lower()
    )


def _credential_with_an_input(spec: HttpSpec) -> bool:
    """Whether a template of the request reads both ``credentials`` and ``inputs``: what
    it renders is a form of a secret (``made_from_credentials``), so the question shows
    ``***`` for the arguments in it too."""
    return any(
        {"credentials", "inputs"} <= {root for root, _ in template.references}
        for template in _request_templates(spec)
    )


def _request_templates(spec: HttpSpec) -> Iterator[Template]:
    """Every template a request of ``spec`` renders: path, query, headers and body."""
    for segment in spec.path:
        for piece in segment:
            if isinstance(piece, Segments):
                yield piece.template
            elif isinstance(piece, Template):
                yield piece
    body = spec.body
    pending: list[Any] = [value for _, value in (*spec.query, *spec.headers)]
    if isinstance(body, (FormBody, MultipartBody)):
        pending += [value for _, value in body.fields]
    if isinstance(body, MultipartBody):
        pending += [
            value
            for part in body.files
            for value in (part.content, part.filename, part.content_type)
        ]
    elif isinstance(body, TextBody):
        pending.append(body.template)
    elif isinstance(body, JsonBody):
        pending.append(body.value)
    while pending:
        value = pending.pop()
        if isinstance(value, Template):
            yield value
        elif isinstance(value, tuple):  # a name sent once per item
            pending += value
        elif isinstance(value, JsonObject):
            pending += [member for _, member in value.members]
        elif isinstance(value, JsonArray):
            pending += value.items


def _secret_headers(spec: HttpSpec) -> set[str]:
    """The headers (lower case) whose value is, or is made from, a credential."""
    names = {
        name.lower()
        for name, value in spec.headers
        if isinstance(value, Template)
        and any(root == "credentials" for root, _ in value.references)
    }
    if spec.auth is not None and spec.auth.placement == "header":
        names.add(spec.auth.name.lower())
    return names


def _header_shown(value: str, *, secret: bool) -> str:
    """A header's value as shown: a secret one as ``***``, after its scheme when that is
    ``Bearer`` or ``Basic`` (only those: any other first word may be the secret itself),
    whatever the redactor would have found in it; any other shortened."""
    if not secret:
        return str(shortened(value))
    scheme = value.partition(" ")[0]
    return f"{scheme} ***" if scheme in ("Bearer", "Basic") and " " in value else "***"


def _pages_shown(spec: HttpSpec) -> str:
    """What a paginated tool may send after the request shown: it is allowed once, for
    every page, so the question says how many more and what changes in them."""
    pagination = spec.paginate
    if pagination is None or pagination.max_pages <= 1:
        return ""
    more = pagination.max_pages - 1
    noun = "request" if more == 1 else "requests"
    said = f"\n\nIt may then send up to {more} more {noun} like it, for the next pages,"
    if pagination.kind == "link":
        return (
            f'{said} each to the URL of the page before\'s Link: rel="next" header (only '
            f"within {spec.origin}), with the same method, headers and body."
        )
    changed = {"cursor": "the cursor", "page": "the page number", "offset": "the offset"}
    return (
        f"{said} with the same method, headers and body, and the query parameter "
        f"'{pagination.param}' set to {changed[pagination.kind]} of the next page."
    )


def _body_shown(body: Mapping[str, Any], payload: str) -> tuple[str, bool]:
    """``payload`` (the body as sent) with each long value shortened, and whether
    anything of it was cut, counted, or is shown in a way that could be misread."""
    if body.get("json") is not None:  # as requests encodes it, one value at a time
        shown_json = shortened(body["json"])
        text = json.dumps(shown_json, ensure_ascii=False, allow_nan=False)
        return text, shown_json != body["json"]
    # A text body, unlike JSON, has no escapes of its own: a "\\u200b" typed in it
    # would read as the character visible() spells so.
    misread = spelled_alike(payload)
    if body.get("data") is not None and not body.get("files") and "\n" not in payload:
        fields = payload.split("&")  # a form: field=value&...
        shown_fields = [str(shortened(field)) for field in fields]
        return "&".join(shown_fields), misread or shown_fields != fields
    raw_lines = payload.split("\n")  # multipart, text
    cut_lines = [str(shortened(line)) for line in raw_lines]
    lines, said = _blank_runs_said(cut_lines)
    cut = misread or said or cut_lines != raw_lines
    if len(lines) <= MAX_LINES:
        return "\n".join(lines), cut
    # Too long to show whole: its first and last lines (the arguments follow).
    head, tail = MAX_LINES * 3 // 4, MAX_LINES // 4
    more = len(lines) - head - tail
    return "\n".join([*lines[:head], f"\u2026 [{more:,} more lines]", *lines[-tail:]]), True


def _blank_runs_said(lines: list[str]) -> tuple[list[str], bool]:
    """``lines`` with each run of more than two blank ones (``agentkit.context.blank``:
    empty, or spaces only) said in one line, so that blank lines cannot push the rest
    of a body out of sight; and whether any run was (what it said is not all of it:
    how many spaces each line had)."""
    kept: list[str] = []
    run: list[str] = []
    said = False
    for line in [*lines, "end"]:
        if blank(line):
            run.append(line)
            continue
        if len(run) > 2:
            kept.append(f"\u2026 [{len(run):,} blank lines]")
            said = True
        else:
            kept.extend(run)
        run = []
        kept.append(line)
    return kept[:-1], said
