"""What the templates' modules share: the caps, the errors, the syntax.

``template`` compiles and renders definition templates and hands the ones that
need Jinja2 to ``jinja``, which runs them in the ``sandbox``'s environment, whose
run-time checks live in ``limits``. All of them use the names here, and this
module imports none of them, so they form a line, not a circle.
"""

from __future__ import annotations

import re
from typing import Final

from agentkit.toolerrors import MissingValue, TemplateRenderError, TemplateSyntaxProblem

__all__ = [
    "DELIMITERS",
    "DELIMITER_PATTERN",
    "MAX_OUTPUT_CHARS",
    "MAX_RANGE",
    "SINGLE_EXPRESSION",
    "MissingValue",
    "Reference",
    "TemplateRenderError",
    "TemplateSyntaxProblem",
    "unknown_root",
]

MAX_OUTPUT_CHARS: Final = 1_000_000
MAX_RANGE: Final = 10_000

#: A string holding none of these is literal text, not a template.
DELIMITERS: Final = ("{{", "{%", "{#")
#: Finds the first of ``DELIMITERS`` (in C: a search, not a loop over them).
DELIMITER_PATTERN: Final = re.compile("|".join(map(re.escape, DELIMITERS)))
#: A template that is one ``{{ ... }}`` (the group: what is inside).
SINGLE_EXPRESSION: Final = re.compile(r"\{\{(.*)\}\}", re.DOTALL)

Reference = tuple[str, str | None]  # (root, first key) -- the key None when computed


def unknown_root(name: str, allowed: frozenset[str]) -> str:
    """The problem for a template variable ``name`` that is none of ``allowed``."""
    choices = " and ".join(f"'{root}'" for root in sorted(allowed))
    return f"unknown variable '{name}'; this template can use {choices}"
