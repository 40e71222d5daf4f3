"""The command against hostile input: no traceback, nothing raw on the terminal, no shadowing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit.cli import terminal_text

# The same runner, and the same autouse fixture (run in the project folder), as test_cli.
from tests.cli.test_cli import in_project, run  # noqa: F401
from tests.support.helpers import ROOT, run_bounded

BIN = Path(sys.executable).parent


def deep(levels: int) -> str:
    return '{"text": "x", "extra": ' + "[" * levels + "]" * levels + "}"


# -- no traceback --------------------------------------------------------------------------------

FILES = {
    "latin1.json": '{"text": "café"}'.encode("latin-1"),
    "binary.json": bytes(range(256)),
    "empty.json": b"",
    "bom.json": b"\xef\xbb\xbf" + b'{"text": "x"}',
    "deep.json": deep(50_000).encode(),
    "nan.json": b'{"text": "x", "top": NaN}',
}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["--input", deep(5000)], "--input: not valid JSON: nested more", id="deep"),
        pytest.param(["--input", deep(65)], "nested more than 64 levels", id="just-too-deep"),
        pytest.param(["--input", '{"top": NaN}'], "NaN is not a number JSON", id="nan"),
        pytest.param(["--input", '{"top": -Infinity}'], "-Infinity is not", id="infinity"),
        pytest.param(["--input", '{"top": 1e999}'], "too large for a float", id="overflow"),
        pytest.param(["--input", '{"top": ' + "9" * 5000 + "}"], "not valid JSON", id="long-int"),
        pytest.param(["--input", ""], "--input: not valid JSON", id="empty"),
        pytest.param(["--input", "null"], "expected a JSON object", id="null"),
        pytest.param(["--input", '"\udcff"'], "expected a JSON object", id="lone-surrogate"),
        pytest.param(["--input-file", "latin1.json"], "not UTF-8 text (byte 0xe9)", id="latin-1"),
        pytest.param(["--input-file", "binary.json"], "not UTF-8 text", id="binary"),
        pytest.param(["--input-file", "empty.json"], "not valid JSON", id="empty-file"),
        pytest.param(["--input-file", "deep.json"], "nested more than 64", id="deep-file"),
        pytest.param(["--input-file", "nan.json"], "NaN is not", id="nan-file"),
        pytest.param(["--input-file", "."], "--input-file .: not a regular file", id="directory"),
        pytest.param(["--input-file", "missing.json"], "missing.json: cannot read", id="missing"),
        pytest.param(
            ["--input-file", "latin1.json"], "--input-file latin1.json:1:14: not UTF-8", id="where"
        ),
        pytest.param(["extra=" + "[" * 3000 + "]" * 3000], None, id="deep-list-argument"),
    ],
)
def test_hostile_call_input_is_an_error_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    message: str | None,
) -> None:
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "call", "text_stats", *argv, "--tools", str(ROOT / "tools.d"))
    if message is None:  # an undeclared parameter: the call is made and fails validation
        assert code == 1
    else:
        assert code == 2
        assert err.startswith("error: ")
        assert message in err
    assert "Traceback" not in err


# -- files options name: regular files only, capped, a BOM allowed --------------------------------


def _special(tmp_path: Path, kind: str) -> str:
    """A path of ``kind``: a FIFO nobody writes to, a sparse file over the cap, a folder."""
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "big":
        with path.open("wb") as file:
            file.truncate(300 * 1024 * 1024)  # sparse: the size a reader would believe
    else:
        path.mkdir()
    return str(path)


FILE_OPTIONS = [
    pytest.param(["call", "text_stats", "--input-file"], "--input-file", id="input-file"),
    pytest.param(
        ["call", "text_stats", "text=x", "--credentials-file"], "secrets file", id="credentials"
    ),
    pytest.param(["call", "text_stats", "text=x", "--env-file"], "env file", id="env-file"),
]


@pytest.mark.parametrize(("argv", "named"), FILE_OPTIONS)
@pytest.mark.parametrize(
    ("kind", "message"),
    [
        pytest.param("fifo", "not a regular file", id="fifo"),
        pytest.param("big", "the file is over 1048576 bytes", id="over-the-cap"),
        pytest.param("folder", "not a regular file", id="folder"),
    ],
)
def test_a_file_option_reads_only_a_regular_file_within_the_cap(
    tmp_path: Path, argv: list[str], named: str, kind: str, message: str
) -> None:
    # A child process, bounded: a FIFO that blocked, or a file read whole, would show.
    path = _special(tmp_path, kind)
    command = [*argv, path, "--tools", str(ROOT / "tools.d")]
    done = run_bounded(
        f"import sys\nfrom agentkit.cli import main\nsys.exit(main({command!r}))",
        memory_bytes=200 * 1024 * 1024,
    )
    assert done.returncode == 2
    assert f"{named} {path}: {message}" in done.stderr
    assert "Traceback" not in done.stderr


BOM = b"\xef\xbb\xbf"


def test_a_byte_order_mark_is_read_past_in_every_file_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "input.json").write_bytes(BOM + b'{"text": "one two"}')
    (tmp_path / "secrets.env").write_bytes(BOM + b"UNUSED_TOKEN=abc\n")
    (tmp_path / "vars.env").write_bytes(BOM + b"UNUSED=1\n")
    code, out, err = run(
        capsys,
        "call",
        "text_stats",
        "--input-file", str(tmp_path / "input.json"),
        "--credentials-file", str(tmp_path / "secrets.env"),
        "--env-file", str(tmp_path / "vars.env"),
        "--tools", str(ROOT / "tools.d"),
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert json.loads(out)["output"]["words"] == 2


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        pytest.param(["latitude=nan", "longitude=0"], "'latitude': expected a finite", id="nan"),
        pytest.param(["latitude=0", "longitude=-inf"], "'longitude': expected a finite", id="inf"),
        pytest.param(["latitude=1e999", "longitude=0"], "got inf", id="overflow"),
    ],
)
def test_non_finite_arguments_fail_the_call_with_the_reason(
    capsys: pytest.CaptureFixture[str], arguments: list[str], problem: str
) -> None:
    code, out, err = run(capsys, "call", "forecast_daily", *arguments)
    assert code == 1
    assert problem in " ".join(json.loads(out)["error"]["errors"])
    assert "Traceback" not in err


def test_a_million_levels_of_input_exit_2_within_memory_and_time(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    huge.write_text(deep(1_000_000))
    child = run_bounded(
        f"""
        import sys
        from agentkit.cli import main
        sys.exit(main(["call", "text_stats", "--input-file", {str(huge)!r}]))
        """
    )
    assert child.returncode == 2, child.stderr[-2000:]
    assert child.stderr.startswith("error: --input-file")
    assert "Traceback" not in child.stderr


# -- nothing raw on the terminal -----------------------------------------------------------------

HOSTILE = "Red \x1b[31mALERT\x1b[0m\x07 \u202etxt.exe\u202c \x9b2J \u2066x\u2069 \x7f\ttab"


@pytest.mark.parametrize(
    ("text", "one_line", "shown"),
    [
        pytest.param("\x1b[2J", False, "\\x1b[2J", id="escape-sequence"),
        pytest.param("a\x00b\x07c\x08", False, "a\\x00b\\x07c\\x08", id="c0"),
        pytest.param("\x7f\x85\x9b", False, "\\x7f\\x85\\x9b", id="del-and-c1"),
        pytest.param("abc\u202edef", False, "abc\\u202edef", id="right-to-left-override"),
        pytest.param("\u202a\u202b\u202c\u202d", False, "\\u202a\\u202b\\u202c\\u202d", id="bidi"),
        pytest.param("\u2066\u2067\u2068\u2069", False, "\\u2066\\u2067\\u2068\\u2069", id="iso"),
        pytest.param("a\u2028b", False, "a\\u2028b", id="line-separator"),
        pytest.param("\udcff", False, "\\udcff", id="lone-surrogate"),
        pytest.param("two\nlines", False, "two\nlines", id="newline-kept"),
        pytest.param("two\nlines", True, "two\\nlines", id="newline-in-a-field"),
        pytest.param("a\r\nb", False, "a\\r\nb", id="carriage-return"),
        pytest.param("Zürich 東京 😀", True, "Zürich 東京 😀", id="unicode-untouched"),
    ],
)
def test_terminal_text_escapes_what_a_terminal_would_obey(
    text: str, one_line: bool, shown: str
) -> None:
    assert terminal_text(text, one_line=one_line) == shown


HOSTILE_TOOL = f"""\
name: hostile
version: 1.0.0
description: {json.dumps(HOSTILE + chr(10) + "error: forged line")}
tags: {{team: {json.dumps("ops" + chr(0x1B) + "[1m")}}}
input_schema:
  parameters:
    - name: mode
      type: string
      required: false
      default: {json.dumps("a" + chr(0x1B) + "]0;title" + chr(7))}
      description: {json.dumps("x" + chr(0x202E) + "y")}
output_schema: {{parameters: [{{name: ok, type: boolean}}]}}
backend:
  http:
    url: http://127.0.0.1:9/
"""


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["list"], id="list"),
        pytest.param(["show", "hostile"], id="show"),
        pytest.param(["list", "--json"], id="list-json"),
        pytest.param(["show", "hostile", "--json"], id="show-json"),
        pytest.param(["export", "--format", "openai"], id="export"),
        pytest.param(["validate"], id="validate"),
        pytest.param(["call", "hostile", "mode=\x1b[2J"], id="call"),
        pytest.param(["show", "host\x1b[2Jile"], id="error-message"),
    ],
)
def test_nothing_from_a_definition_reaches_the_terminal_raw(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    (tmp_path / "hostile.yaml").write_text(HOSTILE_TOOL, encoding="utf-8")
    _, out, err = run(capsys, *argv, "--tools", str(tmp_path))
    for stream in (out, err):
        assert not set(stream) & {"\x1b", "\x07", "\x9b", "\x7f", "\u202e", "\u2066", "\t"}
    assert "\nerror: forged line" not in out


def test_a_multi_line_description_keeps_its_lines_in_show(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "hostile.yaml").write_text(HOSTILE_TOOL, encoding="utf-8")
    _, out, _ = run(capsys, "show", "hostile", "--tools", str(tmp_path))
    assert "  Red \\x1b[31mALERT\\x1b[0m\\x07 \\u202etxt.exe\\u202c" in out
    assert "\n  error: forged line\n" in out  # indented under the tool, not a line of its own
    _, out, _ = run(capsys, "list", "--tools", str(tmp_path))
    assert "\\nerror: forged line" in out


# -- the current folder does not shadow installed packages ---------------------------------------

SHADOWS = ("jinja2", "requests", "yaml", "urllib3")
BACKEND_TOOL = """\
name: local_echo
version: 1.0.0
input_schema: {parameters: [{name: text, type: string}]}
output_schema: {parameters: [{name: text, type: string}]}
backend: {python: "local_backend:echo"}
"""

# An HTTP tool whose port is closed: the call imports requests and fails fast, locally.
CLOSED_PORT_TOOL = """\
name: closed
version: 1.0.0
output_schema: {parameters: [{name: ok, type: boolean}]}
backend: {http: {url: "http://127.0.0.1:9/", retry: {attempts: 1}}}
"""


@pytest.fixture
def shadowed_folder(tmp_path: Path, tools_dir: Path) -> Path:
    for name in SHADOWS:
        (tmp_path / f"{name}.py").write_text(f"raise SystemExit('shadowed by ./{name}.py')\n")
    (tmp_path / "local_backend.py").write_text("def echo(text):\n    return {'text': text}\n")
    (tools_dir / "local.yaml").write_text(BACKEND_TOOL)
    (tools_dir / "closed.yaml").write_text(CLOSED_PORT_TOOL)
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [
        pytest.param([sys.executable, "-m", "agentkit"], id="python-m"),
        pytest.param([str(BIN / "agentkit")], id="installed-command"),
    ],
)
@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["list"], id="list"),
        pytest.param(["export", "--format", "anthropic"], id="export"),
        pytest.param(["call", "local_echo", "text=hi"], id="python-backend-call"),
        pytest.param(["call", "closed"], id="http-call"),
        pytest.param(["list", "--python-path", "."], id="python-path"),
    ],
)
def test_the_current_folder_never_shadows_an_installed_package(
    shadowed_folder: Path, command: list[str], argv: list[str]
) -> None:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    child = subprocess.run(
        [*command, *argv],
        cwd=shadowed_folder,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert "shadowed" not in child.stderr + child.stdout
    assert "Traceback" not in child.stderr
    if argv[0] == "call" and argv[1] == "local_echo":
        assert json.loads(child.stdout)["output"] == {"text": "hi"}
