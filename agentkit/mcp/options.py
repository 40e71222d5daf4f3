"""How an MCP server is run: ``ServeOptions`` for either transport, ``HttpOptions`` for
streamable HTTP, and the parsing of what the command line gives for them (each problem a
``SemanticError`` naming the option and what it takes).

Importing this module imports no server: the options are plain values.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, final

from agentkit.callers import Caller
from agentkit.credentials import read_user_file
from agentkit.mcp.admission import (
    DEFAULT_ANSWER_SECONDS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_MAX_QUEUED,
    DEFAULT_MAX_WAITING,
)
from agentkit.mcp.connections import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
)
from agentkit.toolerrors import SemanticError

__all__ = [
    "DEFAULT_MAX_REQUEST_BYTES",
    "BearerToken",
    "HttpOptions",
    "ServeOptions",
    "is_port",
    "parse_address",
    "parse_allowed_host",
    "parse_allowed_origin",
    "parse_caller_header",
    "parse_credential_header",
    "parse_credential_headers",
    "parse_endpoint_path",
    "parse_trusted_proxy",
    "read_tokens",
    "split_address",
    "toolset_path",
]

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8000
DEFAULT_MAX_REQUEST_BYTES: Final = 4 * 1024 * 1024
#: How long the calls in flight may finish once the client has gone or SIGTERM came.
DEFAULT_DRAIN_SECONDS: Final = 30.0
#: A bearer token shorter than this is a password, not a secret worth the name.
MIN_TOKEN_LENGTH: Final = 16
#: The audit file's size before it is rotated, and the rotated files kept.
DEFAULT_AUDIT_MAX_BYTES: Final = 50 * 1024 * 1024
DEFAULT_AUDIT_BACKUPS: Final = 5
#: An audit sink given in code: called with each call's record (``agentkit.audit``).
AuditSink = Callable[[Mapping[str, object]], object]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeOptions:
    """How a server runs its calls, over either transport (``agentkit.mcp.serve``):
    stdio when given these, streamable HTTP when given ``HttpOptions``.

    ``call_timeout``: seconds a call may run (``None``: as long as the tool's own
    timeouts let it). ``max_calls`` run at once (``None``: no limit) and ``max_queued``
    wait for a turn; past both a call is refused at once as busy. ``max_waiting`` calls
    may wait for their users' answers at once, each for ``answer_timeout`` seconds.
    ``drain_seconds``: how long the calls in flight may finish once the client has gone
    (stdio) or SIGTERM came (HTTP). ``allow_unconfirmed``: run a ``confirm: true`` tool
    without asking when its client cannot be asked (otherwise it is refused).
    ``deferred``: the tools not listed up front, each a tool's name or a shell-style
    pattern (``jira_*``) matched against names at start and at each reload; the server
    adds the search tool ``search_tools`` that finds them, and they are called by name
    like any other (docs/serving.md, Progressive discovery).
    ``audit``: where each call's audit record goes (docs/serving.md, Audit trail): a
    file's path (rotated past ``audit_max_bytes``, ``audit_backups`` kept),
    ``"stdout"`` (stderr on stdio, whose stdout is the wire), ``"otel"``
    (OpenTelemetry logs), or a callable given each record; ``None``: no trail.
    """

    call_timeout: float | None = None
    max_calls: int | None = DEFAULT_MAX_IN_FLIGHT
    max_queued: int = DEFAULT_MAX_QUEUED
    max_waiting: int = DEFAULT_MAX_WAITING
    answer_timeout: float = DEFAULT_ANSWER_SECONDS
    drain_seconds: float = DEFAULT_DRAIN_SECONDS
    allow_unconfirmed: bool = False
    deferred: frozenset[str] = frozenset()
    audit: str | AuditSink | None = None
    audit_max_bytes: int = DEFAULT_AUDIT_MAX_BYTES
    audit_backups: int = DEFAULT_AUDIT_BACKUPS


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class BearerToken:
    """A bearer token and the toolsets it reaches: ``None``, every endpoint (the whole
    registry and each set); otherwise only the sets named, at ``{path}/{toolset}``.
    ``caller``: the name of whoever holds it (``agentkit.callers``), or ``None`` for a
    label made of its place in the list (``token-3``). ``where`` says where it was
    given (``tokens.txt:3``), for messages; the token itself is never shown."""

    token: str = field(repr=False)
    toolsets: frozenset[str] | None = None
    caller: str | None = None
    where: str = ""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOptions(ServeOptions):
    """``ServeOptions`` and how an HTTP server listens and what it lets through.

    ``tokens`` empty means no transport auth; a plain string reaches every endpoint, a
    ``BearerToken`` the toolsets it names. ``whole_registry``: serve the whole registry
    at ``path`` (toolsets given to ``serve`` are served at ``toolset_path(path, name)``
    either way). ``credential_headers`` maps request
    header names to credential names; with ``require_credential_headers`` a mapped
    credential comes from its header only. ``allowed_hosts`` and ``allowed_origins`` add
    to the loopback defaults (``127.0.0.1:*``, ``localhost:*``, ``[::1]:*``); an entry
    ending in ``:*`` allows any port.
    """

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    path: str = "/mcp"
    whole_registry: bool = True
    stateless: bool = False
    #: Answer plain requests on the fast path (``--no-fast-path``: every one via the SDK).
    fast_path: bool = True
    tokens: tuple[str | BearerToken, ...] = ()
    credential_headers: Mapping[str, str] = field(default_factory=dict)
    #: A call whose request lacks a mapped header fails (no fallback to the server's value).
    require_credential_headers: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    #: Seconds a request's head may take (``agentkit.mcp.connections``), and an idle
    #: keep-alive connection may stay open between requests.
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    idle_timeout: int = DEFAULT_IDLE_TIMEOUT
    #: Seconds a request's body may take once its head came (``agentkit.mcp.connections``).
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    #: Open connections at most (None: sized from the open-file limit, raised at start).
    max_connections: int | None = None
    #: A request header naming the caller, honoured only from ``trusted_proxies``
    #: (networks, as ``ipaddress.ip_network`` takes them) and ignored from other peers.
    caller_header: str | None = None
    trusted_proxies: tuple[str, ...] = ()
    #: Answer ``GET /metrics`` (Prometheus' text format), behind the bearer tokens if any.
    metrics: bool = False


def split_address(text: str) -> tuple[str, str | None]:
    """``[IPv6]:PORT``, ``HOST:PORT`` or ``HOST`` -> ``(host, port text or None)``.

    Raises ``ValueError`` saying what is wrong with a bracketed address.
    """
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise ValueError("an IPv6 address needs its closing ']'")
        host, rest = text[1:end], text[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError("expected ':PORT' after ']'")
        return host, rest[1:] if rest else None
    if ":" in text:
        host, port = text.rsplit(":", 1)
        return host, port
    return text, None


def is_port(text: str) -> bool:
    """ASCII digits naming a port, 0 to 65535.

    ``isdigit`` alone also takes superscript and Arabic-Indic digits, which ``int``
    refuses or reads as another number.
    """
    return text.isascii() and text.isdigit() and int(text) <= 65535


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST``, ``:PORT`` or ``[IPv6]:PORT`` -> ``(host, port)``."""
    rest = text.strip()
    try:
        host, port = split_address(rest)
    except ValueError as exc:
        raise SemanticError(f"--http {text!r}: {exc}") from None
    if not rest.startswith("["):
        host = host or DEFAULT_HOST
    if not port:
        return host, DEFAULT_PORT
    if not is_port(port):
        raise SemanticError(
            f"--http {text!r}: the port must be a number from 0 to 65535, got {port!r}"
        )
    return host, int(port)


def read_tokens(
    *, file: str | None = None, env: str | None = None
) -> tuple[str | BearerToken, ...]:
    """The bearer tokens in ``file`` and ``$env`` (comma-separated).

    A line of ``file`` holds a token (``#`` starts a comment line), which reaches every
    endpoint, then optionally ``toolsets=NAME[,NAME...]``, the only sets it reaches, and
    ``caller=NAME``, who holds it (a ``BearerToken``). A problem names the file and line
    or the variable, never a token's text.
    """
    tokens: list[str | BearerToken] = []
    if file:
        text = read_user_file(file, "the token file")
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip() and not line.strip().startswith("#"):
                tokens.append(_token_line(line, f"{file}:{number}"))
    if env:
        value = os.environ.get(env, "")
        if not value.strip():
            raise SemanticError(f"--auth-token-env {env}: the environment variable is not set")
        tokens.extend(
            _checked_token(part.strip(), f"environment variable {env}, token {index}")
            for index, part in enumerate(value.split(","), start=1)
        )
    if (file or env) and not tokens:
        raise SemanticError(f"The token file {file} has no token (one a line)")
    return tuple(tokens)


_TOKEN_OPTIONS: Final = (
    "after the token, a line takes toolsets=NAME[,NAME...] (the toolsets it reaches, "
    "such as toolsets=triage,wiki) and caller=NAME (who holds it, such as "
    "caller=triage-bot), each at most once, nothing else"
)


def _token_line(line: str, where: str) -> str | BearerToken:
    """One line of a token file: a token, then the toolsets it reaches and its caller."""
    token, *rest = line.split()
    token = _checked_token(token, where)
    if not rest:
        return token
    given: dict[str, str] = {}
    for option in rest:
        key, sep, value = option.partition("=")
        if key not in ("toolsets", "caller") or not sep or not value.strip() or key in given:
            raise SemanticError(f"{where}: {_TOKEN_OPTIONS}")
        given[key] = value
    sets = None
    if "toolsets" in given:
        sets = frozenset(name.strip() for name in given["toolsets"].split(",") if name.strip())
        if not sets:
            raise SemanticError(f"{where}: {_TOKEN_OPTIONS}")
    caller = given.get("caller")
    if caller is not None:
        try:
            Caller(name=caller, via="token")
        except ValueError as exc:
            raise SemanticError(f"{where}: {exc}") from None
    return BearerToken(token=token, toolsets=sets, caller=caller, where=where)


def toolset_path(path: str, toolset: str) -> str:
    """Where toolset ``toolset`` is served, below the endpoint ``path``: ``/mcp/triage``."""
    return f"{path.rstrip('/')}/{toolset}"


def _checked_token(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_LENGTH:
        raise SemanticError(
            f"{where}: a bearer token needs at least {MIN_TOKEN_LENGTH} characters "
            f"(got {len(token)}); generate one with: python -c "
            "'import secrets; print(secrets.token_urlsafe(32))'"
        )
    if any(char.isspace() or not char.isprintable() for char in token):
        raise SemanticError(f"{where}: a bearer token cannot hold spaces or control characters")
    return token


def parse_credential_header(text: str) -> tuple[str, str]:
    """``X-GitHub-Token=github-token`` -> ``("x-github-token", "github-token")``."""
    header, sep, credential = (part.strip() for part in text.partition("="))
    if not sep or not header or not credential:
        raise SemanticError(
            f"--credential-header takes HEADER=CREDENTIAL (X-GitHub-Token=github-token), "
            f"got {text!r}"
        )
    if not all(char.isalnum() or char in "-_" for char in header):
        raise SemanticError(
            f"--credential-header {text!r}: a header name holds letters, digits, '-' and '_'"
        )
    if header.lower() in ("authorization", "cookie", "proxy-authorization"):
        raise SemanticError(
            f"--credential-header {text!r}: the {header} header belongs to the transport and "
            "is never passed to a tool; send the user's token in a header of its own"
        )
    return header.lower(), credential


def parse_credential_headers(items: Iterable[str]) -> dict[str, str]:
    """Every ``--credential-header``; a header mapped twice (in any case) is refused,
    naming both options: the later one would silently replace the first."""
    mapped: dict[str, tuple[str, str]] = {}
    for item in items:
        header, credential = parse_credential_header(item)
        if header in mapped:
            first = mapped[header][0]
            raise SemanticError(
                f"--credential-header {item!r}: the header {header} is already mapped by "
                f"--credential-header {first!r}; map each header once"
            )
        mapped[header] = (item, credential)
    return {header: credential for header, (_, credential) in mapped.items()}


_RESERVED_PATHS: Final = ("/healthz", "/readyz")


def parse_endpoint_path(text: str) -> str:
    """``--path``: where the MCP endpoint answers, such as ``/mcp`` or ``/tools/v1``."""
    if not text.startswith("/") or any(char in text for char in "?#% \t\r\n"):
        raise SemanticError(
            f"--path {text!r}: expected a path starting with '/', such as /mcp or /tools/v1, "
            "with no query, fragment, escapes or spaces"
        )
    if any(part in (".", "..") for part in text.split("/")):
        raise SemanticError(
            f"--path {text!r}: '.' and '..' segments are resolved away by clients, which "
            "would ask for another path; write the path they lead to"
        )
    if text.rstrip("/") in _RESERVED_PATHS or text == "/":
        raise SemanticError(
            f"--path {text!r}: {', '.join(_RESERVED_PATHS)} answer health checks and '/' "
            "is too broad; choose another path, such as /mcp"
        )
    return text


def _is_host_and_port(text: str) -> bool:
    """``HOST``, ``HOST:PORT``, ``HOST:*``, ``[IPv6]`` or ``[IPv6]:PORT``."""
    try:
        host, port = split_address(text)
    except ValueError:
        return False
    if text.startswith("["):
        valid_host = bool(host) and all(char in "0123456789abcdefABCDEF:." for char in host)
    else:
        valid_host = bool(host) and all(char.isalnum() or char in ".-" for char in host)
    if port is None:
        return valid_host
    return valid_host and (port == "*" or is_port(port))


def parse_allowed_host(text: str) -> str:
    """``--allowed-host``: ``HOST``, ``HOST:PORT`` or ``HOST:*`` as a Host header holds it."""
    if not _is_host_and_port(text):
        raise SemanticError(
            f"--allowed-host {text!r}: expected HOST, HOST:PORT or HOST:* as clients send it "
            "in the Host header, such as tools.example.com or tools.example.com:8443"
        )
    return text


def parse_allowed_origin(text: str) -> str:
    """``--allowed-origin``: ``scheme://host[:port]`` (or ``:*``), as browsers send it."""
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in ("http", "https") or not _is_host_and_port(rest):
        raise SemanticError(
            f"--allowed-origin {text!r}: expected an origin as browsers send it, "
            "scheme://host[:port] (port may be *), such as https://app.example.com"
        )
    return text


def parse_caller_header(text: str) -> str:
    """``--caller-header``: the request header a trusted proxy names the caller in."""
    name = text.strip()
    if not name or not all(char.isascii() and (char.isalnum() or char in "-_") for char in name):
        raise SemanticError(
            f"--caller-header {text!r}: expected a header name of letters, digits, '-' and "
            "'_', such as X-Forwarded-User"
        )
    if name.lower() in ("authorization", "cookie", "proxy-authorization", "host"):
        raise SemanticError(
            f"--caller-header {text!r}: the {name} header belongs to the transport; a proxy "
            "names the caller in a header of its own, such as X-Forwarded-User"
        )
    return name.lower()


def parse_trusted_proxy(text: str) -> str:
    """``--trusted-proxy``: an address or network (CIDR) whose caller header is honoured."""
    try:
        return str(ipaddress.ip_network(text.strip(), strict=False))
    except ValueError:
        raise SemanticError(
            f"--trusted-proxy {text!r}: expected an IP address or network, such as "
            "10.0.0.5 or 10.0.0.0/24 (the proxy's address as the server sees it)"
        ) from None
