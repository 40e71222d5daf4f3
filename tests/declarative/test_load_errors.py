"""One mistake, one report: problems that follow from another are counted with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit import DefinitionError, load_tools
from tests.declarative.conftest import WriteFile

SOURCE = """\
source: api
base_url: http://127.0.0.1:9
headers:
  Accept: application/json
parameters:
  - name: owner
    type: string
"""


def tools(count: int) -> str:
    return "".join(
        f"---\nname: tool_{index}\nversion: 1.0.0\ninput_schema:\n  parameters:\n"
        f"    - owner\nbackend:\n  http:\n    source: api\n    path: /items/{index}\n"
        for index in range(count)
    )


def problems(path: Path) -> list[str]:
    with pytest.raises(DefinitionError) as info:
        load_tools(path)
    return [str(problem) for problem in info.value.problems]


HEADERS = "headers:\n  Accept: application/json\n"
PARAMETER = "  - name: owner\n    type: string\n"


@pytest.mark.parametrize(
    ("old", "new", "line", "says"),
    [
        pytest.param(
            PARAMETER,
            "  - {name: owner, type: string, description: The owner, e.g. octocat}\n",
            6,
            "unknown key 'e.g. octocat'",
            id="comma-in-a-flow-mapping",
        ),
        pytest.param(
            HEADERS,
            "headers: {Accept: application/json, X-Note: a: b}\n",
            3,
            "YAML syntax error",
            id="colon-in-a-flow-mapping",
        ),
        pytest.param(HEADERS, "headers:\n\tAccept: application/json\n", 4, "YAML", id="tab"),
        pytest.param(
            HEADERS, 'headers:\n  Accept: "application/json\n', 8, "YAML", id="unclosed-quote"
        ),
        pytest.param(PARAMETER, "  - name: owner\n   type: string\n", 7, "YAML", id="bad-indent"),
    ],
)
def test_a_broken_source_is_one_problem_however_many_tools_use_it(
    write: WriteFile, tmp_path: Path, old: str, new: str, line: int, says: str
) -> None:
    assert old in SOURCE
    source = write(SOURCE.replace(old, new), "source.yaml")
    write(tools(7), "tools.yaml")
    (found,) = problems(tmp_path)
    assert found.startswith(f"{source}:{line}:"), found
    assert says in found
    assert found.endswith(
        "; and 7 problems that follow from it, in the tools that use source 'api'"
    ), found


def test_a_source_and_its_tools_in_one_broken_file(write: WriteFile) -> None:
    path = write(SOURCE.replace("Accept: application/json", "Accept: {a: b: c}") + tools(3))
    (found,) = problems(path)
    assert "YAML syntax error" in found
    # The file's other documents are not read: nothing follows from the source there.
    assert "follow" not in found


def test_independent_problems_are_still_listed(write: WriteFile, tmp_path: Path) -> None:
    write(SOURCE.replace("base_url: http://127.0.0.1:9", "base_url: ftp://x"), "source.yaml")
    own = tools(2).replace("version: 1.0.0", "version: one", 1)
    write(own, "tools.yaml")
    found = problems(tmp_path)
    assert len(found) == 2, found
    assert "and 2 problems that follow from it" in found[0]
    assert "tools.yaml" in found[1]
    assert "invalid version 'one'" in found[1]


def test_an_unknown_source_with_nothing_broken_is_each_tools_problem(
    write: WriteFile, tmp_path: Path
) -> None:
    write(SOURCE.replace("source: api", "source: apj"), "source.yaml")
    write(tools(2), "tools.yaml")
    found = problems(tmp_path)
    assert len(found) == 2, found
    assert all("unknown source 'api' (did you mean 'apj'?)" in problem for problem in found)
    # The shared parameter the tool takes from it is not blamed a second time.
    assert not any("shared parameter" in problem for problem in found)


def test_a_broken_file_that_defines_no_source_causes_nothing(
    write: WriteFile, tmp_path: Path
) -> None:
    write("name: x\nversion: {a: b: c}\n", "other.yaml")
    write(tools(2), "tools.yaml")
    found = problems(tmp_path)
    assert len(found) == 3, found
    assert sum("unknown source 'api'" in problem for problem in found) == 2
