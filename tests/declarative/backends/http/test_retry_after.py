"""``Retry-After`` is read strictly: ASCII digits or an HTTP-date; anything else is ignored."""

from __future__ import annotations

import math
import time
from email.utils import formatdate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit.declarative.backends.http.failures import retry_after_seconds
from tests.declarative.backends.http.test_resend import load, run
from tests.declarative.conftest import WriteFile
from tests.support import rawserver

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("5", 5.0),
        ("0", 0.0),
        (" 5 ", 5.0),
        ("\t7\t", 7.0),
        ("007", 7.0),
        ("9" * 12, 999_999_999_999.0),
        ("9" * 13, math.inf),
        ("9" * 5000, math.inf),
        (formatdate(NOW + 30, usegmt=True), 30.0),
        (formatdate(NOW - 30, usegmt=True), 0.0),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 0.0),
        (time.strftime("%a, %d %b %Y %H:%M:%S", time.gmtime(NOW + 10)), 10.0),
    ],
    ids=[
        "digits",
        "zero",
        "spaces around",
        "tabs around",
        "leading zeros",
        "twelve digits",
        "thirteen digits",
        "five thousand digits",
        "date ahead",
        "date past",
        "date long past",
        "date without zone is GMT",
    ],
)
def test_a_valid_retry_after(value: str, seconds: float) -> None:
    assert retry_after_seconds(value, now=NOW) == seconds


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        " ",
        "²",
        "٣",
        "\uff15",
        "1e3",
        "-1",
        "+5",
        "5.5",
        "5 s",
        "0x10",
        "1_000",
        "5\x00",
        "bad date",
        "Wed, 21 Oct 99999 07:28:00 GMT",
        "Sun, 06 Nov 1994 08:49:37 -9999",
        "Thu, 31 Dec 9999 23:59:59 +2400",
        "Mon, 32 Jan 2026 00:00:00 GMT",
    ],
    ids=[
        "absent",
        "empty",
        "blank",
        "superscript two",
        "arabic-indic three",
        "fullwidth five",
        "exponent",
        "negative",
        "plus sign",
        "fraction",
        "unit",
        "hex",
        "underscore",
        "nul",
        "bad date",
        "year 99999",
        "offset out of range",
        "offset 24h",
        "day 32",
    ],
)
def test_garbage_is_ignored(value: str | None) -> None:
    assert retry_after_seconds(value, now=NOW) is None


@given(st.text(max_size=60))
def test_no_text_crashes_it(value: str) -> None:
    seconds = retry_after_seconds(value, now=NOW)
    assert seconds is None or seconds >= 0


RETRY = "    timeout: {total: 5}\n    retry: {attempts: 2, backoff: 0.01, max_wait: 1}"


@pytest.mark.parametrize(
    "raw",
    [b"\xc2\xb2", b"\xd9\xa3", b"1e3", b"-1", b"99999999999999999999999", b"bad date", b"\xff"],
    ids=[
        "superscript utf-8",
        "arabic-indic utf-8",
        "exponent",
        "negative",
        "huge",
        "bad date",
        "byte ff",
    ],
)
def test_a_server_sending_odd_retry_after_is_retried(write: WriteFile, raw: bytes) -> None:
    with rawserver.serve(rawserver.unavailable(raw), rawserver.ok) as server:
        started = time.monotonic()
        result = run(load(write, server.origin, "GET", RETRY))
        elapsed = time.monotonic() - started
    assert result.output == {"title": "fine"}
    assert elapsed < 3  # the wait is capped at max_wait (1 s), never the server's figure


@pytest.mark.parametrize("raw", [b"3600", b"9" * 400], ids=["an hour", "huge"])
def test_a_wait_past_the_deadline_fails_at_once_and_says_why(write: WriteFile, raw: bytes) -> None:
    extra = "    timeout: {total: 1}\n    retry: {attempts: 2, max_wait: 60}"
    with rawserver.serve(rawserver.unavailable(raw), rawserver.ok) as server:
        tool = load(write, server.origin, "GET", extra)
        started = time.monotonic()
        result = run(tool)
        elapsed = time.monotonic() - started
        received = server.received
    assert received == 1
    assert elapsed < 1  # gave up at once instead of sleeping into the deadline
    assert (
        f"GET {server.origin}/p returned 503; retrying after 60.0 s would pass the 1.0 s "
        "deadline (timeout.total)"
    ) in str(result.error)
