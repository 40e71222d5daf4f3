"""``agentkit test --record`` against a real server (httpbin on 127.0.0.1), then replay offline."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.testing.recordings import recording_path
from tests.cli.test_cli import run

TOKEN = "tok-3c9e1a7f5b2d8e4a"

DEFINITIONS = """\
name: slideshow_title
version: 1.0.0
credentials: [demo-token]
output_schema: {{parameters: [{{name: title, type: string}}]}}
backend:
  http:
    url: {url}/json
    auth: {{bearer: demo-token}}
    output: {{title: "{{{{ response.json.slideshow.title }}}}"}}
examples:
  - name: sample
    inputs: {{}}
    output: {{title: Sample Slide Show}}
---
name: echo_word
version: 1.0.0
input_schema: {{parameters: [{{name: word, type: string}}]}}
output_schema: {{parameters: [{{name: word, type: string}}]}}
backend:
  http:
    url: {url}/get
    query: {{word: "{{{{ inputs.word }}}}"}}
    output: {{word: "{{{{ response.json.args.word }}}}"}}
examples:
  - name: hello
    inputs: {{word: hello}}
    output_includes: {{word: hello}}
---
name: not_there
version: 1.0.0
backend:
  http:
    url: {url}/status/404
examples:
  - name: missing
    inputs: {{}}
    fails: execution
    status: 404
"""

ECHOING = """\
name: who_am_i
version: 1.0.0
credentials: [demo-token]
output_schema: {{parameters: [{{name: authenticated, type: boolean}}]}}
backend:
  http:
    url: {url}/bearer
    auth: {{bearer: demo-token}}
examples:
  - name: me
    inputs: {{}}
    output: {{authenticated: true}}
"""


@pytest.fixture
def folder(tmp_path: Path, httpbin_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "httpbin.yaml").write_text(DEFINITIONS.format(url=httpbin_url))
    (tmp_path / "creds.env").write_text(f"demo-token={TOKEN}\n")
    monkeypatch.delenv("DEMO_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)
    return tools


def test_record_then_replay_without_the_server_or_the_token(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    definitions = folder / "httpbin.yaml"
    code, out, err = run(capsys, "test", str(folder), "--record", "--credentials-file", "creds.env")
    assert "slideshow_title::sample PASSED (recording new: " in out, out + err
    assert "echo_word::hello PASSED (recording new: " in out
    sample = recording_path(definitions, "slideshow_title", "sample")
    saved = sample.read_text()
    assert TOKEN not in saved
    request = yaml.safe_load(saved)["exchanges"][0]["request"]
    assert request["headers"]["Authorization"] == "Bearer agentkit-placeholder-demo-token"
    assert "not_there::missing PASSED (recording new: " in out
    assert code == 0
    assert re.fullmatch(r"=+ 3 passed in \d+\.\d\ds =+", out.splitlines()[-1])

    code, out, _ = run(capsys, "test", str(folder), "--record", "--credentials-file", "creds.env")
    assert "slideshow_title::sample PASSED (recording unchanged: " in out
    assert "echo_word::hello PASSED (recording unchanged: " in out

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"replay opened a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    code, out, _ = run(capsys, "test", str(folder), "--tool", "slideshow_title")
    assert code == 0, out
    assert " 1 passed in " in out.splitlines()[-1]
    missing = yaml.safe_load(recording_path(definitions, "not_there", "missing").read_text())
    assert missing["exchanges"][0]["response"]["status"] == 404


def test_a_recording_of_a_reply_that_echoes_the_token_is_refused(
    folder: Path, httpbin_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "httpbin.yaml").write_text(ECHOING.format(url=httpbin_url))
    code, out, _ = run(capsys, "test", str(folder), "--record", "--credentials-file", "creds.env")
    assert code == 1
    assert (
        "Tool 'who_am_i', example 'me': the recording was not written: the value of "
        "credential 'demo-token' is at exchanges[0].response.json.token"
    ) in out
    assert TOKEN not in out
    assert not recording_path(folder / "httpbin.yaml", "who_am_i", "me").exists()
