"""Keeping credential values out of everything a call produces.

A secret can reach a message in several spellings: as itself, percent-encoded in
a URL, escaped inside JSON or a Python repr, or base64-encoded in a basic-auth
header. ``Redactor`` knows every one of them and replaces each with ``***``.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import quote, quote_plus

__all__ = ["MASK", "Redactor"]

MASK: Final = "***"


def _spellings(secret: str) -> set[str]:
    raw = secret.encode("utf-8")
    b64 = base64.b64encode(raw).decode("ascii")
    return {
        secret,
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
        b64,
        b64.rstrip("="),
        base64.urlsafe_b64encode(raw).decode("ascii").rstrip("="),
    }


@functools.lru_cache(maxsize=256)
def _pattern(secrets: frozenset[str]) -> re.Pattern[str]:
    """The pattern matching every spelling of ``secrets``, made once per set.

    Calls with credentials build a redactor each (the executor and the HTTP
    backend both do); without this cache every call paid for every spelling
    and a regex compile. The cache keeps the values the credential providers
    already hold in memory, nothing more.
    """
    forms = {form for secret in secrets for form in _spellings(secret) if form}
    # Longest first, so a secret's encoded form wins over a shorter secret inside it.
    ordered = sorted(forms, key=len, reverse=True)
    return re.compile("|".join(re.escape(form) for form in ordered))


class Redactor:
    """Replaces every known spelling of the secrets it holds with ``***``.

    A redactor with no secrets returns text unchanged at the cost of one test.
    """

    __slots__ = ("_pattern", "_secrets")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        """Also redact ``secrets`` (empty strings are ignored: there is nothing to hide)."""
        new = {secret for secret in secrets if secret} - self._secrets
        if not new:
            return
        self._secrets |= new
        self._pattern = _pattern(frozenset(self._secrets))

    def __bool__(self) -> bool:
        return self._pattern is not None

    def redact(self, text: str) -> str:
        """``text`` with every spelling of every secret replaced by ``***``."""
        if self._pattern is None:
            return text
        return self._pattern.sub(MASK, text)

    def redact_value(self, value: Any) -> Any:
        """A copy of a JSON-like value with secrets redacted in every string, keys included."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {
                self.redact(k) if isinstance(k, str) else k: self.redact_value(v)
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return type(value)(self.redact_value(item) for item in value)
        return value

    def contains_secret(self, text: str) -> bool:
        return self._pattern is not None and self._pattern.search(text) is not None
