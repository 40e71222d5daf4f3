"""``agentkit test``: the shipped tools.d passes offline; exit statuses, the closing line,
--tool, --junit."""

from __future__ import annotations

import json
import re
import shutil
import socket
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.cli.test_cli import run
from tests.support.example_apis import record_shipped
from tests.support.helpers import ROOT

TOOLS_D = ROOT / "tools.d"
CLOSING = re.compile(r"^=+ (.+) in \d+\.\d\ds =+$")


def edited_copy(tmp_path: Path, relative: str, old: str, new: str) -> tuple[Path, Path]:
    """A copy of tools.d with ``old`` replaced by ``new`` in file ``relative``: (folder, file)."""
    copy = tmp_path / "tools.d"
    shutil.copytree(TOOLS_D, copy)
    path = copy / relative
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return copy, path


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No socket, no credential, the project folder (Python backends import from it)."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"agentkit test opened a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for name in ("WEATHER_API_KEY", "GITHUB_TOKEN", "GITHUB_API_URL", "AGENTKIT_TOOLS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(ROOT)


def closing(out: str) -> str:
    match = CLOSING.match(out.splitlines()[-1])
    assert match is not None, out
    return match.group(1)


def test_the_shipped_tools_pass_offline_without_credentials(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "test")
    assert code == 0, out + err
    assert closing(out) == "16 passed"
    assert "fetch_weather::london PASSED" in out
    assert "create_github_issue::open_one PASSED" in out
    assert "text_stats::top_out_of_range PASSED" in out


def test_the_shipped_recordings_are_what_the_documented_replies_record(tmp_path: Path) -> None:
    copy = tmp_path / "tools.d"
    shutil.copytree(TOOLS_D, copy)
    outcomes = record_shipped(copy)
    assert all(outcome.passed for outcome in outcomes), [o.reason for o in outcomes if not o.passed]
    assert {outcome.recorded for outcome in outcomes} == {"unchanged", None}
    recordings = sorted(TOOLS_D.rglob(".recordings/*/*.yaml"))
    assert len(recordings) == 11
    for path in recordings:
        assert "agentkit-placeholder-" in path.read_text() or "github" not in str(path)


def test_a_failing_example_exits_1_with_its_diff_and_location(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    copy, path = edited_copy(
        tmp_path, "fetch_weather.yaml", "conditions: light rain", "conditions: heavy rain"
    )
    code, out, _ = run(capsys, "test", str(copy))
    assert code == 1
    assert closing(out) == "15 passed, 1 failed"
    assert "fetch_weather::london FAILED" in out
    assert f"{path}:56: the output differs:" in out
    assert '-    "conditions": "heavy rain",' in out.splitlines()
    assert '+    "conditions": "light rain",' in out.splitlines()


def test_a_broken_example_is_a_definition_error_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    copy = tmp_path / "tools.d"
    shutil.copytree(TOOLS_D, copy)
    path = copy / "text_stats.yaml"
    path.write_text(
        path.read_text().replace(
            "output_includes:\n      commonest:", "output_includes:\n      rarest:"
        )
    )
    code, out, err = run(capsys, "test", str(copy))
    assert code == 2
    assert (
        "text_stats.yaml:49:9: examples[1].output_includes.rarest: 'rarest' is not an output field"
        in err
    )
    assert out == ""


def test_tool_picks_one_tools_examples_and_an_unknown_one_is_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "test", "--tool", "get_github_issue")
    assert code == 0
    assert closing(out) == "2 passed"
    code, _, err = run(capsys, "test", "--tool", "get_github_isue")
    assert code == 2
    assert "get_github_issue" in err  # did you mean


def test_no_examples_says_how_to_add_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "t.yaml").write_text(
        "name: t\nversion: 1.0.0\nbackend: {python: examples.textstats:text_stats}\n"
        "input_schema: {parameters: [{name: text, type: string}]}\n"
    )
    code, out, _ = run(capsys, "test", str(tmp_path))
    assert code == 0
    assert "no examples: add 'examples:' to a definition" in out
    assert closing(out) == "no examples ran"


def test_junit_writes_a_testcase_per_example_with_failures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    copy, path = edited_copy(tmp_path, "github/issues.yaml", "status: 404", "status: 410")
    report = tmp_path / "report.xml"
    code, _, _ = run(capsys, "test", str(copy), "--junit", str(report))
    assert code == 1
    suite = ElementTree.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == ("agentkit", "16", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases if c.get("classname") == "fetch_weather"] == [
        "london",
        "new_york_imperial",
        "unknown_city",
    ]
    (failed,) = [case for case in cases if case.find("failure") is not None]
    assert (failed.get("classname"), failed.get("name")) == ("get_github_issue", "no_such_issue")
    assert failed.get("file") == str(path)
    failure = failed.find("failure")
    assert failure is not None
    assert failure.get("message") == "the call did not fail as expected:"
    assert '-  "status": 410' in (failure.text or "")


def test_junit_to_a_folder_that_cannot_be_written_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(
        capsys, "test", "--tool", "text_stats", "--junit", str(tmp_path / "no" / "r.xml")
    )
    assert code == 2
    assert "--junit" in err
    assert "cannot write" in err


def test_show_lists_the_examples_and_their_answers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "get_github_issue")
    assert code == 0
    lines = out.splitlines()
    start = lines.index("examples (agentkit test runs them):")
    assert lines[start + 1 : start + 3] == [
        '  found_a_bug: {"owner": "octocat", "repo": "Hello-World", "number": 1347} -> '
        'output includes {"title": "Found a bug", "state": "open"}',
        '  no_such_issue: {"owner": "octocat", "repo": "Hello-World", "number": 999999} -> '
        "fails (execution, status 404, message has 'Not Found')",
    ]
    code, out, _ = run(capsys, "show", "text_stats", "--json")
    assert [example["name"] for example in json.loads(out)["examples"]] == [
        "three_sentences",
        "top_word_only",
        "top_out_of_range",
    ]
