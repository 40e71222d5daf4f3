"""Timeouts and retry waits are finite numbers of seconds: NaN or infinity would void the deadline."""

from __future__ import annotations

import pytest

from agentkit import load_tools
from tests.declarative.conftest import HTTP_TOOL, WriteFile
from tests.declarative.test_loader import problems

BAD = {".nan": ".nan", ".inf": ".inf", "-.inf": "-.inf", "huge integer": "1" + "0" * 400}


SECONDS = {
    "total": (
        "    timeout: {{total: {value}}}\n",
        "timeout.total: expected a number of seconds above 0",
    ),
    "read": (
        "    timeout: {{read: {value}}}\n",
        "timeout.read: expected a number of seconds above 0",
    ),
    "bare": ("    timeout: {value}\n", "timeout: expected a number of seconds above 0"),
    "backoff": (
        "    retry: {{backoff: {value}}}\n",
        "retry.backoff: expected a number of seconds, 0 or more",
    ),
    "max_wait": (
        "    retry: {{max_wait: {value}}}\n",
        "retry.max_wait: expected a number of seconds, 0 or more",
    ),
}


@pytest.mark.parametrize("value", BAD.values(), ids=BAD.keys())
@pytest.mark.parametrize(("template", "expected"), SECONDS.values(), ids=SECONDS.keys())
def test_a_non_finite_number_of_seconds_is_refused(
    write: WriteFile, template: str, expected: str, value: str
) -> None:
    text = HTTP_TOOL.replace("    output:\n", template.format(value=value) + "    output:\n")
    (found,) = problems(write(text))
    # A huge integer is refused while the YAML is read, before the spec sees it.
    refusals = (f"backend.http.{expected}", "numbers have at most 100")
    assert any(refusal in found for refusal in refusals), found


@pytest.mark.parametrize("line", ["    timeout: {total: 0.5}\n", "    retry: {backoff: 0}\n"])
def test_finite_seconds_are_accepted(write: WriteFile, line: str) -> None:
    assert load_tools(write(HTTP_TOOL.replace("    output:\n", line + "    output:\n")))
