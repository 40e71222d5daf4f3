"""``agentkit import openapi``: a first import, or ``--update`` over a folder an earlier
import wrote."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from agentkit.cli.output import echo, print_diff, terminal_text
from agentkit.cli.status import EXIT_FAILED, EXIT_OK
from agentkit.toolerrors import UsageError

if TYPE_CHECKING:
    from agentkit.openapi import ImportReport
    from agentkit.openapi.budgets import Budgets

#: The most tools providers accept in one request.
_PROVIDER_TOOLS = 128


def cmd_import_openapi(args: argparse.Namespace) -> int:
    from agentkit.openapi import Selection, import_openapi

    if args.update:
        return _update_openapi(args)
    selection = Selection(
        tags=args.tag,
        operations=args.operation,
        methods=args.method,
        exclude=args.exclude_operation,
        deprecated=args.include_deprecated,
    )
    report = import_openapi(
        args.spec,
        source=args.source,
        out=args.out,
        selection=selection,
        layout=args.layout or "operation",
        check=not args.no_check,
        server_variables=args.server_variable,
        budgets=_budgets(args),
        auth=args.auth,
    )
    _print_import(args.spec, report, checked=not args.no_check)
    if report.deprecated:
        echo(f"left out {len(report.deprecated)} deprecated operation(s) (--include-deprecated)")
    files = f" in {len(report.written) - 1} file(s)" if args.layout == "tag" else ""
    echo(
        f"wrote {report.tools} tool(s){files} and a source to {args.out}; "
        f"{len(report.skipped)} skipped, "
        f"{report.notes} note(s) in the files"
    )
    _print_budgets(report)
    return EXIT_OK


def _budgets(args: argparse.Namespace) -> Budgets | None:
    """The budgets the options give, over the defaults (or, with ``--update``, the lock's);
    None when no option gives one."""
    from agentkit.openapi.budgets import Budgets

    given = {
        key: value
        for key, value in (
            ("max_depth", args.max_depth),
            ("schema_bytes", args.schema_budget),
            ("description_chars", args.description_budget),
            ("tool_description_chars", args.tool_description_budget),
            ("keep_streaming", args.keep_streaming),
        )
        if value is not None
    }
    return Budgets(**given) if given else None


def _print_budgets(report: ImportReport) -> None:
    """What the budgets cut, and how to choose among more tools than a provider takes."""
    if report.fitted:
        echo(
            f"{len(report.fitted)} tool(s) keep less nesting to fit the schema budget "
            "(--schema-budget, --max-depth); each file's notes say where"
        )
    if report.over_budget:
        shown = ", ".join(report.over_budget[:3]) + (", ..." if len(report.over_budget) > 3 else "")
        echo(
            f"{len(report.over_budget)} tool(s) over the schema budget even so ({shown}): "
            "their top-level parameters alone are larger; edit them or leave them out "
            "(--exclude-operation)"
        )
    if report.streaming:
        echo(
            f"left out {report.streaming} streaming parameter(s) (watch, follow): "
            "--keep-streaming keeps them"
        )
    if report.tools <= _PROVIDER_TOOLS:
        return
    tags = ", ".join(report.tags[:5]) + (", ..." if len(report.tags) > 5 else "")
    by_tag = f" ({len(report.tags)} tags: {tags})" if report.tags else ""
    echo(
        f"{report.tools} tools: over {_PROVIDER_TOOLS}, the most providers accept in one "
        f"request, and a model chooses worse among many. Choose: import the parts an agent "
        f"needs with --tag{by_tag}, --operation or --exclude-operation, or keep them all and "
        "give each agent a toolset (a toolset: document naming the tools it serves)"
    )


def _print_import(spec: str, report: ImportReport, *, checked: bool = True) -> None:
    """What an import or an update found in the description, renamed and skipped."""
    if report.findings is None and checked:
        echo("not checked against the OpenAPI schema: pip install 'agentkit[openapi]'")
    for finding in report.findings or ():
        echo(f"warning: {spec}{finding}", error=True)
    for renamed in report.renamed:
        echo(f"renamed: {renamed.wanted} -> {renamed.name} (name taken; {renamed.pointer})")
    for skipped in report.skipped:
        echo(f"skipped: {skipped.operation}: {skipped.problem}", error=True)


def _update_openapi(args: argparse.Namespace) -> int:
    from agentkit.openapi.update import update_openapi

    if args.layout is not None:
        raise UsageError(
            "--update keeps the first import's layout (in the lock file); --layout cannot "
            "change it: import into a new folder to lay the tools out otherwise"
        )
    filters = [
        flag for flag in ("tag", "operation", "method", "exclude_operation") if getattr(args, flag)
    ]
    if filters or args.include_deprecated:
        given = (
            ", ".join("--" + flag.replace("_", "-") for flag in filters) or "--include-deprecated"
        )
        raise UsageError(
            f"--update keeps the first import's selection (in the lock file); {given} cannot "
            "change it: import into a new folder to select other operations"
        )
    if args.server_variable:
        raise UsageError(
            "--update keeps the first import's server variables (in the lock file); "
            "--server-variable cannot change them: edit the source's base_url (your edit "
            "is kept), or import into a new folder"
        )
    if args.auth is not None:
        raise UsageError(
            "--update keeps the source's auth (your edit of the source file is kept); "
            "--auth cannot change it: edit the source's auth and credentials"
        )
    report = update_openapi(args.spec, source=args.source, out=args.out, budgets=_budgets(args))
    _print_import(args.spec, report.generation)
    for tool in report.classified:
        print_diff(tool, severity=True)
    for operation in report.kept_gone:
        echo(
            terminal_text(
                f"kept: {operation}: gone from the description, but you edited it; it is no "
                "longer updated (delete the file if the tool should go)",
                one_line=True,
            )
        )
    for operation in report.deleted:
        echo(terminal_text(f"stays deleted: {operation} (you deleted it)", one_line=True))
    for conflict in report.conflicts:
        echo(f"conflict: {terminal_text(conflict, one_line=True)}", error=True)
    echo(
        f"updated {args.out}: {len(report.added)} added, "
        f"{sum(tool.status == 'changed' for tool in report.classified)} changed, "
        f"{len(report.removed)} removed, {report.unchanged} unchanged, "
        f"{len(report.conflicts)} conflict(s) (your side kept)"
    )
    return EXIT_FAILED if report.conflicts else EXIT_OK
