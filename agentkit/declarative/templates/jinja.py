"""Definition templates through Jinja2: checked at load time, compiled, rendered.

``check`` parses a template once, refuses what the sandbox does not allow
(``{% macro %}``, ``{% include %}``, recursion, ...) and lists what it reads;
``compile_source`` and ``render`` run it in the sandbox's environment
(``sandbox.ENVIRONMENT``) within the call's deadline, a missing value said in
agentkit's words (``MissingValue``).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

import jinja2
from jinja2 import meta, nodes

from agentkit.declarative.templates import limits
from agentkit.declarative.templates.base import (
    DELIMITERS,
    MAX_OUTPUT_CHARS,
    SINGLE_EXPRESSION,
    MissingValue,
    Reference,
    TemplateRenderError,
    TemplateSyntaxProblem,
    unknown_root,
)
from agentkit.declarative.templates.sandbox import ENVIRONMENT, GLOBALS, REFUSED_FILTERS

__all__ = ["Rendering", "check", "compile_source", "constants", "plain_paths", "render"]

_REFUSED_STATEMENTS: Final[dict[type[nodes.Node], str]] = {
    nodes.Macro: "{% macro %}",
    nodes.CallBlock: "{% call %}",
    nodes.FilterBlock: "{% filter %}",
    nodes.AssignBlock: "{% set %}...{% endset %}",
    nodes.Block: "{% block %}",
    nodes.Extends: "{% extends %}",
    nodes.Include: "{% include %}",
    nodes.Import: "{% import %}",
    nodes.FromImport: "{% from ... import %}",
    nodes.NSRef: "{% set namespace.attribute %}",
}


@functools.lru_cache(maxsize=4096)
def check(source: str, roots: frozenset[str]) -> tuple[str, frozenset[Reference]]:
    """Parse ``source`` and check it; its kind ("expression" or "text") and references.

    Raises ``TemplateSyntaxProblem`` for bad syntax, a refused filter, or a
    variable that is neither a root nor a Jinja global. Cached by source text:
    a template many definitions share is parsed once.
    """
    allowed = roots
    stripped = source.strip()
    single = SINGLE_EXPRESSION.fullmatch(stripped)
    is_expression = single is not None and not any(
        delimiter in single.group(1) for delimiter in (*DELIMITERS, "}}")
    )
    try:
        tree = ENVIRONMENT.parse(stripped if is_expression else source)
        _refuse_statements(tree)
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
            raise TemplateSyntaxProblem(unknown_root(name, allowed))
    return ("expression" if is_expression else "text"), references


@functools.lru_cache(maxsize=4096)
def constants(source: str) -> frozenset[str]:
    """The text of every constant ``source`` writes: its string and number literals
    (numbers as ``str()`` gives them) and its text outside the tags. ``source`` has
    passed ``check``."""
    stripped = source.strip()
    single = SINGLE_EXPRESSION.fullmatch(stripped)
    tree = ENVIRONMENT.parse(stripped if single is not None else source)
    found: set[str] = set()
    for node in tree.find_all((nodes.Const, nodes.TemplateData)):
        if isinstance(node, nodes.TemplateData):
            value: Any = node.data
        elif isinstance(node, nodes.Const):
            value = node.value
        if isinstance(value, str) or (
            isinstance(value, (int, float)) and not isinstance(value, bool)
        ):
            found.add(str(value))
    return frozenset(found)


def _refuse_statements(tree: nodes.Template) -> None:
    """Refuse, with its line, what templates may not use (see the module docstring)."""
    kinds: tuple[type[nodes.Node], ...] = (nodes.Filter, nodes.For, *_REFUSED_STATEMENTS)
    for node in tree.find_all(kinds):
        line = f" (line {node.lineno})"
        if isinstance(node, nodes.Filter):
            if node.name in REFUSED_FILTERS:
                raise TemplateSyntaxProblem(
                    f"the '{node.name}' filter is not allowed in templates{line}"
                )
        elif isinstance(node, nodes.For):
            if node.recursive:
                raise TemplateSyntaxProblem(
                    f"{{% for ... recursive %}} is not allowed in templates{line}"
                )
        else:
            what = _REFUSED_STATEMENTS[type(node)]
            raise TemplateSyntaxProblem(f"{what} is not allowed in templates{line}")


#: A compiled template: its value in a context (unbounded: ``render`` sets the budget).
Rendering = Callable[[Mapping[str, Any]], Any]


# Compiled code is a few KiB a template; each template keeps its own, so
# this cache only lets equal texts share it and need not hold many.
@functools.lru_cache(maxsize=512)
def compile_source(kind: str, source: str) -> Rendering:
    """``source`` compiled by Jinja as a template of ``kind`` ("expression" or "text").

    Cached by source text, so tools that share a template share its code. The
    source has passed ``check``; raises ``TemplateRenderError`` should Jinja still refuse it.
    """
    try:
        if kind == "expression":
            inner = SINGLE_EXPRESSION.fullmatch(source.strip())
            assert inner is not None  # kind "expression" was decided by this match
            expression = ENVIRONMENT.compile_expression(inner.group(1), undefined_to_none=False)
            return functools.partial(_evaluate, expression)
        return functools.partial(_render_capped, ENVIRONMENT.from_string(source))
    except jinja2.TemplateError as exc:
        raise TemplateRenderError(_describe(exc)) from exc


def render(rendering: Rendering, context: Mapping[str, Any], deadline: float | None = None) -> Any:
    """The value of a compiled template in ``context``.

    ``deadline`` is a ``time.monotonic()`` value; without one the render stops
    after ``limits.MAX_RENDER_SECONDS``. Raises ``TemplateRenderError``.
    """
    try:
        with limits.budget(deadline):
            return rendering(context)
    except TemplateRenderError:
        raise
    except jinja2.UndefinedError as exc:
        raise _missing(exc) from exc
    except jinja2.TemplateError as exc:
        raise TemplateRenderError(_describe(exc)) from exc
    except RecursionError:
        raise TemplateRenderError("the value nests too deeply to render") from None
    # What a filter or method raises for the value it is given (an argument's or an
    # answer's): truncate asserts on its length, dictsort reads .items() of a string.
    except (
        ArithmeticError,
        AssertionError,
        AttributeError,
        LookupError,
        TypeError,
        ValueError,
    ) as exc:
        raise TemplateRenderError(f"{type(exc).__name__}: {exc}") from exc


def _evaluate(expression: Callable[..., Any], context: Mapping[str, Any]) -> Any:
    value = expression(**context)
    if isinstance(value, jinja2.Undefined):
        value._fail_with_undefined_error()  # raises Jinja's UndefinedError, naming the value
    if callable(value):
        raise TemplateRenderError(
            "the expression gives a function, not a value; call it, or use a key"
        )
    if isinstance(value, str) and len(value) > MAX_OUTPUT_CHARS:
        raise TemplateRenderError(f"the value is over {MAX_OUTPUT_CHARS} characters")
    return value


def _render_capped(template: jinja2.Template, context: Mapping[str, Any]) -> str:
    pieces: list[str] = []
    size = 0
    for piece in template.generate(context):
        size += len(piece)
        if size > MAX_OUTPUT_CHARS:
            raise TemplateRenderError(f"the rendered text is over {MAX_OUTPUT_CHARS} characters")
        pieces.append(piece)
    return "".join(pieces)


# How StrictUndefined words a failed lookup: "'dict object' has no attribute 'title'",
# "list object has no element 5".
_NO_ATTRIBUTE: Final = re.compile(r"has no attribute ('.*'|\".*\")$", re.DOTALL)
_NO_ELEMENT: Final = re.compile(r"has no element (-?\d+)$")


def _missing(exc: jinja2.UndefinedError) -> TemplateRenderError:
    """Jinja's failed lookup in the one wording (``a value has no key 'title'``); the
    template names the value when a plain path of its own is to blame."""
    message = exc.message or ""
    if match := _NO_ATTRIBUTE.search(message):
        return MissingValue("a value", ast.literal_eval(match.group(1)))
    if match := _NO_ELEMENT.search(message):
        return MissingValue("a value", int(match.group(1)))
    return TemplateRenderError(f"undefined value: {message}")


def plain_paths(source: str) -> Iterator[tuple[str, tuple[str | int, ...]]]:
    """Each longest ``name.key[0]['k']`` lookup chain in the template ``source``."""
    tree = ENVIRONMENT.parse(source)
    lookups: list[nodes.Getattr | nodes.Getitem] = list(
        tree.find_all((nodes.Getattr, nodes.Getitem))
    )
    inner = {id(node.node) for node in lookups}
    for node in lookups:
        if id(node) in inner:
            continue
        steps: list[str | int] = []
        current: nodes.Node = node
        while isinstance(current, (nodes.Getattr, nodes.Getitem)):
            if isinstance(current, nodes.Getattr):
                steps.append(current.attr)
            elif isinstance(current.arg, nodes.Const) and type(current.arg.value) in (str, int):
                steps.append(current.arg.value)
            else:
                break  # a computed key: not a plain path
            current = current.node
        if isinstance(current, nodes.Name):
            yield current.name, tuple(reversed(steps))


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
