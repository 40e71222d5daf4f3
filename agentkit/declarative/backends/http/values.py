"""The typed values of an HTTP backend definition: how it authenticates and what body it sends.

Each is a frozen, slotted, keyword-only dataclass. An auth says where it goes
(``placement``: a header or a query parameter, and the ``name`` there) and
makes the value to send from the call's credentials; a body says what it sends
and with which media type. ``HttpBackend`` renders them; nothing here sends.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Protocol, TypeAlias, final

from agentkit.declarative.backends.http.multipart import MultipartBody
from agentkit.declarative.templates import Template
from agentkit.redaction import redact_also

if TYPE_CHECKING:
    import requests

    from agentkit.declarative.backends.http.oauth2 import ClientCredentials

__all__ = [
    "HEADER_NAME",
    "ApiKeyAuth",
    "BasicAuth",
    "BearerAuth",
    "FormBody",
    "HttpAuth",
    "HttpBody",
    "JsonArray",
    "JsonBody",
    "JsonNode",
    "JsonObject",
    "OAuth2Auth",
    "Placement",
    "TextBody",
]

Placement: TypeAlias = Literal["header", "query"]
#: An HTTP header name (RFC 9110 token).
HEADER_NAME: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class HttpAuth(Protocol):
    """What an auth tells the backend: where its value goes, and the value itself."""

    @property
    def placement(self) -> Placement:
        """``"header"`` or ``"query"``."""

    @property
    def name(self) -> str:
        """The header or query parameter the value goes in."""

    @property
    def credential_names(self) -> tuple[str, ...]:
        """The declared credentials the value is made from."""

    def value(self, credentials: Mapping[str, str]) -> str:
        """The header or parameter value; a form derived from a secret joins the redactor."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class BearerAuth:
    """``auth: {bearer: CRED}``: ``Authorization: Bearer <CRED>``."""

    credential: str
    placement: ClassVar[Placement] = "header"
    name: ClassVar[str] = "Authorization"

    @property
    def credential_names(self) -> tuple[str, ...]:
        return (self.credential,)

    def value(self, credentials: Mapping[str, str]) -> str:
        return f"Bearer {credentials[self.credential]}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class BasicAuth:
    """``auth: {basic: {username: CRED | ${VAR} | {value: TEXT}, password: CRED}}``:
    ``Authorization: Basic ...``.

    ``username`` names a credential, or -- with ``literal_username`` -- is the username
    itself, written in the definition (or by ``${VAR}``) because it is not secret.
    """

    username: str
    password: str
    literal_username: bool = False
    placement: ClassVar[Placement] = "header"
    name: ClassVar[str] = "Authorization"

    @property
    def credential_names(self) -> tuple[str, ...]:
        return (self.password,) if self.literal_username else (self.username, self.password)

    def value(self, credentials: Mapping[str, str]) -> str:
        user = self.username if self.literal_username else credentials[self.username]
        pair = f"{user}:{credentials[self.password]}"
        redact_also(pair)  # its base64 is found as a whole, not only each part's core
        return "Basic " + base64.b64encode(pair.encode()).decode("ascii")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKeyAuth:
    """``auth: {api_key: {credential: CRED, in: header|query, name: NAME}}``: the key as is."""

    credential: str
    placement: Placement = "header"
    name: str

    @property
    def credential_names(self) -> tuple[str, ...]:
        return (self.credential,)

    def value(self, credentials: Mapping[str, str]) -> str:
        return credentials[self.credential]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OAuth2Auth:
    """``auth: {oauth2: {token_url, client_id: CRED | ${VAR} | {value: TEXT},
    client_secret: CRED, scopes}}``.

    ``Authorization: Bearer <token>``, the token from the grant's cache (shared
    by the tools of a source) or fetched when there is none still fresh. Unlike
    the others its value needs the network: the backend calls ``token()``
    within the call's deadline, and ``invalidate()`` once on a 401. ``client_id``
    names a credential, or -- with ``literal_client_id`` -- is the id itself.
    """

    grant: ClientCredentials
    client_id: str
    client_secret: str
    literal_client_id: bool = False
    placement: ClassVar[Placement] = "header"
    name: ClassVar[str] = "Authorization"

    @property
    def credential_names(self) -> tuple[str, ...]:
        if self.literal_client_id:
            return (self.client_secret,)
        return (self.client_id, self.client_secret)

    def token(
        self, credentials: Mapping[str, str], *, deadline: float, session: requests.Session
    ) -> str:
        """A bearer token; raises ``OAuth2Error``. The secret and token join the redactor."""
        return self.grant.token(
            self.client_id if self.literal_client_id else credentials[self.client_id],
            credentials[self.client_secret],
            deadline=deadline,
            session=session,
        )

    def invalidate(self, token: str) -> None:
        """Forget ``token`` after the API refused it, so the next ``token()`` fetches anew."""
        self.grant.invalidate(token)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class JsonObject:
    """A mapping in a ``json:`` body; each value a template, a literal or another node."""

    members: tuple[tuple[str, JsonNode], ...]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class JsonArray:
    """A list in a ``json:`` body."""

    items: tuple[JsonNode, ...]


# A node of a JSON body: a template, a container of nodes, or a literal scalar
# (None, a bool or a number) sent as it is.
JsonNode: TypeAlias = "Template | JsonObject | JsonArray | bool | int | float | None"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class JsonBody:
    """``json:``: a JSON document, rendered node by node (a ``None`` member is left out)."""

    value: JsonNode
    content_type: str | None = None  # None: requests' application/json


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FormBody:
    """``form:``: ``application/x-www-form-urlencoded`` fields (a ``None`` field is left out)."""

    fields: tuple[tuple[str, Template | Any], ...]
    content_type: str | None = None  # None: requests' application/x-www-form-urlencoded


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TextBody:
    """``body:``: one template rendered to text and sent UTF-8 encoded."""

    template: Template
    content_type: str = "text/plain"


HttpBody: TypeAlias = JsonBody | FormBody | TextBody | MultipartBody
