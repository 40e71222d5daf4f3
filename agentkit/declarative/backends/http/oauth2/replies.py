"""What a token endpoint sent: read strictly, its tokens found first, shown masked.

Every value that may be a token is found before the reply is parsed
(``token_candidates``), so it can join the redactors whatever happens next; the
reply is read as JSON (or as a form, as some endpoints send it) by ``read_reply``;
an error describes a wrong value by its kind (``value_shown``, ``fields_named``) and
quotes only a refusal's ``error`` and ``error_description``, through a ``Quoter``
that masks every known token and every word shaped like one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any, Final, final
from urllib.parse import parse_qsl, quote, quote_plus, unquote_plus

from agentkit import jsonvalues
from agentkit.redaction import MASK, MIN_SECRET_LENGTH, Redactor, excerpt

__all__ = [
    "TOKEN_SHAPED",
    "Quoter",
    "bounded_int",
    "fields_named",
    "is_number",
    "read_reply",
    "token_candidates",
    "token_type_shown",
    "value_shown",
]

#: How much of the endpoint's own text an error quotes.
_QUOTED: Final = 200
#: A word of a quoted ``error``/``error_description`` masked as maybe a token: 16 or
#: more characters a token is made of, with a digit or both letter cases in it
#: (a prose word, an error code or a plain URL path has neither).
TOKEN_SHAPED: Final = re.compile(r"[A-Za-z0-9._~+/=%-]{16,}")
_SHAPE_MIXED: Final = re.compile(r"\d|[a-z][^A-Z]*[A-Z]|[A-Z][^a-z]*[A-Z][^A-Z]*[a-z]")
#: Integers of more digits are only "huge": no lifetime needs them, and reading
#: thousands of digits is slow (and past 4,300 refused by ``int``).
_INT_DIGITS: Final = 18
_HUGE: Final = 10**_INT_DIGITS
#: A value under a name ending in "token" (access_token, refresh_token, id_token,
#: accessToken), in JSON spelling (the closing quote may be missing: a cut reply)
#: and in form spelling: what is searched for before the reply is parsed.
_JSON_TOKEN: Final = re.compile(r'"[^"\\]{0,64}token"\s*:\s*"((?:[^"\\]|\\.)*)', re.IGNORECASE)
_FORM_TOKEN: Final = re.compile(r"(?:^|[&;\s?])[\w.~%-]{0,64}token=([^&;\s]*)", re.IGNORECASE)


def is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def token_candidates(text: str, document: Any) -> Iterator[str]:
    """Every spelling of what may be a token in ``text``, found without parsing it, and
    the value of every name ending in ``token`` of ``document``, the text parsed (a name
    written with escapes, ``access\\u005ftoken``, is found only there)."""
    if isinstance(document, dict):
        for name, value in document.items():
            if isinstance(value, str) and value and str(name).lower().endswith("token"):
                yield value
    for match in _JSON_TOKEN.finditer(text):
        raw = match[1]
        yield raw
        try:
            decoded = json.loads(f'"{raw}"')
        except ValueError:  # cut inside an escape: the raw spelling is all there is
            continue
        yield decoded
    for match in _FORM_TOKEN.finditer(text):
        yield match[1]
        yield unquote_plus(match[1])


def bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) <= _INT_DIGITS:
        return int(digits)
    return -_HUGE if digits.startswith("-") else _HUGE


def read_reply(text: str) -> tuple[Any, str]:
    """The reply as a JSON value, else as a form with an ``access_token``.

    ``(None, why)`` when it is neither; ``why`` quotes none of the text (the
    parser's own reasons name a position, not what is there).
    """
    try:
        return jsonvalues.loads(text, parse_int=bounded_int), ""
    except ValueError as exc:
        # Only the reason is kept: the exception holds the whole text (``doc``).
        why = f"not JSON: {exc}"
    if "=" in text:
        try:
            pairs = parse_qsl(
                text.strip(), keep_blank_values=True, strict_parsing=True, max_num_fields=64
            )
        except ValueError:
            pairs = []
        names = [name for name, _ in pairs]
        if "access_token" in names and len(set(names)) == len(names):
            return dict(pairs), ""
    return None, why


#: token_type values of the IANA registry ("OAuth Access Token Types"): the only ones
#: an error quotes; any other text may be the token itself.
_TOKEN_TYPES: Final = frozenset({"bearer", "mac", "dpop", "n_a", "pop"})
#: Field names an error may name (RFC 6749's, and spellings endpoints use instead);
#: any other name of a reply is counted, not named: the token may be a name.
_FIELD_NAMES: Final = frozenset(
    {
        "access_token",
        "accessToken",
        "token",
        "id_token",
        "idToken",
        "refresh_token",
        "refreshToken",
        "token_type",
        "tokenType",
        "expires_in",
        "expiresIn",
        "scope",
        "error",
        "error_description",
        "error_uri",
        "data",
        "result",
    }
)


def fields_named(document: dict[str, Any]) -> str:
    """``its fields: token, expires_in and 2 more, not named``: known names only."""
    named = sorted(name for name in document if name in _FIELD_NAMES)
    others = len(document) - len(named)
    if not named:
        count = len(document)
        return (
            f"it has {count} field{'' if count == 1 else 's'}, not named"
            if count
            else ("it has no fields")
        )
    return f"its fields: {', '.join(named)}" + (f" and {others} more, not named" if others else "")


def token_type_shown(value: Any) -> str:
    if isinstance(value, str):
        if value.lower() in _TOKEN_TYPES:
            return repr(value)
        return f"a string of {len(value)} characters that is no registered token type"
    return value_shown(value)


def value_shown(value: Any) -> str:
    """A wrong field's value: a number or constant as itself, a string or container by
    its kind only (a string may be the token)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _HUGE:
        return f"'a number of more than {_INT_DIGITS} digits'"
    if value is None or isinstance(value, (bool, int, float)):
        return repr(json.dumps(value))
    if isinstance(value, str):
        return f"a string of {len(value)} characters (not shown)"
    return f"a JSON {'object' if isinstance(value, dict) else 'array'}"


@final
class Quoter:
    """Text from a token endpoint as an error may quote it: the secret's forms and the
    reply's tokens (``shown``), every token ``known`` to the cache (in the spellings an
    echo takes) and every word shaped like a token masked, then cut to ``_QUOTED``."""

    __slots__ = ("_forms", "_longest", "_shown")

    def __init__(self, shown: Redactor, known: Iterable[str]) -> None:
        self._shown = shown
        # As any redactor, none shorter than MIN_SECRET_LENGTH: it could not be told from text.
        spellings = {
            form
            for token in known
            if len(token) >= MIN_SECRET_LENGTH
            for form in (token, quote(token, safe=""), quote_plus(token), json.dumps(token)[1:-1])
        }
        # Longest first: a longer token may hold a shorter one.
        self._forms = sorted(spellings, key=len, reverse=True)
        self._longest = len(self._forms[0]) if self._forms else 0

    def __call__(self, text: str) -> str:
        # What starts past the cut is never shown: masking this much is masking it all.
        text = self._shown.redact(text[: _QUOTED + max(self._shown.reach, self._longest) + 64])
        for form in self._forms:
            if form in text:
                text = text.replace(form, MASK)
        return excerpt(TOKEN_SHAPED.sub(_mask_shaped, text), _QUOTED)

    def field(self, value: Any) -> str | None:
        """A reply's ``error`` or ``error_description`` (not text: as JSON), or None."""
        if value is None:
            return None
        return self(value if isinstance(value, str) else json.dumps(value))

    def media_type(self, content_type: str | None) -> str:
        """A reply's Content-Type, its ``type/subtype`` only (a header too may be a token)."""
        if content_type is None:
            return "none"
        media_type = content_type.partition(";")[0].strip()
        if not _MEDIA_TYPE.fullmatch(media_type):
            return "not a media type (not shown)"
        return repr(self(media_type))


#: ``type/subtype`` as RFC 9110 writes a media type's name.
_MEDIA_TYPE: Final = re.compile(
    r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}/[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}"
)


def _mask_shaped(match: re.Match[str]) -> str:
    return MASK if _SHAPE_MIXED.search(match[0]) else match[0]
