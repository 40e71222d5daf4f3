"""Who is calling, the audit trail and /metrics, end to end: `agentkit serve --http` in a
real process, the SDK's streamable HTTP client, a loopback upstream that keeps what it got.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")

from mcp.shared.exceptions import MCPError
from prometheus_client.parser import text_string_to_metric_families

from tests.support import loopback
from tests.support.serve_tools import WIPE
from tests.support.serving import Served, serving, session, stdio_session

NAMED = "named-token-0123456789abcdefgh"
UNNAMED = "plain-token-0123456789abcdefgh"
USER_SECRET = "user-secret-credential-9876543210"

LOOKUP = """\
name: lookup
version: 2.1.0
description: Look a person up on the upstream.
credentials: [api-token]
input_schema:
  parameters:
    - {name: name, type: string}
    - {name: ssn, type: string, required: false, sensitive: true}
    - name: profile
      type: dictionary
      required: false
      parameters:
        - {name: city, type: string}
        - {name: phone, type: string, required: false, sensitive: true}
output_schema: {parameters: [{name: found, type: boolean}]}
backend:
  http:
    url: "{origin}/people/{{ inputs.name }}"
    headers: {X-Api-Key: "{{ credentials['api-token'] }}"}
    retry: {attempts: 1}
"""


class Upstream:
    """The API lookup calls: answers 200, or 503 for the name ``down``; keeps every
    request line and header it got."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []

    def __call__(self, handler: loopback.Handler) -> None:
        self.requests.append((handler.path, dict(handler.headers.items())))
        if handler.path.endswith("/down"):
            handler.reply(503, {"error": "down"})
        else:
            handler.reply(200, {"found": True})


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[str, Upstream]]:
    recorder = Upstream()
    behaviours = {f"/people/{who}": recorder for who in ("ada", "down", USER_SECRET)}
    with loopback.serve(behaviours) as origin:  # type: ignore[arg-type]
        yield origin, recorder


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, upstream: tuple[str, Upstream]) -> Path:
    made = tmp_path_factory.mktemp("audit")
    tools = made / "tools"
    tools.mkdir()
    (tools / "lookup.yaml").write_text(LOOKUP.replace("{origin}", upstream[0]))
    (tools / "wipe.yaml").write_text(WIPE)
    (made / "tokens").write_text(f"{NAMED} caller=triage-bot\n# a comment\n{UNNAMED}\n")
    return made


@pytest.fixture(scope="module", params=["fast-path", "sdk-path"])
def server(folder: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Served, Path]]:
    trail = folder / f"audit-{request.param}.jsonl"
    args = [
        "--tools", str(folder / "tools"),
        "--auth-token-file", str(folder / "tokens"),
        "--credential-header", "X-Api-Token=api-token",
        "--audit", str(trail),
        "--metrics",
        "--caller-header", "X-Forwarded-User",
        "--trusted-proxy", "127.0.0.0/8",
    ]  # fmt: skip
    if request.param == "sdk-path":
        args.append("--no-fast-path")
    with serving(args) as served:
        yield served, trail


def _headers(token: str = NAMED, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "X-Api-Token": USER_SECRET, **extra}


async def _call(url: str, headers: dict[str, str], name: str, arguments: dict[str, Any]) -> Any:
    with anyio.fail_after(60):
        async with session(url, headers) as client:
            return await client.call_tool(name, arguments)


def _last_line(trail: Path) -> dict[str, Any]:
    line = trail.read_text().splitlines()[-1]
    record: dict[str, Any] = json.loads(line)
    return record


def _audited(
    server: tuple[Served, Path], name: str, arguments: dict[str, Any], **headers: str
) -> tuple[Any, dict[str, Any]]:
    served, trail = server
    given = _headers(**headers) if headers else _headers()
    result = anyio.run(_call, served.url, given, name, arguments)
    return result, _last_line(trail)


# -- who is calling ------------------------------------------------------------------------------


def test_a_token_the_file_names_calls_as_its_caller(server: tuple[Served, Path]) -> None:
    result, record = _audited(server, "lookup", {"name": "ada"})
    assert not result.is_error
    assert (record["caller"], record["via"]) == ("triage-bot", "token")


def test_a_token_without_a_name_calls_as_its_place_in_the_file(
    server: tuple[Served, Path],
) -> None:
    _, record = _audited(server, "lookup", {"name": "ada"}, token=UNNAMED)
    assert (record["caller"], record["via"]) == ("token-2", "token")


def test_a_trusted_proxys_header_names_the_caller(server: tuple[Served, Path]) -> None:
    _, record = _audited(server, "lookup", {"name": "ada"}, **{"X-Forwarded-User": "ada@example"})
    assert (record["caller"], record["via"]) == ("ada@example", "proxy-header")


def test_a_header_that_is_no_callers_name_is_ignored(server: tuple[Served, Path]) -> None:
    _, record = _audited(server, "lookup", {"name": "ada"}, **{"X-Forwarded-User": "a b;c"})
    assert (record["caller"], record["via"]) == ("triage-bot", "token")


def test_the_caller_is_never_sent_upstream(
    server: tuple[Served, Path], upstream: tuple[str, Upstream]
) -> None:
    recorder = upstream[1]
    before = len(recorder.requests)
    _audited(server, "lookup", {"name": "ada"}, **{"X-Forwarded-User": "ada@example"})
    sent = recorder.requests[before:]
    assert len(sent) == 1
    path, headers = sent[0]
    shown = path + json.dumps(headers)
    for secret_or_name in ("triage-bot", "ada@example", NAMED, "caller", "Forwarded"):
        assert secret_or_name not in shown


# -- the audit trail -----------------------------------------------------------------------------


def test_a_success_is_one_line_with_every_field(server: tuple[Served, Path]) -> None:
    _served, trail = server
    before = len(trail.read_text().splitlines()) if trail.exists() else 0
    _, record = _audited(server, "lookup", {"name": "ada", "profile": {"city": "Paris"}})
    assert len(trail.read_text().splitlines()) == before + 1
    assert record["time"].endswith("Z")
    assert "T" in record["time"]
    assert record["tool"] == "lookup"
    assert record["version"] == "2.1.0"
    assert record["toolset"] is None
    assert record["arguments"] == {"name": "ada", "profile": {"city": "Paris"}}
    assert (record["outcome"], record["failure"], record["cache_hit"]) == ("success", None, False)
    assert 0 < record["duration"] < 60
    assert record["upstream_status"] == [200]


def test_sensitive_fields_are_masked_at_any_depth(server: tuple[Served, Path]) -> None:
    arguments = {"name": "ada", "ssn": "078-05-1120", "profile": {"city": "Oslo", "phone": "555"}}
    _, record = _audited(server, "lookup", arguments)
    assert record["arguments"] == {
        "name": "ada",
        "ssn": "[sensitive]",
        "profile": {"city": "Oslo", "phone": "[sensitive]"},
    }


def test_a_masked_field_is_masked_even_when_the_call_fails_validation(
    server: tuple[Served, Path],
) -> None:
    result, record = _audited(server, "lookup", {"name": 7, "ssn": "078-05-1120"})
    assert result.is_error
    assert (record["outcome"], record["failure"]) == ("failure", "validation")
    assert record["arguments"] == {"name": 7, "ssn": "[sensitive]"}
    assert record["upstream_status"] == []


def test_a_credential_in_the_arguments_is_redacted(server: tuple[Served, Path]) -> None:
    _served, trail = server
    _audited(server, "lookup", {"name": USER_SECRET})
    assert USER_SECRET not in trail.read_text()
    assert NAMED not in trail.read_text()
    assert UNNAMED not in trail.read_text()


def test_an_upstream_failure_records_its_status(server: tuple[Served, Path]) -> None:
    result, record = _audited(server, "lookup", {"name": "down"})
    assert result.is_error
    assert (record["outcome"], record["failure"]) == ("failure", "execution")
    assert record["upstream_status"] == [503]


def test_a_confirm_tool_its_client_cannot_confirm_is_declined(
    server: tuple[Served, Path],
) -> None:
    result, record = _audited(server, "wipe", {"seconds": 0})
    assert result.is_error
    assert (record["outcome"], record["failure"]) == ("declined", None)


def test_an_unknown_tool_is_recorded_without_its_arguments(server: tuple[Served, Path]) -> None:
    served, trail = server

    async def call() -> None:
        with anyio.fail_after(60):
            async with session(served.url, _headers()) as client:
                with pytest.raises(MCPError, match="Unknown tool"):
                    await client.call_tool("lookupp", {"ssn": "078-05-1120"})

    anyio.run(call)
    record = _last_line(trail)
    assert (record["tool"], record["version"], record["arguments"]) == ("lookupp", None, {})
    assert (record["outcome"], record["failure"]) == ("failure", "unknown_tool")


# -- /metrics ------------------------------------------------------------------------------------


def _scrape(served: Served, token: str | None) -> tuple[int, str]:
    request = urllib.request.Request(f"{served.origin}/metrics")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def test_metrics_need_a_token(server: tuple[Served, Path]) -> None:
    assert _scrape(server[0], None)[0] == 401
    assert _scrape(server[0], "not-a-token-0123456789abcdef")[0] == 401


def test_metrics_count_calls_failures_and_durations_per_tool(server: tuple[Served, Path]) -> None:
    served, _ = server
    _audited(server, "lookup", {"name": "ada"})
    _audited(server, "lookup", {"name": "down"})
    status, text = _scrape(served, UNNAMED)
    assert status == 200
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    calls = samples[("agentkit_tool_calls_total", (("outcome", "success"), ("tool", "lookup")))]
    failed = samples[("agentkit_tool_failures_total", (("kind", "execution"), ("tool", "lookup")))]
    timed = samples[("agentkit_tool_call_duration_seconds_count", (("tool", "lookup"),))]
    assert calls >= 1
    assert failed >= 1
    assert timed >= calls + failed
    assert not any("caller" in dict(labels) for _, labels in samples)


# -- stdio ---------------------------------------------------------------------------------------


def test_stdio_calls_are_anonymous_and_audit_stdout_goes_to_stderr(folder: Path) -> None:
    trail = folder / "stdio-audit.jsonl"

    async def call() -> Any:
        with anyio.fail_after(60):
            args = ["--tools", str(folder / "tools"), "--audit", str(trail)]
            async with stdio_session(args) as client:
                return await client.call_tool("lookup", {"name": 7})

    assert anyio.run(call).is_error
    record = _last_line(trail)
    assert (record["caller"], record["via"]) == ("anonymous", "none")
    assert record["failure"] == "validation"


# -- a proxy not trusted, a toolset's endpoint ---------------------------------------------------


def test_a_header_from_a_peer_not_trusted_is_ignored_and_a_set_is_named(folder: Path) -> None:
    """The proxy trusted is elsewhere (192.0.2.0/24): the header a loopback client sends
    names no one, and the call runs as its token's caller; a call at a set's endpoint
    names the set."""
    tools = folder / "tools-with-set"
    tools.mkdir(exist_ok=True)
    (tools / "lookup.yaml").write_text((folder / "tools" / "lookup.yaml").read_text())
    (tools / "people.yaml").write_text("toolset: people\ntools: [lookup]\n")
    trail = folder / "audit-untrusted.jsonl"
    args = [
        "--tools", str(tools),
        "--auth-token-file", str(folder / "tokens"),
        "--audit", str(trail),
        "--caller-header", "X-Forwarded-User",
        "--trusted-proxy", "192.0.2.0/24",
    ]  # fmt: skip
    forged = {"X-Forwarded-User": "admin"}
    with serving(args) as served:
        for _ in range(2):
            anyio.run(_call, served.url, _headers(**forged), "lookup", {"name": "ada"})
        whole = _last_line(trail)
        anyio.run(_call, f"{served.url}/people", _headers(**forged), "lookup", {"name": "ada"})
        in_set = _last_line(trail)
        stderr = served.stderr
    assert (whole["caller"], whole["via"], whole["toolset"]) == ("triage-bot", "token", None)
    assert (in_set["caller"], in_set["toolset"]) == ("triage-bot", "people")
    assert stderr.count("carried the x-forwarded-user header, ignored") == 1
    assert "admin" not in stderr


def test_a_forwarded_for_header_never_makes_a_peer_trusted(folder: Path) -> None:
    """Only the TCP peer is trusted or not: a loopback client that claims, in
    X-Forwarded-For, to come from the trusted proxy's network still names no one; and a
    proxy on loopback that adds X-Forwarded-For (as proxies do) is still trusted."""
    trail = folder / "audit-forwarded.jsonl"
    args = [
        "--tools", str(folder / "tools"),
        "--auth-token-file", str(folder / "tokens"),
        "--audit", str(trail),
        "--caller-header", "X-Forwarded-User",
        "--trusted-proxy", "192.0.2.0/24",
    ]  # fmt: skip
    spoofed = {
        "X-Forwarded-User": "admin",
        "X-Forwarded-For": "192.0.2.7",
        "Forwarded": "for=192.0.2.7",
    }
    with serving(args) as served:
        anyio.run(_call, served.url, _headers(**spoofed), "lookup", {"name": "ada"})
        record = _last_line(trail)
    assert (record["caller"], record["via"]) == ("triage-bot", "token")
    trail = folder / "audit-behind-proxy.jsonl"
    args[args.index("192.0.2.0/24")] = "127.0.0.1/32"
    args[args.index(str(folder / "audit-forwarded.jsonl"))] = str(trail)
    behind = {"X-Forwarded-User": "ada@example", "X-Forwarded-For": "203.0.113.5"}
    with serving(args) as served:
        anyio.run(_call, served.url, _headers(**behind), "lookup", {"name": "ada"})
        record = _last_line(trail)
    assert (record["caller"], record["via"]) == ("ada@example", "proxy-header")
