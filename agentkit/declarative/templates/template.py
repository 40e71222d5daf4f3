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
value larger than ``MAX_OUTPUT_CHARS`` or run past its deadline
(``agentkit.declarative.templates.sandbox`` lists how). Values reach templates only as
data: an argument ``{{ 7*7 }}`` stays those seven characters.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, final

from agentkit.declarative.templates.base import (
    DELIMITER_PATTERN,
    MAX_OUTPUT_CHARS,
    MAX_RANGE,
    MissingValue,
    Reference,
    TemplateRenderError,
    TemplateSyntaxProblem,
    unknown_root,
)

if TYPE_CHECKING:
    from agentkit.declarative.templates import jinja

__all__ = [
    "MAX_OUTPUT_CHARS",
    "MAX_RANGE",
    "Template",
    "TemplateRenderError",
    "TemplateSyntaxProblem",
    "compile_template",
]

_IDENT = r"[A-Za-z][A-Za-z0-9_]*"
_STEP = rf"\s*(?:\.\s*{_IDENT}|\[\s*(?:-?\d+|'[^'\\]*'|\"[^\"\\]*\")\s*\])"
_PATH = re.compile(rf"\{{\{{\s*({_IDENT}(?:{_STEP})*)\s*\}}\}}")
_STEP_PARTS = re.compile(rf"\.\s*({_IDENT})|\[\s*(-?\d+|'[^'\\]*'|\"[^\"\\]*\")\s*\]")
_SPAN = re.compile(r"\{\{.*?\}\}", re.DOTALL)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _Path:
    root: str
    steps: tuple[str | int, ...]
    text: str


class Template:
    """One compiled template; ``render(context)`` gives its value."""

    __slots__ = (
        "_compiled",
        "_literals",
        "_path",
        "_pieces",
        "field",
        "kind",
        "references",
        "source",
    )

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
        self._compiled: jinja.Rendering | None = None
        self._literals: frozenset[str] | None = None

    @property
    def is_literal(self) -> bool:
        return self.kind == "literal"

    @property
    def literals(self) -> frozenset[str]:
        """The text of every constant the template writes (its text outside ``{{ }}``,
        string and number literals, the keys of a plain path): the strings a
        rendered value may hold that no variable gave it. Worked out on first use."""
        if self._literals is None:
            if self.kind == "literal":
                found = frozenset({self.source})
            elif self._pieces is not None:
                found = frozenset(
                    text
                    for piece in self._pieces
                    for text in ((piece,) if isinstance(piece, str) else map(str, piece.steps))
                )
            elif self._path is not None:
                found = frozenset(map(str, self._path.steps))
            else:
                from agentkit.declarative.templates import jinja

                found = jinja.constants(self.source)
            self._literals = found
        return self._literals

    def render(self, context: Mapping[str, Any], *, deadline: float | None = None) -> Any:
        """The template's value in ``context``; raises ``TemplateRenderError`` naming the field.

        ``deadline`` (a ``time.monotonic()`` value) bounds the time Jinja may
        spend; plain paths and literal text need no bound.
        """
        try:
            return self._render(context, deadline)
        except TemplateRenderError as exc:
            if exc.field is not None:
                raise
            raise TemplateRenderError(exc.reason, field=self.field) from exc.__cause__

    def _render(self, context: Mapping[str, Any], deadline: float | None) -> Any:
        if self.kind == "literal":
            return self.source
        if self._path is not None:
            value = _resolve(self._path, context)
            if value is not _SANDBOX:
                return value
        if self._pieces is not None:
            text = _join(self._pieces, context)
            if text is not None:
                return text
        from agentkit.declarative.templates import jinja

        if self._compiled is None:
            # Shared by every template of the same source: Jinja compiles each text once.
            self._compiled = jinja.compile_source(self.kind, self.source)
        try:
            return jinja.render(self._compiled, context, deadline)
        except MissingValue as exc:
            raise self._name_missing(exc, context) from exc.__cause__

    def _name_missing(self, exc: MissingValue, context: Mapping[str, Any]) -> MissingValue:
        """Jinja's failed lookup, named by the plain path of this template that failed
        at the same step (``response.json.items[0].title``); else as it came."""
        if exc.walked != "a value":
            return exc
        from agentkit.declarative.templates import jinja

        for root, steps in jinja.plain_paths(self.source):
            if root not in context:
                continue
            try:
                _resolve(_Path(root=root, steps=steps, text=""), context)
            except MissingValue as found:
                if found.step == exc.step:
                    return found
            except TemplateRenderError:  # response.json of a body that is not JSON, say
                continue
        return exc

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
                raise MissingValue(walked, step)
            walked += f"[{step}]"
            continue
        if isinstance(value, Mapping):
            if step not in value:
                raise MissingValue(walked, step)
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
    return _Path(root=root.group(0), steps=tuple(steps), text=" ".join(expression.split()))


def compile_template(source: str, field: str, roots: Iterable[str]) -> Template:
    """Parse ``source``, which may use the variables ``roots``.

    Raises ``TemplateSyntaxProblem`` for bad syntax or a variable that is neither
    a root nor a Jinja global; the caller checks ``references`` against what
    the definition declares. Templates are values, so one is shared by every
    definition that has the same text in the same field (most tools of a set
    do): a large set loads faster and keeps less.
    """
    if "{" not in source or DELIMITER_PATTERN.search(source) is None:
        return Template(source, field, "literal", frozenset())
    return _compile(source, field, _allowed(roots))


_ALLOWED: Final[dict[tuple[str, ...], frozenset[str]]] = {}


def _allowed(roots: Iterable[str]) -> frozenset[str]:
    """``roots`` as a set; one set per tuple of roots (the callers pass a few constants)."""
    if type(roots) is not tuple:
        return frozenset(roots)
    allowed = _ALLOWED.get(roots)
    if allowed is None:
        allowed = frozenset(roots)
        if len(_ALLOWED) < 64:
            _ALLOWED[roots] = allowed
    return allowed


@functools.lru_cache(maxsize=16_384)
def _compile(source: str, field: str, allowed: frozenset[str]) -> Template:
    path = _parse_path(source)
    if path is not None:
        if path.root not in allowed:
            raise TemplateSyntaxProblem(unknown_root(path.root, allowed))
        first = path.steps[0] if path.steps else None
        key = first if isinstance(first, str) else None
        return Template(source, field, "expression", frozenset({(path.root, key)}), path)

    pieces = _split_plain(source)
    if pieces is not None:
        paths = [piece for piece in pieces if isinstance(piece, _Path)]
        for piece in paths:
            if piece.root not in allowed:
                raise TemplateSyntaxProblem(unknown_root(piece.root, allowed))
        references = frozenset(
            (
                piece.root,
                piece.steps[0] if piece.steps and isinstance(piece.steps[0], str) else None,
            )
            for piece in paths
        )
        return Template(source, field, "text", references, pieces=pieces)

    from agentkit.declarative.templates import jinja  # Jinja2, only for templates that need it

    kind, references = jinja.check(source, allowed)
    return Template(source, field, kind, references)
