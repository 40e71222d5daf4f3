"""``agentkit test``: run every tool's examples, offline against their recordings, or
``--record`` them against the real API; pytest's closing line, JUnit XML for CI."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agentkit.cli.loading import load_registry
from agentkit.cli.output import echo, terminal_text
from agentkit.cli.status import EXIT_FAILED, EXIT_OK
from agentkit.toolerrors import UsageError


def cmd_test(args: argparse.Namespace) -> int:
    from agentkit.credentials import CredentialsManager
    from agentkit.testing import collect_examples, junit_xml, summary_line
    from agentkit.testing.runner import run_example

    started = time.perf_counter()
    registry = load_registry(args, args.paths)
    pairs = collect_examples(registry, args.tool)
    credentials = CredentialsManager.from_env(args.credentials_file) if args.record else None
    outcomes = []
    for tool, example in pairs:
        outcome = run_example(tool, example, record=args.record, credentials=credentials)
        outcomes.append(outcome)
        verdict = "PASSED" if outcome.passed else "FAILED"
        line = f"{outcome.test_id} {verdict}"
        if outcome.recorded is not None:
            line += f" (recording {outcome.recorded}: {outcome.recording})"
        echo(terminal_text(line, one_line=True))
    failures = [outcome for outcome in outcomes if not outcome.passed]
    if failures:
        echo(f"{' FAILURES ':=^70}")
        for outcome in failures:
            echo(f"{' ' + outcome.test_id + ' ':_^70}")
            echo(f"{outcome.source}: {outcome.reason}")
    seconds = time.perf_counter() - started
    if args.junit:
        try:
            Path(args.junit).write_text(junit_xml(outcomes, seconds), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--junit {args.junit}: cannot write: {exc.strerror or exc}") from exc
    if not pairs:
        echo("no examples: add 'examples:' to a definition (docs/testing.md)")
    echo(summary_line(outcomes, seconds))
    return EXIT_FAILED if failures else EXIT_OK
