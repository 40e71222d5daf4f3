"""The commands that read definitions and report on them, running no tool: ``validate``,
``list``, ``show``, ``diff``, ``schema`` and ``export``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agentkit.cli.loading import (
    add_python_paths,
    choose_toolset,
    load_registry,
    load_toolsets,
    select_tools,
    tool_paths,
)
from agentkit.cli.output import echo, print_diff, print_json, terminal_text
from agentkit.cli.status import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from agentkit.toolexamples import examples_of

if TYPE_CHECKING:
    from agentkit.tool import Tool
    from agentkit.toolregistry import ToolRegistry
    from agentkit.toolschema import Parameter, ToolSchema

#: The most providers accept: a tool name's and description's characters.
MAX_NAME, MAX_DESCRIPTION = 64, 1024
#: The tools a provider accepts in one request, where it documents a limit: OpenAI's
#: function calling guide, and the Vertex AI reference (``Tool.functionDeclarations``).
#: Anthropic documents none for its Messages API.
TOOL_LIMITS: tuple[tuple[str, int], ...] = (("OpenAI", 128), ("Gemini on Vertex AI", 128))


def cmd_validate(args: argparse.Namespace) -> int:
    from agentkit.adapters.provider_checks import parse_providers
    from agentkit.declarative import definition_files

    providers = parse_providers(args.provider or ())  # a misspelt provider fails first
    registry = load_registry(args, args.paths)
    toolsets = load_toolsets(args, registry, args.paths)
    files, _ = definition_files(*tool_paths(args, args.paths))
    warnings: list[str] = []
    for tool in registry:
        where = tool.source
        if tool.definition is not None:
            warnings.extend(f"{where}: {warning}" for warning in tool.definition.warnings())
        if len(tool.name) > MAX_NAME:
            warnings.append(f"{where}: name: over {MAX_NAME} characters, which providers reject")
        if not tool.description.strip():
            warnings.append(f"{where}: description: missing; models choose tools by it")
        elif len(tool.description) > MAX_DESCRIPTION:
            warnings.append(
                f"{where}: description: {len(tool.description)} characters; "
                f"providers accept at most {MAX_DESCRIPTION}"
            )
    fix = "serve or export a toolset (--toolset NAME)" if toolsets else "declare toolsets"
    warnings.extend(_over_limits("all the tools together", len(registry), fix))
    for toolset in toolsets.values():
        deferred = f"; {len(toolset.deferred)} deferred" if toolset.deferred else ""
        echo(f"toolset {toolset.name} ({toolset.source}): {toolset.summary()}{deferred}")
        where = f"{toolset.source}: toolset '{toolset.name}'"
        warnings.extend(_over_limits(where, len(toolset), "split it, or exclude some tools"))
    largest = _schema_sizes(registry, args.schema_budget, warnings)
    refused = _refused_credentials(registry, args.credentials_file)
    if providers:
        _provider_problems(registry, providers, warnings, refused)
    for warning in warnings:
        echo(f"warning: {warning}", error=True)
    for problem in refused:
        echo(f"error: {problem}", error=True)
    noun = "tool" if len(registry) == 1 else "tools"
    counts = [f"{len(refused)} problem(s)"] if refused else []
    counts += [f"{len(warnings)} warning(s)"] if warnings else []
    largest = f"; {largest}" if largest else ""
    echo(f"{', '.join(counts) or 'ok'}: {len(registry)} {noun} in {len(files)} file(s){largest}")
    if refused:
        return EXIT_USAGE
    return EXIT_FAILED if warnings and args.strict else EXIT_OK


def _over_limits(what: str, count: int, fix: str) -> list[str]:
    """A warning when ``count`` tools are more than a provider accepts in one request."""
    over = [(provider, limit) for provider, limit in TOOL_LIMITS if count > limit]
    if not over:
        return []
    limits = ", ".join(f"{provider} {limit}" for provider, limit in over)
    return [f"{what}: {count} tools, more than a provider accepts in one request ({limits}); {fix}"]


def _provider_problems(
    tools: ToolRegistry, providers: tuple[str, ...], warnings: list[str], refused: list[str]
) -> None:
    """What each provider would refuse (to ``refused``) or change (to ``warnings``)."""
    from agentkit.adapters.provider_checks import check_tools

    for problem in check_tools(tools, providers):
        tool = problem.tool
        where = f"{tools[tool].source}: " if tool is not None and tool in tools else ""
        (refused if problem.severity == "error" else warnings).append(f"{where}{problem}")


def _schema_sizes(tools: ToolRegistry, budget: int, warnings: list[str]) -> str:
    """The line naming the largest schema size; a warning added for each tool over ``budget``."""
    from agentkit.schemasize import schema_size

    largest: tuple[int, str] | None = None
    for tool in tools:
        size = schema_size(tool)
        if largest is None or size.total > largest[0]:
            largest = (size.total, tool.name)
        if size.total > budget:
            warnings.append(
                f"{tool.source}: schema size: {size.total} bytes (input {size.input}, output "
                f"{size.output}) for tool '{tool.name}', over the budget of {budget}; shrink "
                "it: shorter descriptions, deep objects as a free-form dictionary, fewer "
                "outputs, or split the tool (--schema-budget BYTES sets the budget)"
            )
    if largest is None:
        return ""
    return f"largest schema: {largest[1]}, {largest[0]} bytes (budget {budget})"


def _refused_credentials(tools: ToolRegistry, credentials_file: str | None) -> list[str]:
    """Each credential a tool names that resolves here (the environment, --credentials-file)
    to a value its call would refuse (too short), as ``source: message``; no value shown.
    One that does not resolve here is not judged: it may be given where the tools run."""
    from agentkit.credentials import CredentialsManager
    from agentkit.toolerrors import CredentialError

    credentials = CredentialsManager.from_env(credentials_file)
    refused = []
    for tool in tools:
        for name in tool.credential_names:
            try:
                credentials.resolve(tool.name, [name])
            except CredentialError as exc:
                if exc.refused is not None:
                    refused.append(f"{tool.source}: {exc}")
    return refused


def _summary(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "version": tool.version,
        "backend": tool.backend_kind,
        "tags": tool.tags,
        "description": tool.description,
        "source": tool.source,
    }


def cmd_list(args: argparse.Namespace) -> int:
    tools = select_tools(load_registry(args, toolset=args.toolset), args.tag)
    if args.json:
        print_json([_summary(tool) for tool in tools])
        return EXIT_OK
    rows = [
        tuple(
            terminal_text(cell, one_line=True)
            for cell in (
                t.name,
                t.version,
                t.backend_kind,
                ",".join(f"{k}={v}" for k, v in t.tags.items()),
                t.description,
            )
        )
        for t in tools
    ]
    headers = ("NAME", "VERSION", "BACKEND", "TAGS", "DESCRIPTION")
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(4)]
    for row in [headers, *rows]:
        cells = [str(cell).ljust(width) for cell, width in zip(row[:4], widths, strict=True)]
        echo("  ".join([*cells, str(row[4])]).rstrip())
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    tool = load_registry(args)[args.name]  # UnknownToolError names the loaded tools
    definition = tool.definition
    data = {
        **_summary(tool),
        "credentials": list(tool.credential_names),
        "annotations": tool.annotations,
        "definition": definition.to_dict() if definition is not None else None,
        **(definition.loaded_with() if definition is not None else {}),
        "input_json_schema": tool.input_schema.to_json_schema(),
        "output_json_schema": tool.output_schema.to_json_schema(),
        "schema_size": _size(tool),
        "examples": [example.to_dict() for example in examples_of(tool)],
    }
    if args.json:
        print_json(data)
        return EXIT_OK
    heading = f"{tool.name} {tool.version}  ({data['backend']} backend, defined at {tool.source})"
    echo(terminal_text(heading, one_line=True))
    if tool.description:
        echo("  " + tool.description.replace("\n", "\n  "))
    size = data["schema_size"]
    echo(f"  schema size: {size['total']} bytes (input {size['input']}, output {size['output']})")
    if tool.credential_names:
        echo(f"  credentials: {', '.join(tool.credential_names)}")
    source = data.get("http_source")
    if source is not None:
        line = (
            f"  source: {source['name']} ({source['base_url']}, defined at {source['defined_at']})"
        )
        echo(terminal_text(line, one_line=True))
    if data.get("substitutions"):
        echo("substitutions (configuration from ${VAR}, not secrets):")
        for item in data["substitutions"]:
            line = (
                f"  {item['field']}: ${{{item['variable']}}} = {item['value']!r} "
                f"(from {item['from']})"
            )
            echo(terminal_text(line, one_line=True))
    for title, schema in (("inputs", tool.input_schema), ("outputs", tool.output_schema)):
        echo(f"{title}:")
        for line in _describe_schema(schema, "  "):
            echo(terminal_text(line, one_line=True))
        if not len(schema):
            echo("  (none)")
    if data["examples"]:
        echo("examples (agentkit test runs them):")
        for example in data["examples"]:
            echo(terminal_text(f"  {_describe_example(example)}", one_line=True))
    echo("definition:")
    echo("  " + json.dumps(data["definition"], indent=2).replace("\n", "\n  "))
    if source is not None:
        echo("source definition:")
        echo("  " + json.dumps(source["definition"], indent=2).replace("\n", "\n  "))
    echo("input JSON Schema:")
    echo("  " + json.dumps(data["input_json_schema"], indent=2).replace("\n", "\n  "))
    return EXIT_OK


def _describe_example(example: dict[str, Any]) -> str:
    """``name: {inputs} -> what the answer must be``."""
    inputs = json.dumps(example["inputs"])
    if "fails" in example:
        expected = f"fails ({example['fails']}"
        expected += f", status {example['status']}" if "status" in example else ""
        expected += f", message has {example['message']!r})" if "message" in example else ")"
    elif "output" in example:
        expected = f"output {json.dumps(example['output'])}"
    else:
        expected = f"output includes {json.dumps(example['output_includes'])}"
    return f"{example['name']}: {inputs} -> {expected}"


def _size(tool: Tool) -> dict[str, int]:
    from agentkit.schemasize import schema_size

    size = schema_size(tool)
    return {"input": size.input, "output": size.output, "total": size.total}


def _describe_schema(schema: ToolSchema, indent: str) -> Iterator[str]:
    """One line per parameter, and the fields of each dictionary below it, indented."""
    for param in schema:
        yield f"{indent}{_describe_parameter(param)}"
        fields = _fields(param)
        if fields is not None:
            yield from _describe_schema(fields, indent + "  ")


def _fields(param: Parameter) -> ToolSchema | None:
    """The nested fields of a dictionary, or of a list's dictionary elements."""
    while param.items is not None:
        param = param.items
    return param.parameters


def _type_name(param: Parameter) -> str:
    """``list[string]``, ``list[list[integer]]``: a list names its element type."""
    if param.items is not None:
        return f"list[{_type_name(param.items)}]"
    return param.type if isinstance(param.type, str) else "|".join(param.type)


def _describe_parameter(param: Parameter) -> str:
    text = f"{param.name}: {_type_name(param)}"
    if not param.required:
        text += " (optional" + (f", default {param.default!r})" if param.has_default else ")")
    if param.enum is not None:
        text += f" one of {list(param.enum)}"
    if param.description:
        text += f" -- {param.description}"
    return text


def cmd_export(args: argparse.Namespace) -> int:
    from agentkit.adapters.export import export_tools

    registry = load_registry(args)
    deferred = frozenset(args.defer or ())
    if args.toolset is not None:
        toolset = choose_toolset(load_toolsets(args, registry), args.toolset)
        registry = toolset.restrict(registry)
        # The set's own deferred members, unless --defer says otherwise.
        deferred = deferred or toolset.deferred
    tools = select_tools(registry, args.tag)
    if not args.defer:
        deferred = deferred.intersection(tool.name for tool in tools)
    exported = export_tools(tools, args.format, strict=args.strict, deferred=deferred)
    for warning in exported.warnings:
        echo(f"warning: {warning}", error=True)
    echo(exported.to_json())
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    from agentkit.adapters.diff import diff_tools, summary
    from agentkit.declarative import load_tools

    add_python_paths(args)
    old = [cls() for cls in load_tools(args.old, env_file=args.env_file)]
    new = [cls() for cls in load_tools(args.new, env_file=args.env_file)]
    diffs = diff_tools(old, new)
    problems = [diff for diff in diffs if diff.version_problem]
    if args.json:
        print_json({"tools": [d.to_dict() for d in diffs], "summary": dict(summary(diffs))})
    else:
        for diff in diffs:
            print_diff(diff)
            if diff.version_problem:
                echo(f"  version: {terminal_text(diff.version_problem, one_line=True)}")
        if not diffs:
            echo("no changes")
    if problems:
        names = ", ".join(diff.name for diff in problems)
        echo(f"error: version bump missing for: {names}", error=True)
        return EXIT_FAILED
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from agentkit.declarative import definition_schema

    print_json(definition_schema())
    return EXIT_OK
