"""Every code block of README.md and docs/*.md runs as written, and the exit-status table holds.

The blocks run in a scratch checkout: ``tools.d/`` and ``examples/`` copied, committed
to a fresh git repository, with the real weather APIs' origins pointed at the demo's
local weather service (``examples/demo_service.py``) -- in the definitions and in the
blocks alike; nothing else is changed. ``WEATHER_API_KEY`` is set to a dummy (the
service accepts any key). Per language:

- ``python``: the block runs as a script in the checkout and must exit 0;
- ``sh``: each line runs through ``sh`` with the installed ``agentkit`` command first
  on PATH, in order, and must exit 0 with no traceback;
- ``json`` must parse; ``yaml`` must parse, and a whole definition must load;
- ``text`` is shown output, not run.

A block that cannot run offline says so in its info string, ```` ```sh {skip: reason} ````;
the skipped blocks are few, and each names its reason. A block the reader saves as a
file says where, ```` ```yaml {file: books/tools/source.yaml} ````: it is written there in
the checkout before any block runs, and a definition in it loads with the other files
of its folder. A process a block starts in the background writes its id to a ``.pid``
file, and is stopped with the checkout if a later line that stops it failed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest
import yaml

from agentkit import ToolRegistry, load_tools
from agentkit.cli import EXIT_STATUSES
from examples.demo_service import WeatherService, local_copy, point_at

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"python", "sh", "json", "yaml", "text"}
MAX_SKIPPED = 5  # a server that runs until stopped is among them: tests/mcp test it
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>.*)$")
INFO = re.compile(
    r"^(?P<lang>[\w-]*)\s*(?:\{(?:skip:\s*(?P<skip>[^}]*)|file:\s*(?P<file>[^}]*))\})?\s*$"
)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    language: str
    skip: str | None
    text: str
    file: str | None = None  # where the reader saves it, relative to the checkout

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}:{self.language}"


def blocks(path: Path) -> Iterator[Block]:
    """The fenced blocks of one Markdown file; an unclosed fence or a bad info string fails."""
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        info = INFO.match(opening["info"])
        assert info is not None, f"{path}:{index + 1}: unreadable info string {opening['info']!r}"
        indent = len(opening["indent"])
        end = next((n for n in range(index + 1, len(lines)) if lines[n].strip() == "```"), None)
        assert end is not None, f"{path}:{index + 1}: the fence is never closed"
        body = "\n".join(line[indent:] for line in lines[index + 1 : end])
        skip = info["skip"].strip() if info["skip"] is not None else None
        file = info["file"].strip() if info["file"] is not None else None
        yield Block(path, index + 1, info["lang"], skip, body + "\n", file)
        index = end + 1


ALL_BLOCKS = [block for path in DOCUMENTS for block in blocks(path)]


def _params(language: str) -> list[object]:
    return [
        pytest.param(
            block,
            id=block.id,
            marks=[pytest.mark.skip(reason=block.skip)] if block.skip else [],
        )
        for block in ALL_BLOCKS
        if block.language == language
    ]


# -- the scratch checkout ------------------------------------------------------------------------


@dataclass(frozen=True)
class Checkout:
    folder: Path
    env: dict[str, str]
    base_url: str


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Checkout]:
    folder = tmp_path_factory.mktemp("checkout")
    with WeatherService() as service:
        local_copy(ROOT / "tools.d", folder / "tools.d", service.url)
        shutil.copytree(
            ROOT / "examples", folder / "examples", ignore=shutil.ignore_patterns("__pycache__")
        )
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("AGENTKIT_", "GIT_"))},
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "WEATHER_API_KEY": "docs-test-key",
            "GIT_AUTHOR_NAME": "docs",
            "GIT_AUTHOR_EMAIL": "docs@example.invalid",
            "GIT_COMMITTER_NAME": "docs",
            "GIT_COMMITTER_EMAIL": "docs@example.invalid",
        }
        for command in (["init", "-q"], ["add", "tools.d"], ["commit", "-q", "-m", "tools"]):
            subprocess.run(["git", *command], cwd=folder, env=env, check=True, timeout=30)
        _write_files(folder)
        try:
            yield Checkout(folder, env, service.url)
        finally:
            _stop_started(folder)


def _write_files(folder: Path) -> None:
    """Every ``{file: PATH}`` block, saved at its path as the reader would."""
    for block in ALL_BLOCKS:
        if block.file is not None:
            target = folder / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")


def _stop_started(folder: Path) -> None:
    """Stop what the blocks started in the background and left running (by its .pid file)."""
    for pid_file in folder.rglob("*.pid"):
        with contextlib.suppress(ValueError, ProcessLookupError, PermissionError):
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)


def _run(argv: list[str], checkout: Checkout) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=checkout.folder,
        env=checkout.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# -- the blocks ----------------------------------------------------------------------------------


def test_every_block_names_a_known_language() -> None:
    unknown = [block.id for block in ALL_BLOCKS if block.language not in LANGUAGES]
    assert unknown == []


def test_few_blocks_are_skipped_and_each_says_why() -> None:
    skipped = [block for block in ALL_BLOCKS if block.skip is not None]
    assert len(skipped) <= MAX_SKIPPED, [block.id for block in skipped]
    assert all(len(block.skip or "") >= 10 for block in skipped), [b.id for b in skipped]


def test_the_block_parser_reads_info_strings_and_indented_fences(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "intro\n```sh {skip: needs the network}\ncurl x\n```\n- item\n\n  ```text\n  out\n  ```\n"
        "```yaml {file: a/b.yaml}\nx: 1\n```\n"
    )
    found = list(blocks(page))
    assert [(b.line, b.language, b.skip, b.text, b.file) for b in found] == [
        (2, "sh", "needs the network", "curl x\n", None),
        (7, "text", None, "out\n", None),
        (10, "yaml", None, "x: 1\n", "a/b.yaml"),
    ]
    page.write_text("```python\nprint(1)\n")
    with pytest.raises(AssertionError, match="never closed"):
        list(blocks(page))


@pytest.mark.parametrize("block", _params("python"))
def test_python_block_runs(block: Block, checkout: Checkout) -> None:
    script = checkout.folder / f"block_{block.line}.py"
    script.write_text(point_at(block.text, checkout.base_url), encoding="utf-8")
    done = _run([sys.executable, str(script)], checkout)
    assert done.returncode == 0, f"{block.id}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("block", _params("sh"))
def test_sh_block_runs_line_by_line(block: Block, checkout: Checkout) -> None:
    commands = [line for line in block.text.splitlines() if line.strip()]
    assert commands
    for command in commands:
        done = _run(["sh", "-c", point_at(command, checkout.base_url)], checkout)
        assert done.returncode == 0, f"{block.id}: {command}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, command


@pytest.mark.parametrize("block", _params("json"))
def test_json_block_parses(block: Block) -> None:
    json.loads(block.text)


@pytest.mark.parametrize("block", _params("yaml"))
def test_yaml_block_parses_and_a_whole_definition_loads(block: Block, tmp_path: Path) -> None:
    documents = list(yaml.safe_load_all(block.text))
    assert all(isinstance(document, dict) for document in documents)
    tools = [document["name"] for document in documents if {"name", "backend"} <= document.keys()]
    if tools and block.file is not None:  # loads with the other saved files of its folder
        folder = Path(block.file).parent
        for other in ALL_BLOCKS:
            if other.file is not None and Path(other.file).parent == folder:
                (tmp_path / Path(other.file).name).write_text(other.text)
        registry = ToolRegistry()
        load_tools(tmp_path, registry=registry)
        assert set(tools) <= set(registry.names())
    elif tools:  # a whole definition (with its sources, if the block has them) loads
        path = tmp_path / "definition.yaml"
        path.write_text(block.text)
        registry = ToolRegistry()
        load_tools(path, registry=registry)
        assert registry.names() == sorted(tools)


# -- the exit-status table -----------------------------------------------------------------------


def _readme_table() -> list[tuple[int, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("| status | meaning |\n| --- | --- |\n", 1)[1].split("\n\n", 1)[0]
    rows = [row.strip("|").split("|", 1) for row in table.splitlines()]
    return [(int(code), meaning.strip()) for code, meaning in rows]


def test_the_readme_table_is_the_commands_table() -> None:
    assert _readme_table() == list(EXIT_STATUSES)


def test_help_prints_the_table(checkout: Checkout) -> None:
    done = _run(["agentkit", "--help"], checkout)
    assert done.returncode == 0
    help_text = " ".join(done.stdout.split())
    for code, meaning in EXIT_STATUSES:
        assert f"{code} {meaning}" in help_text


QUIET = "name: quiet\nversion: 1.0.0\nbackend: {http: {url: 'http://127.0.0.1:9/x'}}\n"
BUMPED = QUIET.replace(
    "backend:", "input_schema: {parameters: [{name: q, type: string}]}\nbackend:"
)


@pytest.mark.parametrize(
    ("argv", "files", "code"),
    [
        pytest.param(["validate"], {}, 0, id="validate-clean"),
        pytest.param(["validate", "w"], {"w/t.yaml": QUIET}, 0, id="validate-warnings"),
        pytest.param(["call", "text_stats", "text=a b"], {}, 0, id="call-ok"),
        pytest.param(["diff", "tools.d", "tools.d"], {}, 0, id="diff-same"),
        pytest.param(["call", "text_stats", "text=a", "top=99"], {}, 1, id="call-failed"),
        pytest.param(["call", "fetch_weather", "city=Atlantis"], {}, 1, id="call-upstream-404"),
        pytest.param(
            ["validate", "--strict", "w"], {"w/t.yaml": QUIET}, 1, id="validate-strict-warnings"
        ),
        pytest.param(
            ["diff", "old/t.yaml", "new/t.yaml"],
            {"old/t.yaml": QUIET, "new/t.yaml": BUMPED},
            1,
            id="diff-missing-bump",
        ),
        pytest.param(["call", "text_stat"], {}, 2, id="unknown-tool"),
        pytest.param(["call", "text_stats", "top=many"], {}, 2, id="bad-argument"),
        pytest.param(["validate", "b.yaml"], {"b.yaml": "name: x\nversion: one\n"}, 2, id="broken"),
        pytest.param(["frobnicate"], {}, 2, id="unknown-command"),
    ],
)
def test_each_exit_status_through_the_installed_command(
    checkout: Checkout, tmp_path: Path, argv: list[str], files: dict[str, str], code: int
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    argv = [
        str(tmp_path / arg) if arg.split("/")[0] in {"w", "old", "new", "b.yaml"} else arg
        for arg in argv
    ]
    done = _run(["agentkit", *argv], checkout)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert code in {status for status, _ in EXIT_STATUSES}
    if code == 2:
        assert done.stderr.startswith(("error: ", "usage: "))


SLEEPER = """\
import sys
import time


def wait(**inputs):
    print("ready", file=sys.stderr, flush=True)
    time.sleep(600)  # the test ends it long before, either way
    return {}
"""
#: How long the test waits for the call to start, and then to end after Ctrl-C.
WAIT_SECONDS = 60
#: Starts the command after it as a terminal does on Ctrl-C's side: SIGINT at its
#: default. A command started in the background by a shell without job control
#: (``make test &`` in a script) inherits SIGINT *ignored*, and Python then installs
#: no KeyboardInterrupt handler: the call would sleep through the signal.
WITH_SIGINT = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])",
]


def _line_within(stream: IO[str], seconds: float) -> str:
    """The next line on the pipe ``stream``; "" when none begins within ``seconds``."""
    readable, _, _ = select.select([stream], [], [], seconds)
    return stream.readline() if readable else ""


def test_interrupted_exits_130(checkout: Checkout, tmp_path: Path) -> None:
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    (tmp_path / "sleeper.yaml").write_text(
        "name: sleeper\nversion: 1.0.0\nbackend: {python: 'sleeper:wait'}\n"
    )
    argv = ["agentkit", "call", "sleeper", "--tools", str(tmp_path / "sleeper.yaml")]
    with subprocess.Popen(
        [*WITH_SIGINT, *argv, "--python-path", str(tmp_path)],
        cwd=checkout.folder,
        env=checkout.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stderr is not None
            # Signalled once the backend runs (it says so), not after a guessed delay.
            started = _line_within(process.stderr, WAIT_SECONDS)
            assert started == "ready\n", f"the call did not start: {started!r}"
            process.send_signal(signal.SIGINT)
            try:
                _, err = process.communicate(timeout=WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the call still ran {WAIT_SECONDS} s after SIGINT")
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130
    assert err == "error: interrupted\n"
