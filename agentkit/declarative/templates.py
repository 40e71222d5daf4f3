"""Templates in tool definitions: sandboxed Jinja2, checked at load time.

Every template is parsed when its definition loads: syntax errors and unknown
variables are definition problems, not call failures. Three kinds exist:

- **literal** -- no ``{{``, ``{%`` or ``{#``: the string itself;
- **expression** -- exactly one ``{{ ... }}``: its native value (an int stays an
  int, a list a list). The common case, a plain path such as
  ``{{ inputs.city }}`` or ``{{ response.json.weather[0].main }}``, is resolved
  without Jinja at all (most templates are; PERF_NOTES has the figures);
- **text** -- anything else: rendered by Jinja to a string.

The environment is an ``ImmutableSandboxedEnvironment`` with ``StrictUndefined``
and no autoescape. On top of the sandbox, nothing a template does may build a
value larger than ``MAX_OUTPUT_CHARS``: ``*`` and ``**`` are checked before they
run, ``range`` is capped, width-taking calls refuse huge widths, and string
formatting (``%``, ``str.format``) is refused. Values reach templates only as
data: an argument ``{{ 7*7 }}`` stays those seven characters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import jinja2
from jinja2 import meta, nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from agentkit.toolschema import is_integer

__all__ = [
    "MAX_OUTPUT_CHARS",
    "MAX_RANGE",
    "Template",
    "TemplateRenderError",
    "TemplateSyntaxProblem",
    "compile_template",
]

MAX_OUTPUT_CHARS: Final = 1_000_000
MAX_RANGE: Final = 10_000
_MAX_POWER_BITS: Final = 4096

_DELIMITERS = ("{{", "{%", "{#")
_IDENT = r"[A-Za-z][A-Za-z0-9_]*"
_STEP = rf"\s*(?:\.\s*{_IDENT}|\[\s*(?:-?\d+|'[^'\\]*'|\"[^\"\\]*\")\s*\])"
_PATH = re.compile(rf"\{{\{{\s*({_IDENT}(?:{_STEP})*)\s*\}}\}}")
_STEP_PARTS = re.compile(rf"\.\s*({_IDENT})|\[\s*(-?\d+|'[^'\\]*'|\"[^\"\\]*\")\s*\]")
_SINGLE = re.compile(r"\{\{(.*)\}\}", re.DOTALL)
_SPAN = re.compile(r"\{\{.*?\}\}", re.DOTALL)

# Filters that can turn a small value into a huge one, or that format strings.
_REFUSED_FILTERS: Final = ("center", "indent", "format", "wordwrap", "pprint", "xmlattr")


class TemplateRenderError(Exception):
    """A template failed while rendering (a missing key, a refused operation)."""


class TemplateSyntaxProblem(Exception):
    """A template is broken: bad syntax, or an operation refused at load time."""


class _Environment(ImmutableSandboxedEnvironment):
    """The sandbox, with size caps and JSON-friendly attribute lookup."""

    intercepted_binops = frozenset(["*", "**", "%"])

    def __init__(self) -> None:
        super().__init__(
            undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
        )
        self.globals["range"] = _capped_range
        for name in _REFUSED_FILTERS:
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


_ENVIRONMENT: Final = _Environment()

#: Names every template may use besides its roots (Jinja's own globals).
_GLOBALS: Final = frozenset(_ENVIRONMENT.globals)

Reference = tuple[str, str | None]  # (root, first key) -- the key None when computed


@dataclass(frozen=True)
class _Path:
    root: str
    steps: tuple[str | int, ...]
    text: str


class Template:
    """One compiled template; ``render(context)`` gives its value."""

    __slots__ = ("_compiled", "_path", "_pieces", "field", "kind", "references", "source")

    def __init__(
        self,
        source: str,
        field: str,
        kind: str,
        references: frozenset[Reference],
        path: _Path | None = None,
        pieces: tuple[str | _Path, ...] | None = None,
    ) -> None:
        self.source = source
        self.field = field
        self.kind = kind
        self.references = references
        self._path = path
        self._pieces = pieces
        self._compiled: Any = None

    @property
    def is_literal(self) -> bool:
        return self.kind == "literal"

    def render(self, context: Mapping[str, Any]) -> Any:
        """The template's value in ``context``; raises ``TemplateRenderError``."""
        if self.kind == "literal":
            return self.source
        if self._path is not None:
            value = _resolve(self._path, context)
            if value is not _SANDBOX:
                return value
        try:
            if self.kind == "expression":
                value = self._expression()(**context)
                if isinstance(value, jinja2.Undefined):
                    value._fail_with_undefined_error()
                if callable(value):
                    raise TemplateRenderError(
                        "the expression gives a function, not a value; call it, or use a key"
                    )
                if isinstance(value, str) and len(value) > MAX_OUTPUT_CHARS:
                    raise TemplateRenderError(f"the value is over {MAX_OUTPUT_CHARS} characters")
                return value
            if self._pieces is not None:
                text = _join(self._pieces, context)
                if text is not None:
                    return text
            return _render_capped(self._text(), context)
        except TemplateRenderError:
            raise
        except jinja2.TemplateError as exc:
            raise TemplateRenderError(_describe(exc)) from exc
        except (ArithmeticError, TypeError, ValueError, LookupError) as exc:
            raise TemplateRenderError(f"{type(exc).__name__}: {exc}") from exc

    # Jinja code is generated on first use: parsing at load time finds every
    # problem, and most templates take the path fast lane and never need code.
    def _expression(self) -> Callable[..., Any]:
        if self._compiled is None:
            inner = _SINGLE.fullmatch(self.source.strip())
            assert inner is not None  # kind "expression" was decided by this match
            self._compiled = _ENVIRONMENT.compile_expression(
                inner.group(1), undefined_to_none=False
            )
        return self._compiled  # type: ignore[no-any-return]

    def _text(self) -> jinja2.Template:
        if self._compiled is None:
            self._compiled = _ENVIRONMENT.from_string(self.source)
        return self._compiled  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"Template({self.field}: {self.source!r})"


def _join(pieces: tuple[str | _Path, ...], context: Mapping[str, Any]) -> str | None:
    """Literal text and plain paths, joined as Jinja would print them; None: ask Jinja."""
    parts = []
    for piece in pieces:
        if isinstance(piece, str):
            parts.append(piece)
            continue
        value = _resolve(piece, context)
        if value is _SANDBOX:
            return None
        parts.append(str(value))
    text = "".join(parts)
    if len(text) > MAX_OUTPUT_CHARS:
        raise TemplateRenderError(f"the rendered text is over {MAX_OUTPUT_CHARS} characters")
    return text


def _split_plain(source: str) -> tuple[str | _Path, ...] | None:
    """``source`` as literal text and plain ``{{ path }}`` pieces, or None when it is more."""
    if "{%" in source or "{#" in source:
        return None
    pieces: list[str | _Path] = []
    position = 0
    for match in _SPAN.finditer(source):
        path = _parse_path(match.group(0))
        if path is None:
            return None
        if match.start() > position:
            pieces.append(source[position : match.start()])
        pieces.append(path)
        position = match.end()
    rest = source[position:]
    if "{{" in rest or "}}" in rest:
        return None
    if rest:
        pieces.append(rest)
    return tuple(pieces)


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


_SANDBOX: Final = object()  # _resolve's answer when a path needs the full sandbox


def _resolve(path: _Path, context: Mapping[str, Any]) -> Any:
    """A plain path through keys, indexes and ``TEMPLATE_ATTRIBUTES``; else ``_SANDBOX``."""
    value = context[path.root]
    walked = path.root
    for step in path.steps:
        if isinstance(step, int):
            if isinstance(value, (list, tuple)) and -len(value) <= step < len(value):
                value = value[step]
            else:
                raise TemplateRenderError(f"{path.text}: {walked} has no item [{step}]")
            walked += f"[{step}]"
            continue
        if isinstance(value, Mapping):
            if step not in value:
                raise TemplateRenderError(f"{path.text}: {walked} has no key '{step}'")
            value = value[step]
        elif step in getattr(type(value), "TEMPLATE_ATTRIBUTES", ()):
            value = getattr(value, step)
        else:
            # Anything else (a str method, say) is the sandbox's to judge.
            return _SANDBOX
        walked += f".{step}"
    return value


def _parse_path(source: str) -> _Path | None:
    match = _PATH.fullmatch(source.strip())
    if match is None:
        return None
    expression = match.group(1)
    root = re.match(_IDENT, expression)
    assert root is not None
    steps: list[str | int] = []
    for attribute, index in _STEP_PARTS.findall(expression[root.end() :]):
        if attribute:
            steps.append(attribute)
        elif index[0] in "'\"":
            steps.append(index[1:-1])
        else:
            steps.append(int(index))
    return _Path(root.group(0), tuple(steps), " ".join(expression.split()))


def compile_template(source: str, field: str, roots: Iterable[str]) -> Template:
    """Parse ``source``, which may use the variables ``roots``.

    Raises ``TemplateSyntaxProblem`` for bad syntax or a variable that is neither
    a root nor a Jinja global; the caller checks ``references`` against what
    the definition declares.
    """
    if not any(delimiter in source for delimiter in _DELIMITERS):
        return Template(source, field, "literal", frozenset())
    allowed = frozenset(roots)
    path = _parse_path(source)
    if path is not None:
        if path.root not in allowed:
            raise TemplateSyntaxProblem(_unknown_root(path.root, allowed))
        first = path.steps[0] if path.steps else None
        key = first if isinstance(first, str) else None
        return Template(source, field, "expression", frozenset({(path.root, key)}), path)

    pieces = _split_plain(source)
    if pieces is not None:
        paths = [piece for piece in pieces if isinstance(piece, _Path)]
        for piece in paths:
            if piece.root not in allowed:
                raise TemplateSyntaxProblem(_unknown_root(piece.root, allowed))
        references = frozenset(
            (
                piece.root,
                piece.steps[0] if piece.steps and isinstance(piece.steps[0], str) else None,
            )
            for piece in paths
        )
        return Template(source, field, "text", references, pieces=pieces)

    stripped = source.strip()
    single = _SINGLE.fullmatch(stripped)
    is_expression = single is not None and not any(
        delimiter in single.group(1) for delimiter in (*_DELIMITERS, "}}")
    )
    try:
        tree = _ENVIRONMENT.parse(stripped if is_expression else source)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateSyntaxProblem(
            f"template syntax error: {exc.message} (line {exc.lineno})"
        ) from exc
    for refused in tree.find_all(nodes.Filter):
        if refused.name in _REFUSED_FILTERS:
            raise TemplateSyntaxProblem(f"the '{refused.name}' filter is not allowed in templates")
    try:
        undeclared = meta.find_undeclared_variables(tree)
    except jinja2.TemplateError as exc:  # an unknown filter or test, found by Jinja's compiler
        raise TemplateSyntaxProblem(f"template error: {exc.message}") from exc
    for name in sorted(undeclared - _GLOBALS):
        if name not in allowed:
            raise TemplateSyntaxProblem(_unknown_root(name, allowed))
    kind = "expression" if is_expression else "text"
    return Template(source, field, kind, _references(tree, allowed))


def _unknown_root(name: str, allowed: frozenset[str]) -> str:
    choices = " and ".join(f"'{root}'" for root in sorted(allowed))
    return f"unknown variable '{name}'; this template can use {choices}"


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
