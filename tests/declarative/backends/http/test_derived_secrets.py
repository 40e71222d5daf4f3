"""A secret a template transforms, inside a list, a mapping or nested deeper, never shows.

Every place a request template can read ``credentials`` (URL path, query,
headers, ``json``, ``form``, ``body``, ``multipart``) renders a credential
changed by a filter (upper-cased, reversed, one more) -- as a string, in a list,
as a mapping's value or key, nested. Against a loopback server that echoes the
request back in a 500 (unless its path is ``/ok``), neither ``--dry-run``'s text, nor the confirmation
question, nor the failed call's error shows it. What the template writes itself
and the call's own arguments are not secrets, and stay readable.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentkit import ToolExecutionError, ToolExecutor, ToolRegistry, load_tools
from agentkit.context import CallContext, Elicited, serving
from agentkit.declarative.backends.http.request import made_from_credentials
from agentkit.declarative.templates import compile_template
from agentkit.toolerrors import SecretInOutputError
from tests.declarative.backends.http.test_secrets import EveryPath
from tests.declarative.conftest import WriteFile
from tests.support import loopback
from tests.support.leaks import chain_text, leaked, logged_exception

SECRET = "ghp_SecretValue12345"
PIN = "48170017"
#: What the templates below make of SECRET (and of PIN), none of them SECRET itself.
DERIVED = [SECRET.upper(), SECRET[::-1], SECRET.lower(), f"x-{SECRET.upper()}", "48170018"]

TOOL = """\
name: derived
version: 1.0.0
credentials: [token, pin]
input_schema:
  parameters:
    - {{name: tag, type: string}}
output_schema:
  parameters:
    - {{name: echo, type: string}}
backend:
  http:
{http}
    output:
      echo: "{{{{ response.text }}}}"
"""

#: Each place, and a value that puts a derived secret there in a container.
PLACES = {
    "query-list": '    url: {origin}/fail\n    query: {{k: "{{{{ [credentials.token | upper] }}}}"}}',
    "query-list-several": (
        "    url: {origin}/fail\n"
        "    query: {{k: \"{{{{ [inputs.tag, credentials.token | reverse, 'plain'] }}}}\"}}"
    ),
    "json-list": (
        "    method: POST\n    url: {origin}/fail\n"
        '    json: {{a: "{{{{ [credentials.token | upper] }}}}"}}'
    ),
    "json-dict-value": (
        "    method: POST\n    url: {origin}/fail\n"
        "    json: {{d: \"{{{{ {{'a': credentials.token | lower}} }}}}\"}}"
    ),
    "json-dict-key": (
        "    method: POST\n    url: {origin}/fail\n"
        "    json: {{d: \"{{{{ {{credentials.token | upper: 'v'}} }}}}\"}}"
    ),
    "json-nested": (
        "    method: POST\n    url: {origin}/fail\n"
        "    json: {{n: \"{{{{ [[{{'deep': [credentials.token | reverse]}}]] }}}}\"}}"
    ),
    "json-number": (
        "    method: POST\n    url: {origin}/fail\n"
        '    json: {{n: "{{{{ [(credentials.pin | int) + 1] }}}}"}}'
    ),
    "form-list": (
        "    method: POST\n    url: {origin}/fail\n"
        "    form: {{f: \"{{{{ ['x-' ~ credentials.token | upper] }}}}\"}}"
    ),
    "multipart-field-list": (
        "    method: POST\n    url: {origin}/fail\n"
        '    multipart: {{fields: {{f: "{{{{ [credentials.token | upper] }}}}"}}}}'
    ),
    "body-text": (
        "    method: POST\n    url: {origin}/fail\n"
        "    body: \"{{{{ (['x-' ~ credentials.token | upper]) | join(',') }}}}\""
    ),
    "path-segment": "    url: {origin}/{{{{ credentials.token | reverse }}}}",
    "header-text": (
        "    url: {origin}/fail\n"
        "    headers: {{X-Sig: \"{{{{ ['x-', credentials.token | upper] | join('') }}}}\"}}"
    ),
}


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with loopback.serve(EveryPath()) as served:
        yield served


def _tool(write: WriteFile, origin: str, place: str) -> Any:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(http=PLACES[place].format(origin=origin))), registry=registry)
    return registry["derived"]


CREDENTIALS = {"token": SECRET, "pin": PIN}


@pytest.mark.parametrize("place", PLACES)
def test_a_dry_run_masks_a_derived_secret(write: WriteFile, origin: str, place: str) -> None:
    tool = _tool(write, origin, place)
    shown = tool.BACKEND.dry_run({"tag": "mine"}, CREDENTIALS)
    assert "***" in shown
    assert leaked(shown, DERIVED) == []


@pytest.mark.parametrize("place", PLACES)
def test_a_failed_calls_error_masks_a_derived_secret(
    write: WriteFile, origin: str, place: str
) -> None:
    result = ToolExecutor(credentials=CREDENTIALS).execute(
        _tool(write, origin, place), {"tag": "mine"}, raise_on_failure=False
    )
    assert result.error is not None
    assert "returned 500" in str(result.error)  # the echo of the request came back
    shown = "\n".join(
        [json.dumps(result.to_dict()), chain_text(result.error), logged_exception(result.error)]
    )
    assert leaked(shown, DERIVED) == []


class Allows(CallContext):
    """Accepts every question, keeping what it was asked."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.asked: list[str] = []

    async def aelicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        self.asked.append(message)
        return Elicited(action="accept")


@pytest.mark.parametrize("place", PLACES)
def test_the_confirmation_question_masks_a_derived_secret(
    write: WriteFile, origin: str, place: str
) -> None:
    tool = _tool(write, origin, place)
    executor = ToolExecutor(credentials=CREDENTIALS)

    async def main() -> list[str]:
        allows = Allows(asyncio.get_running_loop())
        allows.confirming = "derived"
        with serving(allows):
            await asyncio.to_thread(executor.execute, tool, {"tag": "mine"}, raise_on_failure=False)
        return allows.asked

    [question] = asyncio.run(main())
    assert "send this request:" in question
    assert leaked(question, DERIVED) == []


@pytest.mark.parametrize(
    ("fields", "withheld"),
    [
        pytest.param(["kind", "who"], False, id="literal-and-argument-given"),
        pytest.param(["kind", "who", "key"], True, id="derived-secret-withheld"),
    ],
)
def test_what_the_template_writes_and_the_arguments_stay_public(
    write: WriteFile, fields: list[str], withheld: bool
) -> None:
    # An answer holding a registered form is withheld: one holding the literal and the
    # argument the template wrote beside the secret is given, so neither was registered.
    def answer(handler: loopback.Handler) -> None:
        sent = json.loads(handler.body)["d"]
        handler.reply(200, {"echo": " ".join(sent[name] for name in fields)})

    http = (
        "    method: POST\n    url: {origin}/d\n"
        "    json: {{d: \"{{{{ {{'kind': 'application/json', 'who': inputs.tag, "
        "'key': credentials.token | upper}} }}}}\"}}"
    )
    with loopback.serve({"/d": answer}) as served:
        text = TOOL.format(http=http.format(origin=served)).replace(
            '    output:\n      echo: "{{ response.text }}"\n', ""
        )
        registry = ToolRegistry()
        load_tools(write(text), registry=registry)
        result = ToolExecutor(credentials=CREDENTIALS).execute(
            registry["derived"], {"tag": "alice-wonder"}, raise_on_failure=False
        )
    if withheld:
        assert result.output is None
        assert isinstance(result.error, ToolExecutionError)
        assert isinstance(result.error.cause, SecretInOutputError)
    else:
        assert result.output == {"echo": "application/json alice-wonder"}, result.error


@pytest.mark.parametrize(
    ("source", "rendered", "registered"),
    [
        pytest.param(
            "{{ [credentials.k | upper, 'text/plain'] }}",
            ["ABCDEFGHIJ", "text/plain"],
            ["ABCDEFGHIJ"],
            id="literal-left-out",
        ),
        pytest.param(
            "{{ {credentials.k: {'n': [inputs.q, credentials.k * 2]}} }}",
            {"abcdefghij": {"n": ["the query", "abcdefghijabcdefghij"]}},
            ["abcdefghijabcdefghij", "abcdefghij"],
            id="keys-and-nested",
        ),
        pytest.param(
            "{{ [credentials.k | length, (credentials.k | length) * 10000000] }}",
            [10, 100000000],
            ["100000000"],
            id="numbers-as-text-short-ones-left-out",
        ),
        pytest.param(
            "{{ [true, none, credentials.k, credentials.k[:3]] }}",
            [True, None, "abcdefghij", "abc"],
            ["abcdefghij"],
            id="constants-and-short-strings",
        ),
    ],
)
def test_every_string_made_from_credentials_is_found(
    source: str, rendered: Any, registered: list[str]
) -> None:
    template = compile_template(source, "query.k", ("inputs", "credentials"))
    found = made_from_credentials(rendered, template, {"q": "the query"})
    assert sorted(found) == sorted(registered)


def test_a_folder_of_tools_loads_from_the_places_above(tmp_path: Path) -> None:
    # Every place above is a valid definition: the tests above test calls, not problems.
    write = WriteFile(tmp_path)
    for index, place in enumerate(PLACES):
        write(
            TOOL.format(http=PLACES[place].format(origin="http://127.0.0.1:9")).replace(
                "name: derived", f"name: derived_{index}"
            ),
            f"{index}.yaml",
        )
    assert len(load_tools(tmp_path)) == len(PLACES)
