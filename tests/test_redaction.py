"""Redactor: every spelling of a secret becomes ***."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit import Redactor
from agentkit.redaction import MASK, MAX_WALK, excerpt, redact_also, redacting
from tests.leaks import SECRETS, leaked, spellings

SECRET = 'p@ss w/rd+"q\\'


@pytest.mark.parametrize(
    "spelling",
    [
        SECRET,
        quote(SECRET, safe=""),
        quote_plus(SECRET),
        json.dumps(SECRET)[1:-1],
        repr(SECRET)[1:-1],
        base64.b64encode(SECRET.encode()).decode(),
    ],
    ids=["raw", "percent", "plus", "json", "repr", "base64"],
)
def test_each_spelling_is_redacted(spelling: str) -> None:
    assert Redactor([SECRET]).redact(f"before {spelling} after") == "before *** after"


def test_added_secrets_and_combined_forms() -> None:
    redactor = Redactor()
    assert not redactor
    redactor.add("user:pass")
    basic = base64.b64encode(b"user:pass").decode()
    assert redactor.redact(f"Authorization: Basic {basic}") == "Authorization: Basic ***"


def test_empty_secrets_are_ignored() -> None:
    assert Redactor([""]).redact("text") == "text"


def test_redact_value_walks_containers() -> None:
    redactor = Redactor(["s3cret"])
    assert redactor.redact_value({"k": ["a s3cret", {"s3cret": 1}], "n": 3}) == {
        "k": ["a ***", {"***": 1}],
        "n": 3,
    }


@given(st.text(min_size=4, max_size=30), st.text(max_size=40), st.text(max_size=40))
def test_no_spelling_survives(secret: str, before: str, after: str) -> None:
    redactor = Redactor([secret])
    for spelling in (secret, quote(secret, safe=""), json.dumps(secret)[1:-1]):
        assert spelling not in redactor.redact(before + spelling + after)


# -- every spelling, for secrets whose spellings differ ---------------------------------------


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_no_spelling_of_a_secret_survives(secret: str) -> None:
    redactor = Redactor([secret])
    for form in spellings(secret):
        assert leaked(redactor.redact(f"<{form}>"), [secret]) == [], form


@pytest.mark.parametrize(
    "escape",
    [
        pytest.param(lambda s: "".join(f"\\u{ord(c):04x}" for c in s), id="every-char-json-u"),
        pytest.param(lambda s: "".join(f"\\u{ord(c):04X}" for c in s), id="upper-json-u"),
        pytest.param(
            lambda s: re.sub("%..", lambda m: m[0].lower(), quote(s, safe="")),
            id="lowercase-percent",
        ),
        pytest.param(lambda s: "".join(f"%{b:02x}" for b in s.encode()), id="percent-every-byte"),
        pytest.param(lambda s: quote(quote(s, safe=""), safe=""), id="percent-twice"),
        pytest.param(lambda s: json.dumps(s)[1:-1].replace("/", "\\/"), id="json-slash"),
        pytest.param(lambda s: json.dumps(json.dumps(s))[3:-3], id="json-in-json"),
        pytest.param(lambda s: "".join(f"&#x{ord(c):x};" for c in s), id="html-hex"),
        pytest.param(lambda s: "".join(f"&#{ord(c)};" for c in s), id="html-decimal"),
    ],
)
@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_escaped_spellings_are_redacted(secret: str, escape: Callable[[str], str]) -> None:
    assert Redactor([secret]).redact(f"a {escape(secret)} b") == "a *** b"


@given(
    st.sampled_from(SECRETS),
    st.binary(max_size=7),
    st.binary(max_size=7),
    st.booleans(),
)
def test_a_secret_inside_a_longer_base64_string_is_redacted(
    secret: str, before: bytes, after: bytes, urlsafe: bool
) -> None:
    raw = secret.encode()
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    encoded = encode(before + raw + after).decode()
    redacted = Redactor([secret]).redact(encoded)
    assert MASK in redacted
    # All but the 2 characters at each edge that mix in the neighbours' bits are gone.
    assert len(redacted) <= len(encoded) - len(raw) * 4 // 3 + 4 + len(MASK)


def test_a_basic_auth_pair_is_redacted_whatever_the_user() -> None:
    password = SECRETS[1]
    redactor = Redactor([password])  # the password alone: the pair was never registered
    for user in ("a", "ab", "abc", "ann@example.com"):
        pair = base64.b64encode(f"{user}:{password}".encode()).decode()
        assert leaked(redactor.redact(f"Authorization: Basic {pair}"), [password]) == [], user


def test_a_long_secret_compiles_and_matches_quickly_enough_to_use() -> None:
    token = "eyJhbGciOi" + "x" * 4000 + "/+="
    redactor = Redactor([token])
    assert redactor.redact(f"Bearer {token}") == "Bearer ***"


# -- redact first, then cut ---------------------------------------------------------------------


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_an_excerpt_never_shows_part_of_a_secret(secret: str) -> None:
    redactor = Redactor([secret])
    for limit in (5, 20, 40):
        for start in range(limit + 1):
            text = "x" * start + json.dumps(secret)[1:-1] + "y" * 50
            shown = excerpt(text, limit, redactor)
            assert len(shown) <= limit
            assert secret[:3] not in shown.replace("x", "").replace("y", "")


def test_an_excerpt_uses_the_active_redactor() -> None:
    with redacting(Redactor(["hunter2-secret"])):
        assert excerpt("pw: hunter2-secret and more", 12) == "pw: *** a..."
    assert excerpt("pw: hunter2-secret and more", 12) == "pw: hunte..."


def test_redact_also_extends_only_the_running_call() -> None:
    redact_also("nothing-runs")  # no active redactor: nothing to do, no error
    redactor = Redactor(["base"])
    with redacting(redactor):
        redact_also("derived-form")
    assert redactor.redact("base derived-form nothing-runs") == "*** *** nothing-runs"
    assert "base" not in repr(redactor)


# -- the fast path: search first, copy only what holds a secret --------------------------------


def test_a_clean_value_comes_back_as_the_same_object() -> None:
    redactor = Redactor([SECRETS[0]])
    value = {"id": 7, "name": "a" * 200, "tags": ["x", ("y", 1.5)], "nested": {"ok": None}}
    assert redactor.redact_value(value) is value
    text = "nothing to hide here, " * 20
    assert redactor.redact(text) is text


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_a_value_holding_a_secret_anywhere_is_copied_redacted(secret: str) -> None:
    redactor = Redactor([secret])
    derived = base64.b64encode(f"user:{secret}".encode()).decode()
    value = {
        "clean": "ok",
        "deep": [[[{"k": ("t", f"Basic {derived}")}]]],
        quote(secret, safe=""): 1,
        "escaped": json.dumps(secret)[1:-1],
    }
    redacted = redactor.redact_value(value)
    assert redacted is not value
    assert leaked(repr(redacted), [secret]) == []
    assert redacted["clean"] == "ok"
    assert redacted["deep"][0][0][0]["k"][0] == "t"
    assert MASK in redacted
    assert value["escaped"] == json.dumps(secret)[1:-1]  # the original is left alone


@pytest.mark.parametrize(
    "secret", ["k", "ab", "abc", "abcd", "é", SECRETS[2]], ids=["1", "2", "3", "4", "é", "long"]
)
def test_skipping_short_strings_never_skips_a_spelling(secret: str) -> None:
    # A string shorter than any spelling is not searched. Each spelling alone must
    # be redacted exactly as it is inside a text long enough to be searched.
    redactor = Redactor([secret])
    pad = "\0" * 400
    for form in sorted(spellings(secret), key=len):
        searched = redactor.redact(pad + form + pad)[len(pad) : -len(pad)]
        assert redactor.redact(form) == searched, form
        assert redactor.redact_value([form]) == [searched], form
        assert redactor.contains_secret(form) == (searched != form), form
    assert redactor.redact(secret) == MASK


def test_a_value_nested_past_the_walk_limit_is_masked_not_searched() -> None:
    redactor = Redactor(["s3cret-value"])
    deep: Any = "s3cret-value"
    for _ in range(MAX_WALK + 50):
        deep = {"k": [deep]}
    redacted = redactor.redact_value(deep)  # no RecursionError
    assert "s3cret-value" not in repr(redacted)
    walked = redacted
    for _ in range(MAX_WALK // 2):
        walked = walked["k"][0]
    assert MASK in repr(walked)


def test_a_very_deep_value_never_raises() -> None:
    redactor = Redactor(["s3cret-value"])
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert redactor.redact_value(deep) is not deep
    assert redactor.redact_value([deep, "a s3cret-value"])[1] == "a ***"


_PAD = "\x01" * 400  # longer than any spelling below; no secret here holds \x01


def _searched(redactor: Redactor, value: Any) -> Any:
    """What redact_value must give: every string searched whole, however short."""
    if isinstance(value, str):
        return redactor.redact(_PAD + value + _PAD)[len(_PAD) : -len(_PAD)]
    if isinstance(value, dict):
        return {_searched(redactor, k): _searched(redactor, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_searched(redactor, item) for item in value]
    return value


_SECRET_TEXT = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\x01"),
    min_size=1,
    max_size=12,
)


@given(_SECRET_TEXT, st.data())
def test_the_fast_path_redacts_exactly_what_a_full_search_does(secret: str, data: Any) -> None:
    redactor = Redactor([secret])
    piece = st.sampled_from(sorted(spellings(secret))) | st.text(max_size=6).filter(
        lambda text: "\x01" not in text
    )
    strings = st.lists(piece, max_size=3).map("".join)
    scalars = strings | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
    value = data.draw(
        st.recursive(
            scalars,
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(strings, inner, max_size=3),
            max_leaves=12,
        )
    )
    expected = _searched(redactor, value)
    redacted = redactor.redact_value(value)
    assert redacted == expected
    if expected == value and "*" not in repr(value):  # a secret of '*'s masks as itself
        assert redacted is value  # clean: the very same object, no copy


def test_a_secret_of_bytes_that_are_not_utf8_is_redacted_as_sent() -> None:
    # os.environ gives such bytes as surrogates; the wire carries the bytes.
    raw = b"tok\xff\xfeen-1234"
    secret = raw.decode("utf-8", "surrogateescape")
    redactor = Redactor([secret, "\ud800lone"])  # a lone surrogate: no crash either
    sent = base64.b64encode(b"user:" + raw).decode()
    assert MASK in redactor.redact(f"Basic {sent}")
    assert redactor.redact(f"Basic {base64.b64encode(raw).decode()}") == "Basic ***"
    assert redactor.redact(f"q={quote(raw)}") == "q=***"
    assert redactor.redact(f"v={secret}") == "v=***"
