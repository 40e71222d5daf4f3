"""Parsing ``backend: {http: ...}``: every key checked, every template compiled, at load time."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, final
from urllib.parse import urlsplit

from agentkit.declarative.backends.http.auth import OAuth2Settings, oauth2_auth, parse_auth
from agentkit.declarative.backends.http.multipart import parse_multipart
from agentkit.declarative.backends.http.oauth2 import TokenCache
from agentkit.declarative.backends.http.pagination import Pagination, parse_pagination
from agentkit.declarative.backends.http.responses import Outputs, parse_outputs
from agentkit.declarative.backends.http.templating import TemplateContext
from agentkit.declarative.backends.http.timing import (
    DEFAULT_RETRY,
    Retry,
    parse_retry,
    parse_statuses,
    parse_timeout,
)
from agentkit.declarative.backends.http.url import (
    DIRECT,
    PathSegment,
    merge_query,
    parse_proxy,
    parse_url,
)
from agentkit.declarative.backends.http.values import (
    HEADER_NAME,
    FormBody,
    HttpAuth,
    HttpBody,
    JsonArray,
    JsonBody,
    JsonNode,
    JsonObject,
    OAuth2Auth,
    TextBody,
)
from agentkit.declarative.problems import Location, Problems, check_keys
from agentkit.declarative.templates import Template
from agentkit.toolschema import ToolSchema, is_integer

__all__ = ["HttpSpec", "Retry", "is_plain_remote", "parse_http_spec"]

HTTP_KEYS: Final = (
    "method",
    "url",
    "source",
    "path",
    "query",
    "headers",
    "json",
    "form",
    "multipart",
    "body",
    "content_type",
    "auth",
    "timeout",
    "retry",
    "max_response_bytes",
    "accept_status",
    "follow_redirects",
    "verify",
    "ca_bundle",
    "proxy",
    "output",
    "responses",
    "paginate",
    "binary",
)
METHODS: Final = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
IDEMPOTENT: Final = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
REQUEST_ROOTS: Final = ("inputs", "credentials")
OUTPUT_ROOTS: Final = ("inputs", "response")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HttpSpec:
    """A checked HTTP backend definition, templates compiled."""

    method: str
    origin: str
    path: tuple[PathSegment, ...]  # segments, each literal text and templates
    query: tuple[tuple[str, Template | Any], ...]  # a value may be a tuple: a repeated name
    headers: tuple[tuple[str, Template | Any], ...]
    body: HttpBody | None
    auth: HttpAuth | OAuth2Auth | None
    connect_timeout: float
    read_timeout: float
    total_timeout: float
    retry: Retry
    max_response_bytes: int
    accept_status: frozenset[int]
    follow_redirects: bool
    outputs: Outputs
    input_names: tuple[str, ...]
    paginate: Pagination | None = None
    #: The reply is the output, as ``agentkit.binary`` shapes it (base64 and its media type).
    binary: bool = False
    #: TLS: True (the system's trust), False (no check) or the path of a CA bundle.
    verify: bool | str = True
    #: How requests leave: ``DIRECT`` (the default), ``ENVIRONMENT`` (the proxy the
    #: standard variables name for each URL) or a proxy's URL.
    proxy: str = "direct"

    @property
    def idempotent(self) -> bool:
        return self.method in IDEMPOTENT

    @property
    def plain_http(self) -> bool:
        """True when requests go over plain ``http://`` to a host other than loopback."""
        return is_plain_remote(self.origin)


def is_plain_remote(url: str) -> bool:
    """True for an ``http://`` URL whose host is not loopback (where anyone between may read)."""
    parts = urlsplit(url)
    if parts.scheme != "http":
        return False
    host = (parts.hostname or "").rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def parse_http_spec(
    raw: Any,
    location: Location,
    inputs: ToolSchema | None,
    outputs: ToolSchema,
    credentials: Sequence[str],
    problems: Problems,
    *,
    token_cache: TokenCache | None = None,
) -> HttpSpec | None:
    """Check an http backend. ``inputs`` is None when the input schema itself is broken:
    its problems are reported already, so references to inputs are not checked again.
    ``token_cache`` holds OAuth2 tokens shared with other tools (those of a source)."""
    if not check_keys(raw, HTTP_KEYS, location, problems, "an http backend"):
        return None
    start = len(problems)
    context = TemplateContext(inputs, outputs, credentials, problems)

    def at(*keys: str | int) -> Location:
        return (*location, *keys)

    method = raw.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in METHODS:
        problems.add(
            at("method"), f"unsupported method {method!r}; use one of: {', '.join(METHODS)}"
        )
        method = "GET"
    method = method.upper()

    # With a source, "path" holds the whole URL: its base URL and the tool's path.
    url_key = "path" if "path" in raw else "url"
    origin, path, url_query = parse_url(
        raw.get(url_key),
        at(url_key),
        lambda text, where: context.template(text, where, REQUEST_ROOTS),
        problems,
    )
    query = merge_query(
        url_query, _parse_pairs(raw, "query", at, context, repeat=True), at, problems
    )
    headers = _parse_pairs(raw, "headers", at, context)
    for name, _ in headers:
        if not HEADER_NAME.fullmatch(name):
            problems.add(at("headers", name), f"invalid header name {name!r}")
    body = _parse_body(raw, at, context)
    # `auth: none` says so explicitly: no auth, not even the source's.
    given_auth = raw.get("auth", "none")
    parsed_auth = parse_auth(given_auth, at("auth"), context) if given_auth != "none" else None
    auth: HttpAuth | OAuth2Auth | None = (
        oauth2_auth(parsed_auth, at("auth", "oauth2"), problems, token_cache)
        if isinstance(parsed_auth, OAuth2Settings)
        else parsed_auth
    )
    connect, read, total = parse_timeout(raw.get("timeout"), at("timeout"), problems)
    retry = (
        parse_retry(raw.get("retry"), at("retry"), problems) if "retry" in raw else DEFAULT_RETRY
    )
    max_bytes = raw.get("max_response_bytes", 10 * 1024 * 1024)
    if not is_integer(max_bytes) or max_bytes < 1:
        problems.add(at("max_response_bytes"), "expected a whole number of bytes above 0")
    accept = (
        parse_statuses(raw["accept_status"], at("accept_status"), problems)
        if "accept_status" in raw
        else frozenset()
    )
    follow = raw.get("follow_redirects", True)
    if not isinstance(follow, bool):
        problems.add(at("follow_redirects"), "expected true or false")
    verify = _parse_verify(raw, at, problems)
    proxy = parse_proxy(raw.get("proxy", DIRECT), at("proxy"), problems)
    outputs_mapped = parse_outputs(
        raw,
        location,
        outputs,
        lambda source, here: context.template(source, here, OUTPUT_ROOTS),
        problems,
    )
    binary = raw.get("binary", False)
    if not isinstance(binary, bool):
        problems.add(at("binary"), "expected true or false")
        binary = False
    for key in ("output", "responses", "paginate") if binary else ():
        if key in raw:
            problems.add(
                at(key),
                f"a binary tool's output is the reply itself ({{media_type, data, size}}); "
                f"remove '{key}' or 'binary'",
            )
    paginate = None
    if "paginate" in raw:
        given = [key for key in ("output", "responses") if key in raw]
        if given:
            problems.add(
                at("paginate"),
                f"give 'paginate' or '{given[0]}', not both: paginate fills its list output "
                "from 'items' and reports 'truncated' and 'next_cursor'",
            )
        else:
            paginate = parse_pagination(
                raw["paginate"],
                at("paginate"),
                outputs,
                context.template,
                problems,
            )

    if len(problems) > start or origin is None:
        return None
    return HttpSpec(
        method=method,
        origin=origin,
        path=path,
        query=query,
        headers=headers,
        body=body,
        auth=auth,
        connect_timeout=connect,
        read_timeout=read,
        total_timeout=total,
        retry=retry,
        max_response_bytes=max_bytes,
        accept_status=accept,
        follow_redirects=follow,
        outputs=outputs_mapped,
        paginate=paginate,
        binary=binary,
        input_names=inputs.names if inputs is not None else (),
        verify=verify,
        proxy=proxy,
    )


def _parse_verify(raw: dict[str, Any], at: Any, problems: Problems) -> bool | str:
    """``verify: false`` or ``ca_bundle: PATH`` (relative to the definition's file)."""
    verify = raw.get("verify", True)
    if not isinstance(verify, bool):
        problems.add(at("verify"), "expected true or false")
        return True
    if "ca_bundle" not in raw:
        return verify
    bundle = raw["ca_bundle"]
    if not isinstance(bundle, str) or not bundle:
        problems.add(at("ca_bundle"), "expected the path of a PEM file of CA certificates")
        return True
    if not verify:
        problems.add(
            at("ca_bundle"), "give 'verify: false' or 'ca_bundle', not both; drop 'verify: false'"
        )
        return True
    path = os.path.join(os.path.dirname(problems.path), bundle)
    if not os.path.isfile(path):
        problems.add(
            at("ca_bundle"),
            f"no such file: {path!r} (a ca_bundle path is relative to the definition's file)",
        )
        return True
    return os.path.abspath(path)


def _parse_pairs(
    raw: dict[str, Any], key: str, at: Any, context: TemplateContext, *, repeat: bool = False
) -> tuple[tuple[str, Any], ...]:
    if key not in raw:
        return ()
    entries = raw[key]
    if not isinstance(entries, dict):
        context.problems.add(at(key), f"'{key}' must be a mapping of names to values")
        return ()
    pairs = []
    for name, value in entries.items():
        if not isinstance(name, str) or not name:
            context.problems.add(at(key), f"{key} names must be strings, got {name!r}")
            continue
        pairs.append((name, context.value(value, at(key, name), REQUEST_ROOTS, repeat=repeat)))
    return tuple(pairs)


def _parse_body(raw: dict[str, Any], at: Any, context: TemplateContext) -> HttpBody | None:
    given = [key for key in ("json", "form", "multipart", "body") if key in raw]
    problems = context.problems
    if len(given) > 1:
        problems.add(at(given[1]), f"give one body: '{given[0]}' or '{given[1]}', not both")
        return None
    content_type = raw.get("content_type")
    if content_type is not None and not isinstance(content_type, str):
        problems.add(at("content_type"), "expected a media type such as 'text/plain'")
        content_type = None
    if not given:
        if content_type is not None:
            problems.add(at("content_type"), "'content_type' goes with 'body'")
        return None
    kind = given[0]
    if kind == "json":
        return JsonBody(
            value=_parse_json(raw["json"], at("json"), context), content_type=content_type
        )
    if kind == "form":
        fields = _parse_pairs(raw, "form", at, context, repeat=True)
        return FormBody(fields=fields, content_type=content_type)
    if kind == "multipart":
        if content_type is not None:
            problems.add(
                at("content_type"),
                "'content_type' does not go with 'multipart': the body is multipart/form-data "
                "with its boundary; give each file its own content_type",
            )
        return parse_multipart(
            raw["multipart"],
            at("multipart"),
            lambda text, where: context.template(text, where, REQUEST_ROOTS),
            lambda value, where: context.value(value, where, REQUEST_ROOTS, repeat=True),
            problems,
        )
    text = raw["body"]
    if not isinstance(text, str):
        problems.add(at("body"), "expected a string (a template); for JSON use 'json:'")
        return None
    template = context.template(text, at("body"), REQUEST_ROOTS)
    if template is None:
        return None
    return TextBody(template=template, content_type=content_type or "text/plain")


def _parse_json(raw: Any, location: Location, context: TemplateContext) -> JsonNode:
    if isinstance(raw, str):
        return context.template(raw, location, REQUEST_ROOTS)
    if isinstance(raw, dict):
        return JsonObject(
            members=tuple(
                (str(key), _parse_json(value, (*location, key), context))
                for key, value in raw.items()
            )
        )
    if isinstance(raw, list):
        return JsonArray(
            items=tuple(_parse_json(item, (*location, i), context) for i, item in enumerate(raw))
        )
    scalar: bool | int | float | None = raw  # YAML's other values go as they are
    return scalar
