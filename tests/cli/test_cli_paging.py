"""``agentkit call`` of a tool with ``max_output``: the first page, as a model gets it, and a
note on stderr saying so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit.cli import main
from agentkit.paging import size_of
from tests.support.paged import REPORT_DEFINITION, report_rows

ROOT = Path(__file__).resolve().parents[2]
REPORT = REPORT_DEFINITION.format(budget="{tokens: 300}")


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("AGENTKIT_TOOLS", raising=False)
    (tmp_path / "report.yaml").write_text(REPORT)
    return tmp_path


def test_a_long_answer_prints_its_first_page_and_says_so(
    capsys: pytest.CaptureFixture[str], tools: Path
) -> None:
    code = main(["call", "report", "rows=200", "--tools", str(tools)])
    captured = capsys.readouterr()
    assert code == 0
    printed = json.loads(captured.out)
    assert printed["status"] == "success"
    assert size_of(printed["output"]) <= 1200
    assert printed["output"]["title"] == "200 rows"
    rows = printed["output"]["rows"]
    assert rows == report_rows(200)["rows"][: len(rows)]
    page = printed["page"]
    assert page["page"] == 1
    assert page["pages"] > 2
    assert page["max_output_bytes"] == 1200
    assert page["parts"] == [
        {"path": "rows", "unit": "items", "offset": 0, "count": len(rows), "total": 200}
    ]
    assert "max_output of tool 'report' (1200 bytes)" in captured.err
    assert f"page 1 of {page['pages']}" in captured.err
    assert "agentkit serve" in captured.err


def test_a_short_answer_prints_as_before(capsys: pytest.CaptureFixture[str], tools: Path) -> None:
    code = main(["call", "report", "rows=2", "--tools", str(tools)])
    captured = capsys.readouterr()
    assert code == 0
    printed = json.loads(captured.out)
    assert printed["output"] == report_rows(2)
    assert "page" not in printed
    assert captured.err == ""
