"""``auth:`` of an HTTP definition: bearer, basic, an API key, or OAuth2 client credentials.

Each is checked against the definition's declared credentials; OAuth2's settings are
checked here and made into a grant (``oauth2_auth``) once the source's token cache is
known, so the tools of one source share tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, final

from agentkit.declarative.backends.http.oauth2 import ClientCredentials, OAuth2Error, TokenCache
from agentkit.declarative.backends.http.templating import TemplateContext
from agentkit.declarative.backends.http.values import (
    HEADER_NAME,
    ApiKeyAuth,
    BasicAuth,
    BearerAuth,
    HttpAuth,
    OAuth2Auth,
)
from agentkit.declarative.environment import LiteralText
from agentkit.declarative.problems import Location, Problems, check_keys
from agentkit.problem import did_you_mean

__all__ = ["OAUTH2_KEYS", "OAuth2Settings", "oauth2_auth", "parse_auth"]


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
class OAuth2Settings:
    """``auth.oauth2`` checked, before its grant is made (with the source's token cache)."""

    token_url: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...]
    audience: str | None
    client_auth: Literal["basic", "body"]
    literal_client_id: bool = False


def oauth2_auth(
    settings: OAuth2Settings, location: Location, problems: Problems, cache: TokenCache | None
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


def _parse_oauth2(raw: Any, here: Location, context: TemplateContext) -> OAuth2Settings | None:
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
    return OAuth2Settings(
        token_url=token_url,
        client_id=client_id,
        client_secret=secret,
        scopes=tuple(scopes),
        audience=audience,
        client_auth=client_auth,
        literal_client_id=literal,
    )


def parse_auth(
    raw: Any, location: Location, context: TemplateContext
) -> HttpAuth | OAuth2Settings | None:
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
        if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
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
    raw: Any, location: Location, context: TemplateContext, what: str
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
