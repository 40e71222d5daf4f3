"""The ``agentkit`` command: check, inspect, run, export, compare and serve tool definitions.

A user mistake prints ``error: ...`` on stderr and exits 2 (no traceback); a
tool call that fails exits 1 (``EXIT_STATUSES`` is the whole table, printed by
``--help``). Each command imports only what it needs, so ``agentkit --help``
starts in the time it takes Python to start. Everything printed goes through
``terminal_text``, so a name or value cannot send a terminal escape sequences.

``main`` runs a command. Inside the package, a module per concern, each importing
only those below it: ``parser`` (every command's options and help) > the commands,
which do not import each other: ``definitions`` (validate, list, show, diff, schema,
export), ``calling`` (call, its confirmation and dry run), ``importing`` (import
openapi) and ``serving`` (serve) > ``loading`` (finding and loading the tools),
``output`` (printing) and ``status`` (exit statuses).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from agentkit.cli.output import echo, terminal_text
from agentkit.cli.parser import build_parser
from agentkit.cli.status import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STATUSES,
    EXIT_USAGE,
)
from agentkit.toolerrors import AgentKitError, UsageError

__all__ = ["EXIT_STATUSES", "UsageError", "build_parser", "main", "terminal_text"]


def _fail(message: str, code: int) -> NoReturn:
    echo(f"error: {message}", error=True)
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "call" and not any(item.startswith("-") for item in extra):
        # argparse ends a `nargs="*"` positional at the first option, so KEY=VALUE
        # arguments after `--tools DIR` would be refused; they belong to the call.
        args.arguments = [*args.arguments, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except AgentKitError as exc:
        _fail(exc.format_message(), exc.exit_code if exc.exit_code else EXIT_FAILED)
    except KeyboardInterrupt:
        _fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        return EXIT_OK  # `agentkit list | head`: the reader left, nothing to report
