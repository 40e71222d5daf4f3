"""ExecutionRecorder: record, save, load, and replay without running the tools."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentkit import (
    ExecutionRecorder,
    ReplayMissError,
    SemanticError,
    ToolExecutionError,
    ToolExecutor,
    ToolValidationError,
)
from tests.support.helpers import SECRET, Adder, Scripted


def counting(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
    return {"answer": f"q={inputs.get('q')}"}


def failing(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
    raise ConnectionError(f"refused for {credentials['api-key']}")


def test_records_each_finished_call(executor: ToolExecutor) -> None:
    recorder = ExecutionRecorder(executor)
    executor.execute(Adder(), {"a": 1})
    executor.execute(Adder(), {"a": "x"}, raise_on_failure=False)
    first, second = recorder.calls
    assert (first.tool_name, first.tool_version, first.status) == ("add", "1.0.0", "success")
    assert first.inputs == {"a": 1.0, "b": 0}
    assert first.output == {"sum": 1.0}
    assert first.duration > 0
    assert second.status == "failure"
    assert second.error is not None
    assert second.error["type"] == "ToolValidationError"
    assert second.inputs == {"a": "x"}


def test_save_load_and_replay_without_running(tmp_path: Path) -> None:
    live = ToolExecutor(credentials={"api-key": SECRET})
    recorder = ExecutionRecorder(live)
    tool = Scripted(counting)
    live.execute(tool, {"q": "a"})
    live.execute(Scripted(failing), {"q": "b"}, raise_on_failure=False)
    path = tmp_path / "calls.jsonl"
    recorder.save(path)
    assert len(path.read_text().splitlines()) == 2
    assert SECRET not in path.read_text()

    replaying = ToolExecutor(credentials={}, replay=ExecutionRecorder.load(path))
    fresh = Scripted(counting)
    assert replaying.execute(fresh, {"q": "a"}).output == {"answer": "q=a"}
    assert fresh.calls == 0  # answered from the recording
    with pytest.raises(ToolExecutionError, match=r"ConnectionError: refused for \*\*\*"):
        replaying.execute(Scripted(counting), {"q": "b"})


def test_replay_matches_inputs_after_defaults() -> None:
    live = ToolExecutor(credentials={})
    recorder = ExecutionRecorder(live)
    live.execute(Adder(), {"a": 1})
    replaying = ToolExecutor(credentials={}, replay=recorder)
    assert replaying.execute(Adder(), {"a": 1, "b": 0}).output == {"sum": 1.0}


def test_replay_miss_is_a_clear_failure() -> None:
    live = ToolExecutor(credentials={})
    recorder = ExecutionRecorder(live)
    live.execute(Adder(), {"a": 1})
    replaying = ToolExecutor(credentials={}, replay=recorder)
    result = replaying.execute(Adder(), {"a": 2}, raise_on_failure=False)
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, ReplayMissError)
    assert "No recorded call of tool 'add' version 1.0.0" in str(result.error)
    assert "the recording has 1 other call(s) of 'add'" in str(result.error)


def test_replay_miss_of_an_unrecorded_tool_suggests_a_recorded_one() -> None:
    live = ToolExecutor(credentials={})
    recorder = ExecutionRecorder(live)
    live.execute(Adder(), {"a": 1})
    with pytest.raises(ReplayMissError, match=r"no call of 'ad' \(did you mean 'add'\?\)"):
        recorder.lookup("ad", "1.0.0", {"a": 1})


def test_replay_of_a_recorded_output_failure() -> None:
    def bad(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"answer": 1}

    live = ToolExecutor(credentials={"api-key": "k-0123456789"})
    recorder = ExecutionRecorder(live)
    live.execute(Scripted(bad), {}, raise_on_failure=False)
    replaying = ToolExecutor(credentials={}, replay=recorder)
    with pytest.raises(ToolValidationError) as info:
        replaying.execute(Scripted(bad), {})
    assert info.value.direction == "output"


def test_identical_calls_replay_in_order_then_repeat_the_last() -> None:
    answers = iter(["first", "second"])

    def sequence(inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"answer": next(answers)}

    live = ToolExecutor(credentials={"api-key": "k-0123456789"})
    recorder = ExecutionRecorder(live)
    live.execute(Scripted(sequence), {})
    live.execute(Scripted(sequence), {})
    replaying = ToolExecutor(credentials={}, replay=recorder)
    got = [replaying.execute(Scripted(sequence), {}).output for _ in range(3)]
    assert got == [{"answer": "first"}, {"answer": "second"}, {"answer": "second"}]


def test_detach_stops_recording(executor: ToolExecutor) -> None:
    recorder = ExecutionRecorder(executor)
    recorder.detach(executor)
    executor.execute(Adder(), {"a": 1})
    assert len(recorder) == 0


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("not json", "not a recorded call"),
        ('{"status": "success"}', "missing key 'tool'"),
        ('{"tool": "t", "version": "1", "status": "weird", "inputs": {}}', "status must be"),
        ('{"tool": "t", "version": "1", "status": "success", "inputs": {}}', "needs an 'output'"),
    ],
    ids=["json", "keys", "status", "output"],
)
def test_load_names_the_bad_line(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n" + line + "\n")
    with pytest.raises(SemanticError, match=r"bad\.jsonl:2: not a recorded call") as info:
        ExecutionRecorder.load(path)
    assert reason in str(info.value)
