"""The soak's account of garbage collector pauses: which calls waited on one."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from benchmarks.pauses import Pause, Pauses, noting, read_log, waited_share
from benchmarks.serving import ROOT


def _pause(start: float, end: float, generation: int = 2) -> Pause:
    return Pause(generation=generation, start=start, end=end, cpu=end - start)


def test_a_call_waited_when_a_pause_overlapped_it() -> None:
    pauses = [_pause(1.0, 1.02), _pause(5.0, 5.03)]
    calls = [
        (0.99, 1.005),  # began before the pause, ended during it
        (1.01, 1.015),  # wholly inside
        (0.5, 1.5),  # around it
        (1.021, 1.03),  # after it
        (0.90, 0.999),  # before it
        (4.0, 4.5),  # between the two
        (5.029, 6.0),  # the second, at its very end
    ]
    assert waited_share(calls, pauses) == 4 / 7
    assert waited_share(calls[3:6], pauses) == 0.0


def test_short_pauses_do_not_count() -> None:
    calls = [(0.0, 1.0)]
    assert waited_share(calls, [_pause(0.5, 0.504)]) == 0.0
    assert waited_share(calls, [_pause(0.5, 0.504)], stall=0.001) == 1.0


def test_a_long_pause_behind_a_later_short_one_still_counts() -> None:
    # Sorted by start, the last pause before the call's end is short and over; the one
    # before it is long enough to reach into the call.
    pauses = [_pause(1.0, 2.0), _pause(1.5, 1.51)]
    assert waited_share([(1.8, 1.9)], pauses) == 1.0


def test_no_calls_or_no_pauses() -> None:
    assert waited_share([], [_pause(0.0, 1.0)]) == 0.0
    assert waited_share([(0.0, 1.0)], []) == 0.0


def test_the_client_notes_its_own_collections() -> None:
    pauses = Pauses()
    gc.callbacks.append(pauses.observe)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(pauses.observe)
    assert pauses.full == 1
    assert [pause.generation for pause in pauses.noted] == [2]
    assert pauses.noted[0].end >= pauses.noted[0].start


def test_the_tracer_writes_what_read_log_reads(tmp_path: Path) -> None:
    log = tmp_path / "gc.log"
    with log.open("w", encoding="utf-8") as file:
        observe = noting(lambda pause: file.write(pause.logged()))  # as gc_trace does
        for generation in (2, 0):  # a young collection this quick is not noted
            observe("start", {"generation": generation})
            observe("stop", {"generation": generation, "collected": 0, "uncollectable": 0})
    (pause,) = read_log(log)
    assert pause.generation == 2
    assert pause.start <= pause.end
    assert pause.cpu >= 0.0
    assert read_log(tmp_path / "missing.log") == []


def test_the_traced_server_is_the_agentkit_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.gc_trace", str(tmp_path / "gc.log"), "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("agentkit ")
    assert (tmp_path / "gc.log").exists()


def test_a_line_cut_short_is_left_out(tmp_path: Path) -> None:
    log = tmp_path / "gc.log"
    log.write_text("2 10.000000 10.025000 0.020000\n0 11.000000 11.0")
    assert read_log(log) == [Pause(generation=2, start=10.0, end=10.025, cpu=0.02)]
