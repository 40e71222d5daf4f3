"""Finding a secret in text, in any spelling a test can think of -- without agentkit's help."""

from __future__ import annotations

import base64
import html
import json
import logging
import re
import traceback
from collections.abc import Iterable, Iterator
from urllib.parse import quote, quote_plus

#: Secrets whose spellings differ: non-ASCII, '/', '+', '=', '"', '\\', spaces, and
#: lengths 0, 1 and 2 modulo 3 (in UTF-8 bytes too), so each base64 alignment is met.
SECRETS = (
    "sk/live+Zq==9",
    "pä ss/wörd+1",
    'tok"en\\x€=zz',
    "A1b2C3d4e5F6g7H8",
    "Ünï/cødé+==key",
)


def _base64_cores(raw: bytes) -> Iterator[str]:
    """The secret's base64 characters at each alignment that no neighbouring byte changes."""
    for shift in range(3):
        low = base64.b64encode(b"\0" * shift + raw + b"\0\0\0").decode()
        high = base64.b64encode(b"\xff" * shift + raw + b"\xff\xff\xff").decode()
        same = "".join(a if a == b else "\n" for a, b in zip(low, high, strict=True))
        yield max(same.split("\n"), key=len)


def spellings(secret: str) -> set[str]:
    raw = secret.encode()
    percent = quote(secret, safe="")
    forms = {
        secret,
        percent,
        re.sub("%..", lambda match: match[0].lower(), percent),
        quote(secret),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret)[1:-1].replace("/", "\\/"),
        json.dumps(json.dumps(secret))[3:-3],
        repr(secret)[1:-1],
        html.escape(secret),
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    }
    forms.update(core for core in _base64_cores(raw) if len(core) >= 6)
    return {form for form in forms if form}


def leaked(text: str, secrets: Iterable[str] = SECRETS) -> list[str]:
    """Each spelling of a secret found in ``text`` (an empty list: nothing leaked)."""
    return sorted({form for secret in secrets for form in spellings(secret) if form in text})


def chain_text(error: BaseException, depth: int = 0) -> str:
    """Everything readable from an exception: formatted traceback, repr, args, attributes."""
    parts = ["".join(traceback.format_exception(error)), repr(error), str(error)]
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending and len(seen) < 64:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        parts += [repr(current), repr(current.args), repr(getattr(current, "__notes__", ""))]
        parts += [repr(value) for value in getattr(current, "__dict__", {}).values()]
        pending += [link for link in (current.__cause__, current.__context__) if link]
        pending += [arg for arg in current.args if isinstance(arg, BaseException)]
        pending += [v for v in vars(current).values() if isinstance(v, BaseException)]
    return "\n".join(parts)


def logged_exception(error: BaseException) -> str:
    """What ``logging.exception`` writes for ``error``."""
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    logger = logging.getLogger("tests.support.leaks")
    handler = Keep()
    logger.addHandler(handler)
    try:
        logger.error("the call failed", exc_info=error)  # as logging.exception writes it
    finally:
        logger.removeHandler(handler)
    return "\n".join(records)


def case_variants(secret: str) -> set[str]:
    """``secret`` as an upstream that changes letter case may echo it."""
    return {
        secret.upper(),
        secret.lower(),
        secret.casefold(),
        secret.swapcase(),
        secret.title(),
        secret.capitalize(),
        "".join(char.upper() if index % 2 else char.lower() for index, char in enumerate(secret)),
    }


def leaked_in_any_case(text: str, secrets: Iterable[str] = SECRETS) -> list[str]:
    """``leaked``, whatever the letter case of the text or of the spelling."""
    folded = text.casefold()
    return sorted(
        {form for secret in secrets for form in spellings(secret) if form.casefold() in folded}
    )
