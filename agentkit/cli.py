"""The ``agentkit`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agentkit import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentkit",
        description="A tool host for LLM agents: define, check and run tools.",
    )
    parser.add_argument("--version", action="version", version=f"agentkit {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
