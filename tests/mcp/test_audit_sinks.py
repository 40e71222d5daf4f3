"""Where the audit trail goes: a file rotated by size, stdout (stderr over stdio), OTel logs."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from agentkit.mcp.audit_sinks import OTEL_EVENT, open_audit
from agentkit.toolerrors import SemanticError


def _record(number: int, **extra: Any) -> dict[str, Any]:
    return {"caller": "a", "tool": "t", "outcome": "success", "n": number, **extra}


def test_the_file_is_rotated_by_size_and_the_backups_bounded(tmp_path: Path) -> None:
    trail_file = tmp_path / "audit.jsonl"
    trail = open_audit(str(trail_file), max_bytes=400, backups=2)
    try:
        for number in range(60):
            trail(_record(number, padding="x" * 40))
    finally:
        trail.close()
    kept = sorted(path.name for path in tmp_path.iterdir())
    assert kept == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    numbers = []
    for name in ("audit.jsonl.2", "audit.jsonl.1", "audit.jsonl"):
        lines = (tmp_path / name).read_text().splitlines()
        assert (tmp_path / name).stat().st_size <= 400
        numbers += [json.loads(line)["n"] for line in lines]  # each line whole JSON
    assert numbers == list(range(60 - len(numbers), 60))  # the newest kept, in order


def test_a_line_is_one_line_whatever_the_arguments_hold(tmp_path: Path) -> None:
    trail_file = tmp_path / "audit.jsonl"
    trail = open_audit(str(trail_file))
    trail(_record(1, arguments={"note": "two\nlines\u2028and\x00more", "é": "\udcff"}))
    trail.close()
    (line,) = trail_file.read_bytes().splitlines()
    assert line.isascii()
    assert json.loads(line)["arguments"]["note"] == "two\nlines\u2028and\x00more"


def test_stdout_is_stdout_over_http_and_stderr_over_stdio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    open_audit("stdout")(_record(1))
    open_audit("stdout", stdio=True)(_record(2))
    out, err = capsys.readouterr()
    assert json.loads(out)["n"] == 1
    assert json.loads(err)["n"] == 2


def test_a_sink_that_fails_is_logged_once_and_never_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(record: Any) -> None:
        raise OSError("No space left on device")

    trail = open_audit(broken)
    with caplog.at_level(logging.ERROR, logger="agentkit.serve"):
        trail(_record(1))
        trail(_record(2))
    assert [r.getMessage() for r in caplog.records] == [
        "agentkit: the audit trail (a callable) failed: No space left on device"
    ]


@pytest.mark.parametrize(
    ("max_bytes", "backups"), [pytest.param(0, 1, id="no-size"), pytest.param(10, -1, id="neg")]
)
def test_a_bad_rotation_is_refused(tmp_path: Path, max_bytes: int, backups: int) -> None:
    with pytest.raises(SemanticError, match="--audit-max-bytes takes a size of 1 or more"):
        open_audit(str(tmp_path / "a"), max_bytes=max_bytes, backups=backups)


def test_a_file_that_cannot_be_opened_is_named(tmp_path: Path) -> None:
    with pytest.raises(SemanticError, match=r"--audit .*: cannot open the audit file"):
        open_audit(str(tmp_path / "missing" / "audit.jsonl"))


def test_otel_logs_carry_the_record_and_its_keys() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    exporter = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]  # unannotated in the SDK
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    open_audit("otel", logger_provider=provider)(_record(7))
    (exported,) = exporter.get_finished_logs()
    log_record = exported.log_record
    assert json.loads(str(log_record.body))["n"] == 7
    assert dict(log_record.attributes or {}) == {
        "event.name": OTEL_EVENT,
        "agentkit.caller": "a",
        "gen_ai.tool.name": "t",
        "agentkit.outcome": "success",
    }
