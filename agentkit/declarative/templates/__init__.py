"""Templates in tool definitions: sandboxed Jinja2, checked when a definition loads.

``template`` compiles a definition's strings (most resolve without Jinja at all);
``sandbox`` is the Jinja2 environment the others render in, and ``limits`` what one
render may spend; ``base`` holds what they share.
"""

from agentkit.declarative.templates.template import (
    MAX_OUTPUT_CHARS,
    MAX_RANGE,
    Template,
    TemplateRenderError,
    TemplateSyntaxProblem,
    compile_template,
)

__all__ = [
    "MAX_OUTPUT_CHARS",
    "MAX_RANGE",
    "Template",
    "TemplateRenderError",
    "TemplateSyntaxProblem",
    "compile_template",
]
