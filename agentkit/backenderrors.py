"""A backend's own failures (an HTTP call, an OAuth 2.0 token, pages, a multipart
body, a template) and the refusal of a declared limit: raised inside a tool, each
is the cause of the ``ToolExecutionError`` that reports the call."""

from __future__ import annotations

from agentkit.errorbase import AgentKitError, BackendError

__all__ = [
    "HttpCallError",
    "LimitedError",
    "MissingValue",
    "MultipartError",
    "OAuth2Error",
    "PaginationError",
    "TemplateRenderError",
]


class TemplateRenderError(BackendError):
    """A template failed while rendering (a missing key, a refused operation, its deadline).

    ``field`` is the definition field the template fills (``backend.http.query.q``),
    set once the error leaves ``Template.render``; ``reason`` says what went wrong.
    """

    def __init__(self, reason: str, *, field: str | None = None) -> None:
        self.reason = reason
        self.field = field
        super().__init__(f"{field}: {reason}" if field else reason)


class MissingValue(TemplateRenderError):
    """A lookup found nothing: ``walked`` (``response.json``, or ``a value`` when it
    was computed) has no key or item ``step``. One wording, whoever renders."""

    def __init__(self, walked: str, step: str | int) -> None:
        self.walked = walked
        self.step = step
        if isinstance(step, int):
            super().__init__(f"{walked} has no item [{step}]")
        else:
            super().__init__(f"{walked} has no key '{step}'")


class HttpCallError(BackendError):
    """An HTTP backend call failed; ``kind`` says how (status, timeout, deadline, ...)."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.kind = kind
        self.status = status
        #: The wait the reply's ``Retry-After`` asked for, in seconds (a 429), if any.
        self.retry_after = retry_after
        super().__init__(message)


class OAuth2Error(BackendError):
    """Getting a token from an OAuth 2.0 token endpoint failed.

    ``kind`` says how: ``config`` (the grant itself is invalid), ``connection``,
    ``timeout``, ``status`` (the endpoint refused; ``status``, ``error`` and
    ``error_description`` say what it said), ``response`` (the reply is not a
    usable token). ``token_url`` names the endpoint.
    """

    def __init__(
        self,
        token_url: str,
        kind: str,
        reason: str,
        *,
        status: int | None = None,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        self.token_url = token_url
        self.kind = kind
        self.reason = reason
        self.status = status
        self.error = error
        self.error_description = error_description
        super().__init__(f"OAuth2 token request to {token_url}: {reason}")


class MultipartError(BackendError):
    """A multipart body could not be built: bad base64, over ``max_bytes``, a bad media type."""


class PaginationError(BackendError):
    """Following the pages failed: a page's records are not a list, a cursor is not text, ..."""


class LimitedError(AgentKitError):
    """A call refused by a limit before anything was sent: ``retry_after`` seconds from
    now it may pass. ``scope`` says which limit: ``"per_caller"``, ``"total"``,
    ``"concurrent"``, ``"paused"`` (the upstream answered 429) or ``"store"`` (the
    shared limits store could not be reached)."""

    def __init__(self, message: str, *, scope: str, retry_after: float) -> None:
        self.scope = scope
        self.retry_after = retry_after
        super().__init__(message)
