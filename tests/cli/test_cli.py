"""The agentkit command through its entry point: output, exit codes, no tracebacks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import responses

from agentkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
TOOLS_D = ROOT / "tools.d"


#: What validate says of the shipped tools' schemas, after its counts.
LARGEST = "; largest schema: fetch_weather, 599 bytes (budget 8192)"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(autouse=True)
def in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("AGENTKIT_TOOLS", raising=False)


def test_validate_the_shipped_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate") == (0, "ok: 9 tools in 5 file(s)" + LARGEST + "\n", "")


def test_validate_reports_every_problem_with_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad name\nversion: one\nbackend: {python: 'os:system'}\n")
    code, out, err = run(capsys, "validate", str(bad))
    assert code == 2
    assert out == ""
    assert err.startswith("error: 3 problems in tool definitions:\n")
    assert f"{bad}:1:7: name: invalid tool name 'bad name'" in err
    assert f"{bad}:2:10: version: invalid version 'one'" in err
    assert "'os' is a standard-library module" in err
    assert "Traceback" not in err


QUIET = (
    "name: quiet\nversion: 1.0.0\nbackend: {python: 'examples.textstats:text_stats'}\n"
    "input_schema: {parameters: [{name: text, type: string}]}\n"
)
LONG = QUIET.replace("name: quiet", "name: long\ndescription: " + "x" * 1025)


@pytest.mark.parametrize(
    ("definition", "warning"),
    [
        pytest.param(QUIET, "description: missing", id="no-description"),
        pytest.param(LONG, "description: 1025 characters", id="long-description"),
    ],
)
@pytest.mark.parametrize(
    ("flags", "expected_code"),
    [pytest.param([], 0, id="warnings-pass"), pytest.param(["--strict"], 1, id="strict-fails")],
)
def test_validate_warnings_fail_only_with_strict(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    definition: str,
    warning: str,
    flags: list[str],
    expected_code: int,
) -> None:
    (tmp_path / "t.yaml").write_text(definition)
    code, out, err = run(capsys, "validate", *flags, str(tmp_path))
    assert code == expected_code
    assert err.startswith("warning: ")
    assert warning in err
    assert out.startswith("1 warning(s): 1 tool in 1 file(s)")


def test_validate_strict_passes_clean_definitions(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate", "--strict") == (
        0,
        "ok: 9 tools in 5 file(s)" + LARGEST + "\n",
        "",
    )


def test_validate_strict_still_exits_2_on_a_broken_definition(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "t.yaml").write_text("name: x\nversion: one\nbackend: {python: 'os:system'}\n")
    code, out, err = run(capsys, "validate", "--strict", str(tmp_path))
    assert (code, out) == (2, "")
    assert err.startswith("error: ")


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--tag", "domain=github")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "VERSION", "BACKEND", "TAGS", "DESCRIPTION"]
    assert [line.split()[0] for line in lines[1:]] == [
        "search_github_issues",
        "list_github_issues",
        "get_github_issue",
        "create_github_issue",
        "comment_on_github_issue",
        "get_github_repo",
    ]


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--json")
    tools = json.loads(out)
    assert code == 0
    assert {tool["name"] for tool in tools} >= {"fetch_weather", "text_stats"}
    assert next(t for t in tools if t["name"] == "text_stats")["backend"] == "python"


def test_tools_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTKIT_TOOLS", str(TOOLS_D / "text_stats.yaml"))
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    assert [t["name"] for t in json.loads(out)] == ["text_stats"]


def test_show(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "fetch_weather")
    assert code == 0
    assert out.startswith(
        "fetch_weather 1.2.0  (http backend, defined at tools.d/fetch_weather.yaml:3)"
    )
    assert "units: string (optional, default 'metric') one of ['metric', 'imperial']" in out
    assert '"additionalProperties": false' in out
    code, out, _ = run(capsys, "show", "fetch_weather", "--json")
    data = json.loads(out)
    assert data["source"] == "tools.d/fetch_weather.yaml:3"
    assert data["input_json_schema"]["required"] == ["city"]
    assert data["definition"]["backend"]["http"]["method"] == "GET"


NESTED = """\
name: nested
version: 1.0.0
description: Nested parameters.
input_schema:
  parameters:
    - {name: labels, type: list, items: string, required: false}
    - {name: grid, type: list, items: {type: list, items: integer}}
    - name: filters
      type: dictionary
      parameters:
        - {name: label, type: string}
        - name: window
          type: dictionary
          required: false
          parameters: [{name: days, type: integer}]
    - name: points
      type: list
      items: {type: dictionary, parameters: [{name: x, type: float}, {name: y, type: float}]}
backend: {http: {url: "http://127.0.0.1:9/never-called"}}
"""


def test_show_names_item_types_and_nested_fields(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "t.yaml").write_text(NESTED)
    code, out, _ = run(capsys, "show", "nested", "--tools", str(tmp_path))
    assert code == 0
    inputs = out.split("inputs:\n", 1)[1].split("outputs:", 1)[0]
    assert inputs.splitlines() == [
        "  labels: list[string] (optional)",
        "  grid: list[list[integer]]",
        "  filters: dictionary",
        "    label: string",
        "    window: dictionary (optional)",
        "      days: integer",
        "  points: list[dictionary]",
        "    x: float",
        "    y: float",
    ]


def test_show_the_shipped_list_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "create_github_issue")
    assert code == 0
    assert "  labels: list[string] (optional)\n" in out


def test_unknown_tool_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "show", "fetch_wether")
    assert code == 2
    assert err.startswith("error: Unknown tool: 'fetch_wether' (did you mean 'fetch_weather'?)")


def test_call_parses_arguments_by_type(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "call", "text_stats", "text=One fish. Two fish!", "top=1")
    assert code == 0
    assert json.loads(out)["output"] == {
        "words": 4,
        "sentences": 2,
        "characters": 19,
        "commonest": ["fish"],
    }


@pytest.mark.parametrize(
    "argv",
    [
        ("call", "text_stats", "--tools", "tools.d", "text=One fish. Two fish!", "top=1"),
        ("call", "text_stats", "text=One fish. Two fish!", "--tools", "tools.d", "top=1"),
        ("call", "--tools", "tools.d", "text_stats", "text=One fish. Two fish!", "top=1"),
    ],
    ids=["options-before-arguments", "options-between", "options-first"],
)
def test_call_takes_arguments_on_either_side_of_options(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert json.loads(out)["output"]["words"] == 4


def test_call_still_refuses_an_unknown_option(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "call", "text_stats", "--tools", "tools.d", "--bogus", "top=1")
    assert code == 2
    assert "unrecognized arguments: --bogus" in err


def test_call_with_json_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "call", "text_stats", "--input", '{"text": "a b", "top": 1}')
    assert (code, json.loads(out)["status"]) == (0, "success")
    path = tmp_path / "in.json"
    path.write_text('{"text": "a b"}')
    code, out, _ = run(capsys, "call", "text_stats", "--input-file", str(path))
    assert (code, json.loads(out)["status"]) == (0, "success")


def test_a_failed_call_exits_1_with_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "call", "text_stats", "text=x", "top=99")
    result = json.loads(out)
    assert code == 1
    assert result["status"] == "failure"
    assert result["error"]["errors"] == ["Parameter 'top': expected a value of at most 20, got 99"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["call", "text_stats", "top=many"],
            "argument top='many': expected integer, such as top=3",
            id="type",
        ),
        pytest.param(
            ["call", "text_stats", "--input", "{nope"], "--input: not valid JSON", id="json"
        ),
        pytest.param(
            ["call", "text_stats", "--input", "[1]"],
            "--input: expected a JSON object",
            id="not-object",
        ),
        pytest.param(
            ["call", "text_stats", "--input-file", "/nonexistent.json"],
            "--input-file /nonexistent.json: cannot read: No such file",
            id="file",
        ),
        pytest.param(
            ["call", "text_stats", "oops"], "arguments are key=value, got 'oops'", id="pair"
        ),
        pytest.param(["list", "--tag", "domain"], "--tag takes key=value", id="tag"),
        pytest.param(
            ["list", "--tools", "/nonexistent"],
            "/nonexistent: no such file or folder",
            id="tools-path",
        ),
    ],
)
def test_user_mistakes_exit_2_without_a_traceback(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err


def test_call_with_a_credentials_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    secrets = tmp_path / ".env"
    secrets.write_text("WEATHER_API_KEY=from-file\n")
    with responses.RequestsMock() as mock:
        mock.get(
            "https://api.openweathermap.org/data/2.5/weather",
            json={"main": {"temp": 1.5, "humidity": 50}, "weather": [{"description": "mist"}]},
        )
        code, out, _ = run(
            capsys, "call", "fetch_weather", "city=Oslo", "--credentials-file", str(secrets)
        )
        assert "appid=from-file" in (mock.calls[0].request.url or "")
    assert code == 0
    assert json.loads(out)["output"] == {"temperature": 1.5, "conditions": "mist", "humidity": 50}


def test_a_missing_credential_is_a_failed_call(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WEATHER_API_KEY", raising=False)
    code, out, _ = run(capsys, "call", "fetch_weather", "city=Oslo")
    assert code == 1
    assert "needs credential 'weather-api-key'" in json.loads(out)["error"]["message"]


def test_export(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "export", "--format", "anthropic", "--tag", "domain=text")
    assert code == 0
    assert err == ""
    assert json.loads(out)[0]["name"] == "text_stats"


def test_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schema")
    assert code == 0
    assert json.loads(out)["title"] == "agentkit tool definition"


def test_diff_exits_1_on_a_missing_bump(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    new = tmp_path / "new"
    shutil.copytree(TOOLS_D, new)
    path = new / "forecast.yaml"
    path.write_text(
        path.read_text()
        .replace("    - name: days\n", "    - name: model\n      type: string\n    - name: days\n")
        # The examples give the new input too: they are checked against the schema.
        .replace(
            "inputs:\n      latitude: 52.52\n",
            "inputs:\n      model: icon\n      latitude: 52.52\n",
        )
    )
    code, out, err = run(capsys, "diff", str(TOOLS_D), str(new))
    assert code == 1, err
    assert "forecast_daily 1.0.0 -> 1.0.0: changed" in out
    assert "breaking: new required input 'model'" in out
    assert "version: breaking changes need at least a major version bump (1.0.0 -> 2.0.0)" in out
    assert "error: version bump missing for: forecast_daily" in err
    path.write_text(path.read_text().replace("version: 1.0.0", "version: 2.0.0"))
    code, out, _ = run(capsys, "diff", str(TOOLS_D), str(new), "--json")
    assert code == 0
    assert json.loads(out)["summary"] == {
        "added": 0,
        "removed": 0,
        "changed": 1,
        "version_problems": 0,
    }


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys)
    assert code == 2
    assert "validate" in out


@pytest.mark.parametrize(
    "command",
    [[str(Path(sys.executable).parent / "agentkit")], [sys.executable, "-m", "agentkit"]],
    ids=["console-script", "python-m"],
)
def test_the_real_entry_points(command: list[str]) -> None:
    done = subprocess.run(
        [*command, "call", "text_stats", "text=a b a"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"]["commonest"] == ["a", "b"]
    failed = subprocess.run(
        [*command, "validate", "/nonexistent"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert failed.returncode == 2
    assert failed.stderr.startswith("error: ")
    assert "Traceback" not in failed.stderr


def test_help_does_not_import_the_heavy_parts() -> None:
    code = (
        "import sys; from agentkit.cli import build_parser; build_parser();"
        "print(sorted(m for m in ('requests', 'jinja2', 'yaml', 'mcp') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
