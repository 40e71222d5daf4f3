"""The ``agentkit`` command: check, inspect, run, export, compare and serve tool definitions.

A user mistake prints ``error: ...`` on stderr and exits 2 (no traceback); a
tool call that fails exits 1 (``EXIT_STATUSES`` is the whole table, printed by
``--help``). Each command imports only what it needs, so ``agentkit --help``
starts in the time it takes Python to start.

Everything printed goes through ``terminal_text``: names, descriptions and
values come from definition files and upstream services, and a terminal would
obey the escape sequences in them. Control characters (C0, DEL, C1), line and
paragraph separators and bidirectional overrides are shown escaped (``\x1b``,
``\u202e``). A newline is kept only where the output means to break a line (a
multi-line description, a list of problems); inside a one-line field -- a table
cell, a name -- it is escaped too, so a value cannot forge a line of output.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

from agentkit import __version__, jsonvalues
from agentkit.toolerrors import AgentKitError, UsageError, did_you_mean

if TYPE_CHECKING:
    from agentkit.context import CallContext
    from agentkit.credentials import CredentialsManager
    from agentkit.diff import ToolDiff
    from agentkit.mcp.reload import Reloader
    from agentkit.openapi import ImportReport
    from agentkit.tool import Tool
    from agentkit.toolerrors import DeclinedError
    from agentkit.toolexecutor import ToolExecutor
    from agentkit.toolregistry import ToolRegistry
    from agentkit.toolresult import ToolResult
    from agentkit.toolschema import Parameter, ToolSchema

__all__ = ["UsageError", "main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: Every exit status the command uses, and what it means; README.md shows the same table.
EXIT_STATUSES = (
    (EXIT_OK, "success; `validate` found no problem (warnings alone pass unless --strict)"),
    (
        EXIT_FAILED,
        "`call`: the tool call failed (its result is printed); `validate --strict`: warnings;"
        " `diff`: a version bump is missing; `import openapi --update`: conflicts (yours kept)",
    ),
    (
        EXIT_USAGE,
        "a usage or definition error, or a `confirm: true` call not allowed (declined, Ctrl-C"
        " or end of input at its prompt; no terminal and no --yes): `error: ...` on stderr,"
        " nothing was run",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)
MAX_NAME, MAX_DESCRIPTION, MAX_TOOLS = 64, 1024, 128


# -- printing ------------------------------------------------------------------------------------

# C0 but newline, DEL and C1, lone surrogates, the bidi marks, embeddings,
# overrides and isolates, and the Unicode line and paragraph separators.
_UNSAFE = (
    r"\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff"
    r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
)
_UNSAFE_IN_LINES: Final = re.compile(f"[{_UNSAFE}]")
_UNSAFE_IN_A_LINE: Final = re.compile(f"[\\n{_UNSAFE}]")


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def terminal_text(text: object, *, one_line: bool = False) -> str:
    """``text`` safe to print: control and bidi characters escaped.

    A newline is kept, unless ``one_line`` (a table cell, a name) asks for it escaped too.
    """
    pattern = _UNSAFE_IN_A_LINE if one_line else _UNSAFE_IN_LINES
    return pattern.sub(_escaped, str(text))


def _echo(text: object = "", *, error: bool = False) -> None:
    print(terminal_text(text), file=sys.stderr if error else sys.stdout)


# -- finding and loading the tools ---------------------------------------------------------------


def _tool_paths(args: argparse.Namespace, given: Sequence[str] = ()) -> list[str]:
    if given:
        return list(given)
    if args.tools:
        return list(args.tools)
    from_env = os.environ.get("AGENTKIT_TOOLS")
    if from_env:
        return [part for part in from_env.split(os.pathsep) if part]
    return ["tools.d"]


def _prepare(args: argparse.Namespace) -> None:
    # Python backends import from --python-path folders and the current folder,
    # searched last: a ./jinja2.py or ./requests.py must not replace the
    # installed package agentkit itself imports (``__main__`` drops the current
    # folder Python puts first for `python -m agentkit`).
    for folder in [*(args.python_path or []), "."]:
        resolved = str(Path(folder).resolve())
        if resolved not in sys.path:
            sys.path.append(resolved)


def _load(args: argparse.Namespace, given: Sequence[str] = ()) -> ToolRegistry:
    from agentkit.declarative import load_tools
    from agentkit.toolregistry import ToolRegistry

    _prepare(args)
    registry = ToolRegistry()
    load_tools(*_tool_paths(args, given), registry=registry, env_file=args.env_file)
    return registry


def _select(registry: ToolRegistry, tags: Sequence[str] | None) -> list[Tool]:
    wanted: dict[str, str] = {}
    for item in tags or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--tag takes key=value, got {item!r}")
        wanted[key] = value
    return registry.lookup_by_tags(**wanted)


def _tool(registry: ToolRegistry, name: str) -> Tool:
    return registry[name]  # UnknownToolError names the loaded tools


def _print_json(data: Any) -> None:
    _echo(json.dumps(data, indent=2))


# -- commands ------------------------------------------------------------------------------------


def cmd_validate(args: argparse.Namespace) -> int:
    from agentkit.declarative import definition_files

    registry = _load(args, args.paths)
    files, _ = definition_files(*_tool_paths(args, args.paths))
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
    if len(registry) > MAX_TOOLS:
        warnings.append(f"{len(registry)} tools in one set; providers accept at most {MAX_TOOLS}")
    refused = _refused_credentials(registry, args.credentials_file)
    for warning in warnings:
        _echo(f"warning: {warning}", error=True)
    for problem in refused:
        _echo(f"error: {problem}", error=True)
    noun = "tool" if len(registry) == 1 else "tools"
    counts = [f"{len(refused)} problem(s)"] if refused else []
    counts += [f"{len(warnings)} warning(s)"] if warnings else []
    _echo(f"{', '.join(counts) or 'ok'}: {len(registry)} {noun} in {len(files)} file(s)")
    if refused:
        return EXIT_USAGE
    return EXIT_FAILED if warnings and args.strict else EXIT_OK


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
    tools = _select(_load(args), args.tag)
    if args.json:
        _print_json([_summary(tool) for tool in tools])
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
        _echo("  ".join([*cells, str(row[4])]).rstrip())
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    tool = _tool(_load(args), args.name)
    definition = tool.definition
    data = {
        **_summary(tool),
        "credentials": list(tool.credential_names),
        "annotations": tool.annotations,
        "definition": definition.to_dict() if definition is not None else None,
        **(definition.loaded_with() if definition is not None else {}),
        "input_json_schema": tool.input_schema.to_json_schema(),
        "output_json_schema": tool.output_schema.to_json_schema(),
    }
    if args.json:
        _print_json(data)
        return EXIT_OK
    heading = f"{tool.name} {tool.version}  ({data['backend']} backend, defined at {tool.source})"
    _echo(terminal_text(heading, one_line=True))
    if tool.description:
        _echo("  " + tool.description.replace("\n", "\n  "))
    if tool.credential_names:
        _echo(f"  credentials: {', '.join(tool.credential_names)}")
    source = data.get("http_source")
    if source is not None:
        line = (
            f"  source: {source['name']} ({source['base_url']}, defined at {source['defined_at']})"
        )
        _echo(terminal_text(line, one_line=True))
    if data.get("substitutions"):
        _echo("substitutions (configuration from ${VAR}, not secrets):")
        for item in data["substitutions"]:
            line = (
                f"  {item['field']}: ${{{item['variable']}}} = {item['value']!r} "
                f"(from {item['from']})"
            )
            _echo(terminal_text(line, one_line=True))
    for title, schema in (("inputs", tool.input_schema), ("outputs", tool.output_schema)):
        _echo(f"{title}:")
        for line in _describe_schema(schema, "  "):
            _echo(terminal_text(line, one_line=True))
        if not len(schema):
            _echo("  (none)")
    _echo("definition:")
    _echo("  " + json.dumps(data["definition"], indent=2).replace("\n", "\n  "))
    if source is not None:
        _echo("source definition:")
        _echo("  " + json.dumps(source["definition"], indent=2).replace("\n", "\n  "))
    _echo("input JSON Schema:")
    _echo("  " + json.dumps(data["input_json_schema"], indent=2).replace("\n", "\n  "))
    return EXIT_OK


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


def _read_input_file(name: str) -> str:
    from agentkit.textfile import TextFileError, read_text_file

    try:
        return read_text_file(name, what="an input file")
    except TextFileError as exc:
        where = f"{name}:{exc.line}:{exc.column}" if exc.line else name
        raise UsageError(f"--input-file {where}: {exc.message}") from None


def cmd_call(args: argparse.Namespace) -> int:
    """Run the tool, or with --dry-run show the request it would send.

    A ``confirm: true`` tool asks first, on the terminal, what the server would ask
    its client's user (the same ``agentkit.context.confirm`` question); with no
    terminal it is refused unless --yes. Declined, nothing is run (exit 2)."""
    from agentkit.credentials import CredentialsManager
    from agentkit.toolexecutor import ToolExecutor

    tool = _tool(_load(args), args.name)
    inputs = _inputs(tool, args)
    credentials = CredentialsManager.from_env(args.credentials_file)
    if args.dry_run:
        return _dry_run(tool, inputs, credentials)
    terminal = None
    if tool.CONFIRM and not args.yes:
        terminal = _open_terminal()
        if terminal is None:
            raise UsageError(
                f"Tool '{tool.name}' asks before it acts (confirm: true), and there is no "
                "terminal to ask on (this process has no /dev/tty): nothing was run. Pass "
                "--yes to run it without asking, or --dry-run to see what it would send."
            )
    try:
        with ToolExecutor(credentials=credentials) as executor:
            if terminal is not None:
                result = _asking_first(tool, inputs, executor, terminal)
            else:
                result = executor.execute(tool, inputs, raise_on_failure=False)
    finally:
        if terminal is not None:
            os.close(terminal)
    _print_json(result.to_dict())
    return EXIT_OK if result.succeeded else EXIT_FAILED


def _open_terminal() -> int | None:
    """The user's terminal (``/dev/tty``) open to read and write, whatever stdin, stdout
    and stderr are; None where this process has none (no controlling terminal: a
    service, a job started with ``setsid``; not a POSIX system)."""
    try:
        import termios  # noqa: F401  (POSIX only: asking needs it to flush the input)
    except ImportError:
        return None
    try:
        return os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None


def _ask(terminal: int, question: str) -> str:
    """Write ``question`` on ``terminal`` and read the line typed after it ("" at end of
    input). Whatever was typed before the question is written (a ``y`` typed ahead,
    meant for an earlier prompt or typed while the call loaded) is discarded unread:
    it answers nothing. (Discarded only before writing: an answer typed the moment
    the question shows must not be lost.)"""
    import locale
    import termios

    termios.tcflush(terminal, termios.TCIFLUSH)
    encoding = locale.getpreferredencoding(False)
    data = question.encode(encoding, "backslashreplace")
    while data:
        data = data[os.write(terminal, data) :]
    typed = b""
    while not typed.endswith(b"\n") and len(typed) < _MOST_TYPED:
        chunk = os.read(terminal, _MOST_TYPED)
        if not chunk:  # end of input (Ctrl-D)
            break
        typed += chunk
    return typed.decode(encoding, "replace")


#: The most bytes of an answer read: a longer one is no "y" anyway.
_MOST_TYPED: Final = 4096


def _asking_first(
    tool: Tool, inputs: dict[str, Any], executor: ToolExecutor, terminal: int
) -> ToolResult:
    """The result of calling ``tool``, a ``confirm: true`` one, once the user at
    ``terminal`` allowed what it is about to do; ``UsageError`` when they did not.

    The call runs as ``agentkit serve`` runs it, the terminal standing in for the
    client: the tool's own ``confirm`` asks, with its own preview (an HTTP tool's
    request, a Python tool's arguments), just before it acts. The question is read
    on this (the main) thread, where Ctrl-C lands: it declines, as end of input does.
    No event loop of ``asyncio.run`` is used: its Ctrl-C handler would only cancel
    the call and leave the prompt waiting."""
    import asyncio

    from agentkit.context import arguments_shown, serving
    from agentkit.toolerrors import DeclinedError, ToolExecutionError

    context = _terminal_asking(tool.name, terminal)
    loop = context.loop = asyncio.new_event_loop()

    async def call() -> ToolResult:
        with serving(context):
            if tool.definition is None:  # a hand-written tool says not what it sends
                checked = tool.input_schema.check(inputs)
                if not checked.problems:
                    await context.aconfirm(arguments_shown(checked.values))
            return await executor.aexecute(tool, inputs, raise_on_failure=False)

    try:
        result = loop.run_until_complete(call())
    except DeclinedError as exc:
        raise _declined(tool.name, exc) from None
    finally:
        loop.close()
    cause = result.error.cause if isinstance(result.error, ToolExecutionError) else None
    if isinstance(cause, DeclinedError):
        raise _declined(tool.name, cause)
    return result


def _declined(tool: str, declined: DeclinedError) -> UsageError:
    how = "you declined" if declined.action == "decline" else "the question was dismissed"
    return UsageError(
        f"Tool '{tool}' was not run: {how} (only y or yes allows it; Ctrl-C or end of "
        "input declines); nothing was sent"
    )


def _terminal_asking(tool: str, terminal: int) -> CallContext:
    """The ``CallContext`` of a call of ``tool`` run at the terminal: it asks the question
    on ``terminal`` (``/dev/tty``: where the user sees it, whatever stderr is) and reads
    the answer there, in this thread (the main one, where Ctrl-C lands). Only a
    confirmation is asked: the terminal has no forms, and a tool's own ``elicit``
    fails as it does outside a served call."""
    from agentkit.context import CONFIRM_FORM, CallContext, Elicited

    class TerminalAsking(CallContext):
        bounds_questions = True  # a person at a terminal is given all the time they need

        async def aelicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
            if dict(schema) != dict(CONFIRM_FORM):
                return await super().aelicit(message, schema)
            try:
                answer = _ask(terminal, f"{terminal_text(message)}\n[y/N] ")
            except KeyboardInterrupt:
                answer = ""
            if not answer:  # Ctrl-C or end of input: dismissed
                os.write(terminal, b"\n")  # the prompt's line ends
                return Elicited(action="cancel")
            accepted = answer.strip().lower() in ("y", "yes")
            return Elicited(action="accept" if accepted else "decline")

    context = TerminalAsking()
    context.confirming = tool
    return context


def _dry_run(tool: Tool, inputs: dict[str, Any], credentials: CredentialsManager) -> int:
    """Print what an HTTP tool's call would send first, sending nothing."""
    from agentkit.declarative.http_backend import HttpBackend
    from agentkit.toolerrors import CredentialError

    backend = getattr(tool, "BACKEND", None)
    if tool.definition is None or not isinstance(backend, HttpBackend):
        kind = tool.backend_kind
        raise UsageError(
            f"Tool '{tool.name}' has a {kind} backend: a dry run cannot show what its "
            f"{'Python ' if kind == 'python' else ''}code will do, so nothing was run "
            "(--dry-run shows the request of an http tool; drop it to run this one)"
        )
    values, problems = tool.input_schema.check(inputs)
    if problems:
        from agentkit.toolerrors import ToolValidationError

        raise UsageError(str(ToolValidationError(tool.name, "input", problems)))
    try:
        secrets = credentials.resolve(tool.name, tool.credential_names)
    except CredentialError as exc:
        raise UsageError(f"{exc} (a dry run needs them too, to build the request)") from None
    try:
        shown = backend.dry_run(values, secrets)
    except AgentKitError as exc:
        _echo(f"error: Tool '{tool.name}': {exc}; nothing was sent", error=True)
        return EXIT_FAILED
    from agentkit.context import visible

    _echo(f"Dry run of tool '{tool.name}': nothing was sent. A call would {visible(shown)}")
    return EXIT_OK


def _inputs(tool: Tool, args: argparse.Namespace) -> dict[str, Any]:
    inputs: dict[str, Any] = {}
    if args.input is not None or args.input_file is not None:
        if args.input is not None and args.input_file is not None:
            raise UsageError("give --input or --input-file, not both")
        source = "--input" if args.input is not None else f"--input-file {args.input_file}"
        text = args.input if args.input is not None else _read_input_file(args.input_file)
        try:
            loaded = jsonvalues.loads(text)
        except ValueError as exc:
            raise UsageError(f"{source}: not valid JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise UsageError(f"{source}: expected a JSON object of parameter names to values")
        inputs.update(loaded)
    for pair in args.arguments:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"arguments are key=value, got {pair!r}")
        param = tool.input_schema.get(key)
        inputs[key] = _parse_value(raw, param, key) if param is not None else raw
    return inputs


_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def _parse_value(raw: str, param: Parameter, key: str) -> Any:
    """``raw`` as the parameter's declared type: days=3 is an integer, tags=a,b a list."""
    if isinstance(param.type, tuple):
        return _parse_union(raw, param, param.type, key)
    kind = param.type
    try:
        if kind == "integer":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind == "boolean":
            if raw.lower() in _TRUE:
                return True
            if raw.lower() in _FALSE:
                return False
            raise ValueError
        if kind == "dictionary":
            value = jsonvalues.loads(raw)
            if not isinstance(value, dict):
                raise ValueError
            return value
        if kind == "list":
            if raw.lstrip().startswith("["):
                return jsonvalues.loads(raw)
            items = [item.strip() for item in raw.split(",")] if raw else []
            element = param.items
            return [_parse_value(item, element, key) for item in items] if element else items
    except ValueError:
        examples = {
            "integer": "3",
            "float": "2.5",
            "boolean": "true or false",
            "dictionary": '\'{"key": "value"}\'',
            "list": "a,b or a JSON list",
        }
        raise UsageError(
            f"argument {key}={raw!r}: expected {kind}, such as {key}={examples[kind]}"
        ) from None
    return raw


def _parse_union(raw: str, param: Parameter, members: tuple[str, ...], key: str) -> Any:
    """``raw`` as the first of a union's types it reads as: integer, float, boolean, string;
    a JSON list (``[...]``) for a union with ``list``, or ``a,b`` when no scalar takes it."""
    from agentkit.schematypes import from_text

    if "list" in members and raw.lstrip().startswith("["):
        return _parse_value(raw, _as_list(param), key)
    value = from_text(raw, members)
    if isinstance(value, str) and "string" not in members:
        if "list" in members:
            return _parse_value(raw, _as_list(param), key)
        raise UsageError(f"argument {key}={raw!r}: expected {' or '.join(members)}")
    return value


def _as_list(param: Parameter) -> Parameter:
    """A union's list member as a parameter of its own, to read text into."""
    from agentkit.toolschema import Parameter

    return Parameter(name=param.name, type="list", items=param.items)


def cmd_export(args: argparse.Namespace) -> int:
    from agentkit.export import export_tools

    exported = export_tools(_select(_load(args), args.tag), args.format, strict=args.strict)
    for warning in exported.warnings:
        _echo(f"warning: {warning}", error=True)
    _echo(exported.to_json())
    return EXIT_OK


def _print_diff(diff: ToolDiff, *, severity: bool = False) -> None:
    """``NAME OLD -> NEW: STATUS[, SEVERITY]``, then a line per change (``KIND: MESSAGE``)."""
    versions = f"{diff.old_version or '-'} -> {diff.new_version or '-'}"
    head = f"{diff.name} {versions}: {diff.status}" + (f", {diff.severity}" if severity else "")
    _echo(terminal_text(head, one_line=True))
    for change in diff.changes:
        _echo(f"  {terminal_text(str(change), one_line=True)}")


def cmd_diff(args: argparse.Namespace) -> int:
    from agentkit.declarative import load_tools
    from agentkit.diff import diff_tools, summary

    _prepare(args)
    old = [cls() for cls in load_tools(args.old, env_file=args.env_file)]
    new = [cls() for cls in load_tools(args.new, env_file=args.env_file)]
    diffs = diff_tools(old, new)
    problems = [diff for diff in diffs if diff.version_problem]
    if args.json:
        _print_json({"tools": [d.to_dict() for d in diffs], "summary": dict(summary(diffs))})
    else:
        for diff in diffs:
            _print_diff(diff)
            if diff.version_problem:
                _echo(f"  version: {terminal_text(diff.version_problem, one_line=True)}")
        if not diffs:
            _echo("no changes")
    if problems:
        names = ", ".join(diff.name for diff in problems)
        _echo(f"error: version bump missing for: {names}", error=True)
        return EXIT_FAILED
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from agentkit.declarative import definition_schema

    _print_json(definition_schema())
    return EXIT_OK


_HTTP_ONLY = (
    ("stateless", "--stateless"),
    ("no_fast_path", "--no-fast-path"),
    ("auth_token_file", "--auth-token-file"),
    ("auth_token_env", "--auth-token-env"),
    ("credential_header", "--credential-header"),
    ("require_credential_headers", "--require-credential-headers"),
    ("allowed_host", "--allowed-host"),
    ("allowed_origin", "--allowed-origin"),
    ("max_request_bytes", "--max-request-bytes"),
    ("header_timeout", "--header-timeout"),
    ("body_timeout", "--body-timeout"),
    ("idle_timeout", "--idle-timeout"),
    ("max_connections", "--max-connections"),
)


def cmd_import_openapi(args: argparse.Namespace) -> int:
    from agentkit.openapi import Selection, import_openapi

    if args.update:
        return _update_openapi(args)
    selection = Selection(
        tags=args.tag,
        operations=args.operation,
        methods=args.method,
        exclude=args.exclude_operation,
        deprecated=args.include_deprecated,
    )
    report = import_openapi(
        args.spec,
        source=args.source,
        out=args.out,
        selection=selection,
        layout=args.layout or "operation",
        check=not args.no_check,
        server_variables=args.server_variable,
    )
    _print_import(args.spec, report, checked=not args.no_check)
    if report.deprecated:
        _echo(f"left out {len(report.deprecated)} deprecated operation(s) (--include-deprecated)")
    files = f" in {len(report.written) - 1} file(s)" if args.layout == "tag" else ""
    _echo(
        f"wrote {report.tools} tool(s){files} and a source to {args.out}; "
        f"{len(report.skipped)} skipped, "
        f"{report.notes} note(s) in the files"
    )
    return EXIT_OK


def _print_import(spec: str, report: ImportReport, *, checked: bool = True) -> None:
    """What an import or an update found in the description, renamed and skipped."""
    if report.findings is None and checked:
        _echo("not checked against the OpenAPI schema: pip install 'agentkit[openapi]'")
    for finding in report.findings or ():
        _echo(f"warning: {spec}{finding}", error=True)
    for renamed in report.renamed:
        _echo(f"renamed: {renamed.wanted} -> {renamed.name} (name taken; {renamed.pointer})")
    for skipped in report.skipped:
        _echo(f"skipped: {skipped.operation}: {skipped.problem}", error=True)


def _update_openapi(args: argparse.Namespace) -> int:
    from agentkit.openapi.update import update_openapi

    if args.layout is not None:
        raise UsageError(
            "--update keeps the first import's layout (in the lock file); --layout cannot "
            "change it: import into a new folder to lay the tools out otherwise"
        )
    filters = [
        flag for flag in ("tag", "operation", "method", "exclude_operation") if getattr(args, flag)
    ]
    if filters or args.include_deprecated:
        given = (
            ", ".join("--" + flag.replace("_", "-") for flag in filters) or "--include-deprecated"
        )
        raise UsageError(
            f"--update keeps the first import's selection (in the lock file); {given} cannot "
            "change it: import into a new folder to select other operations"
        )
    if args.server_variable:
        raise UsageError(
            "--update keeps the first import's server variables (in the lock file); "
            "--server-variable cannot change them: edit the source's base_url (your edit "
            "is kept), or import into a new folder"
        )
    report = update_openapi(args.spec, source=args.source, out=args.out)
    _print_import(args.spec, report.generation)
    for tool in report.classified:
        _print_diff(tool, severity=True)
    for operation in report.kept_gone:
        _echo(
            terminal_text(
                f"kept: {operation}: gone from the description, but you edited it; it is no "
                "longer updated (delete the file if the tool should go)",
                one_line=True,
            )
        )
    for operation in report.deleted:
        _echo(terminal_text(f"stays deleted: {operation} (you deleted it)", one_line=True))
    for conflict in report.conflicts:
        _echo(f"conflict: {terminal_text(conflict, one_line=True)}", error=True)
    _echo(
        f"updated {args.out}: {len(report.added)} added, "
        f"{sum(tool.status == 'changed' for tool in report.classified)} changed, "
        f"{len(report.removed)} removed, {report.unchanged} unchanged, "
        f"{len(report.conflicts)} conflict(s) (your side kept)"
    )
    return EXIT_FAILED if report.conflicts else EXIT_OK


def _positive(value: float | None, flag: str, *, integer: bool = False) -> None:
    if value is not None and not value > 0:
        kind = "a positive whole number" if integer else "a positive number of seconds"
        raise UsageError(f"{flag} takes {kind}, got {value}")


def _limits(args: argparse.Namespace) -> dict[str, Any]:
    """The options both transports share: deadlines, admission, draining, confirmation.

    Those not given are left out, for ``ServeOptions``' defaults."""
    _positive(args.call_timeout, "--call-timeout")
    _positive(args.max_calls, "--max-calls", integer=True)
    _positive(args.drain_seconds, "--drain-seconds")
    if args.max_queued is not None and args.max_queued < 0:
        raise UsageError(f"--max-queued takes 0 or a positive whole number, got {args.max_queued}")
    if args.max_waiting is not None:
        from agentkit.mcp.admission import MAX_WAITING

        if not 1 <= args.max_waiting <= MAX_WAITING:
            raise UsageError(
                f"--max-waiting takes a whole number from 1 to {MAX_WAITING}, "
                f"got {args.max_waiting}"
            )
    if args.answer_timeout is not None:
        from agentkit.context import ELICIT_SECONDS

        if not 0 < args.answer_timeout <= ELICIT_SECONDS:
            raise UsageError(
                f"--answer-timeout takes a number of seconds more than 0 and at most "
                f"{ELICIT_SECONDS:g}, got {args.answer_timeout:g}"
            )
    given = {
        "call_timeout": args.call_timeout,
        "max_calls": args.max_calls,
        "max_queued": args.max_queued,
        "max_waiting": args.max_waiting,
        "answer_timeout": args.answer_timeout,
        "drain_seconds": args.drain_seconds,
    }
    limits = {option: value for option, value in given.items() if value is not None}
    return {**limits, "allow_unconfirmed": args.allow_unconfirmed}


def _reloader(args: argparse.Namespace) -> Reloader:
    """The tools to serve (``.served``), reloaded on SIGHUP and, with --reload, when the
    definition files change."""
    from agentkit.mcp.reload import Reloader

    return Reloader(lambda: _load(args), **_reloading(args))


def _reloading(args: argparse.Namespace) -> dict[str, Any]:
    """How a server reloads: the files it watches, ``--reload`` and ``--reload-interval``
    (``Reloader``'s arguments after ``load``)."""
    from agentkit.declarative import definition_files

    _positive(args.reload_interval, "--reload-interval")
    paths = _tool_paths(args)
    env_file = [Path(args.env_file)] if args.env_file else []

    def watched() -> list[Path]:
        # What loading reads, found the way loading finds it (hidden entries skipped).
        return [*definition_files(*paths)[0], *env_file]

    return {
        "files": watched,
        "watch": args.reload,
        "interval": args.reload_interval or 1.0,
        "roots": paths,  # a failed reload names its files to clients within these
    }


def cmd_serve(args: argparse.Namespace) -> int:
    if args.http is None:
        given = [flag for attribute, flag in _HTTP_ONLY if getattr(args, attribute)]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise UsageError(f"{', '.join(given)} only {verb} with --http HOST:PORT")
        try:
            import agentkit.mcp.server  # the SDK is installed
        except ImportError as exc:  # the mcp extra is not installed
            raise UsageError(
                "agentkit serve needs the MCP SDK: pip install 'agentkit[mcp]'"
            ) from exc
        from agentkit import mcp
        from agentkit.mcp.options import ServeOptions
        from agentkit.mcp.reload import EarlyHangups
        from agentkit.mcp.stdio_claim import claim_stdio

        options = ServeOptions(**_limits(args))
        # Claimed before the tools load (a module may print as it is imported), and
        # never given back: the process ends with serving, and a tool's thread or an
        # atexit hook writing to stdout after the last answer would reach the client.
        with claim_stdio(restore=False) as wire, EarlyHangups() as hangups:
            reloader = _reloader(args)
            mcp.serve(
                reloader.served,
                options,
                credentials_file=args.credentials_file,
                reloader=reloader,
                wire=wire,
                hangups=hangups,
            )
        return EXIT_OK
    try:
        import agentkit.mcp.http_app  # noqa: F401 -- the SDK and the HTTP server are installed
    except ImportError as exc:  # the serve extra is not installed
        raise UsageError(
            "agentkit serve --http needs the serve extra: pip install 'agentkit[serve]'"
        ) from exc
    from agentkit import mcp
    from agentkit.mcp import options as parse
    from agentkit.mcp.connections import check_body_timeout, check_limits

    limits = _limits(args)
    host, port = parse.parse_address(args.http)
    _positive(args.max_request_bytes, "--max-request-bytes", integer=True)
    header_timeout, idle_timeout, max_connections = check_limits(
        args.header_timeout, args.idle_timeout, args.max_connections
    )
    options = parse.HttpOptions(
        header_timeout=header_timeout,
        body_timeout=check_body_timeout(args.body_timeout),
        idle_timeout=idle_timeout,
        max_connections=max_connections,
        host=host,
        port=port,
        path=parse.parse_endpoint_path(args.path),
        stateless=args.stateless,
        fast_path=not args.no_fast_path,
        tokens=parse.read_tokens(file=args.auth_token_file, env=args.auth_token_env),
        credential_headers=parse.parse_credential_headers(args.credential_header or ()),
        require_credential_headers=args.require_credential_headers,
        allowed_hosts=tuple(map(parse.parse_allowed_host, args.allowed_host or ())),
        allowed_origins=tuple(map(parse.parse_allowed_origin, args.allowed_origin or ())),
        max_request_bytes=args.max_request_bytes or parse.DEFAULT_MAX_REQUEST_BYTES,
        **limits,
    )
    reloader = _reloader(args)
    _warn_unused_credential_headers(options.credential_headers, reloader.served.registry)
    mcp.serve(reloader.served, options, credentials_file=args.credentials_file, reloader=reloader)
    return EXIT_OK


def _warn_unused_credential_headers(headers: Mapping[str, str], tools: ToolRegistry) -> None:
    """Warn about a ``--credential-header`` naming a credential no tool takes (a typo)."""
    declared = {name for tool in tools for name in tool.credential_names}
    for header, credential in headers.items():
        if credential not in declared:
            hint = did_you_mean(credential, sorted(declared))
            _echo(
                f"warning: --credential-header {header}={credential}: no tool takes the "
                f"credential '{credential}'{hint}, so the header never reaches a tool",
                error=True,
            )


# -- the parser ------------------------------------------------------------------------------


class _ExportFormatNames:
    """``export --format``'s choices: the export table, read when argparse checks a value
    or shows help, so a format from an installed package (entry point) is offered too.
    The table is imported then, not for every command."""

    def __contains__(self, name: object) -> bool:
        from agentkit.export import EXPORT_FORMATS

        return name in EXPORT_FORMATS

    def __iter__(self) -> Iterator[str]:
        from agentkit.export import EXPORT_FORMATS

        return iter(EXPORT_FORMATS)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--tools",
        action="append",
        metavar="PATH",
        help="a definition file or folder (repeatable; default: $AGENTKIT_TOOLS, else ./tools.d)",
    )
    common.add_argument(
        "--python-path",
        action="append",
        metavar="DIR",
        help="a folder to import Python backends from (repeatable; the current folder always is)",
    )
    common.add_argument(
        "--credentials-file", metavar="FILE", help="a .env-style file of credentials (NAME=value)"
    )
    common.add_argument(
        "--env-file",
        metavar="FILE",
        help="a .env-style file of configuration for ${VAR} in definitions (NAME=value; "
        "it wins over the environment)",
    )
    parser = argparse.ArgumentParser(
        prog="agentkit",
        description="Check, inspect, run, export, compare and serve tool definitions.",
        epilog="exit status:\n"
        + "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_STATUSES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"agentkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, parents=[common], help=help_text, description=help_text)

    validate = command(
        "validate",
        "Load definitions and report every problem (exit 2) and warning (exit 0; 1 with --strict).",
    )
    validate.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check")
    validate.add_argument(
        "--strict", action="store_true", help="exit 1 when there are warnings, for CI"
    )
    validate.set_defaults(run=cmd_validate)

    listing = command("list", "List the tools: name, version, backend, tags, description.")
    listing.add_argument(
        "--tag", action="append", metavar="KEY=VALUE", help="only tools with this tag"
    )
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(run=cmd_list)

    show = command("show", "Show one tool: its definition, source and JSON Schema.")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(run=cmd_show)

    call = command("call", "Run a tool through the executor and print the result as JSON.")
    call.add_argument("name", metavar="NAME")
    call.add_argument(
        "arguments", nargs="*", metavar="KEY=VALUE", help="inputs, parsed by their declared type"
    )
    call.add_argument("--input", metavar="JSON", help="inputs as a JSON object")
    call.add_argument("--input-file", metavar="FILE", help="inputs from a JSON file")
    call.add_argument(
        "--yes",
        action="store_true",
        help="run a confirm: true tool without asking; without it such a tool asks on the "
        "terminal (y or yes allows it; anything else, Ctrl-C or end of input declines: "
        "exit 2, nothing sent), and with no terminal it is refused (exit 2)",
    )
    call.add_argument(
        "--dry-run",
        action="store_true",
        help="print the request an http tool would send (secrets masked, no OAuth2 token "
        "fetched) and send nothing; a python tool's code cannot be shown (exit 2)",
    )
    call.set_defaults(run=cmd_call)

    export = command("export", "Print the tools in an LLM provider's format.")
    export.add_argument(
        "--format",
        required=True,
        metavar="FORMAT",
        choices=_ExportFormatNames(),
        help="one of: %(choices)s",
    )
    export.add_argument("--strict", action="store_true", help="OpenAI strict mode")
    export.add_argument(
        "--tag", action="append", metavar="KEY=VALUE", help="only tools with this tag"
    )
    export.set_defaults(run=cmd_export)

    diff = command("diff", "Compare two definition sets; exit 1 when a version bump is missing.")
    diff.add_argument("old", metavar="OLD", help="the old file or folder")
    diff.add_argument("new", metavar="NEW", help="the new file or folder")
    diff.add_argument("--json", action="store_true", help="print JSON")
    diff.set_defaults(run=cmd_diff)

    schema = command("schema", "Print the JSON Schema of the definition format, for editors.")
    schema.set_defaults(run=cmd_schema)

    serve = command(
        "serve", "Serve the tools to MCP clients over stdio, or streamable HTTP with --http."
    )
    serve.add_argument(
        "--http",
        nargs="?",
        const="127.0.0.1:8000",
        metavar="HOST:PORT",
        help="serve streamable HTTP instead of stdio (default 127.0.0.1:8000; port 0: any free)",
    )
    serve.add_argument("--path", default="/mcp", help="the MCP endpoint's path (default /mcp)")
    serve.add_argument(
        "--stateless",
        action="store_true",
        help="no per-session state: any instance behind a load balancer answers any request",
    )
    serve.add_argument(
        "--no-fast-path",
        action="store_true",
        help="answer every request through the MCP SDK, not the fast path (for triage)",
    )
    serve.add_argument(
        "--auth-token-file", metavar="FILE", help="require a bearer token, one of those in FILE"
    )
    serve.add_argument(
        "--auth-token-env",
        metavar="VAR",
        help="require a bearer token, one of those in $VAR (comma-separated)",
    )
    serve.add_argument(
        "--credential-header",
        action="append",
        metavar="HEADER=CREDENTIAL",
        help="take credential CREDENTIAL from request header HEADER for that call (repeatable)",
    )
    serve.add_argument(
        "--require-credential-headers",
        action="store_true",
        help="a call without a --credential-header header fails; no fallback to the "
        "environment or --credentials-file",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        metavar="HOST[:PORT]",
        help="a Host header to accept besides loopback ones (repeatable; PORT may be *)",
    )
    serve.add_argument(
        "--allowed-origin",
        action="append",
        metavar="ORIGIN",
        help="an Origin header to accept besides loopback ones (repeatable)",
    )
    serve.add_argument(
        "--max-request-bytes",
        type=int,
        metavar="N",
        help="refuse a larger request body with 413 (default 4 MiB)",
    )
    serve.add_argument(
        "--header-timeout",
        type=float,
        metavar="SECONDS",
        help="close a connection whose request head is not complete in time (default 10)",
    )
    serve.add_argument(
        "--body-timeout",
        type=float,
        metavar="SECONDS",
        help="close a connection whose request body is not complete this long after its "
        "head (default 30)",
    )
    serve.add_argument(
        "--idle-timeout",
        type=int,
        metavar="SECONDS",
        help="close a keep-alive connection idle this long between requests (default 5)",
    )
    serve.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="refuse connections past N open ones with 503 (default: from the open-file "
        "limit, at most 4096)",
    )
    serve.add_argument(
        "--call-timeout",
        type=float,
        metavar="SECONDS",
        help="every call's deadline: an async tool is cancelled, a sync one abandoned",
    )
    serve.add_argument(
        "--max-calls",
        type=int,
        metavar="N",
        help="run at most N calls at once (default 64); more wait in the queue",
    )
    serve.add_argument(
        "--max-queued",
        type=int,
        metavar="N",
        help="let at most N calls wait (default 64); past that a call is refused as busy",
    )
    serve.add_argument(
        "--max-waiting",
        type=int,
        metavar="N",
        help="let at most N calls wait for their users' answers (default 64, at most 1024); "
        "a waiting call holds no --max-calls slot",
    )
    serve.add_argument(
        "--answer-timeout",
        type=float,
        metavar="SECONDS",
        help="how long a call waits for its user's answer (default 300, at most 600)",
    )
    serve.add_argument(
        "--drain-seconds",
        type=float,
        metavar="SECONDS",
        help="on SIGTERM (or stdin closing) wait this long for calls in flight (default 30)",
    )
    serve.add_argument(
        "--allow-unconfirmed",
        action="store_true",
        help="run confirm: true tools without asking when the client cannot be asked "
        "(no elicitation); by default such a call is refused",
    )
    serve.add_argument(
        "--reload",
        action="store_true",
        help="watch the definition files and reload when they change (SIGHUP always reloads)",
    )
    serve.add_argument(
        "--reload-interval",
        type=float,
        metavar="SECONDS",
        help="how often --reload looks at the files (default 1)",
    )
    serve.set_defaults(run=cmd_serve)

    importing = commands.add_parser(
        "import", help="Write tool definitions from an API description."
    ).add_subparsers(dest="format", metavar="FORMAT", required=True)
    openapi = importing.add_parser(
        "openapi",
        help="An OpenAPI 3.0/3.1 or Swagger 2.0 description (JSON or YAML): a source file, "
        "a file per operation.",
    )
    openapi.add_argument("spec", metavar="SPEC", help="the description's file")
    openapi.add_argument("--source", required=True, metavar="NAME", help="the source's name")
    openapi.add_argument("--out", required=True, metavar="DIR", help="the folder to write")
    for flag, what in (
        ("--tag", "only operations with this tag"),
        ("--operation", "only this operation (operationId or tool name)"),
        ("--method", "only operations of this HTTP method"),
        ("--exclude-operation", "leave this operation out"),
    ):
        openapi.add_argument(flag, action="append", default=[], metavar="VALUE", help=what)
    openapi.add_argument(
        "--include-deprecated", action="store_true", help="import deprecated operations too"
    )
    openapi.add_argument(
        "--server-variable",
        action="append",
        default=[],
        metavar="NAME",
        help="read this variable of the server URL from SOURCE_SERVER_NAME when loading "
        "(repeatable); the others are written as their defaults",
    )
    openapi.add_argument(
        "--layout",
        choices=("operation", "tag"),
        help="a file per operation (the default), or per tag: SOURCE.TAG.yaml, a YAML stream",
    )
    openapi.add_argument(
        "--update",
        action="store_true",
        help="import over a folder an earlier import wrote, keeping the reviewer's edits",
    )
    openapi.add_argument(
        "--no-check",
        action="store_true",
        help="do not check the description against the OpenAPI schema (that takes 15-20 s "
        "on a 10 MB description)",
    )
    openapi.set_defaults(run=cmd_import_openapi)
    return parser


def _fail(message: str, code: int) -> NoReturn:
    _echo(f"error: {message}", error=True)
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "call" and not any(item.startswith("-") for item in extra):
        # argparse ends a `nargs="*"` positional at the first option, so KEY=VALUE
        # arguments after `--tools DIR` would be refused; they belong to the call.
        args.arguments = [*args.arguments, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except AgentKitError as exc:
        _fail(exc.format_message(), exc.exit_code if exc.exit_code else EXIT_FAILED)
    except KeyboardInterrupt:
        _fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        return EXIT_OK  # `agentkit list | head`: the reader left, nothing to report


if __name__ == "__main__":
    sys.exit(main())
