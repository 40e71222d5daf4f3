"""The source file: ``servers`` as the base URL, ``securitySchemes`` as auth."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

from agentkit.credentials import environment_name
from agentkit.openapi.bodies import COOKIE_NAME, Cookie, cookie_template
from agentkit.openapi.literal import url_text
from agentkit.openapi.naming import snake_case
from agentkit.openapi.reader import Resolver, pointer_join, unexpressible
from agentkit.openapi.schemas import Notes, trim
from agentkit.toolerrors import UnexpressibleOperation

_VARIABLE = re.compile(r"\{([^{}]+)\}")
#: What a scheme's credential name takes for each of a pair (basic, OAuth2 client).
_CREDENTIAL_SUFFIXES: Final = ("", "-username", "-password", "-client-id", "-client-secret")


@dataclass(frozen=True, slots=True)
class Auth:
    """One way to authenticate: the ``auth`` value and the credentials it names."""

    auth: dict[str, Any] | None
    credentials: tuple[str, ...] = ()
    #: An API key sent as a cookie: no ``auth`` key says that, a ``Cookie`` header does.
    cookie: Cookie | None = None


NO_AUTH = Auth(None)


def env_prefix(source: str) -> str:
    return snake_case(source).upper() or "API"


def base_url(
    document: dict[str, Any], source: str, notes: Notes, reserved: Collection[str] = ()
) -> str:
    """The first server's URL, its variables as ``${SOURCE_VAR:-default}``.

    A variable whose name would be one in ``reserved`` (the environment variables the
    import's credentials are read from) gets ``_VAR`` added, with a note: loading would
    otherwise put a credential in the URL, where it is logged and shown.

    Without variables the whole URL is ``${SOURCE_BASE_URL:-url}``, so one variable
    points every tool elsewhere (staging, a mock). The description's text (the URL,
    the variables' defaults) is data: its braces are percent-encoded (``url_text``),
    so no ``${`` of its own is left for the loader to fill from the environment.
    """
    prefix = env_prefix(source)
    servers = document.get("servers")
    server = servers[0] if isinstance(servers, list) and servers else {}
    url = server.get("url") if isinstance(server, dict) else None
    if not isinstance(url, str) or not url.strip():
        notes.add("base_url", "#/servers", f"no server URL; set {prefix}_BASE_URL")
        return f"${{{prefix}_BASE_URL:-http://localhost}}"
    url = url.strip()
    variables = server.get("variables") if isinstance(server.get("variables"), dict) else {}

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        spec = variables.get(name) if isinstance(variables, dict) else None
        default = spec.get("default") if isinstance(spec, dict) else None
        env = f"{prefix}_{snake_case(name).upper()}"
        if env in reserved:
            wanted = env
            while env in reserved:
                env += "_VAR"
            notes.add("base_url", "#/servers/0/url", f"{wanted} names a credential; {env} instead")
        if default is None:
            # Not a variable of the server's: its text stays, until the operator sets one.
            what = (
                "has no default" if isinstance(spec, dict) else "is not a declared server variable"
            )
            message = f"{match.group(0)} {what}; set {env}"
            notes.add("base_url", "#/servers/0/url", message)
            default = match.group(0)
        return f"${{{env}:-{url_text(str(default))}}}"

    pieces: list[str] = []
    position = 0
    for match in _VARIABLE.finditer(url):
        text = url_text(url[position : match.start()])
        if text.endswith("$"):
            # "$" before "${VAR}" would read as "$${", the escape of a literal "${".
            text = text[:-1] + "%24"
        pieces += (text, variable(match))
        position = match.end()
    written = "".join(pieces) + url_text(url[position:])
    if "://" not in url:
        notes.add("base_url", "#/servers/0/url", f"a relative server URL; set {prefix}_BASE_URL")
        return f"${{{prefix}_BASE_URL:-http://localhost}}/{written.lstrip('/')}".rstrip("/")
    return written if pieces else f"${{{prefix}_BASE_URL:-{written}}}"


class Security:
    """The description's security schemes, as agentkit auth."""

    def __init__(
        self, document: dict[str, Any], source: str, resolver: Resolver, notes: Notes
    ) -> None:
        self.source = source
        self.notes = notes
        notes.translate = resolver.original
        components = document.get("components")
        schemes = components.get("securitySchemes") if isinstance(components, dict) else None
        self.schemes: dict[str, Any] = schemes if isinstance(schemes, dict) else {}
        self.resolver = resolver

    def credential(self, name: str) -> str:
        """The credential scheme ``name`` is given by (and the prefix of its pairs')."""
        return f"{self.source}-{snake_case(name).replace('_', '-') or 'auth'}"

    def environment_names(self) -> frozenset[str]:
        """Every environment variable a credential of these schemes may be read from."""
        return frozenset(
            environment_name(self.credential(name) + suffix)
            for name in self.schemes
            for suffix in _CREDENTIAL_SUFFIXES
        )

    def choose(self, requirements: Any, pointer: str) -> Auth:
        """The first alternative of a security requirement agentkit can express; raises
        ``UnexpressibleOperation`` located in the file read when there is none."""
        try:
            return self._choose(requirements, pointer)
        except UnexpressibleOperation as exc:
            original = self.resolver.original(exc.problem.pointer)
            if original == exc.problem.pointer:
                raise
            raise unexpressible(original, exc.problem.message) from None

    def _choose(self, requirements: Any, pointer: str) -> Auth:
        if not isinstance(requirements, list) or not requirements:
            return NO_AUTH
        reasons: list[str] = []
        for index, requirement in enumerate(requirements):
            if not isinstance(requirement, dict) or not requirement:
                return NO_AUTH
            if len(requirement) > 1:
                reasons.append(f"{' and '.join(requirement)} together (one auth per tool)")
                continue
            [(name, scopes)] = requirement.items()
            try:
                return self.scheme(name, scopes, pointer_join(pointer, index, name))
            except UnexpressibleOperation as exc:
                reasons.append(exc.problem.message)
        raise unexpressible(pointer, "no supported security requirement: " + "; ".join(reasons))

    def scheme(self, name: str, scopes: Any, pointer: str) -> Auth:
        where = pointer_join("#/components/securitySchemes", name)
        if name not in self.schemes:
            raise unexpressible(pointer, f"security scheme {name!r} is not defined")
        scheme, where, _ = self.resolver.resolve(self.schemes[name], where)
        if not isinstance(scheme, dict):
            raise unexpressible(where, "expected a security scheme (a mapping)")
        credential = self.credential(name)
        kind = scheme.get("type")
        http = str(scheme.get("scheme", "")).lower()
        if kind == "http" and http == "bearer":
            return Auth({"bearer": credential}, (credential,))
        if kind == "http" and http == "basic":
            user, password = f"{credential}-username", f"{credential}-password"
            return Auth({"basic": {"username": user, "password": password}}, (user, password))
        if kind == "apiKey" and scheme.get("in") == "cookie":
            cookie_name = str(scheme.get("name"))
            if not COOKIE_NAME.fullmatch(cookie_name):
                message = f"security scheme {name!r}: cookie name {cookie_name!r} is not a token"
                raise unexpressible(where, message)
            cookie = Cookie(cookie_name, f"credentials[{credential!r}]")
            return Auth(None, (credential,), cookie)
        if kind == "apiKey" and scheme.get("in") in ("header", "query"):
            key = {"credential": credential, "in": scheme["in"], "name": str(scheme.get("name"))}
            return Auth({"api_key": key}, (credential,))
        if kind == "oauth2":
            return self._oauth2(scheme, scopes, credential, where)
        if kind == "openIdConnect":
            self.notes.add("auth", where, "OpenID Connect: give an access token as a bearer")
            return Auth({"bearer": credential}, (credential,))
        what = f"{kind} in {scheme.get('in')}" if kind == "apiKey" else f"{kind} {http}".strip()
        raise unexpressible(where, f"security scheme {name!r} ({what}) is not supported")

    def _oauth2(self, scheme: dict[str, Any], scopes: Any, credential: str, where: str) -> Auth:
        flows = scheme.get("flows") if isinstance(scheme.get("flows"), dict) else {}
        flow = flows.get("clientCredentials") if isinstance(flows, dict) else None
        token_url = flow.get("tokenUrl") if isinstance(flow, dict) else None
        if isinstance(token_url, str) and token_url.startswith(("https://", "http://")):
            client_id, secret = f"{credential}-client-id", f"{credential}-client-secret"
            oauth2: dict[str, Any] = {
                # Read for ${VAR} at load time, and literal: no brace of the description's.
                "token_url": url_text(token_url),
                "client_id": client_id,
                "client_secret": secret,
            }
            if isinstance(scopes, list) and scopes:
                oauth2["scopes"] = [str(scope) for scope in scopes]
            return Auth({"oauth2": oauth2}, (client_id, secret))
        self.notes.add("auth", where, "OAuth2 without client credentials: give an access token")
        return Auth({"bearer": credential}, (credential,))


def source_document(document: dict[str, Any], source: str, url: str, auth: Auth) -> dict[str, Any]:
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    title = trim(info.get("title")) if isinstance(info, dict) else ""
    version = info.get("version") if isinstance(info, dict) else None
    doc: dict[str, Any] = {"source": source}
    if title:
        doc["description"] = f"{title} {version}" if version else title
    doc["base_url"] = url
    if auth.credentials:
        doc["credentials"] = list(auth.credentials)
    if auth.auth is not None:
        doc["auth"] = auth.auth
    if auth.cookie is not None:
        doc["headers"] = {"Cookie": cookie_template([auth.cookie])}
    return doc
