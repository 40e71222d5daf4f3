"""An HTTP backend's outputs: ``output``, per-status ``responses``, and the projection.

- ``output`` maps output parameters to templates or literal values, for
  every accepted reply without a mapping of its own; without it, a JSON-object
  reply is projected onto the declared outputs.
- ``responses`` maps a status (``404``) or a status class (``4XX``) to its
  own mapping; an exact status beats its class. A listed status is accepted
  (it does not fail the call); retries still come first for a status the
  ``retry`` rules resend.
- Every value an output receives is projected onto its declaration at every
  depth (``agentkit.declarative.backends.http.projection``).
- A template that fails names the output it fills, ``output.title`` or
  ``responses.404.title``, and what was missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, final

from agentkit import jsonvalues
from agentkit.declarative.backends.http.projection import Projector, schema_projectors
from agentkit.declarative.problems import Location, Problems
from agentkit.declarative.templates import Template, TemplateRenderError
from agentkit.redaction import excerpt
from agentkit.toolschema import ToolSchema

if TYPE_CHECKING:
    from requests.structures import CaseInsensitiveDict

__all__ = ["OutputMapping", "Outputs", "ResponseView", "parse_outputs"]

#: Output name -> a template, or a literal value (anything but a string).
OutputMapping = tuple[tuple[str, Any], ...]
#: Compiles one output template at a location; None when it has a problem (reported).
CompileTemplate = Callable[[str, Location], Template | None]

_CLASS: Final = re.compile(r"([1-5])[Xx][Xx]")
_CODE: Final = re.compile(r"[1-5][0-9][0-9]")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Outputs:
    """How a reply becomes the tool's output."""

    names: tuple[str, ...] = ()
    default: OutputMapping | None = None
    by_status: Mapping[int, OutputMapping] = field(default_factory=dict)
    by_class: Mapping[int, OutputMapping] = field(default_factory=dict)
    projectors: Mapping[str, Projector] = field(default_factory=dict)

    def accepts(self, status: int) -> bool:
        """True when ``responses`` lists ``status``, exactly or by its class."""
        return status in self.by_status or status // 100 in self.by_class

    def mapping_for(self, status: int) -> tuple[str, OutputMapping | None]:
        """The mapping for a reply of ``status``, and the field its errors start with."""
        if status in self.by_status:
            return f"responses.{status}", self.by_status[status]
        if status // 100 in self.by_class:
            return f"responses.{status // 100}XX", self.by_class[status // 100]
        return "output", self.default

    def render(
        self,
        label: str,
        mapping: OutputMapping,
        context: Mapping[str, Any],
        deadline: float,
    ) -> dict[str, Any]:
        """Each output of ``mapping``, rendered and projected; a failing template
        raises ``TemplateRenderError`` naming ``label.name``."""
        output: dict[str, Any] = {}
        for name, source in mapping:
            if isinstance(source, Template):
                try:
                    value = source.render(context, deadline=deadline)
                except TemplateRenderError as exc:
                    # The field is the output it fills, whichever mapping first used the text.
                    raise TemplateRenderError(exc.reason, field=f"{label}.{name}") from None
            else:
                value = source
            output[name] = self.project(name, value)
        return output

    def project(self, name: str, value: Any) -> Any:
        project = self.projectors.get(name)
        return project(value) if project is not None else value


def parse_outputs(
    raw: Mapping[str, Any],
    location: Location,
    outputs: ToolSchema,
    compile_template: CompileTemplate,
    problems: Problems,
) -> Outputs:
    """``output`` and ``responses`` of the http backend ``raw``, at ``location``."""
    default = None
    if "output" in raw:
        default = _parse_mapping(
            raw["output"], (*location, "output"), outputs, compile_template, problems
        )
    by_status: dict[int, OutputMapping] = {}
    by_class: dict[int, OutputMapping] = {}
    if "responses" in raw:
        _parse_responses(
            raw["responses"],
            (*location, "responses"),
            outputs,
            compile_template,
            problems,
            by_status,
            by_class,
        )
    return Outputs(
        names=outputs.names,
        default=default,
        by_status=by_status,
        by_class=by_class,
        projectors=schema_projectors(outputs),
    )


def _parse_responses(
    raw: Any,
    location: Location,
    outputs: ToolSchema,
    compile_template: CompileTemplate,
    problems: Problems,
    by_status: dict[int, OutputMapping],
    by_class: dict[int, OutputMapping],
) -> None:
    if not isinstance(raw, dict):
        problems.add(
            location,
            "'responses' must map statuses (404) or status classes (4XX) to output mappings",
        )
        return
    seen: dict[str, Any] = {}
    for key, mapping in raw.items():
        here = (*location, key)
        text = str(key).strip() if isinstance(key, (int, str)) and not isinstance(key, bool) else ""
        code = _CODE.fullmatch(text)
        status_class = _CLASS.fullmatch(text)
        if not (code or status_class):
            problems.add(
                here,
                f"{excerpt(repr(key), 40)} is not a status: use a code from 100 to 599 (404) "
                "or a class (4XX)",
            )
            continue
        label = text.upper()
        if label in seen:
            problems.add(here, f"status {label} is listed twice (also as {seen[label]!r})")
            continue
        seen[label] = key
        parsed = _parse_mapping(mapping, here, outputs, compile_template, problems, required=True)
        if parsed is None:
            continue
        if status_class:
            by_class[int(status_class.group(1))] = parsed
        else:
            by_status[int(text)] = parsed


def _parse_mapping(
    raw: Any,
    location: Location,
    outputs: ToolSchema,
    compile_template: CompileTemplate,
    problems: Problems,
    *,
    required: bool = False,
) -> OutputMapping | None:
    """One output mapping; with ``required``, every required output must be given."""
    if not isinstance(raw, dict):
        problems.add(
            location,
            "expected a mapping of output parameters to templates or values, "
            "such as {found: false}",
        )
        return None
    start = len(problems)
    mapped: list[tuple[str, Any]] = []
    for name, source in raw.items():
        here = (*location, name)
        param = outputs.get(name) if isinstance(name, str) else None
        if param is None:
            hint = problems.did_you_mean(str(name), outputs.names)
            problems.add(
                here, f"'{name}' is not an output parameter{hint}; declare it in output_schema"
            )
            continue
        if isinstance(source, str):
            template = compile_template(source, here)
            if template is None:
                continue
            if not template.is_literal:
                mapped.append((name, template))
                continue
        # A literal value is checked now: it is the same in every call.
        if source is None and param.required:
            problems.add(here, f"'{name}' is a required output; null would fail every call")
            continue
        if source is not None:
            _, errors = param.check(source, name)
            if errors:
                problems.add(here, "invalid value: " + "; ".join(errors))
                continue
        mapped.append((name, source))
    if required:
        given = {name for name, _ in mapped} | {name for name in raw if isinstance(name, str)}
        for name in outputs.required_names:
            if name not in given:
                problems.add(
                    location,
                    f"required output '{name}' is not given; map it, or declare it "
                    "'required: false'",
                )
    return tuple(mapped) if len(problems) == start else None


# -- the reply as templates see it --------------------------------------------------------------


class ResponseView:
    """``response`` in output templates: status, headers (case-insensitive), json, text."""

    TEMPLATE_ATTRIBUTES: Final = ("status", "headers", "json", "text")
    __slots__ = ("_body", "_encoding", "_json", "headers", "status")

    def __init__(
        self, status: int, headers: CaseInsensitiveDict[str], body: bytes, encoding: str | None
    ) -> None:
        self.status = status
        self.headers = headers
        self._body = body
        self._encoding = encoding or "utf-8"
        self._json: Any = _UNPARSED

    @property
    def size(self) -> int:
        """The body's length in bytes, as read (decoded)."""
        return len(self._body)

    @property
    def content(self) -> bytes:
        """The body as it came (decoded from any transfer encoding); not for templates."""
        return self._body

    @property
    def text(self) -> str:
        return self._body.decode(self._encoding, errors="replace")

    @property
    def json(self) -> Any:
        if self._json is _UNPARSED:
            try:
                # Strict: a reply nested too deeply, or with NaN, fails this call cleanly.
                self._json = jsonvalues.loads(self._body)
            except ValueError as exc:
                raise TemplateRenderError(f"the response body is not JSON ({exc})") from None
        return self._json


_UNPARSED: Final = object()
