"""Examples' outcomes as JUnit XML, the report format CI systems read."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final
from xml.etree import ElementTree

if TYPE_CHECKING:
    from agentkit.testing.runner import ExampleOutcome

__all__ = ["junit_xml"]

#: What XML 1.0 cannot hold, escaped or not: control characters but tab, line feed and
#: carriage return, lone surrogates, U+FFFE and U+FFFF. ElementTree writes them as
#: they are, and every XML reader then refuses the whole report.
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    """``text`` with each character XML cannot hold written as ``\\uXXXX``."""
    return _NOT_XML.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


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
            classname=_xml(outcome.tool),
            name=_xml(outcome.example),
            file=_xml(outcome.source.rpartition(":")[0] or outcome.source),
            time=f"{outcome.duration:.3f}",
        )
        if not outcome.passed:
            failure = ElementTree.SubElement(
                case, "failure", message=_xml(outcome.reason.split("\n", 1)[0])
            )
            failure.text = _xml(f"{outcome.source}: {outcome.reason}")
    ElementTree.indent(suites)
    body = ElementTree.tostring(suites, encoding="unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{body}\n'
