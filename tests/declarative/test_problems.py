"""ProblemLog and Problems: each problem once, cut short, capped, and hints at a bounded cost."""

from __future__ import annotations

import pytest

from agentkit.declarative.problems import (
    HINT_BUDGET,
    MAX_MESSAGE_CHARS,
    MAX_PROBLEMS,
    MAX_PROBLEMS_PER_FILE,
    ProblemLog,
    Problems,
)
from agentkit.declarative.yamlsource import read_documents
from agentkit.toolerrors import Problem


def problem(file: str = "a.yaml", line: int = 1, message: str = "bad", path: str = "") -> Problem:
    return Problem(file=file, line=line, column=1, path=path, message=message)


def test_the_same_problem_at_the_same_node_is_kept_once_whatever_the_path() -> None:
    log = ProblemLog()
    for index in range(1000):  # one node reached through a thousand aliases
        log.add(problem(path=f"parameters[{index}].type"))
    log.add(problem(line=2))
    log.add(problem(message="other"))
    assert [(p.line, p.path, p.message) for p in log.shown] == [
        (1, "parameters[0].type", "bad"),
        (2, "", "bad"),
        (1, "", "other"),
    ]
    assert log.not_shown == 0


@pytest.mark.parametrize("part", ["message", "path"])
def test_long_messages_and_paths_keep_their_start_and_end(part: str) -> None:
    log = ProblemLog()
    text = "start " + "x" * 1_000_000 + " what would be right"
    log.add(problem(message=text) if part == "message" else problem(path=text))
    (kept,) = log.shown
    cut = getattr(kept, part)
    assert len(cut) <= MAX_MESSAGE_CHARS + 10
    assert cut.startswith("start xxx")
    assert cut.endswith("x what would be right")
    assert " [...] " in cut


def test_problems_are_capped_per_file_and_in_all_and_the_rest_counted() -> None:
    log = ProblemLog()
    for file in range(10):
        for line in range(1, 101):
            log.add(problem(file=f"{file}.yaml", line=line))
    assert len(log.shown) == MAX_PROBLEMS
    assert {p.file for p in log.shown} == {f"{file}.yaml" for file in range(4)}
    assert all(
        sum(p.file == f"{file}.yaml" for p in log.shown) == MAX_PROBLEMS_PER_FILE
        for file in range(4)
    )
    assert log.not_shown == 1000 - MAX_PROBLEMS
    error = log.error()
    lines = str(error).splitlines()
    assert lines[0] == "1000 problems in tool definitions:"
    assert lines[-1] == "  ... 800 more problems not shown; fix these and run again"


def test_a_document_counts_every_problem_even_those_not_kept() -> None:
    # Callers compare counts to learn whether a part had problems.
    log = ProblemLog()
    ((document, start),), _ = read_documents("a: 1\n")
    problems = Problems("a.yaml", document, start, log)
    for _ in range(3):
        problems.add(("a",), "the same problem")
    assert len(problems) == 3
    assert len(log.shown) == 1


def test_hints_stop_once_the_budget_is_spent_or_the_file_is_full() -> None:
    log = ProblemLog()
    problems = Problems("a.yaml", {}, (1, 1), log)
    names = tuple(f"input_{i}" for i in range(HINT_BUDGET // 2))
    assert problems.did_you_mean("input_1x", names) == " (did you mean 'input_1'?)"
    assert problems.did_you_mean("input_2x", names) == " (did you mean 'input_2'?)"
    assert problems.did_you_mean("input_3x", names) == ""  # the budget is spent
    assert problems.did_you_mean("input_1x", names) == " (did you mean 'input_1'?)"  # remembered

    full = ProblemLog()
    for line in range(MAX_PROBLEMS_PER_FILE):
        full.add(problem(line=line))
    assert Problems("a.yaml", {}, (1, 1), full).did_you_mean("nme", ("name",)) == ""
    assert Problems("b.yaml", {}, (1, 1), full).did_you_mean("nme", ("name",)) != ""


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        pytest.param(("b", "list", 1, "k"), (7, 11), id="nested"),
        pytest.param(("b", "missing"), (5, 3), id="nearest-ancestor"),
        pytest.param(("name",), (3, 7), id="top-level"),
    ],
)
def test_a_document_read_unlocated_is_located_when_a_problem_is_added(
    location: tuple[str | int, ...], expected: tuple[int, int]
) -> None:
    text = "name: first\n---\nname: second\nb:\n  list:\n    - 1\n    - {k: v}\n"
    located_log, unlocated_log = ProblemLog(), ProblemLog()
    (_, (located, start)), _ = read_documents(text)
    (_, (unlocated, same_start)), _ = read_documents(text, located=False)
    assert same_start == start
    Problems("a.yaml", located, start, located_log).add(location, "wrong")
    problems = Problems("a.yaml", unlocated, start, unlocated_log, text=text, number=1)
    problems.add(location, "wrong")
    assert located_log.shown == unlocated_log.shown
    assert (located_log.shown[0].line, located_log.shown[0].column) == expected
