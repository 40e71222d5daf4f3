"""Hostile definition files: each is refused with a located problem, in bounded time and memory.

Every attack is a file written by the test and checked by ``agentkit validate``
in a child process with an address-space limit and a wall-clock timeout, so a
regression (a quadratic check, an alias expanded in memory, a recursion) fails
its own test instead of the test run. The bounds are generous: they catch
minutes and gigabytes, not milliseconds.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentkit import DefinitionError, load_tools
from agentkit.declarative.problems import MAX_PROBLEMS, MAX_PROBLEMS_PER_FILE
from agentkit.declarative.yamlsource import MAX_DEPTH

MEMORY_LIMIT = 1024 * 1024 * 1024  # bytes of address space for the child
TIMEOUT = 120  # seconds; a load takes one or two, more on a loaded machine

_CHILD = (
    "import resource, sys\n"
    f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))\n"
    "from agentkit.cli import main\n"
    "sys.exit(main(['validate', *sys.argv[1:]]))\n"
)

HEAD = "name: t\nversion: 1.0.0\n"
SCHEMA = "input_schema:\n  parameters:\n    - {name: a, type: string}\n"


def validate_bounded(*paths: Path) -> subprocess.CompletedProcess[str]:
    """``agentkit validate paths`` in a child limited in memory and time."""
    return subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def assert_located(
    result: subprocess.CompletedProcess[str], path: Path, fragment: str, where: str | None = None
) -> None:
    """Exit status 2, no traceback, and a ``path:line:column:`` problem containing ``fragment``."""
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    position = re.escape(where) if where else r"\d+:\d+"
    pattern = rf"{re.escape(str(path))}:{position}: [^\n]*{re.escape(fragment)}"
    assert re.search(pattern, result.stderr), result.stderr[-2000:]


def http_tool(template: str) -> str:
    """A tool whose one query value (line 9, column 16) is ``template``."""
    return f"{HEAD}{SCHEMA}backend:\n  http:\n    url: https://x.example/\n    query: {{q: '{template}'}}\n"


def laughs(leaf: str, levels: int, width: int) -> str:
    """The billion laughs: each level an anchored list of ``width`` aliases to the last."""
    lines = [f"l0: &l0 {leaf}"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def nested_parameters(levels: int) -> str:
    text = "{name: leaf, type: string}"
    for level in range(levels):
        text = f"{{name: p{level}, type: dictionary, parameters: [{text}]}}"
    return f"{HEAD}input_schema:\n  parameters: [{text}]\n"


# (text of the file, fragment of the problem, "line:column" or None for any position)
Attack = tuple[str, str, str | None]

ATTACKS: dict[str, Callable[[], Attack]] = {
    # -- aliases: bounded expansion, and a problem once per YAML node
    "billion-laughs": lambda: (laughs("lol", 9, 10), "an alias bomb?", None),
    "laughs-of-long-strings": lambda: (
        laughs("'" + "x" * 400_000 + "'", 1, 12),
        "4194304 characters",
        None,
    ),
    "recursive-alias": lambda: ("a: &a [1, *a]\n", "a recursive alias", "1:11"),
    "undefined-alias": lambda: ("a: *nowhere\n", "alias '*nowhere' names no anchor", "1:4"),
    "duplicate-anchor": lambda: ("a: &x 1\nb: &x 2\n", "anchor '&x' is defined twice", "2:4"),
    "aliased-templates": lambda: (
        f"{HEAD}{SCHEMA}x: &q {{"
        + ", ".join(f"k{i}: '{{{{ inputs.b|upper }}}}{i}'" for i in range(1000))
        + "}\nbackend:\n  http:\n    url: https://x.example/\n    method: POST\n"
        + f"    json: [{', '.join(['*q'] * 48)}]\n",
        "backend.http.json[0].k0: 'inputs.b' is not a declared input",
        None,
    ),
    # -- nesting: refused at MAX_DEPTH, never a RecursionError
    "block-sequences": lambda: ("- " * 200_000 + "x\n", f"more than {MAX_DEPTH} levels", None),
    # libyaml's scanner may see a deep flow first, and says so in its own words
    "flow-sequences": lambda: ("a: " + "[" * 200_000 + "]" * 200_000 + "\n", "nest", None),
    "flow-mappings": lambda: ("a: " + "{a: " * 100_000 + "1" + "}" * 100_000 + "\n", "nest", None),
    "nested-schema": lambda: (nested_parameters(40), f"more than {MAX_DEPTH} levels", None),
    # -- numbers: no base 60, nothing near Python's 4,300-digit int() limit
    "decimal-digits": lambda: (f"{HEAD}a: {'9' * 5000}\n", "numbers have at most 100", "3:4"),
    "negative-digits": lambda: (f"{HEAD}a: -{'1_' * 400_000}1\n", "at most 100", "3:4"),
    "hex-digits": lambda: (f"{HEAD}a: 0x{'f' * 500_000}\n", "at most 100", "3:4"),
    "float-digits": lambda: (f"{HEAD}a: 1.{'5' * 500_000}\n", "at most 100", "3:4"),
    "exponent-digits": lambda: (f"{HEAD}a: 1.5e+{'5' * 500_000}\n", "at most 100", "3:4"),
    "explicit-base-60": lambda: (f"{HEAD}a: !!int 1:30\n", "base-60 number", "3:4"),
    "plain-base-60-is-text": lambda: (
        f"{HEAD}input_schema:\n  parameters:\n    - {{name: n, type: integer, minimum: 1:30}}\n",
        "minimum: expected a number, got '1:30'",
        "5:41",
    ),
    "date-is-text": lambda: (
        "name: t\nversion: 2024-01-01\n",
        "invalid version '2024-01-01'",
        "2:10",
    ),
    # -- checks that were quadratic
    "enum-duplicates": lambda: (
        f"{HEAD}input_schema:\n  parameters:\n    - name: e\n      type: integer\n"
        f"      enum: [{', '.join(map(str, range(90_000)))}, 7]\n",
        "duplicate values: 7",
        "7:13",
    ),
    "unknown-inputs-against-many": lambda: (
        f"{HEAD}input_schema:\n  parameters:\n"
        + "".join(f"    - {{name: input_{i}, type: string}}\n" for i in range(2000))
        + "backend:\n  http:\n    url: 'https://x.example/"
        + "".join(f"{{{{ inputs.inpt_{i} }}}}" for i in range(30_000))
        + "'\n",
        "'inputs.inpt_0' is not a declared input",
        None,
    ),
    "unknown-outputs-against-many": lambda: (
        f"{HEAD}output_schema:\n  parameters:\n"
        + "".join(f"    - {{name: out_{i}, type: string}}\n" for i in range(5000))
        + "backend:\n  http:\n    url: https://x.example/\n    output:\n"
        + "".join(f"      ot_{i}: x\n" for i in range(20_000)),
        "'ot_0' is not an output parameter",
        None,
    ),
    # -- templates: Jinja's parser recurses once per level
    "template-parentheses": lambda: (
        http_tool("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}"),
        "the template nests brackets or blocks too deeply to parse",
        "9:16",
    ),
    "template-unary": lambda: (
        http_tool("{{ " + "-" * 100_000 + "1 }}"),
        "nests brackets or blocks too deeply",
        "9:16",
    ),
    "template-blocks": lambda: (
        http_tool("{% if 1 %}" * 5000 + "{% endif %}" * 5000),
        "nests brackets or blocks too deeply",
        "9:16",
    ),
    "template-filters": lambda: (
        http_tool("{{ inputs.a" + "|upper" * 20_000 + " }}"),
        "nests brackets or blocks too deeply",
        "9:16",
    ),
    # -- text the YAML reader refuses
    "control-character": lambda: (f"{HEAD}a: b\x00c\n", "character #x0000 is not allowed", "3:5"),
}


Outcome = tuple[Path, Attack, subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every attack written to its own file and validated, a few children at a time."""
    folder = tmp_path_factory.mktemp("attacks")
    attacks = {name: make() for name, make in ATTACKS.items()}
    paths = {name: folder / f"{name}.yaml" for name in ATTACKS}
    for name, (text, _, _) in attacks.items():
        paths[name].write_text(text, encoding="utf-8")
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(zip(ATTACKS, pool.map(validate_bounded, paths.values()), strict=True))
    return {name: (paths[name], attacks[name], results[name]) for name in ATTACKS}


@pytest.mark.parametrize("name", ATTACKS)
def test_an_attack_is_a_located_problem_in_bounded_time_and_memory(
    outcomes: dict[str, Outcome], name: str
) -> None:
    path, (_, fragment, where), result = outcomes[name]
    assert path.stat().st_size <= 1024 * 1024  # every attack fits the size cap
    assert_located(result, path, fragment, where)


@pytest.mark.parametrize(
    ("tag", "where"),
    [
        pytest.param("!!binary aGk=", "3:4", id="binary"),
        pytest.param("!!set {a, b}", "3:4", id="set"),
        pytest.param("!!omap [{a: 1}]", "3:4", id="omap"),
        pytest.param("!!pairs [{a: 1}]", "3:4", id="pairs"),
        pytest.param("!!timestamp 2024-01-01", "3:4", id="timestamp"),
        pytest.param("!!python/name:os.system ''", "3:4", id="python-name"),
        pytest.param("!!python/object/apply:os.system [ls]", "3:4", id="python-apply"),
        pytest.param("!custom x", "3:4", id="local-tag"),
        pytest.param("!<tag:example.com,2000:x> x", "3:4", id="verbatim-tag"),
        pytest.param("[1, !!binary aGk=]", "3:8", id="nested"),
    ],
)
def test_tags_beyond_the_json_core_are_refused_where_they_are(
    tmp_path: Path, tag: str, where: str
) -> None:
    # Harmless to load (nothing is constructed), so checked in this process.
    path = tmp_path / "tagged.yaml"
    path.write_text(f"{HEAD}a: {tag}\n", encoding="utf-8")
    with pytest.raises(DefinitionError) as info:
        load_tools(path)
    assert any(
        str(problem).startswith(f"{path}:{where}: the tag ") and "is not supported" in str(problem)
        for problem in info.value.problems
    ), info.value


def test_an_aliased_problem_is_reported_once(tmp_path: Path) -> None:
    # One bad parameter with a long type name, repeated through aliases: one
    # problem, at the anchor, its value cut short -- not one per copy.
    text = (
        f"{HEAD}x: &p {{name: p, type: {'k' * 200_000}}}\n"
        f"input_schema:\n  parameters: [{', '.join(['*p'] * 15)}]\n"
    )
    path = tmp_path / "fanout.yaml"
    path.write_text(text, encoding="utf-8")
    result = validate_bounded(path)
    assert_located(result, path, "unsupported type 'kkk", "3:23")
    assert result.stderr.count("unsupported type") == 1
    assert len(result.stderr) < 5000


def test_many_problems_are_capped_with_a_count_of_the_rest(tmp_path: Path) -> None:
    first = tmp_path / "a.yaml"
    first.write_text(HEAD + "".join(f"key{i}: 1\n" for i in range(30_000)), encoding="utf-8")
    for name in "bcdefg":
        (tmp_path / f"{name}.yaml").write_text(
            HEAD + "".join(f"other{i}: 1\n" for i in range(100)), encoding="utf-8"
        )
    result = validate_bounded(tmp_path)
    assert_located(result, first, "unknown key 'key0'", "3:7")
    lines = result.stderr.splitlines()
    shown = [line for line in lines if ": unknown key" in line]
    assert len(shown) == MAX_PROBLEMS
    assert sum(str(first) in line for line in shown) == MAX_PROBLEMS_PER_FILE
    assert lines[-1].endswith("more problems not shown; fix these and run again")


def test_a_file_of_many_broken_documents_is_read_again_located_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Documents are read without positions; the first problem of a file reads it again,
    located, and every other document of the file uses that reading (review s17 R4:
    each broken document read the whole file again, quadratic: 2,000 took 290 s)."""
    from agentkit.declarative import yamlsource

    documents = [
        f"name: t{i}\nversion: 1.0.0\ndescription: tool {i}\nbogus_{i}: 1\n"
        "input_schema: {parameters: [{name: a, type: string}]}\n"
        "backend: {http: {url: 'http://127.0.0.1:1/x'}}\n"
        for i in range(300)
    ]
    (tmp_path / "many.yaml").write_text("---\n".join(documents), encoding="utf-8")
    (tmp_path / "other.yaml").write_text(documents[0].replace("t0", "u0"), encoding="utf-8")
    reads: list[int] = []
    real = yamlsource.read_documents

    def counted(text: str, *args: object, **kwargs: object) -> object:
        reads.append(len(text))
        return real(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("agentkit.declarative.problems.read_documents", counted)
    with pytest.raises(DefinitionError) as caught:
        load_tools(tmp_path)
    assert len(reads) == 2  # one located reading per file with a problem
    problem = caught.value.problems[MAX_PROBLEMS_PER_FILE - 1]
    assert problem.file.endswith("many.yaml")
    assert "bogus_49" in problem.message
    assert problem.line == 49 * 7 + 4  # each document 6 lines and its "---"
