"""Parsing ``backend: {http: ...}``: every key checked, every template compiled, at load time."""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, final
from urllib.parse import urlsplit

from agentkit.declarative.backends.http.multipart import parse_multipart
from agentkit.declarative.backends.http.oauth2 import ClientCredentials, OAuth2Error, TokenCache
from agentkit.declarative.backends.http.pagination import Pagination, parse_pagination
from agentkit.declarative.backends.http.responses import Outputs, parse_outputs
from agentkit.declarative.backends.http.url import (
    DIRECT,
    PathSegment,
    merge_query,
    parse_proxy,
    parse_url,
)
from agentkit.declarative.backends.http.values import (
    ApiKeyAuth,
    BasicAuth,
    BearerAuth,
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
from agentkit.declarative.environment import LiteralText
from agentkit.declarative.problems import Location, Problems, check_keys, value_kind
from agentkit.declarative.templates import Template, TemplateSyntaxProblem, compile_template
from agentkit.toolerrors import did_you_mean
from agentkit.toolschema import ToolSchema, is_integer, is_number

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
RESPONSE_FIELDS: Final = ("status", "headers", "json", "text")
DEFAULT_TIMEOUTS: Final = {"connect": 5.0, "read": 30.0, "total": 60.0}
DEFAULT_RETRY_STATUS: Final = (429, 502, 503, 504)
_TOKEN: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name (RFC 9110)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Retry:
    """``retry:``: how often, how long apart, on which statuses, and whether a POST may be."""

    attempts: int = 3
    backoff: float = 0.5
    on_status: frozenset[int] = frozenset(DEFAULT_RETRY_STATUS)
    max_wait: float = 10.0
    non_idempotent: bool = False


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


_RETRY: Final = Retry()  # a value: shared by every spec without 'retry:'


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


#: The most compiled templates remembered across definitions (then it starts over).
MAX_COMPILED: Final = 16_384
# Each is a value, shared by every definition with the same text, roots and location.
_COMPILED: dict[tuple[str, tuple[str, ...], Location], Template] = {}


class _Context:
    """What template checks need to know about the definition being parsed."""

    def __init__(
        self,
        inputs: ToolSchema | None,
        outputs: ToolSchema,
        credentials: Sequence[str],
        problems: Problems,
    ) -> None:
        self.inputs = inputs
        self.outputs = outputs
        self.credentials = tuple(credentials)
        self._credential_set = frozenset(credentials)  # looked up once per template reference
        # Made once: hints are remembered by the identity of the names they choose from.
        self._input_names = inputs.names if inputs is not None else ()
        self.problems = problems
        self._compiled: dict[tuple[str, tuple[str, ...]], Template | TemplateSyntaxProblem] = {}

    def template(self, raw: str, location: Location, roots: Sequence[str]) -> Template | None:
        # Compiled once per text: aliases can repeat one anchored mapping of
        # templates many times, and Jinja's parse is the costly part of loading.
        # A repeat keeps the field of the first use: it is the same YAML node.
        text_and_roots = (raw, tuple(roots))
        compiled = self._compiled.get(text_and_roots)
        if compiled is None:
            # The tools of a set repeat the same templates in the same places: found
            # by text, roots and place, no field is joined and nothing compiled.
            placed = (raw, text_and_roots[1], location)
            compiled = _COMPILED.get(placed)
            if compiled is None:
                try:
                    compiled = compile_template(raw, ".".join(map(str, location)), roots)
                except TemplateSyntaxProblem as exc:
                    compiled = exc
                else:
                    if len(_COMPILED) >= MAX_COMPILED:
                        _COMPILED.clear()
                    _COMPILED[placed] = compiled
            self._compiled[text_and_roots] = compiled
        if isinstance(compiled, TemplateSyntaxProblem):
            self.problems.add(location, str(compiled))
            return None
        template = compiled
        for root, key in template.references:
            self._check_reference(root, key, location)
        return template

    def _check_reference(self, root: str, key: str | None, location: Location) -> None:
        if key is None:
            return
        if root == "inputs" and self.inputs is not None and key not in self.inputs:
            hint = self.problems.did_you_mean(key, self._input_names, "inputs.")
            self.problems.add(location, f"'inputs.{key}' is not a declared input{hint}")
        elif root == "credentials" and key not in self._credential_set:
            self.problems.add(
                location,
                f"credential '{key}' is used but not declared; add it under 'credentials:'"
                + self.problems.did_you_mean(key, self.credentials),
            )
        elif root == "response" and key not in RESPONSE_FIELDS:
            self.problems.add(
                location,
                f"'response.{key}' does not exist; a response has "
                + ", ".join(RESPONSE_FIELDS)
                + did_you_mean(key, RESPONSE_FIELDS, "response."),
            )

    def value(
        self, raw: Any, location: Location, roots: Sequence[str], *, repeat: bool = False
    ) -> Template | Any:
        """A query, header or form value: a template when a string, else a plain scalar;
        with ``repeat``, also a list of those (a tuple): the name is sent once per item.
        ``LiteralText`` (what ``${VAR}`` became at load time) is sent as it is."""
        if repeat and isinstance(raw, list):
            return tuple(
                self.value(item, (*location, index), roots) for index, item in enumerate(raw)
            )
        if isinstance(raw, LiteralText):
            return str(raw)
        if isinstance(raw, str):
            return self.template(raw, location, roots)
        if raw is None or isinstance(raw, (bool, int, float)):
            return raw
        self.problems.add(location, f"expected a string or number, got {value_kind(raw)}")
        return None

    def credential(self, raw: Any, location: Location) -> str | None:
        if not isinstance(raw, str) or not raw:
            self.problems.add(location, "expected a credential name")
            return None
        if raw not in self._credential_set:
            self.problems.add(
                location,
                f"credential '{raw}' is used but not declared; add it under 'credentials:'"
                + self.problems.did_you_mean(raw, self.credentials),
            )
            return None
        return raw


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
    context = _Context(inputs, outputs, credentials, problems)

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
        if not _TOKEN.fullmatch(name):
            problems.add(at("headers", name), f"invalid header name {name!r}")
    body = _parse_body(raw, at, context)
    # `auth: none` says so explicitly: no auth, not even the source's.
    given_auth = raw.get("auth", "none")
    parsed_auth = _parse_auth(given_auth, at("auth"), context) if given_auth != "none" else None
    auth: HttpAuth | OAuth2Auth | None = (
        _oauth2(parsed_auth, at("auth", "oauth2"), problems, token_cache)
        if isinstance(parsed_auth, _OAuth2Settings)
        else parsed_auth
    )
    connect, read, total = _parse_timeout(raw.get("timeout"), at("timeout"), problems)
    retry = _parse_retry(raw.get("retry"), at("retry"), problems) if "retry" in raw else _RETRY
    max_bytes = raw.get("max_response_bytes", 10 * 1024 * 1024)
    if not is_integer(max_bytes) or max_bytes < 1:
        problems.add(at("max_response_bytes"), "expected a whole number of bytes above 0")
    accept = (
        _parse_statuses(raw["accept_status"], at("accept_status"), problems)
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
    raw: dict[str, Any], key: str, at: Any, context: _Context, *, repeat: bool = False
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


def _parse_body(raw: dict[str, Any], at: Any, context: _Context) -> HttpBody | None:
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


def _parse_json(raw: Any, location: Location, context: _Context) -> JsonNode:
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


OAUTH2_KEYS: Final = (
    "token_url",
    "client_id",
    "client_secret",
    "scopes",
    "audience",
    "client_auth",
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _OAuth2Settings:
    """``auth.oauth2`` checked, before its grant is made (with the source's token cache)."""

    token_url: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...]
    audience: str | None
    client_auth: Literal["basic", "body"]
    literal_client_id: bool = False


def _oauth2(
    settings: _OAuth2Settings, location: Location, problems: Problems, cache: TokenCache | None
) -> OAuth2Auth | None:
    try:
        grant = ClientCredentials(
            token_url=settings.token_url,
            scopes=settings.scopes,
            audience=settings.audience,
            client_auth=settings.client_auth,
            cache=cache,
        )
    except OAuth2Error as exc:
        field = "token_url" if "token URL" in exc.reason else "scopes"
        problems.add((*location, field), exc.reason)
        return None
    return OAuth2Auth(
        grant=grant,
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        literal_client_id=settings.literal_client_id,
    )


def _parse_oauth2(raw: Any, here: Location, context: _Context) -> _OAuth2Settings | None:
    problems = context.problems
    if not check_keys(raw, OAUTH2_KEYS, here, problems, "oauth2 auth"):
        return None
    start = len(problems)
    token_url = raw.get("token_url")
    if not isinstance(token_url, str) or not token_url:
        problems.add(
            (*here, "token_url"),
            "expected the token endpoint's URL, such as https://auth.example.com/oauth/token",
        )
    client_id, literal = _written_or_credential(
        raw.get("client_id"), (*here, "client_id"), context, "client id"
    )
    secret = context.credential(raw.get("client_secret"), (*here, "client_secret"))
    scopes = raw.get("scopes", [])
    if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
        problems.add((*here, "scopes"), "expected a list of scope names")
    audience = raw.get("audience")
    if audience is not None and (not isinstance(audience, str) or not audience):
        problems.add((*here, "audience"), "expected a string")
    client_auth = raw.get("client_auth", "basic")
    if client_auth not in ("basic", "body"):
        problems.add(
            (*here, "client_auth"),
            "expected 'basic' (HTTP Basic, the default) or 'body' (form fields)",
        )
    if len(problems) > start or not client_id or not secret:
        return None
    return _OAuth2Settings(
        token_url=token_url,
        client_id=client_id,
        client_secret=secret,
        scopes=tuple(scopes),
        audience=audience,
        client_auth=client_auth,
        literal_client_id=literal,
    )


def _parse_auth(
    raw: Any, location: Location, context: _Context
) -> HttpAuth | _OAuth2Settings | None:
    problems = context.problems
    if not isinstance(raw, dict) or len(raw) != 1:
        problems.add(
            location,
            "expected none or one of {bearer: CRED}, "
            "{basic: {username: CRED | ${VAR} | {value: TEXT}, password: CRED}}, "
            "{api_key: {credential: CRED, in: header|query, name: NAME}}, "
            "{oauth2: {token_url: URL, client_id: CRED, client_secret: CRED, scopes: [...]}}",
        )
        return None
    ((kind, value),) = raw.items()
    here = (*location, kind)
    if kind == "bearer":
        credential = context.credential(value, here)
        return BearerAuth(credential=credential) if credential else None
    if kind == "basic":
        if not check_keys(value, ("username", "password"), here, problems, "basic auth"):
            return None
        user, literal = _written_or_credential(
            value.get("username"), (*here, "username"), context, "username"
        )
        password = context.credential(value.get("password"), (*here, "password"))
        if not (user and password):
            return None
        return BasicAuth(username=user, password=password, literal_username=literal)
    if kind == "api_key":
        if not check_keys(value, ("credential", "in", "name"), here, problems, "api_key auth"):
            return None
        credential = context.credential(value.get("credential"), (*here, "credential"))
        where = value.get("in", "header")
        name = value.get("name")
        if where not in ("header", "query"):
            problems.add((*here, "in"), "expected 'header' or 'query'")
            return None
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            problems.add((*here, "name"), "expected the header or query parameter name")
            return None
        if not credential:
            return None
        return ApiKeyAuth(credential=credential, placement=where, name=name)
    if kind == "oauth2":
        return _parse_oauth2(value, here, context)
    hint = did_you_mean(str(kind), ("bearer", "basic", "api_key", "oauth2"))
    problems.add(here, f"unknown auth '{kind}'{hint}")
    return None


def _written_or_credential(
    raw: Any, location: Location, context: _Context, what: str
) -> tuple[str | None, bool]:
    """A basic-auth username or an OAuth2 client id (``what``), which is sent as a
    basic-auth username: ``(credential name, False)``, or ``(the value, True)`` when the
    definition gives it (``{value: TEXT}``, or what ``${VAR}`` became), being no
    secret. ``(None, ...)`` after a problem."""
    if isinstance(raw, dict) and set(raw) == {"value"}:
        raw = raw["value"]
        if not isinstance(raw, str):
            context.problems.add((*location, "value"), f"expected the {what} as text")
            return None, True
        literal = True
    else:
        literal = isinstance(raw, LiteralText)
        if not literal:
            if isinstance(raw, str) and raw and raw not in context.credentials:
                hint = context.problems.did_you_mean(raw, context.credentials)
                context.problems.add(
                    location,
                    f"credential '{raw}' is used but not declared; add it under "
                    f"'credentials:'{hint}, or write a {what} that is not secret as "
                    f"{{value: {raw}}} (or ${{VAR}})",
                )
                return None, False
            return context.credential(raw, location), False
    problem = _written_problem(raw, what)
    if problem:
        context.problems.add(location, problem)
        return None, True
    return str(raw), True


def _written_problem(value: str, what: str) -> str | None:
    if not value:
        return f"expected a {what}, got an empty one"
    # A client id is form-encoded into its basic-auth pair (RFC 6749); a username is not.
    if ":" in value and what == "username":
        return "a basic-auth username cannot hold ':' (RFC 7617 splits the pair at the first one)"
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        return f"a {what} cannot hold a control character (a line break, a NUL)"
    return None


def _seconds(value: Any, *, zero: bool = False) -> bool:
    """A finite number of seconds above 0 (or 0 itself, with ``zero``): NaN and
    infinity would turn every deadline and wait comparison meaningless."""
    if not is_number(value):
        return False
    try:
        seconds = float(value)
    except OverflowError:  # an integer with hundreds of digits
        return False
    return math.isfinite(seconds) and (seconds > 0 or (zero and seconds == 0))


def _parse_timeout(raw: Any, location: Location, problems: Problems) -> tuple[float, float, float]:
    if raw is None:
        return DEFAULT_TIMEOUTS["connect"], DEFAULT_TIMEOUTS["read"], DEFAULT_TIMEOUTS["total"]
    values = dict(DEFAULT_TIMEOUTS)
    if is_number(raw):
        if _seconds(raw):
            values["read"] = float(raw)
            values["total"] = max(values["total"], float(raw))
        else:
            problems.add(location, "expected a number of seconds above 0")
    elif check_keys(raw, ("connect", "read", "total"), location, problems, "timeout"):
        for key, value in raw.items():
            if key in values and not _seconds(value):
                problems.add((*location, key), "expected a number of seconds above 0")
            elif key in values:
                values[key] = float(value)
    return values["connect"], values["read"], values["total"]


def _parse_retry(raw: Any, location: Location, problems: Problems) -> Retry:
    keys = ("attempts", "backoff", "on_status", "max_wait", "non_idempotent")
    if not check_keys(raw, keys, location, problems, "retry"):
        return Retry()
    attempts = raw.get("attempts", 3)
    if not is_integer(attempts) or not 1 <= attempts <= 10:
        problems.add((*location, "attempts"), "expected a whole number from 1 to 10")
        attempts = 3
    backoff = raw.get("backoff", 0.5)
    if not _seconds(backoff, zero=True):
        problems.add((*location, "backoff"), "expected a number of seconds, 0 or more")
        backoff = 0.5
    max_wait = raw.get("max_wait", 10.0)
    if not _seconds(max_wait, zero=True):
        problems.add((*location, "max_wait"), "expected a number of seconds, 0 or more")
        max_wait = 10.0
    on_status = _parse_statuses(
        raw.get("on_status", list(DEFAULT_RETRY_STATUS)), (*location, "on_status"), problems
    )
    non_idempotent = raw.get("non_idempotent", False)
    if not isinstance(non_idempotent, bool):
        problems.add((*location, "non_idempotent"), "expected true or false")
        non_idempotent = False
    return Retry(
        attempts=attempts,
        backoff=float(backoff),
        on_status=on_status,
        max_wait=float(max_wait),
        non_idempotent=non_idempotent,
    )


def _parse_statuses(raw: Any, location: Location, problems: Problems) -> frozenset[int]:
    if not isinstance(raw, list) or not all(
        is_integer(code) and 100 <= code <= 599 for code in raw
    ):
        problems.add(location, "expected a list of HTTP status codes (100-599)")
        return frozenset()
    return frozenset(raw)
