"""`agentkit validate --provider`: what each provider would refuse (exit 2) or change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli import test_cli
from tests.cli.test_cli import ROOT

# validate's summary ends with the largest schema (tests/cli/test_cli_schema_size.py).
LARGEST = re.compile(r"; largest schema: \S+, \d+ bytes \(budget \d+\)$", re.M)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``agentkit ARGV``'s exit status, stdout without the largest schema, and stderr."""
    code, out, err = test_cli.run(capsys, *argv)
    return code, LARGEST.sub("", out), err


@pytest.fixture(autouse=True)
def in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("AGENTKIT_TOOLS", raising=False)


def definition(name: str, parameters: str = "[{name: text, type: string}]") -> str:
    return (
        f"name: {name}\nversion: 1.0.0\ndescription: Send the inputs.\n"
        "backend: {http: {method: POST, url: 'http://127.0.0.1:9/inputs'}}\n"
        f"input_schema: {{parameters: {parameters}}}\n"
    )


def deep(levels: int) -> str:
    """A dictionary parameter ``levels`` dictionaries deep, in flow style."""
    param = "{name: leaf, type: string}"
    for level in range(levels):
        param = f"{{name: level{level}, type: dictionary, parameters: [{param}]}}"
    return f"[{param}]"


@pytest.mark.parametrize(
    "flags",
    [
        pytest.param(["--provider", "openai-strict"], id="one"),
        pytest.param(
            ["--provider", "openai,anthropic", "--provider", "mcp"], id="comma-and-repeat"
        ),
    ],
)
def test_the_shipped_tools_pass(capsys: pytest.CaptureFixture[str], flags: list[str]) -> None:
    assert run(capsys, "validate", *flags) == (0, "ok: 9 tools in 5 file(s)\n", "")


@pytest.mark.parametrize(
    ("flags", "expected_code"),
    [pytest.param([], 0, id="warnings-pass"), pytest.param(["--strict"], 1, id="strict-fails")],
)
def test_what_gemini_ignores_is_a_warning(
    capsys: pytest.CaptureFixture[str], flags: list[str], expected_code: int
) -> None:
    code, out, err = run(capsys, "validate", "--provider", "gemini", *flags)
    assert code == expected_code
    assert out == "15 warning(s): 9 tools in 5 file(s)\n"
    assert (
        "warning: tools.d/text_stats.yaml:2: gemini: tool 'text_stats': "
        "parametersJsonSchema.properties.top.default: Gemini ignores 'default' (not in its "
        "JSON Schema subset); fix: state the default in the description; agentkit still "
        "applies it\n"
    ) in err


def test_a_refused_schema_exits_2_only_for_that_provider(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tools = tmp_path / "deep.yaml"
    tools.write_text(definition("deep", deep(10)))
    assert run(capsys, "validate", "--provider", "openai", str(tools)) == (
        0,
        "ok: 1 tool in 1 file(s)\n",
        "",
    )
    code, out, err = run(capsys, "validate", "--provider", "all", str(tools))
    assert (code, out) == (2, "1 problem(s): 1 tool in 1 file(s)\n")
    (line,) = err.splitlines()
    assert line.startswith(
        f"error: {tools}:1: openai-strict: tool 'deep': function.parameters.properties.level9."
    )
    assert "objects nested 11 deep; strict mode takes at most 10 levels" in line
    assert line.endswith("; fix: flatten the nested dictionaries")


def test_a_list_without_an_item_type_is_exported_non_strict(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # OpenAI refuses `items: {}` under strict, so export --strict writes such a tool
    # with strict: false, and the check says why and how to make it strict.
    tools = tmp_path / "tagger.yaml"
    tools.write_text(definition("tagger", "[{name: tags, type: list}]"))
    code, out, err = run(capsys, "validate", "--provider", "openai-strict", str(tools))
    assert (code, out) == (0, "1 warning(s): 1 tool in 1 file(s)\n")
    assert err == (
        f"warning: {tools}:1: openai-strict: tool 'tagger': function.parameters.properties.tags"
        ": exported with strict: false: a list without an item type, which strict mode "
        "cannot express; fix: declare the list's item type (items: string, say)\n"
    )
    assert run(capsys, "validate", "--strict", "--provider", "openai-strict", str(tools))[0] == 1
    tools.write_text(definition("tagger", "[{name: tags, type: list, items: string}]"))
    assert run(capsys, "validate", "--provider", "openai-strict", str(tools)) == (
        0,
        "ok: 1 tool in 1 file(s)\n",
        "",
    )


def test_too_many_tools_for_one_request(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "many.yaml").write_text(
        "---\n".join(definition(f"tool{index}") for index in range(129))
    )
    code, out, err = run(capsys, "validate", "--provider", "openai,gemini", str(tmp_path))
    assert code == 2
    assert out == "1 problem(s), 2 warning(s): 129 tools in 1 file(s)\n"
    assert (
        "error: openai: the tool set: tools: 129 tools; openai takes at most 128 in a request;"
        " fix: send fewer at once: select them by tag (--tag) or split the set\n"
    ) in err
    assert "warning: gemini: the tool set: tools: 129 tools; gemini takes at most 128" in err
    code, _, err = run(capsys, "validate", "--provider", "anthropic,mcp", str(tmp_path))
    assert code == 0
    assert "anthropic" not in err
    assert "mcp" not in err


def test_an_unknown_provider_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", "--provider", "openai,claude")
    assert (code, out) == (2, "")
    assert err == (
        "error: --provider: unknown provider 'claude'; choose from: openai-strict, openai, "
        "anthropic, gemini, mcp, or all\n"
    )
    assert "Traceback" not in err
