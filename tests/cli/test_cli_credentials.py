"""`agentkit validate` judges the credentials it can resolve: one too short is a problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.cli import main

TOOL = """\
name: {name}
version: 1.0.0
description: Look a thing up.
credentials: [{credentials}]
output_schema: {{parameters: [{{name: ok, type: boolean}}]}}
backend:
  http:
    url: https://api.example.test/things
    auth: {auth}
"""


#: What validate says of these tools' schemas, after its counts.
LARGEST = "; largest schema: basic_tool, 179 bytes (budget 8192)"


def _write(folder: Path, name: str, auth: str, credentials: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(TOOL.format(name=name, auth=auth, credentials=credentials))
    return path


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for variable in ("API_TOKEN", "API_USER", "API_PASSWORD"):
        monkeypatch.delenv(variable, raising=False)
    folder = tmp_path / "tools"
    folder.mkdir()
    _write(folder, "bearer_tool", "{bearer: api-token}", "api-token")
    _write(
        folder,
        "basic_tool",
        "{basic: {username: api-user, password: api-password}}",
        "api-user, api-password",
    )
    _write(
        folder,
        "written_user",
        "{basic: {username: {value: bob}, password: api-password}}",
        "api-password",
    )
    return folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_credentials_that_do_not_resolve_here_are_not_judged(
    tools: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "validate", str(tools)) == (
        0,
        "ok: 3 tools in 3 file(s)" + LARGEST + "\n",
        "",
    )


@pytest.mark.parametrize("value", ["s", "hunter2"])
def test_a_short_credential_in_the_environment_is_a_problem(
    tools: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("API_TOKEN", value)
    monkeypatch.setenv("API_PASSWORD", "long-enough-password")
    code, out, err = run(capsys, "validate", str(tools))
    assert code == 2
    assert out == "1 problem(s): 3 tools in 3 file(s)" + LARGEST + "\n"
    assert err == (
        f"error: {tools / 'bearer_tool.yaml'}:1: Tool 'bearer_tool' needs credential 'api-token': "
        "its value from environment variable API_TOKEN is shorter than 8 characters, the least "
        "a credential needs: so short a value turns up by chance in ordinary text, and could be "
        "kept out of neither errors nor answers. Give the whole credential; a value that is not "
        "secret (a basic-auth username) is written in the definition instead "
        "(docs/tool-definitions.md, Basic auth)\n"
    )


def test_a_short_basic_auth_username_credential_is_a_problem_like_any(
    tools: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secrets = tmp_path / "secrets.env"
    secrets.write_text(
        "API_USER=bob\nAPI_PASSWORD=long-enough-password\nAPI_TOKEN=tok_0123456789\n"
    )
    code, out, err = run(capsys, "validate", str(tools), "--credentials-file", str(secrets))
    assert code == 2
    assert out == "1 problem(s): 3 tools in 3 file(s)" + LARGEST + "\n"
    assert err.startswith(
        f"error: {tools / 'basic_tool.yaml'}:1: Tool 'basic_tool' needs credential 'api-user': "
        f"its value from secrets file {secrets} ('api-user' or 'API_USER') is shorter than 8"
    )
    assert "bob" not in err


def test_credentials_long_enough_pass_and_warnings_still_count(
    tools: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secrets = tmp_path / "secrets.env"
    secrets.write_text("API_USER=svc-reports\nAPI_PASSWORD=long-enough\nAPI_TOKEN=tok_01234567\n")
    assert run(capsys, "validate", str(tools), "--credentials-file", str(secrets)) == (
        0,
        "ok: 3 tools in 3 file(s)" + LARGEST + "\n",
        "",
    )
    (tools / "bearer_tool.yaml").write_text(
        TOOL.format(
            name="bearer_tool", auth="{bearer: api-token}", credentials="api-token"
        ).replace("https://api.example.test", "http://api.example.test")
    )
    secrets.write_text("API_TOKEN=short\n")
    code, out, err = run(
        capsys, "validate", "--strict", str(tools), "--credentials-file", str(secrets)
    )
    assert code == 2  # a problem wins over --strict's exit 1 for warnings
    assert out == "1 problem(s), 1 warning(s): 3 tools in 3 file(s)" + LARGEST + "\n"
    assert err.count("warning: ") == 1
    assert err.count("error: ") == 1
