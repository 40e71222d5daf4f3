"""Limits counted in one process: sliding windows, leases, pauses, and what a refusal says."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from agentkit.callers import Caller, calling_as
from agentkit.ratelimits import Limiter, Limits, LocalStore, Rate, parse_limits, use_store
from agentkit.toolerrors import HttpCallError, LimitedError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    clock = Clock()
    before = use_store(LocalStore(clock))
    yield clock
    use_store(before)


ALICE = Caller(name="alice", via="token")
BOB = Caller(name="bob", via="token")


def limiter(**given: object) -> Limiter:
    limits, problems = parse_limits(given, owner="tool 'probe'", key="tool:probe", where="t.yaml:1")
    assert problems == []
    assert limits is not None
    made = Limiter("probe")
    made.add(limits)
    return made


def call(limiter: Limiter, caller: Caller) -> LimitedError | None:
    with calling_as(caller):
        try:
            with limiter.admit():
                return None
        except LimitedError as exc:
            return exc


def test_per_caller_window_refuses_the_call_over_it_and_counts_callers_apart(clock: Clock) -> None:
    probe = limiter(per_caller={"requests": 2, "per": "1m"})
    assert call(probe, ALICE) is None
    clock.now += 10
    assert call(probe, ALICE) is None
    refused = call(probe, ALICE)
    assert refused is not None
    assert str(refused) == (
        "limit of 2 per minute per caller for this tool; nothing was sent; retry after 50 s"
    )
    assert (refused.scope, refused.retry_after) == ("per_caller", 50.0)
    assert call(probe, BOB) is None  # bob has his own window
    clock.now += 50  # the first call leaves the window: one slot again, not two
    assert call(probe, ALICE) is None
    assert call(probe, ALICE) is not None


def test_a_refused_call_is_not_counted(clock: Clock) -> None:
    probe = limiter(per_caller={"requests": 1, "per": "10s"})
    assert call(probe, ALICE) is None
    for _ in range(5):
        clock.now += 1
        assert call(probe, ALICE) is not None
    clock.now += 5  # 10 s after the one admitted call, whatever was refused since
    assert call(probe, ALICE) is None


def test_total_is_shared_by_every_caller_and_a_refusal_uses_up_no_other_rule(
    clock: Clock,
) -> None:
    probe = limiter(per_caller={"requests": 2, "per": "1m"}, total={"requests": 3, "per": "1h"})
    assert call(probe, ALICE) is None
    assert call(probe, BOB) is None
    assert call(probe, BOB) is None
    refused = call(probe, ALICE)
    assert refused is not None
    assert refused.scope == "total"
    assert str(refused) == (
        "limit of 3 per hour in total, for all callers, for this tool; nothing was sent; "
        "retry after 3600 s"
    )
    clock.now += 3600
    # alice's refused call took nothing from her own window: two more fit.
    assert call(probe, ALICE) is None
    assert call(probe, ALICE) is None


def test_concurrent_calls_are_leases_given_back_when_a_call_ends(clock: Clock) -> None:
    probe = limiter(per_caller={"concurrent": 1})
    inside = threading.Event()
    leave = threading.Event()
    seen: list[LimitedError | None] = []

    def long_call() -> None:
        with calling_as(ALICE), probe.admit():
            inside.set()
            assert leave.wait(5)

    worker = threading.Thread(target=long_call)
    worker.start()
    assert inside.wait(5)
    seen.append(call(probe, ALICE))
    seen.append(call(probe, BOB))  # another caller's slot
    leave.set()
    worker.join(5)
    seen.append(call(probe, ALICE))
    refused = seen[0]
    assert refused is not None
    assert refused.scope == "concurrent"
    assert "limit of 1 concurrent call per caller for this tool" in str(refused)
    assert seen[1:] == [None, None]


def test_a_failing_call_gives_its_lease_back(clock: Clock) -> None:
    probe = limiter(per_caller={"concurrent": 1})
    with calling_as(ALICE), pytest.raises(ValueError, match="boom"), probe.admit():
        raise ValueError("boom")
    assert call(probe, ALICE) is None


def test_a_429_with_retry_after_pauses_a_source_for_every_caller_capped(clock: Clock) -> None:
    limits, problems = parse_limits(
        {"max_pause": "2m"}, owner="source 'github'", key="source:github", where="s.yaml:1",
        source=True,
    )  # fmt: skip
    assert problems == []
    assert limits is not None
    probe = Limiter("probe")
    probe.add(limits)
    with calling_as(ALICE), pytest.raises(HttpCallError), probe.admit():
        raise HttpCallError("status", "429", status=429, retry_after=3600.0)
    refused = call(probe, BOB)
    assert refused is not None
    assert refused.scope == "paused"
    assert str(refused) == (
        "the upstream of source 'github' answered 429 Too Many Requests: its calls are paused "
        "for every caller; nothing was sent; retry after 120 s"
    )
    clock.now += 120
    assert call(probe, BOB) is None


def test_a_429_without_retry_after_or_another_failure_pauses_nothing(clock: Clock) -> None:
    limits, _ = parse_limits({}, owner="source 's'", key="source:s", where="", source=True)
    assert limits is not None
    probe = Limiter("probe")
    probe.add(limits)
    for failure in (
        HttpCallError("status", "429", status=429),
        HttpCallError("status", "503", status=503, retry_after=30.0),
    ):
        with calling_as(ALICE), pytest.raises(HttpCallError), probe.admit():
            raise failure
    assert call(probe, ALICE) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            "nope",
            [
                (
                    (),
                    "expected a mapping such as {per_caller: {requests: 10, per: 1m, concurrent: 2}, total: {requests: 100, per: 1m}}",
                )
            ],
        ),
        (
            {},
            [
                (
                    (),
                    "limits nothing: give per_caller or total, such as {per_caller: {requests: 10, per: 1m, concurrent: 2}, total: {requests: 100, per: 1m}}",
                )
            ],
        ),
        (
            {"per_user": {}},
            [(("per_user",), "unknown key 'per_user'; a limits mapping takes per_caller, total")],
        ),
        (
            {"total": {"requests": 0, "per": "1m"}},
            [
                (
                    ("total", "requests"),
                    "expected a whole number of calls from 1 to 1000000 (with 'per'), got 0",
                )
            ],
        ),
        (
            {"total": {"requests": 5, "per": "1 minute"}},
            [
                (
                    ("total", "per"),
                    "expected the interval as a duration such as 30s, 1m, 1h or 1d (at most 7d), got '1 minute'",
                )
            ],
        ),
        (
            {"total": {"requests": 5}},
            [
                (
                    ("total", "per"),
                    "expected the interval as a duration such as 30s, 1m, 1h or 1d (at most 7d), got None",
                )
            ],
        ),
        (
            {"total": {"concurrent": 2}},
            [(("total", "concurrent"), "unknown key 'concurrent'; 'total' takes requests, per")],
        ),
        (
            {"per_caller": {"concurrent": True}},
            [
                (
                    ("per_caller", "concurrent"),
                    "expected a whole number of calls from 1 to 10000 that one caller may run at once, got True",
                )
            ],
        ),
        (
            {"max_pause": "1m"},
            [(("max_pause",), "unknown key 'max_pause'; a limits mapping takes per_caller, total")],
        ),
    ],
)
def test_problems_name_the_key_and_what_is_right(raw: object, expected: list[object]) -> None:
    limits, problems = parse_limits(raw, owner="tool 't'", key="tool:t", where="")
    assert limits is None
    assert problems == expected


@pytest.mark.parametrize(
    ("per", "seconds", "described"),
    [("30s", 30.0, "5 per 30 s"), ("1m", 60.0, "5 per minute"), ("1.5h", 5400.0, "5 per 5400 s"),
     ("1d", 86400.0, "5 per day"), (2, 2.0, "5 per 2 s"), ("500ms", 0.5, "5 per 0.5 s")],
)  # fmt: skip
def test_intervals(per: object, seconds: float, described: str) -> None:
    limits, _ = parse_limits({"total": {"requests": 5, "per": per}}, owner="", key="k", where="")
    assert limits is not None
    assert limits.total == Rate(requests=5, per=seconds)
    assert limits.total.describe() == described


def test_the_same_key_added_again_replaces_its_rules(clock: Clock) -> None:
    probe = Limiter("probe")
    probe.add(Limits(owner="toolset 'a'", key="toolset:a", total=Rate(requests=1, per=60)))
    probe.add(Limits(owner="toolset 'a'", key="toolset:a", total=Rate(requests=2, per=60)))
    assert call(probe, ALICE) is None
    assert call(probe, ALICE) is None
    refused = call(probe, ALICE)
    assert refused is not None
    assert "for toolset 'a'" in str(refused)


def test_the_local_cache_is_bounded_dropping_expired_then_oldest(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentkit import ratelimits

    monkeypatch.setattr(ratelimits, "MAX_LOCAL_ENTRIES", 3)
    kept = LocalStore(clock)
    kept.cache_set("a", b"1", 10)
    kept.cache_set("b", b"2", 100)
    kept.cache_set("c", b"3", 100)
    clock.now += 20  # "a" has expired: it goes first
    kept.cache_set("d", b"4", 100)
    assert [kept.cache_get(key) for key in "abcd"] == [None, b"2", b"3", b"4"]
    kept.cache_set("e", b"5", 100)  # none expired: the oldest kept ("b") goes
    assert [kept.cache_get(key) for key in "bcde"] == [None, b"3", b"4", b"5"]
    clock.now += 100
    assert kept.cache_get("e") is None
