"""The source file: ``servers`` as the base URL, ``securitySchemes`` as auth."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.credentials import environment_name
from agentkit.openapi.bodies import COOKIE_NAME, Cookie, cookie_template
from agentkit.openapi.budgets import Budgets
from agentkit.openapi.descriptions import trim
from agentkit.openapi.literal import shown, url_text
from agentkit.openapi.naming import snake_case
from agentkit.openapi.reader import Resolver, pointer_join, unexpressible
from agentkit.openapi.schemas import Notes
from agentkit.problem import did_you_mean
from agentkit.toolerrors import UnexpressibleOperation, UsageError

_VARIABLE = re.compile(r"\{([^{}]+)\}")
#: What the environment variables of exposed server variables have after the source's
#: prefix (``SOURCE_SERVER_REGION``); no credential's does (``Security.credential``).
_SERVER: Final = "SERVER"
#: The credentials whose variables would be the base URL's own, renamed ``scheme-...``.
_RESERVED_SCHEMES: Final = re.compile(r"base_url|server(_.*)?")
#: How many of the server URL's variables an error lists.
_MAX_LISTED: Final = 10
#: What a scheme's credential name takes for each of a pair (basic, OAuth2 client).
_CREDENTIAL_SUFFIXES: Final = ("", "-username", "-password", "-client-id", "-client-secret")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Auth:
    """One way to authenticate: the ``auth`` value and the credentials it names."""

    #: A mapping, or ``none``: a tool of a source that needs none switches the source's off.
    auth: dict[str, Any] | str | None
    credentials: tuple[str, ...] = ()
    #: An API key sent as a cookie: no ``auth`` key says that, a ``Cookie`` header does.
    cookie: Cookie | None = None


NO_AUTH = Auth(auth=None)
#: A tool's auth when its operation needs none and the source has some.
AUTH_OFF = Auth(auth="none")


def env_prefix(source: str) -> str:
    return snake_case(source).upper() or "API"


def server_variable_env(source: str, name: str) -> str:
    """The environment variable a server variable the operator exposes is read from:
    ``SOURCE_SERVER_NAME``. No credential of an import is read from one of this
    form (``Security.credential``), and no other server variable is read at all."""
    return f"{env_prefix(source)}_{_SERVER}_{snake_case(name).upper()}"


def base_url(
    document: dict[str, Any],
    source: str,
    notes: Notes,
    *,
    expose: Collection[str] = (),
    reserved: Collection[str] = (),
    gone_ok: bool = False,
) -> str:
    """The first server's URL, each variable's default written in it as text.

    A variable's name is the description's text: were it to name an environment
    variable, the description would choose which of the operator's variables fills
    the URL (``{token}`` -> ``GITHUB_TOKEN``, put in the host, shown, sent). So only
    the variables the operator names in ``expose`` are read from the environment, as
    ``${SOURCE_SERVER_VAR:-default}`` (``server_variable_env``); every other one is
    its default, with a note. Without an exposed variable the whole URL is
    ``${SOURCE_BASE_URL:-url}``, so one variable the operator chose by ``source``
    points every tool elsewhere (staging, a mock).

    The description's text (the URL, the defaults) is data: its braces are
    percent-encoded (``url_text``), so no ``${`` of its own is left for the loader to
    fill from the environment. Raises ``UsageError`` when a name in ``expose`` is not
    a variable of the URL (a note when ``gone_ok``: an update's, from the lock file),
    has no ASCII letter or digit, shares its environment variable with another, or
    would be read from one in ``reserved`` (a credential's).
    """
    prefix = env_prefix(source)
    servers = document.get("servers")
    server = servers[0] if isinstance(servers, list) and servers else {}
    url = server.get("url") if isinstance(server, dict) else None
    if not isinstance(url, str) or not url.strip():
        _check_exposed(expose, [], source, reserved, notes if gone_ok else None)
        notes.add("base_url", "#/servers", f"no server URL; set {prefix}_BASE_URL")
        return f"${{{prefix}_BASE_URL:-http://localhost}}"
    url = url.strip()
    variables = server.get("variables") if isinstance(server.get("variables"), dict) else {}
    _check_exposed(expose, _VARIABLE.findall(url), source, reserved, notes if gone_ok else None)
    if "://" not in url:
        written, _ = _filled(url, variables, source, expose, notes, in_host=False)
        notes.add("base_url", "#/servers/0/url", f"a relative server URL; set {prefix}_BASE_URL")
        return f"${{{prefix}_BASE_URL:-http://localhost}}/{written.lstrip('/')}".rstrip("/")
    # The origin and the path apart: a variable with no default keeps its own text in
    # the URL, which a path can hold and a host cannot.
    start = url.index("://") + 3
    end = url.find("/", start) % (len(url) + 1)
    origin, unnamed_host = _filled(url[:end], variables, source, expose, notes, in_host=True)
    path, _ = _filled(url[end:], variables, source, expose, notes, in_host=False)
    if unnamed_host:
        # No host to point at until the operator says which one: the note says how.
        if "${" in path:  # an exposed variable's
            return f"${{{prefix}_BASE_URL:-http://localhost}}{path}".rstrip("/")
        return f"${{{prefix}_BASE_URL:-http://localhost{path.rstrip('/')}}}"
    if path.startswith("${") and origin.endswith("$"):
        origin = origin[:-1] + "%24"  # as in ``_filled``
    written = origin + path
    # The description's text has no "${" left (url_text): one is an exposed variable's.
    return written if "${" in written else f"${{{prefix}_BASE_URL:-{written}}}"


def _filled(
    text: str,
    variables: Any,
    source: str,
    expose: Collection[str],
    notes: Notes,
    *,
    in_host: bool,
) -> tuple[str, bool]:
    """``text``, a piece of the server URL, with each ``{name}`` as ``_variable`` writes
    it; and whether one kept its own text (no default, not exposed)."""
    written = ""
    position = 0
    kept = False
    for match in _VARIABLE.finditer(text):
        written += url_text(text[position : match.start()])
        value = _variable(match, variables, source, expose, notes, in_host=in_host)
        kept = kept or value == url_text(match.group(0))
        if value.startswith("${") and written.endswith("$"):
            # "$" before "${VAR}" would read as "$${", the escape of a literal "${".
            written = written[:-1] + "%24"
        written += value
        position = match.end()
    return written + url_text(text[position:]), kept


def _variable(
    match: re.Match[str],
    variables: Any,
    source: str,
    expose: Collection[str],
    notes: Notes,
    *,
    in_host: bool,
) -> str:
    """What to write for the ``{name}`` of a server URL: ``${SOURCE_SERVER_NAME:-default}``
    when ``name`` is in ``expose``, else its default as text (with a note); a name the
    server declares no default for has its own text as its default, except in the host
    (``in_host``), where no text of braces is a host name: an exposed one is then
    ``${SOURCE_SERVER_NAME}``, which the operator must set."""
    name = match.group(1)
    spec = variables.get(name) if isinstance(variables, dict) else None
    default = spec.get("default") if isinstance(spec, dict) else None
    env = server_variable_env(source, name)
    how = f"set {env}" if name in expose else f"set {env_prefix(source)}_BASE_URL"
    if default is None:
        # Not a variable of the server's: its own text stays, until the operator says.
        what = "has no default" if isinstance(spec, dict) else "is not a declared server variable"
        notes.add("base_url", "#/servers/0/url", f"{shown(match.group(0))} {what}; {how}")
        if in_host and name in expose:
            return f"${{{env}}}"
        default = match.group(0)
    elif name not in expose:
        message = (
            f"server variable {shown(name)} is its default, {shown(str(default))}; "
            f"{how} to point elsewhere, or import with --server-variable to read "
            f"{shown(env)}"
        )
        notes.add("base_url", "#/servers/0/url", message)
    if name in expose:
        return f"${{{env}:-{url_text(str(default))}}}"
    return url_text(str(default))


def _check_exposed(
    expose: Collection[str],
    found: list[str],
    source: str,
    reserved: Collection[str],
    gone: Notes | None,
) -> None:
    """``UsageError`` for the first name in ``expose`` that cannot be read from the
    environment: not a variable of the server URL (``found``; a note in ``gone``
    instead, when given), without an ASCII letter or digit, sharing its variable with
    another, or reading a credential's."""
    taken: dict[str, str] = {}
    for name in expose:
        if name not in found:
            known = list(dict.fromkeys(found))
            listed = ", ".join(shown(each) for each in known[:_MAX_LISTED]) or "none"
            more = f" and {len(known) - _MAX_LISTED} more" if len(known) > _MAX_LISTED else ""
            message = f"has no {{{name}}} (its variables: {listed}{more})"
            if gone is not None:
                note = f"--server-variable {name!r} of the first import: the URL {message}"
                gone.add("base_url", "#/servers/0/url", note)
                continue
            raise UsageError(
                f"--server-variable {name!r}: the first server's URL {message}"
                f"{did_you_mean(name, known)}"
            )
        env = server_variable_env(source, name)
        if not snake_case(name):
            raise UsageError(
                f"--server-variable {name!r}: a name without an ASCII letter or digit names no "
                f"environment variable; set the whole URL with {env_prefix(source)}_BASE_URL"
            )
        if taken.get(env, name) != name:
            raise UsageError(
                f"--server-variable {name!r} and {taken[env]!r} would both be read from "
                f"{env}; expose one of them"
            )
        if env in reserved:
            raise UsageError(
                f"--server-variable {name!r} would be read from {env}, a credential's variable"
            )
        taken[env] = name


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
        """The credential scheme ``name`` is given by (and the prefix of its pairs').

        A scheme whose credential would be read from one of the base URL's variables
        (``SOURCE_BASE_URL``, ``SOURCE_SERVER_...``) gets ``scheme-`` in front: the
        operator would set the secret there, and loading would put it in the URL.
        """
        scheme = snake_case(name) or "auth"
        if _RESERVED_SCHEMES.fullmatch(scheme):
            scheme = f"scheme_{scheme}"
        return f"{self.source}-{scheme.replace('_', '-')}"

    def environment_names(self) -> frozenset[str]:
        """Every environment variable a credential of these schemes may be read from."""
        return frozenset(
            environment_name(self.credential(name) + suffix)
            for name in self.schemes
            for suffix in _CREDENTIAL_SUFFIXES
        )

    def shared(
        self,
        document: dict[str, Any],
        found: Sequence[tuple[Any, str]],
        wanted: str | None,
        *,
        loads: Callable[[Auth], bool] = lambda auth: True,
    ) -> tuple[Auth, str | None]:
        """The source's auth and the name of its scheme.

        ``wanted`` (``--auth``) when given; else the first alternative of the top-level
        ``security`` agentkit can express; without a top-level ``security``, the scheme
        the most operations accept (``found``: each operation's ``security`` and its
        pointer), the first of the description's order on a tie; one whose source would
        not load (``loads``) is passed over, as the operations using it are skipped.
        Each operation that accepts the source's scheme then uses it, and the scheme is
        one edit to change.
        ``UsageError`` naming the schemes when ``wanted`` is none or not expressible.
        """
        if wanted is not None:
            return self._wanted(document, found, wanted), wanted
        if "security" in document:
            try:
                auth, name = self._choose(document.get("security"), "#/security")
            except UnexpressibleOperation as exc:
                problem = exc.problem
                self.notes.add("auth", self.resolver.original(problem.path), problem.message)
                return NO_AUTH, None
            others = [str(other) for other in self.schemes if other != name]
            if name is not None and others:
                self.notes.add(
                    "auth",
                    "#/security",
                    f"the source uses {name!r}; --auth chooses another of: {', '.join(others)}",
                )
            return auth, name
        counts: dict[str, int] = {}
        for requirements, _ in found:
            for name in _alternatives(requirements):
                counts[name] = counts.get(name, 0) + 1
        for name in sorted(counts, key=lambda name: -counts[name]):
            where = pointer_join("#/components/securitySchemes", name)
            try:
                auth = self.scheme(name, _scopes(name, found), where)
            except UnexpressibleOperation:
                continue
            if not loads(auth):
                continue
            self.notes.add(
                "auth",
                where,
                f"no top-level security: the source uses {name!r}, which {counts[name]} of "
                f"{len(found)} operation(s) accept (--auth chooses another)",
            )
            return auth, name
        return NO_AUTH, None

    def _wanted(
        self, document: dict[str, Any], found: Sequence[tuple[Any, str]], name: str
    ) -> Auth:
        if name not in self.schemes:
            listed = ", ".join(sorted(map(str, self.schemes))) or "none"
            raise UsageError(
                f"--auth {name!r} is not a security scheme of the description"
                f"{did_you_mean(name, map(str, self.schemes))}; its schemes: {listed}"
            )
        where = pointer_join("#/components/securitySchemes", name)
        requirements = [(document.get("security"), "#/security"), *found]
        try:
            auth = self.scheme(name, _scopes(name, requirements), where)
        except UnexpressibleOperation as exc:
            raise UsageError(
                f"--auth {name!r}: {exc.problem.message} ({exc.problem.path}); choose "
                "another of: " + ", ".join(sorted(map(str, self.schemes)))
            ) from None
        others = [str(other) for other in self.schemes if other != name]
        if others:
            self.notes.add("auth", where, f"chosen with --auth over {', '.join(others)}")
        return auth

    def choose(self, requirements: Any, pointer: str) -> Auth:
        """The first alternative of a security requirement agentkit can express; raises
        ``UnexpressibleOperation`` located in the file read when there is none."""
        try:
            return self._choose(requirements, pointer)[0]
        except UnexpressibleOperation as exc:
            original = self.resolver.original(exc.problem.path)
            if original == exc.problem.path:
                raise
            raise unexpressible(original, exc.problem.message) from None

    def _choose(self, requirements: Any, pointer: str) -> tuple[Auth, str | None]:
        if not isinstance(requirements, list) or not requirements:
            return NO_AUTH, None
        reasons: list[str] = []
        for index, requirement in enumerate(requirements):
            if not isinstance(requirement, dict) or not requirement:
                return NO_AUTH, None
            if len(requirement) > 1:
                reasons.append(f"{' and '.join(requirement)} together (one auth per tool)")
                continue
            [(name, scopes)] = requirement.items()
            try:
                return self.scheme(name, scopes, pointer_join(pointer, index, name)), name
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
            return Auth(auth={"bearer": credential}, credentials=(credential,))
        if kind == "http" and http == "basic":
            user, password = f"{credential}-username", f"{credential}-password"
            return Auth(
                auth={"basic": {"username": user, "password": password}},
                credentials=(user, password),
            )
        if kind == "apiKey" and scheme.get("in") == "cookie":
            cookie_name = str(scheme.get("name"))
            if not COOKIE_NAME.fullmatch(cookie_name):
                message = f"security scheme {name!r}: cookie name {cookie_name!r} is not a token"
                raise unexpressible(where, message)
            cookie = Cookie(name=cookie_name, value=f"credentials[{credential!r}]")
            return Auth(auth=None, credentials=(credential,), cookie=cookie)
        if kind == "apiKey" and scheme.get("in") in ("header", "query"):
            key = {"credential": credential, "in": scheme["in"], "name": str(scheme.get("name"))}
            return Auth(auth={"api_key": key}, credentials=(credential,))
        if kind == "oauth2":
            return self._oauth2(scheme, scopes, credential, where)
        if kind == "openIdConnect":
            self.notes.add("auth", where, "OpenID Connect: give an access token as a bearer")
            return Auth(auth={"bearer": credential}, credentials=(credential,))
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
            return Auth(auth={"oauth2": oauth2}, credentials=(client_id, secret))
        self.notes.add("auth", where, "OAuth2 without client credentials: give an access token")
        return Auth(auth={"bearer": credential}, credentials=(credential,))


def _alternatives(requirements: Any) -> list[str]:
    """The schemes a security requirement accepts alone (one of its alternatives each)."""
    if not isinstance(requirements, list):
        return []
    return [
        str(next(iter(requirement)))
        for requirement in requirements
        if isinstance(requirement, dict) and len(requirement) == 1
    ]


def accepts(requirements: Any, scheme: str) -> bool:
    """Whether ``scheme`` alone is one of the alternatives of ``requirements``."""
    return scheme in _alternatives(requirements)


def _scopes(name: str, found: Sequence[tuple[Any, str]]) -> list[Any]:
    """The scopes the first requirement naming ``name`` alone asks for."""
    for requirements, _ in found:
        for requirement in requirements if isinstance(requirements, list) else ():
            if isinstance(requirement, dict) and list(requirement) == [name]:
                scopes = requirement[name]
                return scopes if isinstance(scopes, list) else []
    return []


def source_document(document: dict[str, Any], source: str, url: str, auth: Auth) -> dict[str, Any]:
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    title = trim(info.get("title"), Budgets().description_chars) if isinstance(info, dict) else ""
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
