"""Ranking tools for a query (``agentkit.toolsearch``): the relevant tool first on a
realistic catalog (the shipped ``tools.d`` among a few hundred generated REST tools),
ties and order that never depend on load order, and the search tool's answer."""

from __future__ import annotations

import fnmatch
import random
from pathlib import Path
from typing import Any

import pytest

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.tool import Tool
from agentkit.toolsearch import (
    MAX_LIMIT,
    MAX_QUERY_WORDS,
    SEARCH_TOOL_NAME,
    SearchTools,
    ToolIndex,
    matching,
    one_line,
    words,
)
from tests.support.helpers import generated_tool, run_bounded

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = [
    "user", "team", "project", "invoice", "payment", "customer", "order", "shipment",
    "ticket", "webhook", "deployment", "secret", "volume", "namespace", "pod", "service",
    "ingress", "certificate", "bucket", "queue", "topic", "subscription", "alert", "dashboard",
    "report", "calendar", "event", "message", "channel", "file", "folder", "comment",
    "label", "milestone", "release", "branch", "commit", "build", "pipeline", "artifact",
]  # fmt: skip
VERBS = {
    "list": "List the {r}s of the account, newest first, a page at a time.",
    "get": "Read one {r} by its id.",
    "create": "Create a {r} from the fields given.",
    "update": "Change the fields of a {r}.",
    "delete": "Delete a {r}; this cannot be undone.",
}


def catalog() -> list[Tool]:
    """``tools.d`` and 200 generated REST tools (five verbs of forty resources)."""
    shipped = ToolRegistry()
    load_tools(ROOT / "tools.d", registry=shipped)
    generated = [
        generated_tool(f"{verb}_{resource}", text.format(r=resource), f"{resource}_id")
        for resource in RESOURCES
        for verb, text in VERBS.items()
    ]
    return [*shipped, *generated]


@pytest.fixture(scope="module")
def index() -> ToolIndex:
    return ToolIndex(catalog())


@pytest.mark.parametrize(
    ("query", "best"),
    [
        pytest.param("current weather in a city", "fetch_weather", id="weather"),
        pytest.param("daily forecast", "forecast_daily", id="forecast"),
        pytest.param("comment on a github issue", "comment_on_github_issue", id="comment"),
        pytest.param("search github issues", "search_github_issues", id="search-issues"),
        pytest.param("describe a repository", "get_github_repo", id="repo-abbreviated"),
        pytest.param("count the words of a text", "text_stats", id="words"),
        pytest.param("delete an invoice", "delete_invoice", id="delete"),
        pytest.param("list deployments", "list_deployment", id="plural"),
        pytest.param("createWebhook", "create_webhook", id="camel-case"),
        pytest.param("certif", "*_certificate", id="prefix"),
        pytest.param("SHIPMENT update", "update_shipment", id="case"),
    ],
)
def test_the_relevant_tool_ranks_first(index: ToolIndex, query: str, best: str) -> None:
    assert fnmatch.fnmatchcase(index.search(query, limit=1)[0].name, best)


def test_a_query_that_matches_nothing_finds_nothing(index: ToolIndex) -> None:
    assert index.search("zzyzx quux") == []
    assert index.search("") == []
    assert index.search("the of a") == []  # stop words alone


def test_equal_scores_rank_by_name_whatever_the_load_order() -> None:
    tools = catalog()
    first = [tool.name for tool in ToolIndex(tools).search("read one by its id", limit=40)]
    shuffled = list(tools)
    random.Random(7).shuffle(shuffled)
    again = [tool.name for tool in ToolIndex(shuffled).search("read one by its id", limit=40)]
    assert first == again
    # The forty get_* tools say the same but for their resource: a tie, broken by name.
    gets = [name for name in first if name.startswith("get_") and "github" not in name]
    assert gets == sorted(gets)


def test_the_limit_bounds_the_answer(index: ToolIndex) -> None:
    assert len(index.search("list", limit=3)) == 3
    assert index.search("list", limit=0) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("listOpenPullRequests", ["list", "open", "pull", "request"]),
        ("get_HTTPServer-status", ["get", "http", "server", "status"]),
        ("policies and addresses", ["policy", "address"]),
        ("status of the bus", ["status", "bus"]),
        ("Zürich météo", ["zürich", "météo"]),
    ],
)
def test_words_are_split_folded_and_made_singular(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_one_line_takes_the_first_line_and_cuts_at_a_word() -> None:
    assert one_line("\n  First line.\nSecond line.") == "First line."
    cut = one_line("word " * 100)
    assert len(cut) <= 160
    assert cut.endswith("word…")


def test_matching_takes_names_and_patterns() -> None:
    tools = catalog()
    assert matching(tools, ["fetch_weather"]) == {"fetch_weather"}
    assert matching(tools, ["*_invoice"]) == {f"{verb}_invoice" for verb in VERBS}
    assert matching(tools, ["fetch_weathe"]) == frozenset()  # a name matches itself alone
    assert matching(tools, ["Fetch_weather"]) == frozenset()  # case counts


def test_the_search_tool_answers_names_descriptions_and_schemas() -> None:
    search = SearchTools(catalog())
    assert search.name == SEARCH_TOOL_NAME
    with ToolExecutor() as executor:
        result = executor.execute(
            search, {"query": "delete a payment", "limit": 2}, raise_on_failure=False
        )
    assert result.succeeded, result.error
    assert result.output is not None
    first = result.output["tools"][0]
    assert first["name"] == "delete_payment"
    assert first["description"] == "Delete a payment; this cannot be undone."
    assert first["input_schema"]["required"] == ["payment_id"]
    assert len(result.output["tools"]) == 2
    assert result.output["more"] > 0


@pytest.mark.parametrize(
    ("inputs", "problem"),
    [
        pytest.param({}, "Missing required parameter: 'query'", id="no-query"),
        pytest.param({"query": "x", "limit": 0}, "limit", id="limit-too-small"),
        pytest.param({"query": "x", "limit": MAX_LIMIT + 1}, "limit", id="limit-too-large"),
    ],
)
def test_the_search_tool_checks_its_arguments(inputs: dict[str, Any], problem: str) -> None:
    with ToolExecutor() as executor:
        result = executor.execute(SearchTools(catalog()), inputs, raise_on_failure=False)
    assert not result.succeeded
    assert problem in str(result.error)


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("'a' * 2_000_000", id="one-long-word"),
        pytest.param("' '.join(f'w{n}x' for n in range(300_000))", id="many-words"),
        pytest.param("'repo' * 500_000", id="a-prefix-repeated"),
    ],
)
def test_a_hostile_query_is_answered_in_bounded_time(query: str) -> None:
    done = run_bounded(
        f"""
        from tests.test_toolsearch import catalog
        from agentkit.toolsearch import SearchTools
        search = SearchTools(catalog())
        print(len(search.search({query})["tools"]))
        """,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().isdigit()


def test_only_the_first_words_of_a_query_count(index: ToolIndex) -> None:
    padding = " ".join(f"nothing{number}" for number in range(MAX_QUERY_WORDS))
    assert index.search(f"{padding} invoice") == []
    assert index.search(f"invoice {padding}")[0].name.endswith("_invoice")
