"""The command's exit statuses."""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: Every exit status the command uses, and what it means; README.md shows the same table.
EXIT_STATUSES = (
    (EXIT_OK, "success; `validate` found no problem (warnings alone pass unless --strict)"),
    (
        EXIT_FAILED,
        "`call`: the tool call failed (its result is printed); `validate --strict`: warnings;"
        " `diff`: a version bump is missing; `test`: an example failed;"
        " `import openapi --update`: conflicts (yours kept)",
    ),
    (
        EXIT_USAGE,
        "a usage or definition error, or a `confirm: true` call not allowed (declined, Ctrl-C"
        " or end of input at its prompt; no terminal and no --yes): `error: ...` on stderr,"
        " nothing was run",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)
