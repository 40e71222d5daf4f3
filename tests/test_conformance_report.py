"""`make conformance`'s verdict (scripts/conformance.py): green when every scenario of
what agentkit serves passes, whatever the scenarios of what it does not serve do."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "conformance", ROOT / "scripts" / "conformance.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("outcomes", "status"),
    [
        pytest.param({"tools-list": True, "prompts-list": False}, 0, id="served all pass"),
        pytest.param({"tools-list": True, "ping": False, "prompts-list": True}, 1, id="one fails"),
        pytest.param({"resources-read-text": True, "tools-call-sampling": False}, 1, id="none ran"),
        pytest.param({"completion-complete": False, "tools-call-image": True}, 0, id="completion"),
    ],
)
def test_the_verdict_counts_only_what_agentkit_serves(
    outcomes: dict[str, bool], status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _script()._report(outcomes) == status
    printed = capsys.readouterr().out
    for name in outcomes:
        assert name in printed
    not_served = [name for name in outcomes if name.startswith(("prompts-", "resources-"))]
    not_served += [
        name for name in outcomes if name in ("completion-complete", "tools-call-sampling")
    ]
    for name in not_served:
        assert f"not served  {name}" in printed
