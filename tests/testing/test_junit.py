"""The JUnit report: readable by any XML parser whatever the names and reasons hold."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest

from agentkit.testing.junit import junit_xml
from agentkit.testing.runner import ExampleOutcome


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("c\x01d", "c\\u0001d", id="control"),
        pytest.param("nul\x00", "nul\\u0000", id="nul"),
        pytest.param("half \ud800 pair", "half \\ud800 pair", id="lone-surrogate"),
        pytest.param("<&\"'>", "<&\"'>", id="markup-escaped-not-changed"),
        pytest.param("tab\tand é", "tab\tand é", id="allowed-kept"),
    ],
)
def test_what_xml_cannot_hold_is_written_as_an_escape(text: str, shown: str) -> None:
    outcome = ExampleOutcome(
        tool="t", example="e", source=f"/tmp/{text}/t.yaml:3", passed=False, reason=f"got {text}"
    )
    report = junit_xml([outcome], 0.1)
    case = ElementTree.fromstring(report.split("\n", 1)[1]).find("testsuite/testcase")
    assert case is not None
    assert case.get("file") == f"/tmp/{shown}/t.yaml"
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == f"got {shown}"
