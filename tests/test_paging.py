"""Answers over a tool's ``MAX_OUTPUT`` come in pages: each valid, each within the budget,
all of them together the whole answer; the rest fetched with a ``continuation``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from agentkit import Tool, ToolExecutor, ToolValidationError
from agentkit.callers import Caller, calling_as
from agentkit.observability import EVENT_COMPLETED, EVENT_STARTED, ToolEvent
from agentkit.paging import CONTINUATION, PageStore, caller_scope, size_of
from agentkit.toolerrors import SemanticError, ToolExecutionError
from tests.support.paged import Report, every_page, merged, output_of, pages_of, report_rows


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store() -> PageStore:
    return PageStore()


@pytest.fixture
def pager(store: PageStore) -> ToolExecutor:
    return ToolExecutor(credentials={}, pages=store)


def answering(answer: Any, output_schema: Any, budget: int = 1000, **extra: Any) -> Tool:
    """A tool giving ``answer`` (a copy each call), checked against ``output_schema``."""

    class Answering(Tool):
        TOOL_NAME = extra.pop("name", "answering")
        INPUT_SCHEMA: ClassVar[Any] = {"parameters": []}
        OUTPUT_SCHEMA: ClassVar[Any] = output_schema
        MAX_OUTPUT: ClassVar[Any] = {"bytes": budget}
        CREDENTIAL_NAMES: ClassVar[Any] = extra.pop("credentials", ())

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
            return json.loads(json.dumps(answer))

    return Answering()


# -- a long list, page by page --------------------------------------------------------------


@pytest.mark.parametrize("rows", [30, 200, 1000], ids=["a-few-pages", "many", "hundreds"])
def test_a_long_list_comes_in_valid_pages_that_add_up_to_the_whole(
    pager: ToolExecutor, rows: int
) -> None:
    tool = Report()
    results = pages_of(pager, tool, {"rows": rows})
    assert len(results) > 1
    for number, result in enumerate(results, start=1):
        assert result.succeeded
        assert result.page is not None
        assert tool.output_schema.check(output_of(result)).problems == ()
        assert size_of(result.output) <= 1000
        assert result.page.number == number
        assert result.page.pages == len(results)
        assert output_of(result)["title"] == f"{rows} rows"  # what is not cut is on every page
    assert merged(results) == report_rows(rows)
    assert tool.runs == 1  # a continuation never runs the tool again
    last = results[-1].page
    assert last is not None
    assert last.continuation is None
    assert last.remaining_bytes == 0


def test_a_page_counts_what_is_left(pager: ToolExecutor) -> None:
    results = pages_of(pager, Report(), {"rows": 100})
    first = results[0].page
    assert first is not None
    (part,) = first.parts
    assert (part.path, part.unit, part.offset, part.total) == ("rows", "items", 0, 100)
    # Counted as the pages were made: never less than they take as sent.
    assert first.remaining_bytes >= sum(size_of(r.output) for r in results[1:])
    offsets = [r.page.parts[0].offset for r in results if r.page]
    counts = [r.page.parts[0].count for r in results if r.page]
    assert offsets == [sum(counts[:i]) for i in range(len(counts))]
    assert sum(counts) == 100


def test_the_note_tells_the_model_how_to_get_the_next_page(pager: ToolExecutor) -> None:
    results = pages_of(pager, Report(), {"rows": 100})
    first, last = results[0].page, results[-1].page
    assert first is not None
    assert last is not None
    note = first.note()
    assert f"page 1 of {first.pages}" in note
    assert json.dumps({CONTINUATION: first.continuation}) in note
    assert "'rows' holds items 1-" in note
    assert "of 100" in note
    assert "last page" in last.note()
    assert CONTINUATION not in last.note()


def test_an_answer_under_the_budget_is_given_untouched(pager: ToolExecutor) -> None:
    class Plain(Tool):
        TOOL_NAME = "report"
        INPUT_SCHEMA: ClassVar[Any] = {"parameters": [{"name": "rows", "type": "integer"}]}
        OUTPUT_SCHEMA: ClassVar[Any] = Report.OUTPUT_SCHEMA

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
            return report_rows(inputs["rows"])

    paged = pager.execute(Report(), {"rows": 5})
    plain = pager.execute(Plain(), {"rows": 5})
    assert paged.page is None
    assert json.dumps(paged.to_dict()["output"]) == json.dumps(plain.to_dict()["output"])
    assert paged.to_dict().keys() == plain.to_dict().keys()


def test_async_callers_page_the_same(pager: ToolExecutor) -> None:
    tool = Report()

    async def all_pages() -> list[Any]:
        results = [await pager.aexecute(tool, {"rows": 120})]
        while results[-1].page and results[-1].page.continuation:
            given = {CONTINUATION: results[-1].page.continuation}
            results.append(await pager.aexecute(tool, given))
        return results

    results = asyncio.run(all_pages())
    assert len(results) > 2
    assert merged(results) == report_rows(120)
    assert tool.runs == 1
    pager.close()


def test_a_page_can_be_fetched_again(pager: ToolExecutor) -> None:
    tool = Report()
    first = pager.execute(tool, {"rows": 100})
    assert first.page is not None
    assert first.page.continuation is not None
    again = [pager.execute(tool, {CONTINUATION: first.page.continuation}) for _ in range(2)]
    assert again[0].output == again[1].output
    assert again[0].page == again[1].page


def test_other_arguments_beside_a_continuation_are_ignored(pager: ToolExecutor) -> None:
    tool = Report()
    first = pager.execute(tool, {"rows": 100})
    assert first.page is not None
    given = {"rows": 3, CONTINUATION: first.page.continuation}
    second = pager.execute(tool, given)
    assert second.page is not None
    assert second.page.number == 2
    assert tool.runs == 1


# -- what is cut: nested lists, several lists, strings ---------------------------------------

NESTED = {
    "parameters": [
        {"name": "query", "type": "string", "pattern": "[a-z ]+"},
        {
            "name": "data",
            "type": "dictionary",
            "parameters": [
                {"name": "total", "type": "integer"},
                {"name": "results", "type": "list", "items": {"type": "integer"}},
                {"name": "tags", "type": "list", "items": {"type": "string"}},
            ],
        },
    ]
}


def test_a_list_nested_in_objects_is_cut(pager: ToolExecutor) -> None:
    answer = {"query": "numbers", "data": {"total": 900, "results": list(range(900)), "tags": []}}
    tool = answering(answer, NESTED)
    results = pages_of(pager, tool, {})
    assert len(results) > 2
    assert all(r.page and r.page.parts[0].path == "data.results" for r in results)
    assert all(tool.output_schema.check(output_of(r)).problems == () for r in results)
    assert all(size_of(r.output) <= 1000 for r in results)
    assert merged(results) == answer


def test_two_large_lists_are_both_cut_and_both_add_up(pager: ToolExecutor) -> None:
    answer = {
        "query": "both",
        "data": {
            "total": 2,
            "results": list(range(400)),
            "tags": [f"tag-{n}" for n in range(150)],
        },
    }
    tool = answering(answer, NESTED)
    results = pages_of(pager, tool, {})
    paths = {part.path for r in results if r.page for part in r.page.parts}
    assert paths == {"data.results", "data.tags"}
    assert all(size_of(r.output) <= 1000 for r in results)
    assert all(tool.output_schema.check(output_of(r)).problems == () for r in results)
    assert merged(results) == answer


TEXT = {"parameters": [{"name": "path", "type": "string"}, {"name": "body", "type": "string"}]}


@pytest.mark.parametrize(
    "body",
    [
        "plain text, " * 800,
        "ünïcödé — ✓ " * 600,
        "🙂🚀" * 1500,
        'quotes " and \\ backslashes \n new lines\t' * 200,
    ],
    ids=["ascii", "accents", "astral", "escapes"],
)
def test_a_huge_string_is_cut_at_code_points_within_the_budget(
    pager: ToolExecutor, body: str
) -> None:
    answer = {"path": "/var/log/app.log", "body": body}
    tool = answering(answer, TEXT)
    results = pages_of(pager, tool, {})
    assert len(results) > 2
    for result in results:
        assert result.page is not None
        (part,) = result.page.parts
        assert part.unit == "characters"
        assert part.path == "body"
        assert size_of(result.output) <= 1000
        assert output_of(result)["path"] == "/var/log/app.log"
    assert "".join(output_of(r)["body"] for r in results) == body
    assert merged(results) == answer


def test_a_string_its_schema_constrains_is_not_cut_and_the_answer_is_whole(
    pager: ToolExecutor,
) -> None:
    schema = {"parameters": [{"name": "code", "type": "string", "pattern": "[a-z]+"}]}
    answer = {"code": "a" * 5000}
    result = pager.execute(answering(answer, schema), {})
    assert result.page is None
    assert result.output == answer


def test_an_item_alone_over_the_budget_has_a_page_of_its_own(pager: ToolExecutor) -> None:
    schema = {"parameters": [{"name": "lines", "type": "list", "items": {"type": "string"}}]}
    answer = {"lines": ["short", "x" * 3000, "short again", "and one more"]}
    results = pages_of(pager, answering(answer, schema), {})
    assert ["x" * 3000] in [output_of(r)["lines"] for r in results]
    assert merged(results) == answer


def test_a_free_form_answer_is_paged_too(pager: ToolExecutor) -> None:
    answer = {"items": [{"n": n} for n in range(300)], "meta": {"source": "test"}}
    results = pages_of(pager, answering(answer, None), {})
    assert len(results) > 1
    assert merged(results) == answer


# -- continuations: bound, bounded, expiring --------------------------------------------------


def _refused(executor: ToolExecutor, tool: Tool, continuation: Any) -> str:
    with pytest.raises(ToolValidationError) as raised:
        executor.execute(tool, {CONTINUATION: continuation})
    (problem,) = raised.value.problems
    assert problem.path == CONTINUATION
    return problem.message


@pytest.mark.parametrize(
    "continuation",
    ["made-up", "made-up.2", "", ".", "x" * 5000, 42, ["a"]],
    ids=["no-page", "unknown-key", "empty", "dot", "long", "number", "list"],
)
def test_an_unknown_or_malformed_continuation_is_refused_naming_what_to_do(
    pager: ToolExecutor, continuation: Any
) -> None:
    message = _refused(pager, Report(), continuation)
    assert "Parameter 'continuation'" in message
    assert "'report'" in message


def test_an_expired_continuation_says_to_call_again(store: PageStore) -> None:
    clock = Clock()
    store = PageStore(ttl=60, clock=clock)
    executor = ToolExecutor(credentials={}, pages=store)
    tool = Report()
    first = executor.execute(tool, {"rows": 100})
    assert first.page is not None
    clock.now += 59
    assert executor.execute(tool, {CONTINUATION: first.page.continuation}).succeeded
    clock.now += 59  # kept 60 s after its last use, not its first
    second = executor.execute(tool, {CONTINUATION: first.page.continuation})
    assert second.page is not None
    clock.now += 61
    message = _refused(executor, tool, second.page.continuation)
    assert "unknown or has expired" in message
    assert "original arguments" in message
    assert len(store) == 0


def test_a_page_number_past_the_last_is_unknown(pager: ToolExecutor) -> None:
    first = pager.execute(Report(), {"rows": 100})
    assert first.page is not None
    assert first.page.continuation is not None
    key = first.page.continuation.rpartition(".")[0]
    for number in (0, 1, first.page.pages + 1):
        assert "unknown" in _refused(pager, Report(), f"{key}.{number}")


def test_another_callers_continuation_is_unknown(pager: ToolExecutor) -> None:
    tool = Report()
    with caller_scope("session-a"):
        first = pager.execute(tool, {"rows": 100})
    assert first.page is not None
    with caller_scope("session-b"):
        assert "unknown" in _refused(pager, tool, first.page.continuation)
    assert "unknown" in _refused(pager, tool, first.page.continuation)  # no caller at all
    with caller_scope("session-a"):
        assert pager.execute(tool, {CONTINUATION: first.page.continuation}).succeeded


def test_another_tools_continuation_names_the_tool(pager: ToolExecutor) -> None:
    first = pager.execute(Report(), {"rows": 100})
    assert first.page is not None
    other = answering({"x": 1}, {"parameters": [{"name": "x", "type": "integer"}]}, name="other")
    message = _refused(pager, other, first.page.continuation)
    assert "tool 'report'" in message
    assert "call 'report'" in message


def test_continuations_are_not_guessable(pager: ToolExecutor) -> None:
    seen = set()
    for _ in range(20):
        page = pager.execute(Report(), {"rows": 100}).page
        assert page is not None
        assert page.continuation is not None
        key = page.continuation.rpartition(".")[0]
        assert len(key) >= 32
        seen.add(key)
    assert len(seen) == 20


def test_the_store_keeps_a_bounded_number_of_answers() -> None:
    store = PageStore(max_answers=3)
    executor = ToolExecutor(credentials={}, pages=store)
    tool = Report()
    firsts = [executor.execute(tool, {"rows": 100}).page for _ in range(5)]
    assert len(store) == 3
    assert "unknown" in _refused(executor, tool, firsts[0].continuation)  # type: ignore[union-attr]
    assert executor.execute(tool, {CONTINUATION: firsts[4].continuation}).succeeded  # type: ignore[union-attr]


def test_pages_more_than_the_store_holds_are_not_kept_and_the_page_says_so() -> None:
    store = PageStore(max_bytes=2000)
    executor = ToolExecutor(credentials={}, pages=store)
    first = executor.execute(Report(), {"rows": 300})
    assert first.page is not None
    assert first.page.continuation is None
    assert first.page.pages > 2
    assert len(store) == 0
    assert "cannot be fetched" in first.page.note()
    assert "last page" not in first.page.note()


# -- observed as any call; secrets -----------------------------------------------------------


def test_listeners_see_a_continuation_call_as_any_call(store: PageStore) -> None:
    events: list[ToolEvent] = []
    executor = ToolExecutor(credentials={}, pages=store, listeners=[events.append])
    tool = Report()
    first = executor.execute(tool, {"rows": 100})
    assert first.page is not None
    assert first.page.continuation is not None
    events.clear()
    second = executor.execute(tool, {CONTINUATION: first.page.continuation})
    assert [event.name for event in events] == [EVENT_STARTED, EVENT_COMPLETED]
    assert events[0].inputs == {CONTINUATION: first.page.continuation}
    assert events[-1].output == second.output
    snapshot = executor.metrics.snapshot("report")  # type: ignore[attr-defined]
    assert snapshot is not None
    assert snapshot.count == 2


def test_an_answer_holding_a_credential_is_withheld_and_never_kept(store: PageStore) -> None:
    secret = "sk-paging-0123456789abcdef"
    schema = {"parameters": [{"name": "lines", "type": "list", "items": {"type": "string"}}]}
    answer = {"lines": [f"line {n}" for n in range(300)] + [f"key={secret}"]}
    tool = answering(answer, schema, credentials=["api-key"])
    executor = ToolExecutor(credentials={"api-key": secret}, pages=store)
    result = executor.execute(tool, {}, raise_on_failure=False)
    assert not result.succeeded
    assert isinstance(result.error, ToolExecutionError)
    assert len(store) == 0
    assert secret not in str(result.error)


def test_a_tool_with_credentials_pages_its_clean_answers(store: PageStore) -> None:
    schema = {"parameters": [{"name": "lines", "type": "list", "items": {"type": "string"}}]}
    answer = {"lines": [f"line {n}" for n in range(300)]}
    tool = answering(answer, schema, credentials=["api-key"])
    executor = ToolExecutor(credentials={"api-key": "sk-unrelated-value-123"}, pages=store)
    results = every_page(lambda given: executor.execute(tool, given), {})
    assert len(results) > 1
    assert merged(results) == answer


# -- declaring a budget ----------------------------------------------------------------------


def test_a_paged_tool_advertises_the_continuation_argument() -> None:
    schema = Report().input_schema.to_json_schema()
    assert schema["properties"][CONTINUATION]["type"] == "string"
    assert CONTINUATION not in schema["required"]
    assert schema["required"] == ["rows"]


def test_a_tool_without_a_budget_is_unchanged() -> None:
    class Plain(Tool):
        TOOL_NAME = "plain"
        INPUT_SCHEMA: ClassVar[Any] = {"parameters": [{"name": "rows", "type": "integer"}]}

    assert Plain.spec is not None
    assert Plain.spec.max_output is None
    assert CONTINUATION not in Plain.spec.input_schema


@pytest.mark.parametrize(
    ("declared", "expected"),
    [({"bytes": 2048}, 2048), ({"tokens": 1000}, 4000), ({"bytes": 256}, 256)],
    ids=["bytes", "tokens", "smallest"],
)
def test_a_budget_in_bytes_or_tokens(declared: Any, expected: int) -> None:
    class Budgeted(Tool):
        TOOL_NAME = "budgeted"
        MAX_OUTPUT: ClassVar[Any] = declared

    assert Budgeted.spec is not None
    assert Budgeted.spec.max_output == expected


@pytest.mark.parametrize(
    ("declared", "said"),
    [
        ({"bytes": 10}, "got 10 bytes (10 bytes)"),
        ({"tokens": 10}, "got 10 tokens (40 bytes)"),
        ({"kilobytes": 4}, "'kilobytes' is not a unit"),
        ({"bytes": "4k"}, "bytes must be a whole number, got '4k'"),
        ({"bytes": True}, "bytes must be a whole number, got True"),
        ({"bytes": 1000, "tokens": 250}, "got {'bytes': 1000, 'tokens': 250}"),
        (20000, "got 20000"),
    ],
    ids=["too-small", "too-few-tokens", "unit", "text", "bool", "both", "bare-number"],
)
def test_a_malformed_budget_is_refused_naming_the_attribute(declared: Any, said: str) -> None:
    with pytest.raises(SemanticError, match="MAX_OUTPUT") as raised:

        class Budgeted(Tool):
            TOOL_NAME = "budgeted"
            MAX_OUTPUT: ClassVar[Any] = declared

    assert said in str(raised.value)
    assert "{bytes: N} or {tokens: N}" in str(raised.value)


def test_a_parameter_named_continuation_is_refused_with_a_budget() -> None:
    with pytest.raises(SemanticError, match=r"declares 'continuation'.*rename"):

        class Budgeted(Tool):
            TOOL_NAME = "budgeted"
            INPUT_SCHEMA: ClassVar[Any] = {
                "parameters": [{"name": "continuation", "type": "string"}]
            }
            MAX_OUTPUT: ClassVar[Any] = {"bytes": 1000}


@pytest.mark.parametrize(
    "value",
    ["a lone surrogate \ud800 " * 100, "plain"],
    ids=["lone-surrogate", "plain"],
)
def test_any_string_is_measured_without_failing(pager: ToolExecutor, value: str) -> None:
    result = pager.execute(answering({"text": value}, TEXT_ONLY), {})
    assert result.succeeded
    pages = pages_of(pager, answering({"text": value}, TEXT_ONLY), {})
    assert "".join(output_of(page)["text"] for page in pages) == value


TEXT_ONLY = {"parameters": [{"name": "text", "type": "string"}]}


@pytest.mark.parametrize(
    "options",
    [{"max_answers": 0}, {"max_bytes": -1}, {"max_answers": 1.5}, {"ttl": 0}, {"ttl": True}],
    ids=["no-answers", "negative-bytes", "fraction", "no-time", "bool"],
)
def test_a_store_refuses_bounds_that_bound_nothing(options: dict[str, Any]) -> None:
    with pytest.raises(SemanticError, match=rf"PageStore\({next(iter(options))}="):
        PageStore(**options)


def test_a_continuation_is_bound_to_the_caller_the_server_knows(pager: ToolExecutor) -> None:
    tool = Report()
    with calling_as(Caller(name="triage-bot", via="token")):
        first = pager.execute(tool, {"rows": 100})
    assert first.page is not None
    with calling_as(Caller(name="other-bot", via="token")):
        assert "unknown" in _refused(pager, tool, first.page.continuation)
    with calling_as(Caller(name="triage-bot", via="token")):
        assert pager.execute(tool, {CONTINUATION: first.page.continuation}).succeeded
