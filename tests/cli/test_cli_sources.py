"""The agentkit command with sources and ${VAR}: --env-file, show, diff and validate's warning."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.cli.test_cli import run

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


def folder_of(new: Path, source: str) -> Path:
    """A folder of the tools and ``source``."""
    new.mkdir()
    (new / "tools.yaml").write_text(TOOLS)
    (new / "source.yaml").write_text(source)
    return new


def test_diff_sees_a_source_change_as_a_change_of_every_tool_using_it(
    capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path
) -> None:
    new = folder_of(tmp_path / "new", SOURCE.replace("core", "platform"))
    code, out, err = run(capsys, "diff", str(folder), str(new))
    assert code == 1, out
    assert "get_item 1.0.0 -> 1.0.0: changed" in out
    assert "list_items 1.0.0 -> 1.0.0: changed" in out
    assert out.count("compatible: source 'api' changed") == 2
    assert "version bump missing for: get_item, list_items" in err


def test_diff_sees_no_change_in_a_sources_description_alone(
    capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path
) -> None:
    new = folder_of(tmp_path / "new", SOURCE + "description: Items API 2.0\n")
    code, out, err = run(capsys, "diff", str(folder), str(new))
    assert code == 0, out + err
    assert "changed" not in out


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


def _tool(url: str, auth: str = "", headers: str = "") -> str:
    return (
        "name: secretive\nversion: 1.0.0\ndescription: d\ncredentials: [tok, user]\n"
        f"backend:\n  http:\n    url: {url}\n{auth}{headers}"
    )


BEARER = "    auth: {bearer: tok}\n"
OAUTH2 = (
    "    auth: {oauth2: {token_url: 'https://auth.example.com/t', client_id: user, "
    "client_secret: tok}}\n"
)
PLAIN = "credentials (tok, user) would be sent over plain http:// to "


@pytest.mark.parametrize(
    ("definition", "warned"),
    [
        pytest.param(
            _tool(
                "http://api.example.com/x",
                headers='    headers: {X-Key: "{{ credentials.tok }}"}\n',
            ),
            f"{PLAIN}http://api.example.com,",
            id="credential-in-a-header",
        ),
        pytest.param(
            _tool(
                "http://api.example.com/x",
                "    auth: {api_key: {credential: tok, in: query, name: key}}\n",
            ),
            f"{PLAIN}http://api.example.com,",
            id="query-api-key",
        ),
        pytest.param(
            _tool(
                "http://api.example.com/x", "    auth: {basic: {username: user, password: tok}}\n"
            ),
            f"{PLAIN}http://api.example.com,",
            id="basic-auth",
        ),
        pytest.param(
            _tool("http://api.example.com:8080/v1/x", BEARER),
            f"{PLAIN}http://api.example.com:8080,",
            id="port-and-path",
        ),
        pytest.param(
            _tool("http://api.example.com", BEARER), f"{PLAIN}http://api.example.com,", id="no-path"
        ),
        pytest.param(
            _tool("HTTP://API.example.com/x", BEARER),
            "would be sent over plain http://",
            id="uppercase-scheme",
        ),
        pytest.param(
            _tool("http://[2001:db8::1]:8080/x", BEARER),
            f"{PLAIN}http://[2001:db8::1]:8080,",
            id="ipv6-remote",
        ),
        pytest.param(
            _tool("http://api.example.com/x", OAUTH2),
            "an OAuth2 token got with credentials (tok, user) would be sent over plain http://",
            id="oauth2",
        ),
        pytest.param(_tool("http://[::1]:8080/x", BEARER), None, id="ipv6-loopback"),
        pytest.param(_tool("http://[::1]/x", BEARER), None, id="ipv6-loopback-no-port"),
        pytest.param(_tool("http://127.0.0.1/x", BEARER), None, id="loopback-v4"),
        pytest.param(_tool("http://LOCALHOST:9/x", BEARER), None, id="localhost-uppercase"),
        pytest.param(_tool("https://api.example.com/x", BEARER), None, id="https"),
        pytest.param(_tool("HTTPS://api.example.com/x", BEARER), None, id="https-uppercase"),
    ],
)
def test_validate_warns_of_plain_http_for_every_kind_of_credential_without_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, definition: str, warned: str | None
) -> None:
    tool = tmp_path / "t.yaml"
    tool.write_text(definition)
    code, out, err = run(capsys, "validate", str(tool))
    assert "Traceback" not in err
    assert code == 0, err
    if warned is None:
        assert "plain http://" not in err
        assert out.startswith("ok: 1 tool in 1 file(s); largest schema: ")
    else:
        assert f"warning: {tool}:1: backend.http: " in err
        assert warned in err
        assert "readable by anyone on the way; use https://" in err
        assert "(the base_url of source" not in err
    assert run(capsys, "validate", "--strict", str(tool))[0] == (0 if warned is None else 1)


OAUTH2_SOURCE = """\
source: api
base_url: ${API_URL}/v1
credentials: [client-id, client-secret]
auth: {oauth2: {token_url: 'https://auth.example.com/t', client_id: client-id, client_secret: client-secret}}
"""


@pytest.mark.parametrize(
    ("url", "warned"),
    [
        pytest.param("http://api.example.com", True, id="plain-remote"),
        pytest.param("HTTP://api.example.com:8443", True, id="uppercase-with-port"),
        pytest.param("http://[::1]:8080", False, id="loopback-v6"),
        pytest.param("https://api.example.com", False, id="https"),
    ],
)
def test_validate_warns_of_an_oauth2_sources_plain_http_origin_from_a_variable(
    capsys: pytest.CaptureFixture[str], folder: Path, url: str, warned: bool, tmp_path: Path
) -> None:
    (folder / "source.yaml").write_text(OAUTH2_SOURCE)
    env_file = tmp_path / "env"
    env_file.write_text(f"API_URL={url}\n")
    code, _, err = run(capsys, "validate", "--tools", str(folder), "--env-file", str(env_file))
    assert "Traceback" not in err
    assert code == 0, err
    said = "an OAuth2 token got with credentials (client-id, client-secret) would be sent over plain http://"
    assert (said in err) is warned
    assert (f"(the base_url of source 'api', {folder}/source.yaml:1)" in err) is warned
