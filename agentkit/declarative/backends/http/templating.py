"""Templates of an HTTP definition compiled once and their references checked.

``TemplateContext`` is what parsing a ``backend.http`` knows of the definition around
it (its inputs, outputs and declared credentials): every template is compiled there,
once per text, and each ``inputs.X``, ``credentials.X`` and ``response.X`` it reads is
checked against the definition, with a hint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from agentkit.declarative.environment import LiteralText
from agentkit.declarative.problems import Location, Problems, value_kind
from agentkit.declarative.templates import Template, TemplateSyntaxProblem, compile_template
from agentkit.problem import did_you_mean
from agentkit.toolschema import ToolSchema

__all__ = ["MAX_COMPILED", "RESPONSE_FIELDS", "TemplateContext"]

RESPONSE_FIELDS: Final = ("status", "headers", "json", "text")

#: The most compiled templates remembered across definitions (then it starts over).
MAX_COMPILED: Final = 16_384
# Each is a value, shared by every definition with the same text, roots and location.
_COMPILED: dict[tuple[str, tuple[str, ...], Location], Template] = {}


class TemplateContext:
    """What template checks need to know about the definition being parsed."""

    def __init__(
        self,
        inputs: ToolSchema | None,
        outputs: ToolSchema,
        credentials: Sequence[str],
        problems: Problems,
    ) -> None:
        self.inputs = inputs
        self.outputs = outputs
        self.credentials = tuple(credentials)
        self._credential_set = frozenset(credentials)  # looked up once per template reference
        # Made once: hints are remembered by the identity of the names they choose from.
        self._input_names = inputs.names if inputs is not None else ()
        self.problems = problems
        self._compiled: dict[tuple[str, tuple[str, ...]], Template | TemplateSyntaxProblem] = {}

    def template(self, raw: str, location: Location, roots: Sequence[str]) -> Template | None:
        # Compiled once per text: aliases can repeat one anchored mapping of
        # templates many times, and Jinja's parse is the costly part of loading.
        # A repeat keeps the field of the first use: it is the same YAML node.
        text_and_roots = (raw, tuple(roots))
        compiled = self._compiled.get(text_and_roots)
        if compiled is None:
            # The tools of a set repeat the same templates in the same places: found
            # by text, roots and place, no field is joined and nothing compiled.
            placed = (raw, text_and_roots[1], location)
            compiled = _COMPILED.get(placed)
            if compiled is None:
                try:
                    compiled = compile_template(raw, ".".join(map(str, location)), roots)
                except TemplateSyntaxProblem as exc:
                    compiled = exc
                else:
                    if len(_COMPILED) >= MAX_COMPILED:
                        _COMPILED.clear()
                    _COMPILED[placed] = compiled
            self._compiled[text_and_roots] = compiled
        if isinstance(compiled, TemplateSyntaxProblem):
            self.problems.add(location, str(compiled))
            return None
        template = compiled
        for root, key in template.references:
            self._check_reference(root, key, location)
        return template

    def _check_reference(self, root: str, key: str | None, location: Location) -> None:
        if key is None:
            return
        if root == "inputs" and self.inputs is not None and key not in self.inputs:
            hint = self.problems.did_you_mean(key, self._input_names, "inputs.")
            self.problems.add(location, f"'inputs.{key}' is not a declared input{hint}")
        elif root == "credentials" and key not in self._credential_set:
            self.problems.add(
                location,
                f"credential '{key}' is used but not declared; add it under 'credentials:'"
                + self.problems.did_you_mean(key, self.credentials),
            )
        elif root == "response" and key not in RESPONSE_FIELDS:
            self.problems.add(
                location,
                f"'response.{key}' does not exist; a response has "
                + ", ".join(RESPONSE_FIELDS)
                + did_you_mean(key, RESPONSE_FIELDS, "response."),
            )

    def value(
        self, raw: Any, location: Location, roots: Sequence[str], *, repeat: bool = False
    ) -> Template | Any:
        """A query, header or form value: a template when a string, else a plain scalar;
        with ``repeat``, also a list of those (a tuple): the name is sent once per item.
        ``LiteralText`` (what ``${VAR}`` became at load time) is sent as it is."""
        if repeat and isinstance(raw, list):
            return tuple(
                self.value(item, (*location, index), roots) for index, item in enumerate(raw)
            )
        if isinstance(raw, LiteralText):
            return str(raw)
        if isinstance(raw, str):
            return self.template(raw, location, roots)
        if raw is None or isinstance(raw, (bool, int, float)):
            return raw
        self.problems.add(location, f"expected a string or number, got {value_kind(raw)}")
        return None

    def credential(self, raw: Any, location: Location) -> str | None:
        if not isinstance(raw, str) or not raw:
            self.problems.add(location, "expected a credential name")
            return None
        if raw not in self._credential_set:
            self.problems.add(
                location,
                f"credential '{raw}' is used but not declared; add it under 'credentials:'"
                + self.problems.did_you_mean(raw, self.credentials),
            )
            return None
        return raw
