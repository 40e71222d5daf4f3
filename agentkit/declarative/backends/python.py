"""The Python-callable backend: ``backend: {python: "package.module:function"}``."""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
import sys
import sysconfig
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from agentkit.declarative.backends.base import BackendContext
from agentkit.declarative.problems import Location, Problems
from agentkit.toolschema import ToolSchema

__all__ = ["PythonBackend", "parse_python_backend"]

_DOTTED: Final = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_REFERENCE: Final = re.compile(rf"({_DOTTED}):({_DOTTED})")
_REFUSED_MODULES: Final = (
    frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names) | {"agentkit"}
)
_FIX: Final = "point the reference at a plain function (def or async def) in your own module"


class PythonBackend:
    """Calls ``function(**inputs)`` -- plus ``credentials=`` when it takes that parameter.

    What the function raises is left to the executor, which keeps the type and
    redacts the credentials from the message and the whole chain. A function
    that derives a form from a credential registers it with
    ``agentkit.redaction.redact_also`` so that it is redacted too.
    """

    kind: ClassVar[str] = "python"

    def __init__(
        self, reference: str, function: Callable[..., Any], wants_credentials: bool
    ) -> None:
        self.reference = reference
        self._function = function
        self._wants_credentials = wants_credentials
        #: An ``async def`` function: ``call`` returns a coroutine, the tool is async.
        self.is_async = inspect.iscoroutinefunction(function)

    @classmethod
    def parse(cls, raw: Any, context: BackendContext) -> PythonBackend | None:
        if context.inputs is None:  # the signature is checked against the inputs
            return None
        return parse_python_backend(raw, context.inputs, context.location, context.problems)

    @property
    def default_annotations(self) -> dict[str, Any]:
        """None: what a function does cannot be told from its reference."""
        return {}

    def call(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        if self._wants_credentials:
            return self._function(**inputs, credentials=credentials)
        return self._function(**inputs)


def add_python_path(folders: Iterable[str | os.PathLike[str]]) -> None:
    """Let Python backends import from ``folders``: each appended to ``sys.path`` once,
    so searched last. A ``./jinja2.py`` or ``./requests.py`` in one of them must not
    replace an installed package agentkit itself imports. ``sys.path`` is the
    process's own: the folders stay on it after the load."""
    for folder in folders:
        resolved = str(Path(folder).resolve())
        if resolved not in sys.path:
            sys.path.append(resolved)


def parse_python_backend(
    reference: Any, inputs: ToolSchema, location: Location, problems: Problems
) -> PythonBackend | None:
    """Check ``reference`` before importing anything, import it, and check its signature."""
    if not isinstance(reference, str):
        problems.add(location, "expected 'package.module:function'")
        return None
    match = _REFERENCE.fullmatch(reference)
    if match is None:
        problems.add(
            location,
            f"invalid reference {reference!r}: expected 'package.module:function' "
            "(dotted Python names, one ':')",
        )
        return None
    module_name, attribute_path = match.groups()
    parts = [*module_name.split("."), *attribute_path.split(".")]
    dunder = next((part for part in parts if part.startswith("__")), None)
    if dunder is not None:
        problems.add(location, f"invalid reference {reference!r}: '{dunder}' is a dunder name")
        return None
    top = module_name.split(".")[0]
    if top in _REFUSED_MODULES:
        problems.add(
            location,
            f"'{top}' is a standard-library module; a Python backend must be your own code",
        )
        return None
    try:
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        problems.add(
            location,
            f"cannot import '{module_name}': {exc}; put its folder on the Python path "
            "(load_tools(..., python_path=[FOLDER]), or agentkit --python-path FOLDER)",
        )
        return None
    except Exception as exc:
        problems.add(location, f"importing '{module_name}' raised {type(exc).__name__}: {exc}")
        return None
    for name in attribute_path.split("."):
        if not hasattr(target, name):
            problems.add(location, f"'{module_name}' has no attribute '{attribute_path}'")
            return None
        target = getattr(target, name)
    if not callable(target):
        problems.add(location, f"'{reference}' is not callable")
        return None
    refusal = _refusal(target)
    if refusal is not None:
        problems.add(location, f"'{reference}' {refusal}; {_FIX}")
        return None
    return _check_signature(reference, target, inputs, location, problems)


def _refusal(target: Any) -> str | None:
    """Why the object a reference resolves to cannot be a backend; ``None`` when it can.

    The check is on the object that will be called, not on the path that names
    it: ``some.module:os.system`` names a third-party module but calls the
    standard library. Only a Python function (or a method bound to one) whose
    code lives outside the standard library and agentkit qualifies; builtins, C
    functions, classes, ``functools.partial`` objects and other callables are
    refused, because what they run cannot be told from their name.
    """
    function = target.__func__ if inspect.ismethod(target) else target
    if not inspect.isfunction(function):
        kind = type(target)
        return f"resolves to a {kind.__module__}.{kind.__qualname__} object, not a Python function"
    module = function.__module__ or ""
    name = f"{module}.{function.__qualname__}"
    top = module.partition(".")[0]
    if top in _REFUSED_MODULES:
        owner = "agentkit's own code" if top == "agentkit" else "in the standard library"
        return f"resolves to {name}, which is {owner}"
    filename = function.__code__.co_filename
    if filename.startswith("<"):
        return f"resolves to {name}, whose code has no source file ({filename})"
    if _is_standard_library(filename):
        return f"resolves to {name}, whose code is in the standard library ({filename})"
    return None


@functools.cache
def _standard_folders() -> list[Path]:
    paths = sysconfig.get_paths()
    folders = {Path(paths[key]).resolve() for key in ("stdlib", "platstdlib")}
    folders.add(Path(__file__).resolve().parent.parent)  # agentkit itself
    return sorted(folders)


def _is_standard_library(filename: str) -> bool:
    """True for a file of the standard library or agentkit (installed packages are not)."""
    path = Path(filename).resolve()
    for folder in _standard_folders():
        if path.is_relative_to(folder):
            inside = path.relative_to(folder).parts
            # site-packages lives inside the standard library's folder in many installs.
            return not inside or inside[0] not in ("site-packages", "dist-packages")
    return False


def _check_signature(
    reference: str,
    function: Callable[..., Any],
    inputs: ToolSchema,
    location: Location,
    problems: Problems,
) -> PythonBackend | None:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        problems.add(location, f"cannot read the signature of '{reference}'")
        return None
    parameters = signature.parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    by_keyword = {
        name
        for name, p in parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    before = len(problems)
    for name in inputs.names:
        if name not in by_keyword and not takes_kwargs:
            problems.add(
                location,
                f"'{reference}' does not accept the declared input '{name}' "
                "(add a parameter of that name, or **kwargs)",
            )
    for name, p in parameters.items():
        if p.kind is p.POSITIONAL_ONLY and p.default is p.empty:
            problems.add(location, f"'{reference}' has a positional-only parameter '{name}'")
        required = p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        if required and name not in inputs and name != "credentials":
            problems.add(
                location,
                f"'{reference}' requires '{name}', which is not a declared input",
            )
    if len(problems) > before:
        return None
    return PythonBackend(reference, function, "credentials" in by_keyword)
