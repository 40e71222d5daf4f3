"""``ShownPaths``: a server's files named to its clients within the tools they were given,
never by the server's own absolute paths.

A failed reload as a client hears of it, and ``path`` and ``text`` on their common
cases, are in ``test_reload_paths.py``; here the roots' spellings, nested roots, where
a path in a message starts and ends, and ``error``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentkit.mcp.shown_paths import ShownPaths
from agentkit.toolerrors import DefinitionError, Problem, SemanticError

ROOT = "/srv/team/tools.d"


def test_a_root_written_with_a_trailing_separator_is_the_same_root() -> None:
    paths = ShownPaths([ROOT + "/"])
    assert paths.path(f"{ROOT}/sub/a.yaml") == "sub/a.yaml"
    assert paths.path(ROOT) == "tools.d"  # the root itself: its name


def test_a_file_under_nested_roots_is_shown_from_the_nearer_one() -> None:
    paths = ShownPaths([ROOT, f"{ROOT}/inner"])
    assert paths.path(f"{ROOT}/inner/a.yaml") == "a.yaml"
    assert paths.path(f"{ROOT}/b.yaml") == "b.yaml"
    assert paths.path(f"{ROOT}/other/c.yaml") == "other/c.yaml"


def test_no_roots_show_every_file_by_its_name() -> None:
    paths = ShownPaths()
    assert paths.path(f"{ROOT}/sub/a.yaml") == "a.yaml"
    assert paths.path("a.yaml") == "a.yaml"


def test_a_root_given_relative_also_hides_its_absolute_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tools").mkdir()
    monkeypatch.chdir(tmp_path)
    paths = ShownPaths(["tools"])
    absolute = os.path.join(os.path.abspath("tools"), "sub", "a.yaml")
    assert paths.path(absolute) == os.path.join("sub", "a.yaml")
    assert paths.text(f"loading {absolute} failed") == "loading sub/a.yaml failed"


def test_a_root_behind_a_link_hides_the_real_path_too(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    paths = ShownPaths([link])
    resolved = os.path.realpath(link)
    assert paths.path(os.path.join(resolved, "sub", "a.yaml")) == "sub/a.yaml"
    assert paths.path(os.path.join(link, "sub", "a.yaml")) == "sub/a.yaml"
    assert str(tmp_path) not in paths.text(f"{resolved}/sub/a.yaml and {link}/b.yaml")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param(f"in {ROOT}.", "in tools.d.", id="root-before-a-full-stop"),
        pytest.param(f"read {ROOT}/a.csv. Then", "read a.csv. Then", id="file-ending-a-sentence"),
        pytest.param(f"{ROOT}.\n", "tools.d.\n", id="full-stop-ending-a-line"),
        pytest.param(f"'{ROOT}/a.yaml'", "'a.yaml'", id="quoted"),
        pytest.param(f"({ROOT}/a.yaml:3:1)", "(a.yaml:3:1)", id="with-its-line"),
        pytest.param(f"x{ROOT}/a.yaml", f"x{ROOT}/a.yaml", id="inside-a-longer-path"),
        pytest.param(f"{ROOT}.bak/a.yaml", f"{ROOT}.bak/a.yaml", id="a-longer-folder-name"),
        pytest.param(f"{ROOT}-old", f"{ROOT}-old", id="a-longer-name"),
        pytest.param(f"{ROOT}/a b.yaml", "a b.yaml", id="a-space-in-the-name"),
        pytest.param(f"{ROOT}\n{ROOT}/a.yaml", "tools.d\na.yaml", id="each-occurrence"),
        pytest.param("", "", id="empty"),
    ],
)
def test_a_root_in_text_is_replaced_only_where_a_path_starts_and_ends(
    text: str, shown: str
) -> None:
    assert ShownPaths([ROOT]).text(text) == shown


def test_a_known_path_outside_the_roots_is_shown_by_its_name() -> None:
    paths = ShownPaths([ROOT])
    text = "from /etc/agentkit/tools.env, not /etc/agentkit/tools.env.bak; /etc/agentkit/tools.env."
    assert paths.text(text, ["/etc/agentkit/tools.env"]) == (
        "from tools.env, not /etc/agentkit/tools.env.bak; tools.env."
    )


def test_text_without_roots_or_paths_is_left_as_it_is() -> None:
    text = f"{ROOT}/a.yaml"
    assert ShownPaths().text(text) is text


def test_a_definition_error_names_each_file_within_the_roots() -> None:
    error = DefinitionError(
        [
            Problem(
                file=f"{ROOT}/sub/a.yaml",
                line=3,
                column=2,
                path="input_schema",
                message=f"also defined in {ROOT}/b.yaml",
            ),
            Problem(file="/etc/agentkit/extra.yaml", line=1, message="unknown key 'nme'"),
        ],
        not_shown=4,
    )
    assert ShownPaths([ROOT]).error(error) == (
        "6 problems in tool definitions:\n"
        "  sub/a.yaml:3:2: input_schema: also defined in b.yaml\n"
        "  extra.yaml:1:1: unknown key 'nme'\n"
        "  ... 4 more problems not shown; fix these and run again"
    )


def test_a_problems_message_naming_another_problems_file_shows_it_by_its_name() -> None:
    error = DefinitionError(
        [
            Problem(file="/opt/x/one.yaml", line=1, message="clashes with /opt/y/two.yaml"),
            Problem(file="/opt/y/two.yaml", line=2, message="clashes with /opt/x/one.yaml"),
        ]
    )
    shown = ShownPaths([ROOT]).error(error)
    assert "/opt" not in shown
    assert "one.yaml:1:1: clashes with two.yaml" in shown
    assert "two.yaml:2:1: clashes with one.yaml" in shown


def test_any_other_error_is_its_message_with_its_paths_shown() -> None:
    error = SemanticError(f"Tool 'x' ({ROOT}/a.yaml) takes the name of /opt/other/x.yaml")
    assert ShownPaths([ROOT]).error(error, ["/opt/other/x.yaml"]) == (
        "Tool 'x' (a.yaml) takes the name of x.yaml"
    )
