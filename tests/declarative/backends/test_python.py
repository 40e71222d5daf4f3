"""The Python-callable backend: references checked before import, signatures checked after."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from typing import Any

import pytest

from agentkit import DefinitionError, ToolExecutionError, ToolExecutor, ToolRegistry, load_tools
from agentkit.toolerrors import DeclinedError
from tests.declarative.conftest import WriteFile
from tests.support.leaks import SECRETS, chain_text, leaked, logged_exception

TOOL = """\
name: stats
version: 1.0.0
input_schema:
  parameters:
    - {{name: text, type: string}}
    - {{name: top, type: integer, required: false, default: 3}}
output_schema:
  parameters:
    - {{name: words, type: integer}}
    - {{name: sentences, type: integer}}
    - {{name: characters, type: integer}}
    - {{name: commonest, type: list, items: string}}
backend:
  python: {reference}
"""


def test_a_python_backend_runs_through_the_executor(write: WriteFile) -> None:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(reference="examples.textstats:text_stats")), registry=registry)
    result = ToolExecutor(credentials={}).execute(registry["stats"], {"text": "a b a."})
    assert result.output == {"words": 3, "sentences": 1, "characters": 6, "commonest": ["a", "b"]}


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        pytest.param("os:system", "'os' is a standard-library module", id="stdlib"),
        pytest.param("builtins:eval", "'builtins' is a standard-library module", id="builtin"),
        pytest.param("examples.textstats:__dict__", "'__dict__' is a dunder name", id="dunder"),
        pytest.param(
            "examples.textstats.text_stats", "expected 'package.module:function'", id="no-colon"
        ),
        pytest.param('"examples; rm -rf /:x"', "invalid reference", id="not-dotted"),
        pytest.param("no_such_module_xyz:f", "cannot import 'no_such_module_xyz'", id="missing"),
        pytest.param("examples.textstats:nothing", "has no attribute 'nothing'", id="no-attribute"),
        pytest.param("examples.textstats:re", "is not callable", id="not-callable"),
        pytest.param(
            "examples.convert:ConvertTemperatureTool",
            "resolves to a builtins.type object, not a Python function",
            id="class",
        ),
    ],
)
def test_bad_references_are_load_problems(write: WriteFile, reference: str, message: str) -> None:
    with pytest.raises(DefinitionError) as info:
        load_tools(write(TOOL.format(reference=reference)))
    assert any(message in str(problem) for problem in info.value.problems), info.value


REFS = "tests.declarative.backends.references"


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        pytest.param(f"{REFS}:os.system", "builtins.builtin_function_or_method", id="attr-path"),
        pytest.param("anyio.to_process:subprocess.run", "subprocess.run", id="third-party-path"),
        pytest.param(f"{REFS}:shell", "builtins.builtin_function_or_method", id="re-exported"),
        pytest.param(f"{REFS}:run", "subprocess.run, which is in the standard library", id="run"),
        pytest.param(f"{REFS}:os.path.join", "posixpath.join", id="pure-python-stdlib"),
        pytest.param(f"{REFS}:add", "builtin_function_or_method", id="operator"),
        pytest.param(f"{REFS}:partial_shell", "functools.partial object", id="partial"),
        pytest.param(f"{REFS}:disguised", "functools.partial object", id="fake-wrapped"),
        pytest.param(f"{REFS}:encode", "json.encoder.JSONEncoder.encode", id="stdlib-method"),
        pytest.param(f"{REFS}:own_code", "which is agentkit's own code", id="agentkit"),
        pytest.param(f"{REFS}:made_by_exec", "no source file (<string>)", id="exec"),
        pytest.param(f"{REFS}:instance", "references.Caller object", id="callable-object"),
        pytest.param(f"{REFS}:cached", "functools._lru_cache_wrapper object", id="c-wrapper"),
        pytest.param(f"{REFS}:Client", "builtins.type object", id="class"),
    ],
)
def test_a_reference_is_judged_by_the_object_it_resolves_to(
    write: WriteFile, reference: str, message: str
) -> None:
    path = write(TOOL.format(reference=reference))
    with pytest.raises(DefinitionError, match=re.escape(message)) as info:
        load_tools(path)
    (problem,) = info.value.problems
    assert problem.file == str(path)
    assert problem.line == 14  # the `python:` line
    assert "a plain function (def or async def) in your own module" in problem.message


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("stats", id="function"),
        pytest.param("decorated", id="functools-wraps-decorator"),
        pytest.param("as_lambda", id="lambda"),
        pytest.param("client.stats", id="bound-method"),
    ],
)
def test_your_own_functions_still_load_and_run(write: WriteFile, name: str) -> None:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(reference=f"{REFS}:{name}")), registry=registry)
    result = ToolExecutor(credentials={}).execute(registry["stats"], {"text": "a b"})
    assert result.output == {"words": 2, "sentences": 0, "characters": 3, "commonest": []}


LEAKY_MODULE = """\
def leaky_lookup(text, credentials):
    key = credentials["api-key"]
    try:
        raise KeyError(key)
    except KeyError as exc:
        raise ValueError(f"bad key {key}") from exc
"""

LEAKY_TOOL = """\
name: leaky
version: 1.0.0
credentials: [api-key]
input_schema:
  parameters:
    - {name: text, type: string}
output_schema:
  parameters:
    - {name: words, type: integer}
backend:
  python: leaky_backend_module:leaky_lookup
"""


@pytest.mark.parametrize("strict", [True, False], ids=["raised", "result"])
def test_a_python_backend_error_keeps_its_type_and_chain_without_the_secret(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch, strict: bool
) -> None:
    module = write(LEAKY_MODULE, "modules/leaky_backend_module.py")
    monkeypatch.syspath_prepend(str(module.parent))
    monkeypatch.delitem(sys.modules, "leaky_backend_module", raising=False)
    registry = ToolRegistry()
    load_tools(write(LEAKY_TOOL), registry=registry)
    secret = SECRETS[4]
    executor = ToolExecutor(credentials={"api-key": secret})
    if strict:
        with pytest.raises(ToolExecutionError, match=r"ValueError: bad key \*\*\*") as caught:
            executor.execute(registry["leaky"], {"text": "a"})
        error = caught.value
    else:
        result = executor.execute(registry["leaky"], {"text": "a"}, raise_on_failure=False)
        assert isinstance(result.error, ToolExecutionError)
        error = result.error
    assert type(error.cause) is ValueError
    assert type(error.cause.__cause__) is KeyError
    assert leaked(chain_text(error) + logged_exception(error), [secret]) == []


NAP = """\
name: nap
version: 1.0.0
concurrency: {concurrency}
input_schema:
  parameters:
    - {{name: seconds, type: float}}
output_schema: {{parameters: [{{name: slept, type: float}}]}}
backend: {{python: "tests.support.serve_tools:nap"}}
"""


def test_an_async_def_backend_is_an_async_tool_aexecute_awaits(write: WriteFile) -> None:
    import asyncio

    registry = ToolRegistry()
    load_tools(write(NAP.format(concurrency=2)), registry=registry)
    tool = registry["nap"]
    executor = ToolExecutor(credentials={})
    on_loop = asyncio.run(executor.aexecute(tool, {"seconds": 0}, raise_on_failure=False))
    assert on_loop.output == {"slept": 0.0}
    assert executor.execute(tool, {"seconds": 0}).output == {"slept": 0.0}
    assert tool.CONCURRENCY == 2


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("0", id="zero"),
        pytest.param("true", id="bool"),
        pytest.param("'2'", id="string"),
        pytest.param("1.5", id="float"),
        pytest.param("10001", id="too-many"),
    ],
)
def test_concurrency_must_be_a_whole_number_of_calls(write: WriteFile, value: str) -> None:
    with pytest.raises(
        DefinitionError,
        match=r"tool.yaml:3:\d+: concurrency: expected a whole number of calls from 1 to 10000, the most a server runs at once, got ",
    ):
        load_tools(write(NAP.format(concurrency=value)), registry=ToolRegistry())


CONFIRMED = """\
name: nap
version: 1.0.0
confirm: {confirm}
input_schema:
  parameters:
    - {{name: seconds, type: float}}
output_schema: {{parameters: [{{name: slept, type: float}}]}}
backend: {{python: "tests.support.serve_tools:{function}"}}
"""


@pytest.mark.parametrize("function", ["nap", "doze"])
def test_confirm_true_asks_with_the_arguments_before_the_function_runs(
    write: WriteFile, function: str
) -> None:
    import asyncio

    from agentkit.context import CallContext, Elicited, serving

    class User(CallContext):
        def __init__(self, action: str) -> None:
            self.action = action
            self.asked: list[str] = []

        async def aelicit(self, message: str, schema: Any) -> Elicited:
            self.asked.append(message)
            return Elicited(action=self.action)  # type: ignore[arg-type]

    registry = ToolRegistry()
    load_tools(write(CONFIRMED.format(confirm="true", function=function)), registry=registry)
    tool = registry["nap"]
    assert tool.CONFIRM is True

    async def call(user: User) -> Any:
        user.loop = asyncio.get_running_loop()
        user.confirming = "nap"
        with serving(user):
            return await executor.aexecute(tool, {"seconds": 0}, raise_on_failure=False)

    executor = ToolExecutor(credentials={})
    with executor:
        allowed, refused = User("accept"), User("decline")
        assert asyncio.run(call(allowed)).output == {"slept": 0.0}
        result = asyncio.run(call(refused))
    assert allowed.asked == [
        "Tool 'nap' wants to run with these arguments:\n{\n  \"seconds\": 0.0\n}\n\nAllow it?"
    ]
    assert isinstance(result.error, ToolExecutionError)
    assert isinstance(result.error.cause, DeclinedError)
    assert str(result.error.cause) == "declined by the user; nothing was done"


@pytest.mark.parametrize("value", ["'yes'", "1", "[true]"])
def test_confirm_is_true_or_false(write: WriteFile, value: str) -> None:
    with pytest.raises(
        DefinitionError,
        match=r"tool.yaml:3:\d+: confirm: expected true or false, got .*\(true: a served call asks the user before it acts\)",
    ):
        load_tools(write(CONFIRMED.format(confirm=value, function="nap")), registry=ToolRegistry())


def test_without_confirm_a_tool_never_asks(write: WriteFile) -> None:
    registry = ToolRegistry()
    load_tools(write(CONFIRMED.format(confirm="false", function="doze")), registry=registry)
    assert registry["nap"].CONFIRM is False


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        pytest.param("use nap_v2", "use nap_v2", id="text"),
        pytest.param("true", "no replacement is named", id="true"),
        pytest.param("false", None, id="false"),
    ],
)
def test_deprecated_says_what_to_use_instead(
    write: WriteFile, value: str, reason: str | None
) -> None:
    registry = ToolRegistry()
    text = CONFIRMED.format(confirm="false", function="nap").replace(
        "confirm: false", f"deprecated: {value}"
    )
    load_tools(write(text), registry=registry)
    said = registry["nap"].DEPRECATED
    assert said == reason


@pytest.mark.parametrize("value", ["''", "3", "[x]"])
def test_deprecated_is_text_or_true(write: WriteFile, value: str) -> None:
    text = CONFIRMED.format(confirm="false", function="nap").replace(
        "confirm: false", f"deprecated: {value}"
    )
    with pytest.raises(
        DefinitionError,
        match=r"tool.yaml:3:\d+: deprecated: expected what to use instead \(text such as 'use close_issue_v2'\) or true, got ",
    ):
        load_tools(write(text), registry=ToolRegistry())


# -- where a backend is imported from -------------------------------------------------------------

SCRIPT = """\
import sys
from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools

registry = ToolRegistry()
try:
    load_tools(sys.argv[1], registry=registry, python_path=sys.argv[2:])
except DefinitionError as exc:
    print(exc)
    raise SystemExit(2)
print(ToolExecutor().execute(registry["echo"], {"text": "hi"}).output)
"""

ECHO = """\
name: echo
version: 1.0.0
input_schema: {parameters: [{name: text, type: string}]}
output_schema: {parameters: [{name: text, type: string}]}
backend: {python: echoes.calls:echo}
"""


@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "relative-to-cwd"])
def test_load_tools_imports_a_backend_from_its_python_path(tmp_path: Any, relative: bool) -> None:
    # A script run from elsewhere than the checkout, as the CLI's --python-path does it.
    code = tmp_path / "code"
    (code / "echoes").mkdir(parents=True)
    (code / "echoes" / "__init__.py").write_text("")
    (code / "echoes" / "calls.py").write_text(
        "def echo(text: str) -> dict:\n    return {'text': text}\n"
    )
    # A json.py beside it must not replace the standard library's: the folder is searched last.
    (code / "json.py").write_text("raise RuntimeError('shadowed')\n")
    definitions = tmp_path / "defs"
    definitions.mkdir()
    (definitions / "echo.yaml").write_text(ECHO)
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = "../code" if relative else str(code)
    run = functools.partial(
        subprocess.run, cwd=elsewhere, capture_output=True, text=True, timeout=60
    )
    found = run([sys.executable, str(script), str(definitions), folder])
    assert (found.returncode, found.stdout, found.stderr) == (0, "{'text': 'hi'}\n", "")
    missing = run([sys.executable, str(script), str(definitions)])
    assert missing.returncode == 2
    assert (
        "cannot import 'echoes.calls': No module named 'echoes'; put its folder on the "
        "Python path (load_tools(..., python_path=[FOLDER]), or agentkit --python-path "
        "FOLDER)" in missing.stdout
    )
