"""``agentkit call``: a tool's inputs from ``KEY=VALUE`` arguments, ``--input`` or
``--input-file``; the question a ``confirm: true`` tool asks on the terminal first; and
the request ``--dry-run`` shows instead of sending it."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from agentkit import jsonvalues
from agentkit.cli.loading import load_registry
from agentkit.cli.output import echo, print_json, terminal_text
from agentkit.cli.status import EXIT_FAILED, EXIT_OK
from agentkit.toolerrors import AgentKitError, UsageError

if TYPE_CHECKING:
    from agentkit.context import CallContext
    from agentkit.credentials import CredentialsManager
    from agentkit.tool import Tool
    from agentkit.toolerrors import DeclinedError
    from agentkit.toolexecutor import ToolExecutor
    from agentkit.toolresult import ToolResult
    from agentkit.toolschema import Parameter


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

    tool = load_registry(args)[args.name]  # UnknownToolError names the loaded tools
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
    print_json(result.to_dict())
    if result.page is not None:
        page = result.page
        echo(
            f"note: the answer is over the max_output of tool '{tool.name}' ({page.budget} bytes): "
            f"shown is page 1 of {page.pages}, as a model gets it. Its continuation lasts "
            "only as long as this process: page through it where the tool is served "
            "(agentkit serve), or from Python with one ToolExecutor.",
            error=True,
        )
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
    from agentkit.declarative.backends.http.backend import HttpBackend
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
        echo(f"error: Tool '{tool.name}': {exc}; nothing was sent", error=True)
        return EXIT_FAILED
    from agentkit.context import visible

    echo(f"Dry run of tool '{tool.name}': nothing was sent. A call would {visible(shown)}")
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
        inputs[key] = parse_value(raw, param, key) if param is not None else raw
    return inputs


_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def parse_value(raw: str, param: Parameter, key: str) -> Any:
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
            return [parse_value(item, element, key) for item in items] if element else items
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
    from agentkit.schema.values import from_text

    if "list" in members and raw.lstrip().startswith("["):
        return parse_value(raw, _as_list(param), key)
    if "dictionary" in members and raw.lstrip().startswith("{"):
        return parse_value(raw, _as_list(param, "dictionary"), key)
    value = from_text(raw, members)
    if isinstance(value, str) and "string" not in members:
        if "list" in members:
            return parse_value(raw, _as_list(param), key)
        raise UsageError(f"argument {key}={raw!r}: expected {' or '.join(members)}")
    return value


def _as_list(param: Parameter, member: str = "list") -> Parameter:
    """A union's list (or dictionary) member as a parameter of its own, to read text into."""
    from agentkit.toolschema import Parameter

    if member == "dictionary":
        return Parameter(name=param.name, type=member, parameters=param.parameters)
    return Parameter(name=param.name, type=member, items=param.items)
