"""The agentkit command with sources and ${VAR}: --env-file, show, diff and validate's warning."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.test_cli import run

SOURCE = """\
source: api
base_url: ${API_URL:-https://api.example.com}/v1
credentials: [api-token]
auth: {bearer: api-token}
headers: {X-Team: "${TEAM:-core}"}
"""
TOOLS = """\
name: get_item
version: 1.0.0
description: One item.
input_schema:
  parameters:
    - {name: id, type: string}
backend:
  http: {source: api, path: "/items/{{ inputs.id }}"}
---
name: list_items
version: 1.0.0
description: Every item.
backend:
  http: {source: api, path: /items}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "source.yaml").write_text(SOURCE)
    (folder / "tools.yaml").write_text(TOOLS)
    return folder


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("API_URL", "TEAM", "AGENTKIT_TOOLS"):
        monkeypatch.delenv(name, raising=False)


def test_show_prints_the_source_and_the_substitutions(
    capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path
) -> None:
    env_file = tmp_path / "staging.env"
    env_file.write_text("API_URL=https://staging.example.com\n")
    argv = ["show", "get_item", "--tools", str(folder), "--env-file", str(env_file)]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert f"source: api (https://staging.example.com/v1, defined at {folder}/source.yaml:1)" in out
    assert (
        f"base_url: ${{API_URL}} = 'https://staging.example.com' (from env file {env_file})" in out
    )
    assert "headers.X-Team: ${TEAM} = 'core' (from default)" in out
    code, out, _ = run(capsys, *argv, "--json")
    data = json.loads(out)
    assert data["http_source"]["base_url"] == "https://staging.example.com/v1"
    assert data["http_source"]["definition"]["base_url"] == SOURCE.splitlines()[1].split(": ")[1]
    assert data["source"] == f"{folder}/tools.yaml:1"
    assert {item["variable"]: item["value"] for item in data["substitutions"]} == {
        "API_URL": "https://staging.example.com",
        "TEAM": "core",
    }


def test_a_missing_env_file_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path
) -> None:
    code, _, err = run(capsys, "list", "--tools", str(folder), "--env-file", str(tmp_path / "no"))
    assert code == 2
    assert "Cannot read env file" in err
    assert "Traceback" not in err


def test_diff_sees_a_source_change_as_a_change_of_every_tool_using_it(
    capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path
) -> None:
    new = tmp_path / "new"
    new.mkdir()
    (new / "tools.yaml").write_text(TOOLS)
    (new / "source.yaml").write_text(SOURCE.replace("core", "platform"))
    code, out, err = run(capsys, "diff", str(folder), str(new))
    assert code == 1, out
    assert "get_item 1.0.0 -> 1.0.0: changed" in out
    assert "list_items 1.0.0 -> 1.0.0: changed" in out
    assert out.count("compatible: source 'api' changed") == 2
    assert "version bump missing for: get_item, list_items" in err


@pytest.mark.parametrize(
    ("url", "warned"),
    [
        pytest.param("http://api.example.com", True, id="plain-remote"),
        pytest.param("http://10.0.0.1:8080", True, id="plain-private"),
        pytest.param("https://api.example.com", False, id="https"),
        pytest.param("http://127.0.0.1:8080", False, id="loopback-v4"),
        pytest.param("http://[::1]:8080", False, id="loopback-v6"),
        pytest.param("http://localhost:8080", False, id="localhost"),
    ],
)
def test_validate_warns_when_a_credential_would_go_over_plain_http(
    capsys: pytest.CaptureFixture[str], folder: Path, url: str, warned: bool
) -> None:
    (folder / "source.yaml").write_text(SOURCE.replace("${API_URL:-https://api.example.com}", url))
    code, _, err = run(capsys, "validate", "--tools", str(folder))
    assert code == 0
    assert ("credentials (api-token) would be sent over plain http://" in err) is warned
    assert (f"(the base_url of source 'api', {folder}/source.yaml:1)" in err) is warned
    code, _, _ = run(capsys, "validate", "--strict", "--tools", str(folder))
    assert code == (1 if warned else 0)


def test_validate_does_not_warn_for_a_plain_http_tool_without_credentials(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tool = tmp_path / "t.yaml"
    tool.write_text(
        textwrap.dedent(
            """\
            name: public
            version: 1.0.0
            description: d
            backend: {http: {url: "http://api.example.com/x"}}
            """
        )
    )
    code, _, err = run(capsys, "validate", "--strict", str(tool))
    assert code == 0, err
