"""``agentkit call`` of a tool that exits or answers what JSON has no form for: the result
printed as JSON, a failure that says what happened, exit status 1 (never the tool's own
exit code), no traceback, the credential nowhere. Run as users run it: a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import ROOT
from tests.support.leaks import leaked_in_any_case
from tests.support.stopping import ENV, KEY, TOLD, TOOLS, write_tools


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tools(tmp_path_factory.mktemp("tools"))


@pytest.mark.parametrize("how", sorted(TOLD))
@pytest.mark.parametrize("name", sorted(TOOLS))
def test_a_call_that_exits_is_a_failure_printed_as_json(folder: Path, name: str, how: str) -> None:
    child = subprocess.run(
        [sys.executable, "-m", "agentkit", "call", "--tools", str(folder), name, f"how={how}"],
        cwd=ROOT,
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == 1, child.stderr
    assert "Traceback" not in child.stderr
    printed = json.loads(child.stdout)
    assert printed["status"] == "failure"
    assert printed["error"]["message"].startswith(f"Tool '{name}' {TOLD[how]}")
    assert leaked_in_any_case(child.stdout + child.stderr, [KEY]) == []
