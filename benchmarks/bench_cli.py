"""Cold start of the agentkit command, against Python importing PyYAML, in one run."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AGENTKIT = [sys.executable, "-m", "agentkit"]


def _best(command: list[str], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
        best = min(best, time.perf_counter() - started)
    return best


def run(rounds: int = 10) -> list[str]:
    cases = {
        'python -c "import yaml"': [sys.executable, "-c", "import yaml"],
        "agentkit --help": [*AGENTKIT, "--help"],
        "agentkit list (shipped tools.d)": [*AGENTKIT, "list"],
        # Definitions whose templates are all plain paths never import Jinja2:
        "agentkit list (plain templates only)": [
            *AGENTKIT,
            "list",
            *("--tools", "tools.d/fetch_weather.yaml"),
            *("--tools", "tools.d/forecast.yaml"),
            *("--tools", "tools.d/text_stats.yaml"),
        ],
    }
    best = {label: float("inf") for label in cases}
    for _ in range(rounds):  # interleaved, so a slow spell hits every case alike
        for label, command in cases.items():
            best[label] = min(best[label], _best(command, 1))
    baseline = best['python -c "import yaml"']
    lines = [f"cli: cold start, whole process (best of {rounds} interleaved rounds)"]
    for label, seconds in best.items():
        lines.append(
            f"  {label:<38} {seconds * 1e3:7.1f} ms  {seconds / baseline:5.2f}x import yaml"
        )
    return lines
