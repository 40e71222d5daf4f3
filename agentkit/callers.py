"""Who is calling: the identity a call is made for, as a shared host knows it.

A server that accepted a bearer token, or a header from a trusted proxy, knows who
its client is; stdio and a server without auth do not (``ANONYMOUS``). The serving
layer sets the caller for the duration of a call (``calling_as``); anything below
it -- events, spans, limits, caches, the audit trail -- reads it with
``current_caller()``, never through an argument threaded through every layer. A
caller's name is an operator's label (``triage-bot``), never a credential, and is
never sent to an upstream API.

The caller lives in a ``contextvars.ContextVar``: each asyncio task and each thread
started with ``contextvars.copy_context()`` (``asyncio.to_thread`` does) sees the
caller of the call that started it, and nothing else.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final, final

__all__ = ["ANONYMOUS", "Caller", "calling_as", "current_caller"]

#: What a caller's name may hold: it appears in logs, metrics labels and cache keys.
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Caller:
    """One caller: ``name`` as the operator labelled it, and ``via``, how the server
    knows it (``"token"``, ``"proxy-header"``, or ``"none"`` for ``ANONYMOUS``)."""

    name: str
    via: str

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(
                f"caller name {self.name!r}: use 1 to 128 letters, digits and '_.@:-', "
                "starting with a letter or digit"
            )

    @property
    def anonymous(self) -> bool:
        return self is ANONYMOUS


#: The caller of every call a server cannot attribute: stdio, or HTTP without auth.
ANONYMOUS: Final = Caller(name="anonymous", via="none")

_CURRENT: contextvars.ContextVar[Caller] = contextvars.ContextVar(
    "agentkit_caller", default=ANONYMOUS
)


def current_caller() -> Caller:
    """The caller of the call being made in this context; ``ANONYMOUS`` outside one."""
    return _CURRENT.get()


@contextmanager
def calling_as(caller: Caller) -> Iterator[Caller]:
    """Make ``caller`` the current caller for the block (and the tasks it starts)."""
    token = _CURRENT.set(caller)
    try:
        yield caller
    finally:
        _CURRENT.reset(token)
