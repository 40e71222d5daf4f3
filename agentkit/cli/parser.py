"""The command line: ``build_parser`` declares every command, its options and their help,
and the function that runs it (``run``).

The parser imports the commands, rather than each command registering itself: the
order ``--help`` lists them in is written here once, a command module needs nothing of
argparse but the namespace it is given, and importing a module has no side effect.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from agentkit import __version__
from agentkit.cli.calling import cmd_call
from agentkit.cli.definitions import (
    cmd_diff,
    cmd_export,
    cmd_list,
    cmd_schema,
    cmd_show,
    cmd_validate,
)
from agentkit.cli.importing import cmd_import_openapi
from agentkit.cli.serving import cmd_serve
from agentkit.cli.status import EXIT_STATUSES
from agentkit.cli.testing import cmd_test
from agentkit.schemasize import DEFAULT_SCHEMA_BUDGET


def _bytes(value: str) -> int:
    """A budget in bytes: a whole number, at least 1."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a number of bytes (1 or more), got {value!r}")
    return number


class _ExportFormatNames:
    """``export --format``'s choices: the export table, read when argparse checks a value
    or shows help, so a format from an installed package (entry point) is offered too.
    The table is imported then, not for every command."""

    def __contains__(self, name: object) -> bool:
        from agentkit.adapters.export import EXPORT_FORMATS

        return name in EXPORT_FORMATS

    def __iter__(self) -> Iterator[str]:
        from agentkit.adapters.export import EXPORT_FORMATS

        return iter(EXPORT_FORMATS)


def build_parser() -> argparse.ArgumentParser:
    """The ``agentkit`` parser; a command's namespace holds ``run``, the function to run it."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--tools",
        action="append",
        metavar="PATH",
        help="a definition file or folder (repeatable; default: $AGENTKIT_TOOLS, else ./tools.d)",
    )
    common.add_argument(
        "--python-path",
        action="append",
        metavar="DIR",
        help="a folder to import Python backends from (repeatable; the current folder always is)",
    )
    common.add_argument(
        "--credentials-file", metavar="FILE", help="a .env-style file of credentials (NAME=value)"
    )
    common.add_argument(
        "--env-file",
        metavar="FILE",
        help="a .env-style file of configuration for ${VAR} in definitions (NAME=value; "
        "it wins over the environment)",
    )
    parser = argparse.ArgumentParser(
        prog="agentkit",
        description="Check, inspect, run, export, compare and serve tool definitions.",
        epilog="exit status:\n"
        + "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_STATUSES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"agentkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, parents=[common], help=help_text, description=help_text)

    validate = command(
        "validate",
        "Load definitions and report every problem (exit 2) and warning (exit 0; 1 with --strict).",
    )
    validate.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check")
    validate.add_argument(
        "--strict", action="store_true", help="exit 1 when there are warnings, for CI"
    )
    validate.add_argument(
        "--provider",
        action="append",
        metavar="NAME",
        help="also report what a provider would refuse (exit 2) or change (a warning): "
        "openai-strict, openai, anthropic, gemini, mcp or all (repeatable, or NAME,NAME)",
    )
    validate.add_argument(
        "--schema-budget",
        type=_bytes,
        default=DEFAULT_SCHEMA_BUDGET,
        metavar="BYTES",
        help="warn about a tool whose schemas (as tools/list carries them) are larger "
        f"(default {DEFAULT_SCHEMA_BUDGET})",
    )
    validate.set_defaults(run=cmd_validate)

    listing = command("list", "List the tools: name, version, backend, tags, description.")
    listing.add_argument(
        "--tag", action="append", metavar="KEY=VALUE", help="only tools with this tag"
    )
    listing.add_argument("--toolset", metavar="NAME", help="only the tools of this toolset")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(run=cmd_list)

    show = command("show", "Show one tool: its definition, source and JSON Schema.")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(run=cmd_show)

    call = command("call", "Run a tool through the executor and print the result as JSON.")
    call.add_argument("name", metavar="NAME")
    call.add_argument(
        "arguments", nargs="*", metavar="KEY=VALUE", help="inputs, parsed by their declared type"
    )
    call.add_argument("--input", metavar="JSON", help="inputs as a JSON object")
    call.add_argument("--input-file", metavar="FILE", help="inputs from a JSON file")
    call.add_argument(
        "--yes",
        action="store_true",
        help="run a confirm: true tool without asking; without it such a tool asks on the "
        "terminal (y or yes allows it; anything else, Ctrl-C or end of input declines: "
        "exit 2, nothing sent), and with no terminal it is refused (exit 2)",
    )
    call.add_argument(
        "--dry-run",
        action="store_true",
        help="print the request an http tool would send (secrets masked, no OAuth2 token "
        "fetched) and send nothing; a python tool's code cannot be shown (exit 2)",
    )
    call.set_defaults(run=cmd_call)

    export = command("export", "Print the tools in an LLM provider's format.")
    export.add_argument(
        "--format",
        required=True,
        metavar="FORMAT",
        choices=_ExportFormatNames(),
        help="one of: %(choices)s",
    )
    export.add_argument("--strict", action="store_true", help="OpenAI strict mode")
    export.add_argument(
        "--tag", action="append", metavar="KEY=VALUE", help="only tools with this tag"
    )
    export.add_argument("--toolset", metavar="NAME", help="only the tools of this toolset")
    export.add_argument(
        "--defer",
        action="append",
        metavar="GLOB",
        help="defer the tools this name or pattern (jira_*) matches: found through the "
        "provider's tool search, or search_tools, not shown up front (repeatable)",
    )
    export.set_defaults(run=cmd_export)

    diff = command("diff", "Compare two definition sets; exit 1 when a version bump is missing.")
    diff.add_argument("old", metavar="OLD", help="the old file or folder")
    diff.add_argument("new", metavar="NEW", help="the new file or folder")
    diff.add_argument("--json", action="store_true", help="print JSON")
    diff.set_defaults(run=cmd_diff)

    test = command(
        "test",
        "Run every tool's examples: HTTP tools against their recordings (no network, no "
        "credentials); exit 1 when one fails.",
    )
    test.add_argument("paths", nargs="*", metavar="PATH", help="definition files or folders")
    test.add_argument("--tool", metavar="NAME", help="only this tool's examples")
    test.add_argument(
        "--record",
        action="store_true",
        help="call the real APIs with real credentials and write the recordings "
        "(credentials as placeholders); says new, changed or unchanged for each",
    )
    test.add_argument("--junit", metavar="FILE", help="also write the outcomes as JUnit XML")
    test.set_defaults(run=cmd_test)

    schema = command("schema", "Print the JSON Schema of the definition format, for editors.")
    schema.set_defaults(run=cmd_schema)

    serve = command(
        "serve", "Serve the tools to MCP clients over stdio, or streamable HTTP with --http."
    )
    serve.add_argument(
        "--http",
        nargs="?",
        const="127.0.0.1:8000",
        metavar="HOST:PORT",
        help="serve streamable HTTP instead of stdio (default 127.0.0.1:8000; port 0: any free)",
    )
    serve.add_argument("--path", default="/mcp", help="the MCP endpoint's path (default /mcp)")
    serve.add_argument(
        "--toolset",
        action="append",
        metavar="NAME",
        help="serve only this toolset; over --http repeatable, each set at PATH/NAME (by "
        "default every set is served there, and the whole registry at PATH)",
    )
    serve.add_argument(
        "--no-whole-registry",
        action="store_true",
        help="over --http, serve the toolsets at PATH/NAME but not the whole registry at PATH",
    )
    serve.add_argument(
        "--stateless",
        action="store_true",
        help="no per-session state: any instance behind a load balancer answers any request",
    )
    serve.add_argument(
        "--no-fast-path",
        action="store_true",
        help="answer every request through the MCP SDK, not the fast path (for triage)",
    )
    serve.add_argument(
        "--auth-token-file", metavar="FILE", help="require a bearer token, one of those in FILE"
    )
    serve.add_argument(
        "--auth-token-env",
        metavar="VAR",
        help="require a bearer token, one of those in $VAR (comma-separated)",
    )
    serve.add_argument(
        "--credential-header",
        action="append",
        metavar="HEADER=CREDENTIAL",
        help="take credential CREDENTIAL from request header HEADER for that call (repeatable)",
    )
    serve.add_argument(
        "--require-credential-headers",
        action="store_true",
        help="a call without a --credential-header header fails; no fallback to the "
        "environment or --credentials-file",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        metavar="HOST[:PORT]",
        help="a Host header to accept besides loopback ones (repeatable; PORT may be *)",
    )
    serve.add_argument(
        "--allowed-origin",
        action="append",
        metavar="ORIGIN",
        help="an Origin header to accept besides loopback ones (repeatable)",
    )
    serve.add_argument(
        "--max-request-bytes",
        type=int,
        metavar="N",
        help="refuse a larger request body with 413 (default 4 MiB)",
    )
    serve.add_argument(
        "--header-timeout",
        type=float,
        metavar="SECONDS",
        help="close a connection whose request head is not complete in time (default 10)",
    )
    serve.add_argument(
        "--body-timeout",
        type=float,
        metavar="SECONDS",
        help="close a connection whose request body is not complete this long after its "
        "head (default 30)",
    )
    serve.add_argument(
        "--idle-timeout",
        type=int,
        metavar="SECONDS",
        help="close a keep-alive connection idle this long between requests (default 5)",
    )
    serve.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="refuse connections past N open ones with 503 (default: from the open-file "
        "limit, at most 4096)",
    )
    serve.add_argument(
        "--call-timeout",
        type=float,
        metavar="SECONDS",
        help="every call's deadline: an async tool is cancelled, a sync one abandoned",
    )
    serve.add_argument(
        "--max-calls",
        type=int,
        metavar="N",
        help="run at most N calls at once (default 64); more wait in the queue",
    )
    serve.add_argument(
        "--max-queued",
        type=int,
        metavar="N",
        help="let at most N calls wait (default 64); past that a call is refused as busy",
    )
    serve.add_argument(
        "--max-waiting",
        type=int,
        metavar="N",
        help="let at most N calls wait for their users' answers (default 64, at most 1024); "
        "a waiting call holds no --max-calls slot",
    )
    serve.add_argument(
        "--answer-timeout",
        type=float,
        metavar="SECONDS",
        help="how long a call waits for its user's answer (default 300, at most 600)",
    )
    serve.add_argument(
        "--drain-seconds",
        type=float,
        metavar="SECONDS",
        help="on SIGTERM (or stdin closing) wait this long for calls in flight (default 30)",
    )
    serve.add_argument(
        "--limits-store",
        metavar="URL",
        help="count the tools' limits and keep their cached answers in this Redis "
        "(redis://HOST:PORT/DB), shared by every replica using it (needs agentkit[redis]); "
        "default: in this process",
    )
    serve.add_argument(
        "--limits-store-unreachable",
        choices=("refuse", "local"),
        help="when the --limits-store cannot be reached: refuse calls with limits (default) "
        "or count them in this process until it can",
    )
    serve.add_argument(
        "--allow-unconfirmed",
        action="store_true",
        help="run confirm: true tools without asking when the client cannot be asked "
        "(no elicitation); by default such a call is refused",
    )
    serve.add_argument(
        "--reload",
        action="store_true",
        help="watch the definition files and reload when they change (SIGHUP always reloads)",
    )
    serve.add_argument(
        "--reload-interval",
        type=float,
        metavar="SECONDS",
        help="how often --reload looks at the files (default 1)",
    )
    serve.add_argument(
        "--defer",
        action="append",
        metavar="GLOB",
        help="defer the tools this name or pattern (jira_*) matches: not listed up front, "
        "found through the search tool search_tools (repeatable)",
    )
    serve.add_argument(
        "--audit",
        metavar="FILE|stdout|otel",
        help="write one JSON line per call: to FILE (rotated by size), stdout (stderr over "
        "stdio, whose stdout is the protocol), or OpenTelemetry logs",
    )
    serve.add_argument(
        "--audit-max-bytes",
        type=_bytes,
        metavar="N",
        help="rotate the --audit FILE once it would pass N bytes (default 50 MiB)",
    )
    serve.add_argument(
        "--audit-backups",
        type=int,
        metavar="N",
        help="keep N rotated --audit files, FILE.1 the newest (default 5)",
    )
    serve.add_argument(
        "--caller-header",
        metavar="HEADER",
        help="over --http, the caller's name from this request header, set by a "
        "--trusted-proxy (ignored from any other peer)",
    )
    serve.add_argument(
        "--trusted-proxy",
        action="append",
        metavar="CIDR",
        help="over --http, a peer address or network whose --caller-header is honoured "
        "(repeatable)",
    )
    serve.add_argument(
        "--metrics",
        action="store_true",
        help="over --http, answer GET /metrics in Prometheus' text format (behind the "
        "bearer tokens, if any)",
    )
    serve.set_defaults(run=cmd_serve)

    importing = commands.add_parser(
        "import", help="Write tool definitions from an API description."
    ).add_subparsers(dest="format", metavar="FORMAT", required=True)
    openapi = importing.add_parser(
        "openapi",
        help="An OpenAPI 3.0/3.1 or Swagger 2.0 description (JSON or YAML): a source file, "
        "a file per operation.",
    )
    openapi.add_argument("spec", metavar="SPEC", help="the description's file")
    openapi.add_argument("--source", required=True, metavar="NAME", help="the source's name")
    openapi.add_argument("--out", required=True, metavar="DIR", help="the folder to write")
    for flag, what in (
        ("--tag", "only operations with this tag"),
        ("--operation", "only this operation (operationId or tool name)"),
        ("--method", "only operations of this HTTP method"),
        ("--exclude-operation", "leave this operation out"),
    ):
        openapi.add_argument(flag, action="append", default=[], metavar="VALUE", help=what)
    openapi.add_argument(
        "--include-deprecated", action="store_true", help="import deprecated operations too"
    )
    openapi.add_argument(
        "--server-variable",
        action="append",
        default=[],
        metavar="NAME",
        help="read this variable of the server URL from SOURCE_SERVER_NAME when loading "
        "(repeatable); the others are written as their defaults",
    )
    openapi.add_argument(
        "--auth",
        metavar="SCHEME",
        help="the security scheme the source authenticates with, of the description's "
        "securitySchemes (default: the first of its top-level security)",
    )
    openapi.add_argument(
        "--layout",
        choices=("operation", "tag"),
        help="a file per operation (the default), or per tag: SOURCE.TAG.yaml, a YAML stream",
    )
    openapi.add_argument(
        "--update",
        action="store_true",
        help="import over a folder an earlier import wrote, keeping the reviewer's edits",
    )
    openapi.add_argument(
        "--no-check",
        action="store_true",
        help="do not check the description against the OpenAPI schema (that takes 15-20 s "
        "on a 10 MB description)",
    )
    # The budgets: each defaults to None, so --update can tell a new one from the lock's.
    for flag, unit, what in (
        ("--max-depth", "N", "levels of nesting a schema keeps below a parameter (default 8)"),
        (
            "--schema-budget",
            "BYTES",
            "a tool's schema size; a larger tool keeps less nesting (default "
            f"{DEFAULT_SCHEMA_BUDGET})",
        ),
        ("--description-budget", "CHARS", "a parameter's description (default 300)"),
        ("--tool-description-budget", "CHARS", "a tool's description (default 1000)"),
    ):
        openapi.add_argument(flag, type=int, metavar=unit, help=what)
    openapi.add_argument(
        "--keep-streaming",
        action="store_true",
        default=None,
        help="keep optional watch/follow query parameters, which make a call a stream",
    )
    openapi.set_defaults(run=cmd_import_openapi)
    return parser
