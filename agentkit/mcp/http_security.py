"""What a request must show before it reaches the tools over HTTP: a ``Host`` and an
``Origin`` the server answers to (``rebinding_refusal``, DNS-rebinding protection), and a
bearer token the server knows (``StaticTokens``, the SDK's ``TokenVerifier`` seam); and
who the caller is, from that token or a trusted proxy's header (``CallerIdentity``).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, final

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from agentkit.callers import ANONYMOUS, Caller
from agentkit.mcp.options import BearerToken, is_port, split_address

__all__ = [
    "ALL_TOOLS_SCOPE",
    "CallerIdentity",
    "StaticTokens",
    "rebinding_refusal",
    "toolset_scope",
]

logger = logging.getLogger("agentkit.serve")

_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
_LOOPBACK_HOSTS: Final = tuple(f"{name}:*" for name in _LOOPBACK_NAMES)
_LOOPBACK_ORIGINS: Final = tuple(f"http://{name}:*" for name in _LOOPBACK_NAMES)


# -- DNS rebinding -------------------------------------------------------------------------------

# A parsed Host or Origin: (scheme, host, port). The scheme is "" for a Host header; the
# host is lowercase, without brackets; the port is None for the scheme's default (80 or
# 443, also for a Host header, whose scheme a proxy may have changed), "*" for any.
_Place = tuple[str, str, "int | str | None"]
_DEFAULT_PORTS: Final = {"": (80, 443), "http": (80,), "https": (443,)}


def _place(text: str, scheme: str = "") -> _Place | None:
    """``HOST[:PORT]`` (``[IPv6]``, ``:*``) as compared; ``None`` when it is no such thing."""
    try:
        host, port = split_address(text)
    except ValueError:
        return None
    allowed = ".-:" if text.startswith("[") else ".-"  # a colon only inside brackets
    if not host or not all(char.isascii() and (char.isalnum() or char in allowed) for char in host):
        return None
    if port is None or port == "*":
        return scheme, host.lower(), port
    if not is_port(port):  # digits only: '127.0.0.1:evil.com' is no port
        return None
    number = int(port)
    return scheme, host.lower(), None if number in _DEFAULT_PORTS[scheme] else number


def _origin_place(text: str) -> _Place | None:
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        return None
    return _place(rest, scheme)


def _matches(given: _Place, allowed: _Place) -> bool:
    return given[:2] == allowed[:2] and allowed[2] in ("*", given[2])


@functools.lru_cache(maxsize=32)
def _allowed_places(
    texts: tuple[str, ...], parse: Callable[[str], _Place | None]
) -> tuple[_Place, ...]:
    """``texts`` parsed once per server, not once per request."""
    return tuple(place for text in texts if (place := parse(text)) is not None)


def _admitted(given: _Place | None, allowed: tuple[_Place, ...]) -> bool:
    return given is not None and any(_matches(given, place) for place in allowed)


def rebinding_refusal(
    host: str | None,
    origin: str | None,
    *,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
) -> tuple[int, str] | None:
    """DNS-rebinding protection for one request: ``None`` when its ``Host`` and
    ``Origin`` header values (``None`` when absent) may reach the tools, otherwise the
    status (421 for the Host, 403 for the Origin) and a one-line reason to answer with.

    The loopback names (any port) and ``allowed_hosts``/``allowed_origins`` (as
    ``--allowed-host``/``--allowed-origin`` take them) are allowed. Names compare
    case-insensitively, a default port (80, 443) is the same as none, ``:*`` allows
    any port, and a port must be digits. A request without ``Origin`` (not a browser's,
    or same-origin) passes that check.
    """
    hosts = _allowed_places((*_LOOPBACK_HOSTS, *allowed_hosts), _place)
    if not _admitted(_place(host) if host else None, hosts):
        return 421, (
            "Invalid Host header: only loopback names and the server's --allowed-host "
            "names are accepted; a server reached by another name needs --allowed-host NAME"
        )
    if not origin:
        return None
    origins = _allowed_places((*_LOOPBACK_ORIGINS, *allowed_origins), _origin_place)
    if not _admitted(_origin_place(origin), origins):
        return 403, (
            "Invalid Origin header: only loopback origins and the server's "
            "--allowed-origin origins are accepted"
        )
    return None


# -- auth ------------------------------------------------------------------------------------------


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


#: The scope a token needs to reach the whole registry, when toolsets are served too.
ALL_TOOLS_SCOPE: Final = "tools:all"


def toolset_scope(toolset: str) -> str:
    """The scope a token needs to reach toolset ``toolset`` (at ``/mcp/<toolset>``)."""
    return f"toolset:{toolset}"


@final
class StaticTokens:
    """A ``TokenVerifier`` (the SDK's auth seam) accepting a fixed set of bearer tokens.

    Tokens are compared as SHA-256 digests with ``hmac.compare_digest``, each against
    every known token, so neither the time taken nor an early exit tells a caller how
    close a guess came. An OAuth deployment passes the SDK a verifier of its own instead.

    Each accepted token carries scopes: a plain token (or a ``BearerToken`` without
    toolsets) ``ALL_TOOLS_SCOPE`` and ``toolset_scope`` of each of ``toolsets`` (the
    sets served); a ``BearerToken`` naming toolsets, only theirs. An endpoint requires
    its scope, so a token reaches what it names and nothing else.
    """

    def __init__(
        self, tokens: Sequence[str | BearerToken], *, toolsets: Iterable[str] = ()
    ) -> None:
        every = [ALL_TOOLS_SCOPE, *map(toolset_scope, toolsets)]
        self._known = tuple(
            (
                _digest(token if isinstance(token, str) else token.token),
                every
                if isinstance(token, str) or token.toolsets is None
                else sorted(map(toolset_scope, token.toolsets)),
                # Who holds it: its caller's name, or its place in the list, never its text.
                token.caller
                if isinstance(token, BearerToken) and token.caller
                else f"token-{index}",
            )
            for index, token in enumerate(tokens, start=1)
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        offered = _digest(token)
        matched = -1
        for index, (known, _, _) in enumerate(self._known):
            if hmac.compare_digest(offered, known):
                matched = index
        if matched < 0:
            return None
        # The token itself stays out of the request's scope (and so out of anything
        # that logs it): the principal is the caller it names, or its place in the list.
        _, scopes, caller = self._known[matched]
        return AccessToken(token="[redacted]", client_id=caller, scopes=list(scopes))


# -- who is calling --------------------------------------------------------------------------------


@final
class CallerIdentity:
    """Who a call over HTTP is made for, from its request (``__call__`` takes the SDK's
    request context, as ``build_server``'s ``identify``).

    ``header`` (lowercase), sent by a peer within ``trusted_proxies`` (networks), names
    the caller (``via="proxy-header"``); the same header from any other peer is
    ignored, and logged once, since a client could name anyone in it. Otherwise the
    bearer token the server accepted names it (``via="token"``: ``StaticTokens`` puts
    the caller's name, or ``token-N``, as the token's client id); otherwise the caller
    is ``ANONYMOUS``. A header value that is no caller's name (``Caller``'s rule) is
    ignored too, and logged once.
    """

    def __init__(self, *, header: str | None = None, trusted_proxies: Sequence[str] = ()) -> None:
        self._header = header.lower().encode("latin-1") if header else None
        self._trusted = tuple(ipaddress.ip_network(net, strict=False) for net in trusted_proxies)
        self._warned: set[str] = set()

    def __call__(self, ctx: Any) -> Caller:
        scope = getattr(getattr(ctx, "request", None), "scope", None)
        if not isinstance(scope, dict):
            return ANONYMOUS  # stdio, or a request the SDK made no context of
        if self._header is not None:
            named = self._from_proxy(scope)
            if named is not None:
                return named
        user = scope.get("user")
        if isinstance(user, AuthenticatedUser):
            return Caller(name=user.access_token.client_id, via="token")
        return ANONYMOUS

    def _from_proxy(self, scope: dict[str, Any]) -> Caller | None:
        values = [value for key, value in scope.get("headers", ()) if key == self._header]
        if not values:
            return None
        header = self._header.decode("latin-1") if self._header else ""
        peer = (scope.get("client") or ("", 0))[0]
        if not self._trusts(peer):
            self._warn_once(
                "untrusted",
                f"a request from {peer or 'an unknown peer'} carried the {header} header, "
                "ignored: only --trusted-proxy peers name the caller; the caller is taken "
                "from its token, or anonymous",
            )
            return None
        if len(values) > 1:
            self._warn_once("twice", f"the {header} header was sent more than once: ignored")
            return None
        try:
            return Caller(name=values[0].decode("latin-1").strip(), via="proxy-header")
        except ValueError:
            self._warn_once(
                "invalid",
                f"the {header} header from {peer} is no caller's name (1 to 128 letters, "
                "digits and '_.@:-'): ignored",
            )
            return None

    def _trusts(self, peer: str) -> bool:
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in network for network in self._trusted)

    def _warn_once(self, what: str, message: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            logger.warning("agentkit: %s", message)
