"""The sandbox definition templates run in: a Jinja2 environment and the caps on it.

Imported (with ``jinja``, which checks, compiles and renders in it) only when a
definition holds a template that is more than literal text and plain ``{{ path }}``
pieces -- those ``template`` handles itself -- so tool sets without such templates
never import Jinja2.

The environment is an ``ImmutableSandboxedEnvironment`` with ``StrictUndefined``
and no autoescape. Nothing a template does may build a value larger than
``MAX_OUTPUT_CHARS`` or run past its deadline (``agentkit.declarative.templates.limits``
holds the checks):

- Refused at load time: macros, call, filter and block-assignment blocks,
  recursive loops, ``include``/``import``/``extends``, namespaces, the globals
  ``lipsum``, ``cycler``, ``joiner`` and ``namespace``, and the filters in
  ``REFUSED_FILTERS``. With no mutable object and no recursion left, no value
  can grow from one loop iteration to the next.
- Checked as the template runs: every operator (``*``, ``+``, ``**`` before
  they compute; integers over ``MAX_INT_BITS`` refused), ``~``, list, tuple and
  dict literals, every call (str methods that grow a value are estimated first
  or refused) and every filter (estimated from its arguments before it runs,
  its result weighed after). Every loop iteration is counted and every
  operation checks the deadline.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from agentkit.declarative.templates import limits
from agentkit.declarative.templates.base import (
    MAX_OUTPUT_CHARS,
    MAX_RANGE,
    TemplateRenderError,
)
from agentkit.declarative.templates.limits import (
    check_int,
    check_size,
    materialize,
    refuse_over,
    weight,
)
from agentkit.toolschema import is_integer

__all__ = ["ENVIRONMENT", "GLOBALS", "REFUSED_FILTERS", "REFUSED_GLOBALS"]

# Filters that pad, wrap or decorate by an argument-sized amount per line or
# item, or that format strings; templates for API calls do not need them.
REFUSED_FILTERS: Final = (
    "center",
    "indent",
    "format",
    "wordwrap",
    "pprint",
    "xmlattr",
    "urlize",
)
# lipsum builds text of any size; namespace is the only mutable object (and
# with it values could grow across loop iterations); cycler and joiner are
# stateful helpers nobody needs to build a request.
REFUSED_GLOBALS: Final = ("lipsum", "cycler", "joiner", "namespace")
# Filters that return part of their input, a number, or a lazy iterator: their
# input may be any size (a big response), and their result is not a new value.
_VIEW_FILTERS: Final = frozenset(
    {
        "abs", "attr", "count", "d", "default", "first", "float", "int", "items", "last",
        "length", "map", "max", "min", "random", "reject", "rejectattr", "round",
        "select", "selectattr", "sum", "wordcount", "filesizeformat",
    }
)  # fmt: skip
# Methods of str and the other builtins that can build a value out of all
# proportion to their inputs, and that no request template needs.
_REFUSED_METHODS: Final = frozenset(
    {"format", "format_map", "translate", "maketrans", "encode", "expandtabs", "to_bytes"}
)
_BUILTIN_VALUES: Final = (str, bytes, list, tuple, dict, int, float)


class _CodeGenerator(CodeGenerator):
    """Jinja's code generator, routing loops, ``~`` and literals through ``_Environment``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Jinja allows no custom node types, so a for-loop's iterable is marked
        # here and wrapped in a call to guard_loop when it is written out.
        self._loop_iterables: set[int] = set()

    def visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> Any:
        if id(node) not in self._loop_iterables:
            return super().visit(node, *args, **kwargs)
        self._loop_iterables.discard(id(node))
        self.write("environment.guard_loop(")
        super().visit(node, *args, **kwargs)
        self.write(")")
        return None

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        self._loop_iterables.add(id(node.iter))
        super().visit_For(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        # Jinja's own str_join converts and joins in one go; this checks the
        # total length of the pieces before joining them.
        self.write("environment.guard_concat((")
        for piece in node.nodes:
            self.visit(piece, frame)
            self.write(", ")
        self.write("))")

    def visit_Getitem(self, node: nodes.Getitem, frame: Frame) -> None:
        if not isinstance(node.arg, nodes.Slice):
            super().visit_Getitem(node, frame)
            return
        # Jinja writes slices as plain Python; a slice is a copy, so it goes
        # through environment.getitem like any other subscript.
        self.write("environment.getitem(")
        self.visit(node.node, frame)
        self.write(", slice(")
        for index, part in enumerate((node.arg.start, node.arg.stop, node.arg.step)):
            self.write(", " if index else "")
            if part is None:
                self.write("None")
            else:
                self.visit(part, frame)
        self.write("))")

    def _guarded(self, visit: Callable[[Any, Frame], None], node: Any, frame: Frame) -> None:
        self.write("environment.guard_literal(")
        visit(node, frame)
        self.write(")")

    def visit_List(self, node: nodes.List, frame: Frame) -> None:
        self._guarded(super().visit_List, node, frame)

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self._guarded(super().visit_Dict, node, frame)

    def visit_Tuple(self, node: nodes.Tuple, frame: Frame) -> None:
        if node.ctx == "store":  # an assignment target, not a value
            super().visit_Tuple(node, frame)
        else:
            self._guarded(super().visit_Tuple, node, frame)


class _Environment(ImmutableSandboxedEnvironment):
    """The sandbox, with size and time caps and JSON-friendly attribute lookup."""

    code_generator_class = _CodeGenerator
    intercepted_binops = frozenset(["+", "-", "*", "/", "//", "%", "**"])

    def __init__(self) -> None:
        super().__init__(
            undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
        )
        self.globals["range"] = _capped_range
        # `tojson` writes compact JSON, as a query value or header needs it (indented
        # when asked), and no HTML escapes: a definition's JSON goes to an API.
        self.filters["tojson"] = _tojson
        for name in REFUSED_GLOBALS:
            self.globals.pop(name, None)
        for name in REFUSED_FILTERS:
            self.filters.pop(name, None)
        for name, function in list(self.filters.items()):
            self.filters[name] = _guard_filter(name, function)

    def getattr(self, obj: Any, attribute: str) -> Any:
        limits.tick()
        # `response.json.items` must mean the key "items", not dict.items:
        # definitions address JSON, where a key always wins.
        if isinstance(obj, Mapping) and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        limits.tick()
        value = super().getitem(obj, argument)
        # A slice is a copy: it counts towards what the render built.
        return check_size(value, "a slice") if isinstance(argument, slice) else value

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        limits.tick()
        what = f"'{operator}'"
        size = None
        if operator == "*":
            size = _repeat_size(left, right)
            if size is None:
                size = _repeat_size(right, left)
            if is_integer(left) and is_integer(right):
                _check_bits(left.bit_length() + right.bit_length() - 1, what)
        elif operator == "**":
            _check_power(left, right)
        elif operator == "+" and isinstance(left, (str, list, tuple)):
            size = _size(left) + _size(right)
        elif operator == "%" and isinstance(left, str):
            raise SecurityError(
                "string formatting with '%' is not allowed in templates; join with '~'"
            )
        if size is not None:
            refuse_over(size, what)
        result = super().call_binop(context, operator, left, right)
        check_int(result, what)
        if size is not None:
            limits.charge(size, what)
        return result

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        # The sandbox hands templates a guarded str.format; it still pads to any
        # width ("{:>999999999}"), so the guarded version refuses outright.
        if super().wrap_str_format(value) is None:
            return None

        def refuse(*args: Any, **kwargs: Any) -> str:
            raise SecurityError("str.format is not allowed in templates; join with '~'")

        return refuse

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        limits.tick()
        name = getattr(__obj, "__name__", "the function")
        what = f"calling {name}()"
        args = tuple(materialize(value, what) for value in args)
        kwargs = {key: materialize(value, what) for key, value in kwargs.items()}
        for value in (*args, *kwargs.values()):
            if is_integer(value) and abs(value) > MAX_OUTPUT_CHARS:
                raise SecurityError(
                    f"an argument of {value} is over the limit of {MAX_OUTPUT_CHARS}"
                )
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, _BUILTIN_VALUES) and callable(__obj):
            _check_method(owner, name, args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        return result if isinstance(result, Iterator) else check_size(result, what)

    # -- hooks the generated code calls (see _CodeGenerator) --------------------------------

    def guard_loop(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for item in iterable:
            limits.count_iteration()
            yield item

    def guard_concat(self, pieces: tuple[Any, ...]) -> str:
        limits.tick()
        texts = []
        total = 0
        for piece in pieces:
            if not isinstance(piece, str):
                # A value's printed text is bounded by its weight; weigh it first.
                check_size(piece, "'~'")
            text = str(piece)
            total += len(text)
            refuse_over(total, "'~'")
            texts.append(text)
        limits.charge(total, "'~'")
        return "".join(texts)

    def guard_literal(self, value: Any) -> Any:
        limits.tick()
        return check_size(value, f"a {type(value).__name__} literal")


def _repeat_size(sequence: Any, count: Any) -> int | None:
    """The size of ``sequence * count``, or None when that is not a repetition."""
    if not (isinstance(sequence, (str, list, tuple)) and is_integer(count)):
        return None
    if count <= 0:
        return 0
    # The walk may stop as soon as the product is certainly over the cap.
    return _size(sequence, limit=MAX_OUTPUT_CHARS // count + 1) * int(count)


def _size(value: Any, limit: int = MAX_OUTPUT_CHARS) -> int:
    """A string's length, or any other value's weight."""
    return len(value) if isinstance(value, str) else weight(value, limit=limit)


def _check_power(base: Any, exponent: Any) -> None:
    if is_integer(base) and is_integer(exponent) and abs(base) > 1 and exponent > 0:
        _check_bits(exponent * (abs(base).bit_length() - 1), "'**'")


def _check_bits(bits: int, what: str) -> None:
    if bits > limits.MAX_INT_BITS:
        raise TemplateRenderError(f"{what} would build a number over {limits.MAX_INT_BITS} bits")


def _check_method(owner: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse, or estimate before it runs, a builtin method that can grow a value."""
    what = f"{type(owner).__name__}.{name}()"
    if name in _REFUSED_METHODS:
        raise TemplateRenderError(f"{what} is not allowed in templates")
    if name == "join" and isinstance(owner, str) and args:
        refuse_over(_join_size(args[0], owner), what)
    elif name == "replace" and isinstance(owner, str) and len(args) >= 2:
        refuse_over(_replace_size(owner, *args[:3]), what)


def _join_size(items: Any, separator: Any) -> int:
    if not isinstance(separator, str) or not hasattr(items, "__len__"):
        return 0  # the join itself will fail, or has nothing to repeat
    return weight(items) + len(separator) * max(len(items) - 1, 0)


def _replace_size(text: Any, old: Any, new: Any, count: Any = None) -> int:
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)):
        return 0  # the replace itself will fail
    found = text.count(old) if old else len(text) + 1
    if is_integer(count) and count >= 0:
        found = min(found, count)
    return len(text) + found * max(len(new) - len(old), 0)


def _filter_estimate(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """An upper bound of the filter's result size, from its arguments, before it runs."""
    value = args[0] if args else None
    if name == "join":
        return _join_size(value, args[1] if len(args) > 1 else kwargs.get("d", ""))
    if name == "replace":
        return _replace_size(*args[:4])
    if name in ("batch", "slice"):
        count = args[1] if len(args) > 1 else kwargs.get("linecount", kwargs.get("slices"))
        fill = args[2] if len(args) > 2 else kwargs.get("fill_with")
        if isinstance(count, int) and count > 0:
            # Batches add at most one list per item; padding adds up to count fills.
            extra = count * (2 + (weight(fill) if fill is not None else 0))
            return (2 if name == "batch" else 1) * weight(value) + extra
    if name == "tojson":
        indent = args[1] if len(args) > 1 else kwargs.get("indent")
        if isinstance(indent, int) and indent > 0:
            return weight(value, per_level=indent)
    return weight(value)


def _guard_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with the deadline, and the size of what it builds, checked."""
    # Jinja marks filters that take the context, environment or eval context
    # first with this attribute (functools.wraps copies it onto the wrapper).
    skip = 1 if getattr(function, "jinja_pass_arg", None) is not None else 0
    what = f"the '{name}' filter"

    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        limits.tick()
        args = (*args[:skip], *(materialize(value, what) for value in args[skip:]))
        kwargs = {key: materialize(value, what) for key, value in kwargs.items()}
        if name == "sum":
            _check_sum_start(args[skip + 2] if len(args) > skip + 2 else kwargs.get("start", 0))
        if name in _VIEW_FILTERS:
            result = function(*args, **kwargs)
            check_int(result, what)
            return result
        refuse_over(_filter_estimate(name, args[skip:], kwargs), what)
        result = function(*args, **kwargs)
        return result if isinstance(result, Iterator) else check_size(result, what)

    return guarded


def _check_sum_start(start: Any) -> None:
    # Adding lists or strings one by one copies the total each time: quadratic.
    if not isinstance(start, (int, float)):
        raise TemplateRenderError(
            "the 'sum' filter adds numbers; its start must be a number, "
            f"not {type(start).__name__} (join lists with '+')"
        )


def _tojson(value: Any, indent: int | None = None) -> str:
    separators = (",", ":") if indent is None else None
    return json.dumps(value, indent=indent, separators=separators, sort_keys=True)


def _capped_range(*args: int) -> range:
    values = range(*args)
    if len(values) > MAX_RANGE:
        raise SecurityError(f"range() of {len(values)} items is over the limit of {MAX_RANGE}")
    return values


ENVIRONMENT: Final = _Environment()

#: Names every template may use besides its roots (Jinja's own globals).
GLOBALS: Final = frozenset(ENVIRONMENT.globals)
