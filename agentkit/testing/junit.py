"""Examples' outcomes as JUnit XML, the report format CI systems read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from xml.etree import ElementTree

if TYPE_CHECKING:
    from agentkit.testing.runner import ExampleOutcome

__all__ = ["junit_xml"]


def junit_xml(outcomes: Sequence[ExampleOutcome], seconds: float) -> str:
    """One ``testsuite`` named ``agentkit``; a ``testcase`` per example (``classname`` the
    tool, ``name`` the example, ``file`` its definition), a ``failure`` with the reason."""
    failed = sum(1 for outcome in outcomes if not outcome.passed)
    suites = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(
        suites,
        "testsuite",
        name="agentkit",
        tests=str(len(outcomes)),
        failures=str(failed),
        errors="0",
        skipped="0",
        time=f"{seconds:.3f}",
    )
    for outcome in outcomes:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=outcome.tool,
            name=outcome.example,
            file=outcome.source.rpartition(":")[0] or outcome.source,
            time=f"{outcome.duration:.3f}",
        )
        if not outcome.passed:
            failure = ElementTree.SubElement(
                case, "failure", message=outcome.reason.split("\n", 1)[0]
            )
            failure.text = f"{outcome.source}: {outcome.reason}"
    ElementTree.indent(suites)
    body = ElementTree.tostring(suites, encoding="unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{body}\n'
