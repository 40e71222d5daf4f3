"""A confirmation accounts for everything it lets happen: each argument is shown whole, or
the question lists it with an explicit count of what is cut; no key stands in for another.

The preview (``agentkit.declarative.backends.http.preview``) is the one ``agentkit serve`` and ``agentkit call``
both ask with; these tests call it directly, on requests ``build_request`` made, for
random arguments of text, JSON, form and header requests, and ``arguments_shown`` (what a
Python tool's question shows) for random nested mappings."""

from __future__ import annotations

import json
import string
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.context import MAX_ENTRIES, MAX_VALUE_CHARS, arguments_shown, shortened
from agentkit.declarative.backends.http.backend import HttpBackend
from agentkit.declarative.backends.http.preview import preview
from agentkit.declarative.backends.http.request import build_request
from agentkit.declarative.backends.http.spec import HttpSpec
from agentkit.declarative.loader import load_tools
from agentkit.redaction import Redactor, redacting

NAMES = ("memo", "to_account", "trace")
PARAMETERS = "\n".join(f"    - {{name: {name}, type: string}}" for name in NAMES)
ON_ONE_LINE = " ".join(f"{name}={{{{ inputs.{name} }}}}" for name in NAMES)
#: Requests where all three arguments share one line, one string, one field or one header.
REQUESTS = {
    "text-one-line": f'    body: "{ON_ONE_LINE}"\n',
    "text-own-lines": '    body: "'
    + "\\n".join(f"{name}={{{{ inputs.{name} }}}}" for name in NAMES)
    + '"\n',
    "json-one-string": f'    json: {{note: "{ON_ONE_LINE}"}}\n',
    "json-fields": "    json:\n"
    + "".join(f'      {name}: "{{{{ inputs.{name} }}}}"\n' for name in NAMES),
    "form-one-field": f'    form: {{note: "{ON_ONE_LINE}"}}\n',
    "header-one-value": f'    headers: {{X-Note: "{ON_ONE_LINE}"}}\n',
    "header-with-a-credential": '    headers: {X-Signed: "{{ credentials.tok }} '
    + ON_ONE_LINE
    + '"}\n',
    # A value made from a credential and arguments is a form of the credential: the
    # call's redactor masks it whole, arguments and all, wherever it is sent.
    "json-with-a-credential": f'    json: {{sig: "{{{{ credentials.tok }}}} {ON_ONE_LINE}"}}\n',
    "form-with-a-credential": f'    form: {{sig: "{{{{ credentials.tok }}}} {ON_ONE_LINE}"}}\n',
    "query-with-a-credential": f'    query: {{sig: "{{{{ credentials.tok }}}} {ON_ONE_LINE}"}}\n',
    "text-with-a-credential": f'    body: "{{{{ credentials.tok }}}} {ON_ONE_LINE}"\n',
    "multipart-with-a-credential": "    multipart:\n"
    + f'      fields: {{sig: "{{{{ credentials.tok }}}} {ON_ONE_LINE}"}}\n',
    "path-beside-a-credential": "",  # in the URL (see _definition)
    "path-with-a-credential": "",  # in the URL (see _definition)
}
#: Requests that cannot carry a line break (a header would refuse to be sent).
ONE_LINE_ONLY = {"header-one-value", "header-with-a-credential"}
#: Requests where a value made from a credential holds the arguments.
WITH_A_CREDENTIAL = {kind for kind in REQUESTS if kind.endswith("-with-a-credential")}
SECRET = "s3cret-token"


def _definition(kind: str) -> str:
    url = "http://127.0.0.1:9/send"
    request = REQUESTS[kind]
    if kind == "path-beside-a-credential":  # one segment; each template renders on its own
        segment = "{{ credentials.tok }}-" + "-".join(f"{{{{ inputs.{name} }}}}" for name in NAMES)
        url = f"{url}/{segment}"
    if kind == "path-with-a-credential":  # one template: the credential and arguments
        joined = " ~ '-' ~ ".join(f"inputs.{name}" for name in NAMES)
        url = f"{url}/{{{{ credentials.tok ~ '-' ~ {joined} }}}}"
    return (
        f"name: send_{kind.replace('-', '_')}\nversion: 1.0.0\ndescription: d\n"
        f"credentials: [tok]\ninput_schema:\n  parameters:\n{PARAMETERS}\n"
        f"backend:\n  http:\n    method: POST\n    url: {url}\n" + request
    )


def _asked(spec: HttpSpec, inputs: dict[str, Any]) -> str:
    """The question as the user reads it: the preview of the request ``build_request``
    made, through the call's redactor (which knows the forms the request made of
    ``SECRET``), as ``agentkit.context.confirm`` shows it."""
    redactor = Redactor(named={"tok": SECRET})
    with redacting(redactor):
        request = build_request(spec, inputs, {"tok": SECRET}, time.monotonic() + 10)
    return redactor.redact(preview(spec, request, inputs))


def _specs() -> dict[str, HttpSpec]:
    with tempfile.TemporaryDirectory() as folder:
        for kind in REQUESTS:
            (Path(folder) / f"{kind}.yaml").write_text(_definition(kind))
        tools = load_tools(folder)
    by_name = {}
    for tool in tools:
        assert isinstance(tool.BACKEND, HttpBackend)
        by_name[tool.TOOL_NAME] = tool.BACKEND.spec
    return {kind: by_name[f"send_{kind.replace('-', '_')}"] for kind in REQUESTS}


SPECS = _specs()
LETTERS = string.ascii_letters + string.digits


def _value(name: str, *, lines: bool) -> st.SearchStrategy[str]:
    """A value that starts and ends with a mark of its own argument, so that it is found
    whole or not at all; long ones (past the preview's cut) are common."""
    most = 400 if lines else 900
    chunk = st.tuples(st.integers(1, most), st.text(LETTERS, min_size=1, max_size=20)).map(
        lambda pair: (pair[1] * pair[0])[: pair[0]]
    )
    body = st.lists(chunk, min_size=1, max_size=12).map("\n".join) if lines else chunk
    return body.map(lambda text: f"B{name}B{text}E{name}E")


def _listed(asked: str) -> dict[str, Any] | None:
    """The arguments a question lists after the request, parsed; None when it lists none."""
    _, found, rest = asked.partition("the request was made from these arguments:\n")
    if not found:
        return None
    listed: dict[str, Any] = json.JSONDecoder().raw_decode(rest)[0]
    return listed


def _accounted(value: str, shown: Any) -> bool:
    """Whether ``shown`` is ``value``, or its start and the count of what was cut."""
    if shown == value:
        return True
    cut = len(value) - MAX_VALUE_CHARS
    return bool(cut > 0 and shown == f"{value[:MAX_VALUE_CHARS]}\u2026 [{cut:,} more characters]")


@pytest.mark.parametrize("kind", list(REQUESTS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_argument_is_shown_whole_or_listed_with_what_is_cut(
    kind: str, data: st.DataObject
) -> None:
    spec = SPECS[kind]
    lines = kind.startswith("text")
    inputs = {name: data.draw(_value(name, lines=lines), label=name) for name in NAMES}
    asked = _asked(spec, inputs)
    listed = _listed(asked)
    for name, value in inputs.items():
        # Letters and digits go as they are in every encoding (JSON, form, header).
        sent_whole = value in asked.partition("\n\n(Not all of it")[0]
        if sent_whole:
            continue
        assert listed is not None, f"{name} is neither shown whole nor listed:\n{asked}"
        assert _accounted(value, listed[name]), f"{name} is listed as {listed[name]!r}"
    assert SECRET not in asked


def test_a_long_argument_does_not_hide_the_next_one_on_its_line() -> None:
    spec = SPECS["text-one-line"]
    inputs = {"memo": "x" * 2000, "to_account": "ATTACKER-IBAN", "trace": "t-1"}
    asked = preview(spec, build_request(spec, inputs, {"tok": "t"}, time.monotonic() + 10), inputs)
    assert "ATTACKER-IBAN" not in asked.partition("(Not all")[0]  # cut off its line...
    assert '"to_account": "ATTACKER-IBAN"' in asked  # ...and listed after it
    assert '"memo": "' + "x" * 300 + '\u2026 [1,700 more characters]"' in asked


def test_a_request_shown_whole_lists_no_arguments() -> None:
    for kind, spec in SPECS.items():
        inputs = {"memo": "refund", "to_account": "DE00", "trace": "t-1"}
        asked = preview(
            spec, build_request(spec, inputs, {"tok": "t"}, time.monotonic() + 10), inputs
        )
        assert (_listed(asked) is None) is (kind not in WITH_A_CREDENTIAL), kind


@pytest.mark.parametrize("kind", sorted(WITH_A_CREDENTIAL))
def test_an_argument_inside_a_value_made_from_a_credential_is_listed(kind: str) -> None:
    """The value is masked whole in the question (it is a form of the credential), so the
    argument it carries is shown in the list after the request, never only as ``***``."""
    inputs = {"memo": "refund", "to_account": "ATTACKER-IBAN", "trace": "t-1"}
    asked = _asked(SPECS[kind], inputs)
    request = asked.partition("\n\n(Not all of it is shown above")[0]
    assert "ATTACKER-IBAN" not in request
    assert "***" in request
    assert _listed(asked) == inputs
    assert SECRET not in asked


# -- mapping keys alike once cut -----------------------------------------------------------------

#: Keys that share a long start (past the cut), so that they are alike once cut.
ALIKE_KEYS = st.lists(
    st.tuples(st.integers(250, 400), st.text("ab", max_size=3)).map(
        lambda pair: "k" * pair[0] + pair[1]
    ),
    unique=True,
    max_size=30,
)
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(LETTERS, max_size=500))


def _mappings(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    inner: st.SearchStrategy[Any] = (
        LEAVES if depth == 0 else st.one_of(LEAVES, _mappings(depth - 1))
    )
    return ALIKE_KEYS.flatmap(
        lambda keys: st.tuples(*(inner for _ in keys)).map(
            lambda values: dict(zip(keys, values, strict=True))
        )
    )


def _entries_accounted(original: dict[str, Any], shown: dict[str, Any], *, top: bool) -> None:
    counted = 0
    more = [key for key in shown if key.startswith("\u2026") and "more entries" in str(shown[key])]
    if more:
        counted = int(str(shown[more[0]]).strip("[]").split()[0].replace(",", ""))
    assert len(shown) - len(more) + counted == len(original), (len(shown), len(original))
    if top:
        assert not more
    else:
        assert len(shown) - len(more) == min(len(original), MAX_ENTRIES)
    kept = [seen for key, seen in shown.items() if key not in more]
    for (_, value), seen in zip(original.items(), kept, strict=False):
        if isinstance(value, dict):
            _entries_accounted(value, seen, top=False)


@settings(max_examples=60, deadline=None)
@given(arguments=_mappings(2))
def test_every_key_of_every_mapping_is_shown_or_counted(arguments: dict[str, Any]) -> None:
    shown = json.loads(arguments_shown(arguments).partition("\n")[2])
    _entries_accounted(arguments, shown, top=True)


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param(["a" * 300 + "1", "a" * 300 + "2"], id="same-start-same-length"),
        pytest.param(["a" * 300 + "x" * 50, "a" * 300 + "y" * 50], id="same-cut-note"),
        pytest.param([1, "1"], id="number-and-text"),
        pytest.param(["a" * 300 + "1", "a" * 300 + "2", "a" * 300 + "3"], id="three"),
        pytest.param(["\u2026", *[f"k{n}" for n in range(25)]], id="an-ellipsis-key"),
    ],
)
def test_keys_alike_once_cut_each_keep_their_entry(keys: list[Any]) -> None:
    nested = {key: f"value-{number}" for number, key in enumerate(keys)}
    shown = shortened({"top": nested, **{str(key): "v" for key in keys}})
    assert len(shown) == 1 + len({str(key) for key in keys})
    inner = shown["top"]
    values = [value for key, value in inner.items() if "more entries" not in str(value)]
    assert values == [f"value-{number}" for number in range(min(len(nested), MAX_ENTRIES))]
    if len(keys) <= 3:  # each after the first says it is another key shown alike
        assert all("another key shown alike" in key for key in list(inner)[1:])
