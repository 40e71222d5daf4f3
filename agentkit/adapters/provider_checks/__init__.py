"""What each LLM provider would refuse or change in a set of tools, found before a request fails.

``check_tools(tools, ["openai-strict", "gemini"])`` exports the tools as agentkit
exports them for each provider (``agentkit.adapters.export``, the same code ``agentkit export``
runs) and checks that output against the provider's documented rules;
``check_document(document, provider)`` checks an exported document already made, or
written by hand. Both return ``ProviderProblem`` values: the tool, the provider, the
path of the field inside the tool's exported entry (``parameters.properties.url.format``),
what is wrong and the fix. An ``error`` is something the provider refuses (the request
fails); a ``warning`` is something it accepts but drops or changes.

The rules are one ``ProviderRules`` record per provider in ``PROVIDER_RULES``; each
limit and keyword list names the page that documents it, and docs/extending.md
("Provider checks") shows them as a table. ``agentkit validate --provider`` prints
the problems and exits 2 on an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.adapters.export import EXPORT_FORMATS, ExportFormat, export_tools
from agentkit.adapters.provider_checks.schemas import (
    SchemaCheck,
    Severity,
    free_form_path,
    gemini_schema,
    object_schema,
    openai_schema,
    openai_strict_schema,
)
from agentkit.problem import did_you_mean
from agentkit.tool import Tool
from agentkit.toolerrors import UsageError

__all__ = [
    "PROVIDERS",
    "PROVIDER_RULES",
    "Limit",
    "ProviderProblem",
    "ProviderRules",
    "check_document",
    "check_tools",
    "parse_providers",
]

#: What strict mode cannot express, by kind: how the warning says it, and the fix.
_FREE_FORM: Final = {
    "dictionary": (
        "a dictionary without declared parameters",
        "declare the dictionary's parameters (parameters: under it)",
    ),
    "list": ("a list without an item type", "declare the list's item type (items: string, say)"),
}

OPENAI_FUNCTIONS: Final = (
    "https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools"
)
OPENAI_TOOL_COUNT: Final = "https://github.com/vishalmysore/Tools4AI/issues/16"
OPENAI_DESCRIPTION: Final = "https://github.com/FoundationAgents/OpenManus/issues/993"
ANTHROPIC_TOOLS: Final = "https://docs.anthropic.com/en/api/messages#body-tools"
GEMINI_DECLARATION: Final = "https://ai.google.dev/api/caching#FunctionDeclaration"
VERTEX_TOOL_COUNT: Final = (
    "https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1beta1/Tool"
)
MCP_TOOLS: Final = "https://modelcontextprotocol.io/specification/2025-11-25/server/tools"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderProblem:
    """One thing a provider would refuse (``error``) or drop or change (``warning``).

    ``tool`` is None for a problem of the whole set (too many tools); ``path`` is the
    field inside the tool's exported entry, dotted (``parameters.properties.url``).
    Not a ``toolerrors.Problem``: it is a finding with a severity, a provider and a fix,
    about an exported entry rather than a file, and most are warnings, not errors.
    """

    provider: str
    tool: str | None
    path: str
    message: str
    fix: str
    severity: Severity

    def __str__(self) -> str:
        subject = f"tool '{self.tool}'" if self.tool is not None else "the tool set"
        return f"{self.provider}: {subject}: {self.path}: {self.message}; fix: {self.fix}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Limit:
    """A documented maximum, how the provider treats more, and where it is documented."""

    most: int
    severity: Severity
    source: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRules:
    """One provider's rules, checked against the export agentkit makes for it."""

    provider: str
    export_format: str  # the ``agentkit.adapters.export`` format whose output is checked
    strict: bool  # whether that export is asked for strict schemas
    entries: Callable[[Any], list[Any]]  # the tool entries of an exported document
    fields: str  # where a tool's fields sit inside its entry ("function." or "")
    schemas: tuple[str, ...]  # the entry's fields that hold a JSON Schema
    schema_check: SchemaCheck
    names_source: str
    max_tools: Limit | None = None
    max_description: Limit | None = None


def _listed(document: Any) -> list[Any]:
    return document if isinstance(document, list) else []


def _gemini_declarations(document: Any) -> list[Any]:
    if isinstance(document, Mapping):
        declarations = document.get("functionDeclarations")
        if isinstance(declarations, list):
            return declarations
    return []


def _openai_rules(provider: str, *, strict: bool, schema_check: SchemaCheck) -> ProviderRules:
    return ProviderRules(
        provider=provider,
        export_format="openai",
        strict=strict,
        entries=_listed,
        fields="function.",
        schemas=("parameters",),
        schema_check=schema_check,
        names_source=OPENAI_FUNCTIONS,
        max_tools=Limit(most=128, severity="error", source=OPENAI_TOOL_COUNT),
        max_description=Limit(most=1024, severity="warning", source=OPENAI_DESCRIPTION),
    )


#: Each provider's rules, by the name ``--provider`` takes.
PROVIDER_RULES: Final[Mapping[str, ProviderRules]] = {
    rules.provider: rules
    for rules in (
        _openai_rules("openai-strict", strict=True, schema_check=openai_strict_schema),
        _openai_rules("openai", strict=False, schema_check=openai_schema),
        ProviderRules(
            provider="anthropic",
            export_format="anthropic",
            strict=False,
            entries=_listed,
            fields="",
            schemas=("input_schema",),
            schema_check=object_schema,
            names_source=ANTHROPIC_TOOLS,
        ),
        ProviderRules(
            provider="gemini",
            export_format="gemini",
            strict=False,
            entries=_gemini_declarations,
            fields="",
            schemas=("parametersJsonSchema",),
            schema_check=gemini_schema,
            names_source=GEMINI_DECLARATION,
            max_tools=Limit(most=128, severity="warning", source=VERTEX_TOOL_COUNT),
        ),
        ProviderRules(
            provider="mcp",
            export_format="mcp",
            strict=False,
            entries=_listed,
            fields="",
            schemas=("inputSchema", "outputSchema"),
            schema_check=object_schema,
            names_source=MCP_TOOLS,
        ),
    )
}
#: The providers ``--provider`` takes (``all`` is every one).
PROVIDERS: Final = tuple(PROVIDER_RULES)


def parse_providers(values: Iterable[str]) -> tuple[str, ...]:
    """The providers named by ``--provider`` values (repeated, comma-separated or ``all``).

    Raises ``UsageError`` for an unknown name, with the closest one when near.
    """
    chosen: list[str] = []
    for value in values:
        for name in filter(None, (part.strip() for part in value.split(","))):
            if name == "all":
                chosen.extend(PROVIDERS)
            elif name in PROVIDER_RULES:
                chosen.append(name)
            else:
                raise UsageError(
                    f"--provider: unknown provider {name!r}{did_you_mean(name, PROVIDERS)}; "
                    f"choose from: {', '.join(PROVIDERS)}, or all"
                )
    return tuple(dict.fromkeys(chosen))


def check_tools(tools: Iterable[Tool], providers: Iterable[str]) -> list[ProviderProblem]:
    """What each of ``providers`` would refuse or change in ``tools``, as agentkit exports them.

    A tool whose name a provider forbids is reported and left out of that provider's
    export (which would refuse it); the others are exported and checked as
    ``check_document`` checks a document. Raises ``UsageError`` for an unknown provider.
    """
    selected = list(tools)
    problems: list[ProviderProblem] = []
    for provider in parse_providers(providers):
        rules = PROVIDER_RULES[provider]
        names = _export_format(rules)
        accepted = []
        for tool in selected:
            problem = _name_problem(rules, names, tool.name)
            if problem is None:
                accepted.append(tool)
            else:
                problems.append(problem)
        exported = export_tools(accepted, rules.export_format, strict=rules.strict)
        problems.extend(_check(rules, exported.document, count=len(selected)))
    return problems


def check_document(document: Any, provider: str) -> list[ProviderProblem]:
    """What ``provider`` would refuse or change in an exported ``document``.

    ``document`` is what ``export_tools(..., PROVIDER_RULES[provider].export_format)``
    makes (its ``.document``), or the same shape written by hand. Raises ``UsageError``
    for a provider that is not one of ``PROVIDERS`` (``all`` is not one here).
    """
    rules = PROVIDER_RULES.get(provider)
    if rules is None:
        raise UsageError(
            f"unknown provider {provider!r}{did_you_mean(provider, PROVIDERS)}; "
            f"choose from: {', '.join(PROVIDERS)}"
        )
    return _check(rules, document, count=None)


def _export_format(rules: ProviderRules) -> ExportFormat:
    chosen = EXPORT_FORMATS.get(rules.export_format)
    assert chosen is not None, rules.export_format  # a built-in format, always registered
    return chosen


def _name_problem(rules: ProviderRules, names: ExportFormat, name: str) -> ProviderProblem | None:
    if names.names.fullmatch(name):
        return None
    return ProviderProblem(
        provider=rules.provider,
        tool=name,
        path=f"{rules.fields}name",
        message=f"a name of {len(name)} characters that {rules.provider} refuses",
        fix=f"rename it: {names.names_rule}",
        severity="error",
    )


def _check(rules: ProviderRules, document: Any, *, count: int | None) -> list[ProviderProblem]:
    problems: list[ProviderProblem] = []
    entries = rules.entries(document)
    names = _export_format(rules)

    def problem(tool: str | None, path: str, message: str, fix: str, severity: Severity) -> None:
        problems.append(
            ProviderProblem(
                provider=rules.provider,
                tool=tool,
                path=path,
                message=message,
                fix=fix,
                severity=severity,
            )
        )

    total = len(entries) if count is None else count
    if rules.max_tools is not None and total > rules.max_tools.most:
        problem(
            None,
            "tools",
            f"{total} tools; {rules.provider} takes at most {rules.max_tools.most} in a request",
            "send fewer at once: select them by tag (--tag) or split the set",
            rules.max_tools.severity,
        )
    for entry in entries:
        fields = entry.get("function", entry) if rules.fields else entry
        if not isinstance(fields, Mapping):
            continue
        name = str(fields.get("name", ""))
        if count is None:  # a document not made here: its names were never checked
            found = _name_problem(rules, names, name)
            if found is not None:
                problems.append(found)
        description = fields.get("description") or ""
        most = rules.max_description
        if most is not None and len(description) > most.most:
            problem(
                name,
                f"{rules.fields}description",
                f"{len(description)} characters; {rules.provider} has refused descriptions "
                f"over {most.most}",
                f"shorten it to {most.most} characters; put detail in parameter descriptions",
                most.severity,
            )
        if rules.strict and fields.get("strict") is not True:
            parameters = fields.get("parameters")
            free = free_form_path(parameters) if isinstance(parameters, Mapping) else None
            where, kind = free or ("", "dictionary")
            base = f"{rules.fields}parameters"
            problem(
                name,
                f"{rules.fields}strict" if free is None else f"{base}.{where}".rstrip("."),
                f"exported with strict: false: {_FREE_FORM[kind][0]}, "
                "which strict mode cannot express",
                _FREE_FORM[kind][1],
                "warning",
            )
            checker: SchemaCheck = openai_schema
        else:
            checker = rules.schema_check
        for field in rules.schemas:
            schema = fields.get(field)
            if not isinstance(schema, Mapping):
                continue
            base = f"{rules.fields}{field}"
            for path, message, fix, severity in checker(schema):
                problem(name, f"{base}.{path}" if path else base, message, fix, severity)
    return problems
