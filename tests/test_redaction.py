"""Redactor: every spelling of a secret becomes ***."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit import Redactor

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
