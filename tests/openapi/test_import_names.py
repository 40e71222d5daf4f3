"""Names and descriptions a model can use: bounds named for what they mean, and every
import of the vendored descriptions passing ``agentkit validate --strict``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import yaml

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.cli import main
from agentkit.openapi import import_openapi
from agentkit.openapi.budgets import Budgets
from agentkit.toolerrors import UsageError
from tests.support.loopback import Handler, serve

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"
TRACKER = Path(__file__).resolve().parents[2] / "examples" / "openapi" / "tracker.yaml"
OK = {"200": {"description": "ok"}}


def query(name: str, schema: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    param = {"name": name, "in": "query", "schema": schema}
    return {**param, "description": description} if description else param


def messages(*parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Messages", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/Messages": {
                "get": {
                    "operationId": "ListMessage",
                    "parameters": list(parameters),
                    "responses": OK,
                }
            }
        },
    }


def imported(tmp_path: Path, document: dict[str, Any]) -> Path:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "tools.d"
    import_openapi(spec, source="msg", out=out)
    return out


def inputs(out: Path) -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load((out / "list_message.yaml").read_text(encoding="utf-8"))
    return {param["name"]: param for param in doc["input_schema"]["parameters"]}


DATE = {"type": "string", "format": "date-time"}


def test_bounds_are_named_for_what_they_mean(tmp_path: Path) -> None:
    out = imported(
        tmp_path,
        messages(
            query("DateSent", DATE, "Filter by date sent."),
            query("DateSent<", DATE, "Filter by date sent."),
            query("DateSent>", DATE),
            query("StartTime<=", {"type": "string"}),
            query("StartTime>=", {"type": "string"}),
            query("Price>", {"type": "number"}),
            query("Price<=", {"type": "number"}),
            query("Count>=", {"type": "integer"}),
            query("Count<", {"type": "integer"}),
        ),
    )
    found = inputs(out)
    assert list(found) == [
        "date_sent",
        "date_sent_before",
        "date_sent_after",
        "start_time_on_or_before",
        "start_time_on_or_after",
        "price_above",
        "price_at_most",
        "count_at_least",
        "count_below",
    ]
    assert found["date_sent_before"]["description"] == (
        "DateSent strictly before this date or time (sent as DateSent<). Filter by date "
        "sent. An RFC 3339 date-time (2024-01-31T12:00:00Z)."
    )
    assert found["date_sent_after"]["description"] == (
        "DateSent strictly after this date or time (sent as DateSent>). An RFC 3339 "
        "date-time (2024-01-31T12:00:00Z)."
    )
    assert "on or before this date or time" in found["start_time_on_or_before"]["description"]
    assert "greater than this value (sent as Price>)" in found["price_above"]["description"]
    assert "at least this value" in found["count_at_least"]["description"]
    text = (out / "list_message.yaml").read_text(encoding="utf-8")
    assert "query_date_sent" not in text


def test_a_bound_is_sent_under_the_apis_own_name(tmp_path: Path) -> None:
    out = imported(tmp_path, messages(query("DateSent<", DATE), query("DateSent>", DATE)))
    seen: list[list[tuple[str, str]]] = []

    def note(handler: Handler) -> None:
        seen.append(parse_qsl(urlsplit(handler.path).query))
        handler.reply(200, {})

    with serve({"/Messages": note}) as origin:
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={"MSG_BASE_URL": origin})
        arguments = {"date_sent_before": "2026-01-02", "date_sent_after": "2025-12-01"}
        result = ToolExecutor().execute(registry["list_message"], arguments)
    assert result.succeeded, result.error
    assert seen == [[("DateSent<", "2026-01-02"), ("DateSent>", "2025-12-01")]]


def test_a_bound_whose_name_is_taken_gets_its_location_in_front(tmp_path: Path) -> None:
    out = imported(tmp_path, messages(query("date_sent_before", DATE), query("DateSent<", DATE)))
    assert list(inputs(out)) == ["date_sent_before", "query_date_sent_before"]


def test_a_tool_description_budget_over_what_providers_take_is_refused() -> None:
    with pytest.raises(UsageError, match=r"--tool-description-budget: .* at most 1024"):
        import_openapi(
            TRACKER,
            source="t",
            out="unused",
            budgets=Budgets(tool_description_chars=2000),
        )


#: The vendored descriptions that import (the rest have no operation to import).
VENDORED = [
    FIXTURES / "github" / "api.github.com.json",
    TRACKER,
    FIXTURES / "notes.json",
    FIXTURES / "kennel-swagger.yaml",
    *(
        spec
        for spec in sorted((FIXTURES / "oas-examples").glob("*/*.json"))
        if spec.stem not in {"webhooks", "schema-deprecated", "response-http-behavior"}
    ),
]
#: What --strict warns about that the description chose, not the import: its own
#: plain http:// server or token URL, for a credential.
CHOSEN_BY_THE_DESCRIPTION = ("over plain http://",)


@pytest.mark.parametrize(
    "spec", VENDORED, ids=[f"{spec.parent.name}/{spec.stem}" for spec in VENDORED]
)
def test_every_vendored_import_passes_validate_strict(
    tmp_path: Path, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tools.d"
    import_openapi(spec, source="api", out=out, check=False)
    capsys.readouterr()
    code = main(["validate", "--strict", str(out)])
    err = capsys.readouterr().err
    warnings = [
        line
        for line in err.splitlines()
        if line.startswith("warning:")
        and not any(reason in line for reason in CHOSEN_BY_THE_DESCRIPTION)
    ]
    assert warnings == []
    assert code == (1 if err.count("warning:") else 0)
