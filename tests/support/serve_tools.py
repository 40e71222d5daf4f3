"""Python backends for the serving tests: slow calls that say what became of them.

Each writes ``<marker>.started`` when it begins and ``<marker>.<fate>`` when it ends
(finished, cancelled), so a test can wait for a call to be running and learn how it
ended without timing anything.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentkit.context import aelicit, elicit, log
from agentkit.toolerrors import ElicitationError

#: A ``confirm: true`` Python tool that dozes: the definition the serving tests share.
WIPE = """\
name: wipe
version: 1.0.0
description: Wipe the scratch space (asks first).
confirm: true
input_schema: {parameters: [{name: seconds, type: float}]}
output_schema: {parameters: [{name: slept, type: float}]}
backend: {python: "tests.support.serve_tools:doze"}
"""


def _mark(marker: str, fate: str) -> None:
    if marker:
        Path(f"{marker}.{fate}").write_text(fate)


async def nap(seconds: float, marker: str = "") -> dict[str, Any]:
    """Sleep on the event loop (an async tool, so a deadline or cancel stops it)."""
    _mark(marker, "started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _mark(marker, "cancelled")
        raise
    _mark(marker, "finished")
    return {"slept": seconds}


def doze(seconds: float, marker: str = "") -> dict[str, Any]:
    """Sleep in a thread (a sync tool: a deadline can only abandon it)."""
    _mark(marker, "started")
    time.sleep(seconds)
    _mark(marker, "finished")
    return {"slept": seconds}


def chatty(levels: list[str], credentials: Mapping[str, str]) -> dict[str, Any]:
    """Log one message at each of ``levels``, each quoting the tool's credential."""
    for level in levels:
        log(level, f"{level} message, token {credentials['api-token']}")  # type: ignore[arg-type]
    return {"sent": len(levels)}


NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def ask(question: str, credentials: Mapping[str, str]) -> dict[str, Any]:
    """Ask from a sync tool (the worker thread waits), quoting the credential."""
    token = credentials["api-token"]
    form = {"type": "object", "properties": {"name": {"type": "string", "default": token}}}
    answer = elicit(f"{question} (token {token})", form)
    return {"action": answer.action, "name": str(answer.content.get("name", ""))}


async def ask_async(question: str) -> dict[str, Any]:
    answer = await aelicit(question, NAME_FORM)
    return {"action": answer.action, "name": str(answer.content.get("name", ""))}


def ask_twice(question: str) -> dict[str, Any]:
    """Ask two questions in one call, the second quoting the first answer."""
    first = elicit(question, NAME_FORM)
    second = elicit(f"And {first.content.get('name', '')}'s surname?", NAME_FORM)
    return {
        "action": second.action,
        "name": f"{first.content.get('name')} {second.content.get('name')}",
    }


def ask_then_log(question: str) -> dict[str, Any]:
    """Ask, then log the answer: the message goes with the round that answered."""
    answer = elicit(question, NAME_FORM)
    log("info", f"heard {answer.content.get('name', '')}")
    return {"action": answer.action, "name": str(answer.content.get("name", ""))}


async def ask_wrongly(question: str) -> dict[str, Any]:
    """The sync form on the event loop: refused, it would block the loop it waits on."""
    answer = elicit(question, NAME_FORM)
    return {"action": answer.action, "name": ""}


def unencodable(kind: str) -> Any:
    """Puts a string UTF-8 cannot encode (a non-UTF-8 file name, as ``os.fsdecode`` gives
    it) where ``kind`` says: a text block, the output, an error, a log message, a question."""
    from agentkit.content import Output, Text

    name = os.fsdecode(b"report-\xff.txt")
    if kind == "text":
        return Output(Text(f"listing: {name}"), structured={"file": "listed"})
    if kind == "error":
        raise ValueError(f"cannot read {name}")
    if kind == "log":
        log("warning", f"skipped {name}", logger_name=name)
        return {"file": "logged"}
    if kind == "elicit":
        answer = elicit(f"Delete {name}?", {"type": "object", "properties": {}})
        return {"file": answer.action}
    return {"file": name}


def steps(count: int) -> dict[str, Any]:
    """Report ``count`` steps of progress, then say how many there were."""
    from agentkit.progress import report_progress

    for done in range(1, count + 1):
        report_progress(done=done, total=count, message=f"step {done}")
    return {"steps": count}


def token_size(credentials: Mapping[str, str]) -> dict[str, Any]:
    """How long the caller's token is (never the token): tells two callers apart."""
    return {"size": len(credentials["api-token"])}


async def wait_for(path: str) -> dict[str, Any]:
    """Wait (at most 60 s) until the test creates ``path``: a call as long as the test needs."""
    for _ in range(6000):
        if Path(path).exists():
            return {"waited": True}
        await asyncio.sleep(0.01)
    return {"waited": False}


async def hold(marker: str) -> dict[str, Any]:
    """Mark ``<marker>.started``, then run (at most 60 s) until the test creates
    ``<marker>.release``: a call that holds its slot as long as the test needs."""
    _mark(marker, "started")
    for _ in range(6000):
        if Path(f"{marker}.release").exists():
            return {"held": True}
        await asyncio.sleep(0.01)
    return {"held": False}


#: A form of a field of each kind of check: a bound, a choice, a length.
PROFILE_FORM = {
    "type": "object",
    "properties": {
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "color": {"type": "string", "enum": ["red", "green"]},
        "pin": {"type": "string", "maxLength": 30},
    },
    "required": ["age"],
}
#: A form no MCP client can show: a field that is an object.
NESTED_FORM = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}


def profile(marker: str) -> dict[str, Any]:
    """Ask a form (``marker`` "nested": one no client can show); mark that the answer came."""
    answer = elicit("Your profile?", NESTED_FORM if marker == "nested" else PROFILE_FORM)
    _mark(marker, "heard")
    return {"heard": dict(answer.content)}


async def profile_async(marker: str) -> dict[str, Any]:
    answer = await aelicit("Your profile?", PROFILE_FORM)
    _mark(marker, "heard")
    return {"heard": dict(answer.content)}


def profile_swallowing(marker: str) -> dict[str, Any]:
    """Goes on without the answer when asking fails: the call still ends in the failure."""
    try:
        answer = elicit("Your profile?", PROFILE_FORM)
    except ElicitationError:
        return {"heard": {}}
    return {"heard": dict(answer.content)}


def ask_briefly(marker: str) -> dict[str, Any]:
    """Ask the user with a short ``timeout=`` of its own and go on with a default when
    no answer comes (``timeout=``'s documented use); mark ``<marker>.went-on`` then."""
    action: str
    try:
        action = elicit("Go on?", NAME_FORM, timeout=0.3).action
    except ElicitationError:
        action = "default"
    _mark(marker, "went-on")
    return {"action": action, "name": ""}


def ask_later(marker: str) -> dict[str, Any]:
    """Mark ``<marker>.started``, wait (at most 60 s) for ``<marker>.release``, then ask
    the user: a call that asks only after its client may have left."""
    _mark(marker, "started")
    for _ in range(6000):
        if Path(f"{marker}.release").exists():
            break
        time.sleep(0.01)
    answer = elicit("Go on?", NAME_FORM)
    return {"action": answer.action, "name": str(answer.content.get("name", ""))}


def report(rows: int, marker: str = "") -> dict[str, Any]:
    """A long answer: ``rows`` rows of a report (for ``max_output``), each run counted in
    ``<marker>.runs`` (one line a run), so a test can tell a page from a new run."""
    if marker:
        with Path(f"{marker}.runs").open("a") as runs:
            runs.write("run\n")
    return {
        "title": f"{rows} rows",
        "rows": [{"id": row, "name": f"row {row}", "note": "é" * (row % 7)} for row in range(rows)],
    }


def heap() -> dict[str, Any]:
    """How many objects the serving process has frozen out of the collector's reach."""
    import gc

    return {"frozen": gc.get_freeze_count()}


class Halt(BaseException):
    """A tool's own BaseException, which is not an Exception."""


def stops(how: str, credentials: Mapping[str, str]) -> dict[str, Any]:
    """Stops as ``how`` says: ``exit`` (``sys.exit(3)``), ``exit-text`` (``sys.exit()``
    with the credential in its message), ``generator-exit``, ``halt`` (``Halt``), or
    ``bytes`` (answers bytes, which JSON has no form for); ``fine`` answers."""
    import sys

    key = credentials.get("api-key", "")
    if how == "exit":
        sys.exit(3)
    if how == "exit-text":
        sys.exit(f"bad key {key}")
    if how == "generator-exit":
        raise GeneratorExit(f"closing {key}")
    if how == "halt":
        raise Halt(f"halted at {key}")
    if how == "bytes":
        return {"data": {"blob": key.encode()}}
    return {"data": {"how": how}}


async def stops_async(how: str, credentials: Mapping[str, str]) -> dict[str, Any]:
    """``stops`` as an async tool, run on the server's loop."""
    await asyncio.sleep(0)
    return stops(how, credentials)
