"""``cache:`` on a read-only tool: kept answers, never crossing callers or credentials."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools
from agentkit.callers import Caller, calling_as
from agentkit.observability import ToolEvent
from agentkit.ratelimits import Store, use_store
from tests.declarative.conftest import WriteFile
from tests.support import loopback
from tests.support.redis_server import redis_server

TOOL = """\
name: lookup
version: 1.0.0
credentials: [api-token]
input_schema:
  parameters:
    - {{name: path, type: string}}
output_schema:
  parameters:
    - {{name: n, type: integer}}
{extra}
backend:
  http:
    url: {origin}/{{{{ inputs.path }}}}
    headers: {{Authorization: "Bearer {{{{ credentials['api-token'] }}}}"}}
"""
pytestmark = pytest.mark.usefixtures("fresh_limits_store")
ALICE = Caller(name="alice", via="token")
BOB = Caller(name="bob", via="token")


@pytest.fixture
def api() -> Iterator[tuple[str, list[str]]]:
    """Each reply counts the requests to its path; /private and /nostore say so."""
    hits: list[str] = []

    def counting(cache_control: str | None) -> loopback.Behaviour:
        def behave(handler: loopback.Handler) -> None:
            hits.append(handler.path)
            headers = {"Cache-Control": cache_control} if cache_control else {}
            handler.reply(200, {"n": len(hits)}, headers)

        return behave

    with loopback.serve(
        {
            "/plain": counting(None),
            "/private": counting("private, max-age=60"),
            "/nostore": counting("No-Store"),
        }
    ) as origin:
        yield origin, hits


def load(write: WriteFile, origin: str, cache: str) -> ToolRegistry:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(origin=origin, extra=cache)), registry=registry)
    return registry


def call(
    registry: ToolRegistry, caller: Caller, path: str = "plain", token: str = "token-one-abcdef",
    events: list[ToolEvent] | None = None,
) -> object:  # fmt: skip
    executor = ToolExecutor(credentials={"api-token": token})
    if events is not None:
        executor.subscribe(events.append)
    with calling_as(caller):
        result = executor.execute(registry["lookup"], {"path": path})
    return result.output


def test_a_second_call_is_answered_from_the_cache_and_marked(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, hits = api
    registry = load(write, origin, "annotations: {read_only: true}\ncache: {ttl: 1m}")
    events: list[ToolEvent] = []
    assert call(registry, ALICE, events=events) == {"n": 1}
    assert call(registry, ALICE, events=events) == {"n": 1}
    assert hits == ["/plain"]
    completed = [event for event in events if event.name.endswith("completed")]
    assert [event.cached for event in completed] == [False, True]
    assert completed[1].to_dict()["cached"] is True
    assert "cached" not in completed[0].to_dict()


def test_per_caller_is_the_default_and_different_inputs_miss(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, hits = api
    registry = load(write, origin, "annotations: {read_only: true}\ncache: {ttl: 1m}")
    assert call(registry, ALICE) == {"n": 1}
    assert call(registry, BOB) == {"n": 2}  # never alice's answer
    assert call(registry, ALICE, "private") == {"n": 3}
    assert call(registry, BOB) == {"n": 2}
    assert len(hits) == 3


def test_shared_serves_every_caller_but_never_across_credentials(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, hits = api
    registry = load(
        write, origin, "annotations: {read_only: true}\ncache: {ttl: 1m, scope: shared}"
    )
    assert call(registry, ALICE) == {"n": 1}
    assert call(registry, BOB) == {"n": 1}
    # Another credential (a per-user token): its own answer, whatever the scope says.
    assert call(registry, BOB, token="token-two-abcdef") == {"n": 2}
    assert len(hits) == 2


def test_the_upstreams_cache_control_is_honoured(
    write: WriteFile, api: tuple[str, list[str]]
) -> None:
    origin, hits = api
    shared = load(write, origin, "annotations: {read_only: true}\ncache: {ttl: 1m, scope: shared}")
    assert [call(shared, ALICE, "nostore") for _ in range(2)] == [{"n": 1}, {"n": 2}]
    assert [call(shared, ALICE, "private") for _ in range(2)] == [{"n": 3}, {"n": 4}]
    per_caller = load(write, origin, "annotations: {read_only: true}\ncache: {ttl: 1m}")
    # private allows a cache kept for one caller: the second call is a hit.
    assert [call(per_caller, ALICE, "private") for _ in range(2)] == [{"n": 5}, {"n": 5}]
    assert len(hits) == 5


def test_an_answer_expires_after_its_ttl(write: WriteFile, api: tuple[str, list[str]]) -> None:
    origin, _ = api
    registry = load(write, origin, "annotations: {read_only: true}\ncache: {ttl: 200ms}")
    assert call(registry, ALICE) == {"n": 1}
    assert call(registry, ALICE) == {"n": 1}
    time.sleep(0.25)
    assert call(registry, ALICE) == {"n": 2}


def test_a_hit_is_not_counted_against_limits(write: WriteFile, api: tuple[str, list[str]]) -> None:
    origin, hits = api
    registry = load(
        write,
        origin,
        "annotations: {read_only: true}\ncache: {ttl: 1m}\n"
        "limits: {per_caller: {requests: 1, per: 1m}}",
    )
    assert [call(registry, ALICE) for _ in range(3)] == [{"n": 1}] * 3
    assert len(hits) == 1


def test_an_answer_made_on_one_replica_is_served_by_the_other(
    write: WriteFile, api: tuple[str, list[str]], tmp_path: Path
) -> None:
    pytest.importorskip("redis")
    from agentkit.ratelimits_redis import RedisStore

    origin, _ = api
    registry = load(write, origin, "annotations: {read_only: true}\ncache: {ttl: 1m}")
    with redis_server(tmp_path) as server:
        replicas: list[Store] = [RedisStore(server.url), RedisStore(server.url)]
        answers = []
        for replica in replicas:
            use_store(replica)
            answers.append(call(registry, ALICE))
        answers.append(call(registry, BOB))
        server.stop()  # unreachable: a miss, the call still runs
        answers.append(call(registry, ALICE))
    assert answers == [{"n": 1}, {"n": 1}, {"n": 2}, {"n": 3}]


def test_a_full_redis_keeps_nothing_and_the_call_still_answers(
    write: WriteFile, api: tuple[str, list[str]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    redis = pytest.importorskip("redis")
    from agentkit.ratelimits_redis import RedisStore

    origin, hits = api
    registry = load(write, origin, "annotations: {read_only: true}\ncache: {ttl: 1m}")
    with redis_server(tmp_path) as server:
        client = redis.Redis.from_url(server.url)
        # Full: every write that would take memory is refused with an OOM error.
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", "1")
        use_store(RedisStore(server.url))
        with caplog.at_level(logging.WARNING, logger="agentkit.ratelimits"):
            answers = [call(registry, ALICE) for _ in range(2)]
        client.config_set("maxmemory", "0")
        client.close()
    assert answers == [{"n": 1}, {"n": 2}]  # answered each time, kept neither time
    assert hits == ["/plain", "/plain"]
    logged = [record.getMessage() for record in caplog.records]
    assert len(logged) == 1  # once, not once per call
    assert "could not keep an answer" in logged[0]
    assert "maxmemory" in logged[0]


@pytest.mark.parametrize(
    ("cache", "said"),
    [
        (
            "annotations: {read_only: false}\ncache: {ttl: 1m}",
            "cache: only a read-only tool's answers may be cached: set annotations: "
            "{read_only: true} if calling it changes nothing, or remove 'cache'",
        ),
        (
            "annotations: {read_only: true}\ncache: {ttl: 2d}",
            "cache.ttl: expected how long an answer is kept, a duration such as 30s or 5m "
            "(at most 1d), got '2d'",
        ),
        (
            "annotations: {read_only: true}\ncache: {ttl: 1m, scope: everyone}",
            "cache.scope: expected caller (each caller's answers apart, the default) or "
            "shared, got 'everyone'",
        ),
    ],
)
def test_cache_problems(write: WriteFile, cache: str, said: str) -> None:
    with pytest.raises(DefinitionError) as raised:
        load(write, "http://127.0.0.1:9", cache)
    assert said in str(raised.value)


def test_an_async_python_tool_is_cached_and_limited_too(write: WriteFile) -> None:
    import asyncio

    from tests.support import counted_tools

    counted_tools.CALLS.clear()
    registry = ToolRegistry()
    load_tools(
        write(
            "name: counted\nversion: 1.0.0\n"
            "input_schema: {parameters: [{name: key, type: string}]}\n"
            "output_schema: {parameters: [{name: n, type: integer}]}\n"
            "annotations: {read_only: true}\ncache: {ttl: 1m}\n"
            "limits: {per_caller: {requests: 2, per: 1m}}\n"
            'backend: {python: "tests.support.counted_tools:counted"}\n'
        ),
        registry=registry,
    )
    executor = ToolExecutor(credentials={})

    async def calls() -> list[object]:
        results: list[object] = []
        for key in ("a", "a", "b", "c"):
            with calling_as(ALICE):
                result = await executor.aexecute(
                    registry["counted"], {"key": key}, raise_on_failure=False
                )
            results.append(result.output if result.error is None else result.error)
        return results

    first, again, second, third = asyncio.run(calls())
    assert (first, again, second) == ({"n": 1}, {"n": 1}, {"n": 2})
    assert "limit of 2 per minute per caller" in str(third)
    assert counted_tools.CALLS == ["a", "b"]


ECHO = """\
name: echo_token
version: 1.0.0
credentials: [api-token]
annotations: {{read_only: true}}
cache: {{ttl: 1m, scope: {scope}}}
input_schema: {{parameters: [{{name: q, type: string}}]}}
output_schema: {{parameters: [{{name: said, type: string}}]}}
backend:
  http:
    url: {origin}/echo
    query: {{q: "{{{{ inputs.q }}}}"}}
    headers: {{Authorization: "Bearer {{{{ credentials['api-token'] }}}}"}}
    output: {{said: "{{{{ response.json.said }}}}"}}
"""


@pytest.mark.parametrize("scope", ["caller", "shared"])
def test_an_answer_withheld_for_holding_a_credential_is_never_kept(
    write: WriteFile, scope: str
) -> None:
    # The upstream echoes the token back: the executor withholds the answer, and the
    # cache must not keep it for a later call (or, in Redis, in clear).
    hits: list[str] = []

    def echo(handler: loopback.Handler) -> None:
        hits.append(handler.path)
        handler.reply(200, {"said": f"you sent {handler.headers['Authorization']}"})

    with loopback.serve({"/echo": echo}) as origin:
        registry = ToolRegistry()
        load_tools(write(ECHO.format(origin=origin, scope=scope)), registry=registry)
        executor = ToolExecutor(credentials={"api-token": "token-one-abcdef"})
        for _ in range(2):
            with calling_as(ALICE):
                result = executor.execute(registry["echo_token"], {"q": "x"}, False)
            assert result.status == "failure"
            assert type(result.error.cause).__name__ == "SecretInOutputError"  # type: ignore[union-attr]
            assert "token-one-abcdef" not in str(result.error)
    assert len(hits) == 2  # asked again: nothing was kept
