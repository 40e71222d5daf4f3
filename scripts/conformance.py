"""`make conformance`: the official MCP conformance suite against `agentkit serve --http`,
on the fast path (the default) and with ``--no-fast-path`` (the SDK's transport alone).

Runs `@modelcontextprotocol/conformance` (pinned in tests/conformance/package.json, with
the Node 22 it needs from npm's `node` package) against a server on a free loopback
port serving the tools the suite names (tests/conformance/tools.d), once per path.
Prints each scenario's outcome and the count, per path. Exits 0 when every scenario of
what agentkit serves passes on both paths, 1 when one fails or did not run; the
scenarios of what agentkit does not serve (prompts, resources, completion, sampling:
``NOT_SERVED``) are shown apart and do not count. `.ci/run` runs it after `make test`.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.serving import start  # noqa: E402 -- after the path is set

SUITE = ROOT / "tests" / "conformance"
BIN = SUITE / "node_modules" / ".bin"
SUITE_SECONDS = 600
#: The scenarios of what an MCP server may offer and agentkit does not: it serves tools
#: (prompts, resources and completion are other servers' business, and a tool asking
#: the client's model to sample is not offered). Shell patterns.
NOT_SERVED = ("prompts-*", "resources-*", "completion-*", "tools-call-sampling")
_RESULT_FOLDER = re.compile(r"^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


#: The server's options for each path the suite runs against.
PATHS = {"fast path": (), "--no-fast-path": ("--no-fast-path",)}


def main() -> int:
    if not (BIN / "conformance").exists():
        print("conformance: run `npm ci` in tests/conformance first", file=sys.stderr)
        return 2
    worst = 0
    for label, options in PATHS.items():
        print(f"conformance, {label}:")
        worst = max(worst, _run_suite(options))
    return worst


def _run_suite(options: tuple[str, ...]) -> int:
    """The suite against one server started with ``options``: 0 when it all passed."""
    served = start(["--tools", str(SUITE / "tools.d"), *options])
    try:
        with tempfile.TemporaryDirectory() as scratch:
            # npm's `node` package first on PATH: the suite needs Node 22 or later.
            env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
            run = subprocess.run(
                [str(BIN / "conformance"), "server", "--url", served.url, "-o", scratch],
                env=env,
                capture_output=True,
                text=True,
                timeout=SUITE_SECONDS,
                check=False,
            )
            outcomes = _outcomes(Path(scratch))
    finally:
        served.stop()
    if not outcomes:
        print(run.stdout[-4000:], run.stderr[-4000:], sep="\n", file=sys.stderr)
        return run.returncode or 1
    return _report(outcomes)


def _report(outcomes: dict[str, bool]) -> int:
    """Print each scenario's outcome; 0 when every one of what agentkit serves passed."""
    served = {name: ok for name, ok in outcomes.items() if not _not_served(name)}
    passed = sorted(name for name, ok in served.items() if ok)
    failed = sorted(name for name, ok in served.items() if not ok)
    for name in passed:
        print(f"  pass  {name}")
    for name in failed:
        print(f"  FAIL  {name}")
    for name in sorted(set(outcomes) - set(served)):
        print(f"  not served  {name} ({'passes' if outcomes[name] else 'fails'})")
    print(
        f"conformance: {len(passed)} of {len(outcomes)} scenarios pass; "
        f"{len(passed)} of the {len(served)} of what agentkit serves"
    )
    return 1 if failed or not served else 0


def _not_served(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in NOT_SERVED)


def _outcomes(results: Path) -> dict[str, bool]:
    """Scenario name -> whether every check in it succeeded, from the suite's JSON files."""
    outcomes: dict[str, bool] = {}
    for path in sorted(results.rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        checks = data if isinstance(data, list) else data.get("checks", [])
        if not isinstance(checks, list) or not checks:
            continue
        folder = path.parent.name if path.name == "checks.json" else path.stem
        # The suite names a result folder server-<scenario>-<timestamp>.
        name = _RESULT_FOLDER.sub(r"\1", folder)
        outcomes[name] = all(
            isinstance(check, dict) and check.get("status") in ("SUCCESS", "INFO", "SKIPPED")
            for check in checks
        )
    return outcomes


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
