"""A failed call's error and everything reachable from it carry no secret, in any spelling."""

from __future__ import annotations

import builtins
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import Any

import pytest
import requests

from agentkit import RedactedError, Tool, ToolExecutionError, ToolExecutor
from agentkit.redaction import MAX_CHAIN, Redactor
from tests.support.helpers import Scripted
from tests.support.leaks import SECRETS, chain_text, leaked, logged_exception

KEY = SECRETS[1]


class WithCode(Exception):
    """A constructor taking non-string arguments, and an attribute holding the URL."""

    def __init__(self, code: int, url: str) -> None:
        super().__init__(code, url)
        self.code = code
        self.url = url


class Formats(Exception):
    """A constructor that builds its message from what it is given."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key} was refused")


class KeywordOnly(Exception):
    def __init__(self, *, response: object) -> None:
        super().__init__(f"failed: {response}")
        self.response = response


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError(f"cannot show {KEY}")


class Holder:
    def __repr__(self) -> str:
        return f"<Holder key={KEY}>"


def _raise(error: BaseException) -> Any:
    raise error


def chained() -> Any:
    try:
        {"other": 1}[KEY]
    except KeyError as exc:
        raise ValueError(f"bad key {KEY}") from exc


def with_context() -> Any:
    try:
        raise OSError(13, f"denied for {KEY}", f"/keys/{KEY}")
    except OSError:
        raise LookupError(f"lookup of {KEY} failed") from None


def invalid_header() -> Any:
    requests.Request("GET", "http://127.0.0.1:9/", headers={"X-Key": f" {KEY}"}).prepare()


def url_with_key() -> Any:
    # Port 9 (discard) on loopback is closed: the connection is refused at once.
    requests.get("http://127.0.0.1:9/items", params={"key": KEY}, timeout=2)


def unicode_error() -> Any:
    (b"\xff" + KEY.encode()).decode("ascii")


def with_notes() -> Any:
    error = RuntimeError("plain")
    error.__notes__ = [f"while using {KEY}"]  # type: ignore[attr-defined]  # add_note(), on 3.10 too
    raise error


def deep_chain() -> Any:
    error: BaseException = ValueError(f"root {KEY}")
    for depth in range(MAX_CHAIN + 5):
        link = RuntimeError(f"level {depth} {KEY}")
        link.__cause__ = error
        error = link
    raise error


def nested_tool_failure() -> Any:
    inner = ToolExecutionError("inner", ValueError(f"inner key {KEY}"))
    raise RuntimeError("the inner tool failed") from inner


def cyclic() -> Any:
    first, second = ValueError(f"a {KEY}"), ValueError(f"b {KEY}")
    first.__context__, second.__context__ = second, first
    raise first


CASES: dict[str, Callable[[], Any]] = {
    "chained-cause": chained,
    "context": with_context,
    "requests-invalid-header": invalid_header,
    "url-with-key-in-query": url_with_key,
    "non-string-args": lambda: _raise(WithCode(401, f"https://x.test/?key={KEY}")),
    "formatting-constructor": lambda: _raise(Formats(KEY)),
    "keyword-only-constructor": lambda: _raise(KeywordOnly(response=Holder())),
    "str-raises": lambda: _raise(Unprintable(KEY)),
    "object-arg": lambda: _raise(ValueError(Holder(), [KEY.encode()])),
    "unicode-decode-bytes": unicode_error,
    "notes": with_notes,
    "deep-chain": deep_chain,
    "cycle": cyclic,
    "nested-tool-error": nested_tool_failure,
}
if sys.version_info >= (3, 11):
    group = getattr(builtins, "ExceptionGroup")  # noqa: B009 -- the name is 3.11+
    CASES["exception-group"] = lambda: _raise(
        group(f"group {KEY}", [ValueError(KEY), TypeError(f"t {KEY}")])
    )


def run(body: Callable[[], Any], *, strict: bool) -> ToolExecutionError:
    def tool_body(inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        return body()

    executor = ToolExecutor(credentials={"api-key": KEY})
    if strict:
        with pytest.raises(ToolExecutionError) as caught:
            executor.execute(Scripted(tool_body), {})
        return caught.value
    result = executor.execute(Scripted(tool_body), {}, raise_on_failure=False)
    assert isinstance(result.error, ToolExecutionError)
    assert leaked(repr(result) + repr(result.to_dict()), [KEY]) == []
    return result.error


@pytest.mark.parametrize("strict", [True, False], ids=["raised", "result"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_nothing_reachable_from_the_error_holds_the_secret(case: str, strict: bool) -> None:
    error = run(CASES[case], strict=strict)
    assert leaked(chain_text(error), [KEY]) == []
    assert leaked(logged_exception(error), [KEY]) == []
    assert leaked("".join(traceback.format_exception(error.cause)), [KEY]) == []


@pytest.mark.parametrize(
    ("case", "cause_type", "shown"),
    [
        ("chained-cause", ValueError, "bad key ***"),
        ("non-string-args", WithCode, "(401, 'https://x.test/?key=***')"),
        ("formatting-constructor", Formats, "the key *** was refused"),
        ("requests-invalid-header", requests.exceptions.InvalidHeader, "***"),
        ("url-with-key-in-query", requests.ConnectionError, "key=***"),
    ],
)
def test_the_cause_keeps_its_type_and_a_redacted_message(
    case: str, cause_type: type[BaseException], shown: str
) -> None:
    error = run(CASES[case], strict=True)
    assert type(error.cause) is cause_type
    assert shown in str(error.cause)
    assert error.__cause__ is error.cause
    assert f"{cause_type.__name__}: " in str(error)


def test_the_chain_keeps_its_shape() -> None:
    error = run(chained, strict=True)
    assert isinstance(error.cause.__cause__, KeyError)
    assert error.cause.__traceback__ is not None  # where it failed is still shown
    assert "chained" in "".join(traceback.format_exception(error.cause))
    # Raised outside the handler: the original is not smuggled in as the context.
    assert error.__context__ is None


def test_attributes_are_kept_redacted_and_objects_dropped() -> None:
    error = run(CASES["non-string-args"], strict=True)
    assert isinstance(error.cause, WithCode)
    assert (error.cause.code, error.cause.url) == (401, "https://x.test/?key=***")


def test_an_exception_that_cannot_be_rebuilt_becomes_a_redacted_error() -> None:
    error = run(CASES["str-raises"], strict=True)
    assert isinstance(error.cause, RedactedError)
    assert error.cause.original_type == f"{__name__}.Unprintable"
    assert error.cause_type == "Unprintable"
    assert str(error).startswith("Tool 'scripted' failed: Unprintable: ")


def test_a_wrapped_error_keeps_its_cleaned_cause() -> None:
    error = run(nested_tool_failure, strict=True)
    inner = error.cause.__cause__
    assert isinstance(inner, ToolExecutionError)
    assert str(inner.cause) == "inner key ***"
    assert inner.cause_type == "ValueError"


def test_a_chain_deeper_than_the_bound_is_cut() -> None:
    error = run(deep_chain, strict=True)
    depth, link = 0, error.cause
    while link.__cause__ is not None:
        depth, link = depth + 1, link.__cause__
    assert depth == MAX_CHAIN


def test_a_redactor_without_secrets_returns_the_error_itself() -> None:
    error = ValueError("plain")
    assert Redactor().clean_exception(error) is error


class NoCredentials(Tool):
    TOOL_NAME = "plain"
    OUTPUT_SCHEMA = {"parameters": [{"name": "x", "type": "string"}]}
    ORIGINAL = ValueError("boom")

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        raise self.ORIGINAL


def test_a_tool_without_credentials_keeps_the_original_cause() -> None:
    result = ToolExecutor(credentials={}).execute(NoCredentials(), {}, raise_on_failure=False)
    assert isinstance(result.error, ToolExecutionError)
    assert result.error.cause is NoCredentials.ORIGINAL
