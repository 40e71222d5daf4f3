"""The current caller: anonymous by default, set for a block, seen by the tasks it starts."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agentkit.callers import ANONYMOUS, Caller, calling_as, current_caller


def test_a_call_outside_any_block_is_anonymous() -> None:
    assert current_caller() is ANONYMOUS
    assert ANONYMOUS.anonymous
    assert (ANONYMOUS.name, ANONYMOUS.via) == ("anonymous", "none")


def test_calling_as_sets_the_caller_for_the_block_and_restores_it() -> None:
    bot, other = Caller(name="triage-bot", via="token"), Caller(name="ops@acme", via="proxy-header")
    with calling_as(bot):
        assert current_caller() == bot
        assert not current_caller().anonymous
        with calling_as(other):
            assert current_caller() == other
        assert current_caller() == bot
    assert current_caller() is ANONYMOUS


def test_the_caller_is_restored_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), calling_as(Caller(name="bot", via="token")):
        raise RuntimeError("boom")
    assert current_caller() is ANONYMOUS


def test_tasks_and_worker_threads_see_their_own_callers_caller() -> None:
    async def as_caller(name: str) -> tuple[str, str]:
        with calling_as(Caller(name=name, via="token")):
            await asyncio.sleep(0)  # the other task runs in between
            in_task = await asyncio.create_task(_name_later())
            in_thread = await asyncio.to_thread(lambda: current_caller().name)
            return in_task, in_thread

    async def main() -> list[tuple[str, str]]:
        return list(await asyncio.gather(as_caller("alice"), as_caller("bob")))

    assert asyncio.run(main()) == [("alice", "alice"), ("bob", "bob")]


async def _name_later() -> str:
    await asyncio.sleep(0)
    return current_caller().name


def test_a_plain_thread_does_not_inherit_the_caller() -> None:
    seen: list[str] = []
    with calling_as(Caller(name="bot", via="token")):
        thread = threading.Thread(target=lambda: seen.append(current_caller().name))
        thread.start()
        thread.join(timeout=10)
    assert seen == ["anonymous"]


@pytest.mark.parametrize(
    "name",
    ["", " bot", "-bot", "bot name", "bot\n", "a" * 129, "bot/../x", "café"],
    ids=[
        "empty",
        "space-first",
        "dash-first",
        "space",
        "newline",
        "too-long",
        "slash",
        "non-ascii",
    ],
)
def test_a_caller_name_holds_only_what_logs_and_keys_can_carry(name: str) -> None:
    with pytest.raises(ValueError, match=r"caller name .*: use 1 to 128 letters, digits and"):
        Caller(name=name, via="token")
