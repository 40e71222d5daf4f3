"""What the template front end and its Jinja2 side share: the caps, the errors, the syntax.

``agentkit.declarative.templates`` compiles and renders definition templates and
hands the ones that need Jinja2 to ``agentkit.declarative.sandbox``, whose
run-time checks live in ``agentkit.declarative.limits``. All three use the
names here, and this module imports none of them, so they form a line, not a
circle.
"""

from __future__ import annotations

import re
from typing import Final

from agentkit.toolerrors import AgentKitError

__all__ = [
    "DELIMITERS",
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
#: A template that is one ``{{ ... }}`` (the group: what is inside).
SINGLE_EXPRESSION: Final = re.compile(r"\{\{(.*)\}\}", re.DOTALL)

Reference = tuple[str, str | None]  # (root, first key) -- the key None when computed


class TemplateRenderError(AgentKitError):
    """A template failed while rendering (a missing key, a refused operation, its deadline).

    ``field`` is the definition field the template fills (``backend.http.query.q``),
    set once the error leaves ``Template.render``; ``reason`` says what went wrong.
    """

    def __init__(self, reason: str, *, field: str | None = None) -> None:
        self.reason = reason
        self.field = field
        super().__init__(f"{field}: {reason}" if field else reason)


class MissingValue(TemplateRenderError):
    """A lookup found nothing: ``walked`` (``response.json``, or ``a value`` when it
    was computed) has no key or item ``step``. One wording, whoever renders."""

    def __init__(self, walked: str, step: str | int) -> None:
        self.walked = walked
        self.step = step
        if isinstance(step, int):
            super().__init__(f"{walked} has no item [{step}]")
        else:
            super().__init__(f"{walked} has no key '{step}'")


class TemplateSyntaxProblem(Exception):
    """A template is broken: bad syntax, or an operation refused at load time."""


def unknown_root(name: str, allowed: frozenset[str]) -> str:
    """The problem for a template variable ``name`` that is none of ``allowed``."""
    choices = " and ".join(f"'{root}'" for root in sorted(allowed))
    return f"unknown variable '{name}'; this template can use {choices}"
