"""The description check (openapi-spec-validator) runs unless it is turned off."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.cli import main
from agentkit.openapi import importer

NOTES = Path(__file__).parent.parent / "fixtures" / "openapi" / "notes.json"


def test_no_check_skips_the_check_and_says_nothing_about_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fail(document: object) -> None:
        raise AssertionError("checked despite --no-check")

    monkeypatch.setattr(importer, "check_description", fail)
    argv = ["import", "openapi", str(NOTES), "--source", "notes", "--out", str(tmp_path / "o")]
    assert main([*argv, "--no-check"]) == 0
    assert "checked" not in capsys.readouterr().out
    assert (tmp_path / "o" / "notes.source.yaml").exists()


def test_the_check_runs_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    monkeypatch.setattr(importer, "check_description", lambda document: seen.append(document))
    argv = ["import", "openapi", str(NOTES), "--source", "notes", "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    assert len(seen) == 1
