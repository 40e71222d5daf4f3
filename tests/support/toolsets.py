"""A catalog with toolsets, for the toolset tests of the loader, the command and the server.

``CATALOG`` is five tools of two domains (``tags: {domain: ...}``), each a Python
backend that says which tool ran (``named``); ``TOOLSETS`` declares three sets over
them: ``triage`` (names, a glob, a tag, an exclusion, deferred members), ``wiki`` (a
tag) and ``readers`` (a glob; ``list_issues`` is in all but ``wiki``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def named(tool: str) -> dict[str, Any]:
    """What each catalog tool answers: its own name."""
    return {"ran": tool}


def _tool(name: str, domain: str) -> str:
    return f"""\
name: {name}
version: 1.0.0
description: The {name.replace("_", " ")} tool.
tags: {{domain: {domain}}}
input_schema: {{parameters: [{{name: tool, type: string, required: false, default: {name}}}]}}
output_schema: {{parameters: [{{name: ran, type: string}}]}}
backend: {{python: "tests.support.toolsets:named"}}
"""


CATALOG = "---\n".join(
    _tool(name, domain)
    for name, domain in (
        ("get_issue", "github"),
        ("list_issues", "github"),
        ("issue_delete", "github"),
        ("list_pages", "wiki"),
        ("edit_page", "wiki"),
    )
)

TOOLSETS = """\
toolset: triage
description: What the triage agent may use.
tools:
  - get_issue
  - "list_*"
  - {tags: {domain: github}}
exclude: ["*_delete"]
deferred: ["list_*"]
---
toolset: wiki
tools: ["tag:domain=wiki"]
---
toolset: readers
description: Everything that only reads.
tools: ["get_*", "list_*"]
"""

#: What each set holds, in the catalog's order.
HOLDS = {
    "triage": ["get_issue", "list_issues", "list_pages"],
    "wiki": ["list_pages", "edit_page"],
    "readers": ["get_issue", "list_issues", "list_pages"],
}
#: What each set lists up front: its tools, less the deferred, and the search tool
#: that finds those.
LISTED = {**HOLDS, "triage": ["get_issue", "search_tools"]}
ALL_TOOLS = ["get_issue", "list_issues", "issue_delete", "list_pages", "edit_page"]


def write_catalog(folder: Path, toolsets: str = TOOLSETS) -> Path:
    """``folder`` with ``tools.yaml`` (the catalog) and ``sets.yaml`` (``toolsets``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tools.yaml").write_text(CATALOG)
    (folder / "sets.yaml").write_text(toolsets)
    return folder
