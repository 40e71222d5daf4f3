"""The Jinja2 side of definition templates: the sandbox, its caps, load-time checks, rendering.

Imported only when a definition holds a template that is more than literal text
and plain ``{{ path }}`` pieces -- those ``agentkit.declarative.templates``
handles itself -- so tool sets without such templates never import Jinja2.

The environment is an ``ImmutableSandboxedEnvironment`` with ``StrictUndefined``
and no autoescape. On top of the sandbox, nothing a template does may build a
value larger than ``MAX_OUTPUT_CHARS``: ``*`` and ``**`` are checked before they
run, ``range`` is capped, width-taking calls refuse huge widths, and string
formatting (``%``, ``str.format``) is refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import jinja2
from jinja2 import meta, nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from agentkit.declarative.templates import (
    _DELIMITERS,
    _SINGLE,
    MAX_OUTPUT_CHARS,
    MAX_RANGE,
    Reference,
    TemplateRenderError,
    TemplateSyntaxProblem,
    _unknown_root,
)
from agentkit.toolschema import is_integer

if TYPE_CHECKING:
    from agentkit.declarative.templates import Template

__all__ = ["ENVIRONMENT", "REFUSED_FILTERS", "check", "render"]

_MAX_POWER_BITS: Final = 4096
# Filters that can turn a small value into a huge one, or that format strings.
REFUSED_FILTERS: Final = ("center", "indent", "format", "wordwrap", "pprint", "xmlattr")


class _Environment(ImmutableSandboxedEnvironment):
    """The sandbox, with size caps and JSON-friendly attribute lookup."""

    intercepted_binops = frozenset(["*", "**", "%"])

    def __init__(self) -> None:
        super().__init__(
            undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
        )
        self.globals["range"] = _capped_range
        for name in REFUSED_FILTERS:
            self.filters.pop(name, None)

    def getattr(self, obj: Any, attribute: str) -> Any:
        # `response.json.items` must mean the key "items", not dict.items:
        # definitions address JSON, where a key always wins.
        if isinstance(obj, Mapping) and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            _check_repeat(left, right)
            _check_repeat(right, left)
        elif operator == "**":
            _check_power(left, right)
        elif operator == "%" and isinstance(left, str):
            raise SecurityError(
                "string formatting with '%' is not allowed in templates; join with '~'"
            )
        return super().call_binop(context, operator, left, right)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        # The sandbox hands templates a guarded str.format; it still pads to any
        # width ("{:>999999999}"), so the guarded version refuses outright.
        if super().wrap_str_format(value) is None:
            return None

        def refuse(*args: Any, **kwargs: Any) -> str:
            raise SecurityError("str.format is not allowed in templates; join with '~'")

        return refuse

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        for value in (*args, *kwargs.values()):
            if is_integer(value) and abs(value) > MAX_OUTPUT_CHARS:
                raise SecurityError(
                    f"an argument of {value} is over the limit of {MAX_OUTPUT_CHARS}"
                )
        return super().call(__context, __obj, *args, **kwargs)


def _check_repeat(sequence: Any, count: Any) -> None:
    if (
        isinstance(sequence, (str, list, tuple))
        and is_integer(count)
        and len(sequence) * count > MAX_OUTPUT_CHARS
    ):
        raise SecurityError(
            f"'*' would build a value of {len(sequence) * count} items; "
            f"the limit is {MAX_OUTPUT_CHARS}"
        )


def _check_power(base: Any, exponent: Any) -> None:
    if (
        is_integer(base)
        and is_integer(exponent)
        and abs(base) > 1
        and exponent > 0
        and exponent * math.log2(abs(base)) > _MAX_POWER_BITS
    ):
        raise SecurityError(f"'**' would build a number over {_MAX_POWER_BITS} bits")


def _capped_range(*args: int) -> range:
    values = range(*args)
    if len(values) > MAX_RANGE:
        raise SecurityError(f"range() of {len(values)} items is over the limit of {MAX_RANGE}")
    return values


ENVIRONMENT: Final = _Environment()

#: Names every template may use besides its roots (Jinja's own globals).
GLOBALS: Final = frozenset(ENVIRONMENT.globals)


def check(source: str, roots: frozenset[str]) -> tuple[str, frozenset[Reference]]:
    """Parse ``source`` and check it; its kind ("expression" or "text") and references.

    Raises ``TemplateSyntaxProblem`` for bad syntax, a refused filter, or a
    variable that is neither a root nor a Jinja global.
    """
    allowed = roots
    stripped = source.strip()
    single = _SINGLE.fullmatch(stripped)
    is_expression = single is not None and not any(
        delimiter in single.group(1) for delimiter in (*_DELIMITERS, "}}")
    )
    try:
        tree = ENVIRONMENT.parse(stripped if is_expression else source)
        for refused in tree.find_all(nodes.Filter):
            if refused.name in REFUSED_FILTERS:
                raise TemplateSyntaxProblem(
                    f"the '{refused.name}' filter is not allowed in templates"
                )
        undeclared = meta.find_undeclared_variables(tree)
        references = _references(tree, allowed)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateSyntaxProblem(
            f"template syntax error: {exc.message} (line {exc.lineno})"
        ) from exc
    except jinja2.TemplateError as exc:  # an unknown filter or test, found by Jinja's compiler
        raise TemplateSyntaxProblem(f"template error: {exc.message}") from exc
    except RecursionError:
        # Jinja parses and walks templates recursively, once per nesting level.
        raise TemplateSyntaxProblem(
            "the template nests brackets or blocks too deeply to parse"
        ) from None
    for name in sorted(undeclared - GLOBALS):
        if name not in allowed:
            raise TemplateSyntaxProblem(_unknown_root(name, allowed))
    return ("expression" if is_expression else "text"), references


def render(template: Template, context: Mapping[str, Any]) -> Any:
    """``template``'s value by Jinja (its code made on first use and kept on it)."""
    try:
        if template.kind == "expression":
            if template._compiled is None:
                inner = _SINGLE.fullmatch(template.source.strip())
                assert inner is not None  # kind "expression" was decided by this match
                template._compiled = ENVIRONMENT.compile_expression(
                    inner.group(1), undefined_to_none=False
                )
            value = template._compiled(**context)
            if isinstance(value, jinja2.Undefined):
                value._fail_with_undefined_error()
            if callable(value):
                raise TemplateRenderError(
                    "the expression gives a function, not a value; call it, or use a key"
                )
            if isinstance(value, str) and len(value) > MAX_OUTPUT_CHARS:
                raise TemplateRenderError(f"the value is over {MAX_OUTPUT_CHARS} characters")
            return value
        if template._compiled is None:
            template._compiled = ENVIRONMENT.from_string(template.source)
        return _render_capped(template._compiled, context)
    except TemplateRenderError:
        raise
    except jinja2.TemplateError as exc:
        raise TemplateRenderError(_describe(exc)) from exc
    except (ArithmeticError, TypeError, ValueError, LookupError) as exc:
        raise TemplateRenderError(f"{type(exc).__name__}: {exc}") from exc


def _render_capped(template: jinja2.Template, context: Mapping[str, Any]) -> str:
    pieces: list[str] = []
    size = 0
    for piece in template.generate(context):
        size += len(piece)
        if size > MAX_OUTPUT_CHARS:
            raise TemplateRenderError(f"the rendered text is over {MAX_OUTPUT_CHARS} characters")
        pieces.append(piece)
    return "".join(pieces)


def _describe(exc: jinja2.TemplateError) -> str:
    if isinstance(exc, jinja2.UndefinedError):
        return f"undefined value: {exc.message}"
    return f"{type(exc).__name__}: {exc.message or exc}"


def _references(tree: nodes.Template, roots: frozenset[str]) -> frozenset[Reference]:
    found: set[Reference] = set()
    lookups: list[nodes.Getattr | nodes.Getitem] = list(
        tree.find_all((nodes.Getattr, nodes.Getitem))
    )
    for node in lookups:
        target = node.node
        if not (isinstance(target, nodes.Name) and target.name in roots):
            continue
        if isinstance(node, nodes.Getattr):
            found.add((target.name, node.attr))
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            found.add((target.name, node.arg.value))
        else:
            found.add((target.name, None))
    # A root used whole (``inputs | tojson``) references every key: recorded as None.
    subscripted = {id(node.node) for node in lookups}
    for name in tree.find_all(nodes.Name):
        if name.name in roots and id(name) not in subscripted:
            found.add((name.name, None))
    return frozenset(found)
