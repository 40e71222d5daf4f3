"""The shared limits store against a real redis-server: replicas sharing one count."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.callers import Caller, calling_as
from agentkit.ratelimits import Limiter, Limits, Rate, Store, use_store
from agentkit.ratelimits_redis import RedisStore, shown_url
from agentkit.toolerrors import HttpCallError, LimitedError, SemanticError
from tests.support.redis_server import RedisServer, redis_server

pytestmark = pytest.mark.server

ALICE = Caller(name="alice", via="token")
BOB = Caller(name="bob", via="token")


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path) as server:
        yield server


def limiter(**rules: object) -> Limiter:
    made = Limiter("probe")
    made.add(Limits(owner="tool 'probe'", key="tool:probe", **rules))  # type: ignore[arg-type]
    return made


def on(store: Store, limiter: Limiter, caller: Caller) -> LimitedError | None:
    """One call of ``limiter`` for ``caller`` counted in ``store`` (one "replica")."""
    before = use_store(store)
    try:
        with calling_as(caller), limiter.admit():
            return None
    except LimitedError as exc:
        return exc
    finally:
        use_store(before)


def test_a_window_holds_across_two_replicas_and_expires(redis: RedisServer) -> None:
    one, two = RedisStore(redis.url), RedisStore(redis.url)
    probe = limiter(per_caller=Rate(requests=3, per=1.0), total=Rate(requests=5, per=60.0))
    assert [on(one, probe, ALICE), on(two, probe, ALICE), on(one, probe, ALICE)] == [None] * 3
    refused = on(two, probe, ALICE)
    assert refused is not None
    assert refused.scope == "per_caller"
    assert refused.retry_after == 1.0
    assert on(two, probe, BOB) is None  # bob's window is his own
    time.sleep(1.05)  # alice's window has passed; the total has one call left
    assert on(two, probe, ALICE) is None
    total = on(one, probe, ALICE)
    assert total is not None
    assert total.scope == "total"
    assert 58 <= total.retry_after <= 60


def test_many_threads_on_two_replicas_never_admit_more_than_the_limit(
    redis: RedisServer,
) -> None:
    # The stores are called directly: the process's store (use_store) is one for all threads.
    stores = [RedisStore(redis.url), RedisStore(redis.url)]
    admitted: list[bool] = []
    lock = threading.Lock()

    def caller(index: int) -> None:
        for call in range(10):
            answer = stores[index % 2].acquire(
                [("tool:probe:total", 25, 60.0)], [], None, f"{index}-{call}"
            )
            with lock:
                admitted.append(answer.refused == -1)

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(admitted) == 60
    assert admitted.count(True) == 25


def test_concurrency_leases_are_released_and_expire(redis: RedisServer) -> None:
    one = RedisStore(redis.url, lease_seconds=0.5)
    two = RedisStore(redis.url, lease_seconds=0.5)
    probe = limiter(concurrent=1)
    use_store(one)
    try:
        with calling_as(ALICE), probe.admit():
            refused = on(two, probe, ALICE)  # the other replica sees the slot taken
            assert refused is not None
            assert refused.scope == "concurrent"
            assert on(two, probe, BOB) is None
    finally:
        use_store(two)
    assert on(two, probe, ALICE) is None  # given back when the call ended

    # A replica that dies mid-call never gives its lease back: it expires.
    assert one.acquire([], [("tool:probe:concurrent:alice", 1)], None, "dead-call").refused == -1
    assert on(two, probe, ALICE) is not None
    time.sleep(0.6)
    assert on(two, probe, ALICE) is None


def test_a_pause_is_seen_by_every_replica(redis: RedisServer) -> None:
    one, two = RedisStore(redis.url), RedisStore(redis.url)
    probe = Limiter("probe")
    probe.add(Limits(owner="source 'api'", key="source:api", max_pause=600.0))
    use_store(one)
    try:
        with calling_as(ALICE), pytest.raises(HttpCallError), probe.admit():
            raise HttpCallError("status", "429", status=429, retry_after=1.0)
    finally:
        use_store(two)
    paused = on(two, probe, BOB)
    assert paused is not None
    assert paused.scope == "paused"
    one.pause("source:api:paused", 0.1)  # a shorter pause never shortens it
    assert on(two, probe, BOB) is not None
    time.sleep(1.05)
    assert on(two, probe, BOB) is None


def test_redis_stopped_mid_run_refuses_when_so_configured(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore(redis.url, unreachable="refuse", timeout=0.2)
    probe = limiter(per_caller=Rate(requests=100, per=60.0))
    assert on(store, probe, ALICE) is None
    redis.stop()
    with caplog.at_level(logging.WARNING, logger="agentkit.ratelimits"):
        first, second = on(store, probe, ALICE), on(store, probe, ALICE)
    assert first is not None
    assert second is not None
    assert first.scope == "store"
    assert str(first) == (
        f"the limits store {redis.url} cannot be reached, and calls with limits are refused "
        "until it can (--limits-store-unreachable refuse); nothing was sent; retry after 5 s"
    )
    logged = [record.getMessage() for record in caplog.records]
    assert len(logged) == 1  # once per outage, not once per call
    assert "cannot be reached (ConnectionError): refusing calls with limits" in logged[0]


def test_redis_stopped_mid_run_falls_back_to_local_limits_and_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with redis_server(tmp_path) as first_server:
        store = RedisStore(first_server.url, unreachable="local", timeout=0.2, retry_seconds=0.2)
        probe = limiter(per_caller=Rate(requests=2, per=60.0), concurrent=1)
        assert on(store, probe, ALICE) is None
        first_server.stop()
        with caplog.at_level(logging.WARNING, logger="agentkit.ratelimits"):
            # Counted afresh in this process: two calls, then the local window is full.
            assert [on(store, probe, ALICE) for _ in range(3)][:2] == [None, None]
            assert on(store, probe, ALICE) is not None
        assert "counting limits in this process only" in caplog.records[0].getMessage()
        assert len(caplog.records) == 1
    # Redis back on the same port: shared again (an empty server: two calls fit again).
    with redis_server(tmp_path, first_server.port):
        time.sleep(0.25)
        with caplog.at_level(logging.WARNING, logger="agentkit.ratelimits"):
            assert [on(store, probe, ALICE) for _ in range(2)] == [None, None]
        assert on(store, probe, ALICE) is not None
        assert caplog.records[-1].getMessage() == (
            f"limits store {first_server.url} answers again: limits are shared again"
        )


def test_a_full_redis_still_counts_limits_and_logs_a_pause_it_cannot_keep(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    import redis as client_module

    client = client_module.Redis.from_url(redis.url)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", "1")  # every write that takes memory is refused
    store = RedisStore(redis.url)
    probe = limiter(per_caller=Rate(requests=2, per=60.0))
    with caplog.at_level(logging.WARNING, logger="agentkit.ratelimits"):
        assert [on(store, probe, ALICE) is None for _ in range(3)] == [True, True, False]
        store.pause("source:api:paused", 5.0)
        store.pause("source:api:paused", 5.0)
    client.config_set("maxmemory", "0")
    client.close()
    logged = [record.getMessage() for record in caplog.records]
    assert len(logged) == 1
    assert logged[0].startswith(
        f"limits store {redis.url} could not keep a pause (OutOfMemoryError"
    )


def test_settings_are_checked_and_a_password_is_never_shown() -> None:
    with pytest.raises(SemanticError, match="choose 'refuse'"):
        RedisStore("redis://127.0.0.1:1/0", unreachable="wait")  # type: ignore[arg-type]
    with pytest.raises(SemanticError) as raised:
        RedisStore("http://user:hunter2@127.0.0.1:1/0")
    assert "hunter2" not in str(raised.value)
    assert shown_url("redis://:hunter2@10.0.0.1:6380/2") == "redis://10.0.0.1:6380/2"
