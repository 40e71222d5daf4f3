"""Templates cannot exhaust memory or CPU: every path that grows a value, loops or recursion.

Each attack renders in one child process limited to 1 GiB of address space and
a wall-clock timeout, so a regression fails its case instead of the test run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from typing import Any

import pytest

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.declarative.templates import (
    MAX_OUTPUT_CHARS,
    TemplateRenderError,
    TemplateSyntaxProblem,
    compile_template,
    limits,
)
from tests.declarative.conftest import WriteFile
from tests.support import loopback

ROOTS = ("inputs",)
FIELD = "backend.http.json.text"
BIG = 600_000  # under the cap alone, over it twice
CONTEXT: dict[str, Any] = {
    "inputs": {"big": "x" * BIG, "city": "Oslo", "tags": ["a", "b"], "n": 3, "nested": [[1]]}
}
OVER = f"would build a value over {MAX_OUTPUT_CHARS} characters"
BITS = f"would build a number over {limits.MAX_INT_BITS} bits"
REFUSED = "is not allowed in templates"
BUILT = f"over {limits.MAX_RENDER_BUILT} in all"

# (source, expected ("load" or "render"), a regex the message must match)
ATTACKS = [
    # -- operators ------------------------------------------------------------------------------
    pytest.param("{{ 'a' * 10000000 }}", "render", OVER, id="repeat-str"),
    pytest.param("{{ [1] * 10000000 }}", "render", OVER, id="repeat-list"),
    pytest.param("{{ 10000000 * inputs.tags }}", "render", OVER, id="repeat-list-reversed"),
    pytest.param("{{ [[1] * 1000000] * 1000000 }}", "render", OVER, id="repeat-nested"),
    pytest.param("{{ (inputs.big,) * 2 }}", "render", OVER, id="repeat-tuple-of-big"),
    pytest.param("{{ inputs.big + inputs.big }}", "render", OVER, id="add-strings"),
    pytest.param("{{ [inputs.big] + [inputs.big] }}", "render", OVER, id="add-lists"),
    pytest.param("{{ inputs.big ~ inputs.big }}", "render", OVER, id="concat"),
    pytest.param(
        "{{ " + " ~ ".join(["inputs.big[:100000]"] * 11) + " }}", "render", OVER, id="concat-many"
    ),
    pytest.param("{{ inputs.big ~ 1 ~ inputs.big }}", "render", OVER, id="concat-text"),
    pytest.param("{{ 9 ** 99999 }}", "render", BITS, id="power"),
    pytest.param("{{ (2 ** 4000) ** 2 }}", "render", BITS, id="power-big-base"),
    pytest.param("{{ 2 ** 4096 }}", "render", BITS, id="power-just-over"),
    pytest.param("{{ (2 ** 3000) * (2 ** 3000) }}", "render", BITS, id="multiply-ints"),
    pytest.param("{{ (2 ** 4096 - 1) + (2 ** 4096 - 1) }}", "render", BITS, id="add-ints"),
    pytest.param("{{ '%99999999s' % 1 }}", "render", "'%'", id="percent-format"),
    # -- literals sharing one big value -------------------------------------------------------
    pytest.param("{{ [inputs.big, inputs.big] }}", "render", OVER, id="list-literal"),
    pytest.param("{{ (inputs.big, inputs.big) }}", "render", OVER, id="tuple-literal"),
    pytest.param("{{ {'a': inputs.big, 'b': inputs.big} }}", "render", OVER, id="dict-literal"),
    pytest.param(
        "{% set a = [inputs.big[:300000]] %}{% set b = [a, a] %}{% set c = [b, b] %}{{ c | length }}",
        "render",
        OVER,
        id="literal-doubling",
    ),
    # -- filters -----------------------------------------------------------------------------
    pytest.param("{{ (['a'] * 100000) | join('y' * 100) }}", "render", OVER, id="join-separator"),
    pytest.param("{{ inputs.big | replace('x', 'yy') }}", "render", OVER, id="replace"),
    pytest.param(
        "{{ ('abc' * 1000) | replace('', 'z' * 1000) }}", "render", OVER, id="replace-empty"
    ),
    pytest.param("{{ [1] | batch(999999, 'abc') | list }}", "render", OVER, id="batch-fill"),
    pytest.param("{{ [1] | slice(999999, 'abc') | list }}", "render", OVER, id="slice-fill"),
    pytest.param("{{ (['a'] * 400000) | batch(1) | list }}", "render", OVER, id="batch-many"),
    pytest.param(
        "{{ ([[1] * 1000] * 100) | tojson(indent=100000) }}", "render", OVER, id="tojson-indent"
    ),
    pytest.param("{{ ('&' * 300000) | forceescape | forceescape }}", "render", OVER, id="escape"),
    pytest.param("{{ ('é' * 600000) | urlencode }}", "render", OVER, id="urlencode"),
    pytest.param(
        "{{ ([[1]] * 100000) | sum(start=[]) }}", "render", "adds numbers", id="sum-lists"
    ),
    pytest.param("{{ ('9' * 1300) | int }}", "render", BITS, id="int-filter"),
    pytest.param(
        "{{ range(1000) | map('string') | map('replace', '', 'x' * 999) | list }}",
        "render",
        OVER,
        id="map-then-list",
    ),
    pytest.param(
        "{{ range(10000) | map('string') | map('replace', '', 'x' * 500) | join }}",
        "render",
        OVER,
        id="map-then-join",
    ),
    pytest.param("{{ inputs.city | center(99999999) }}", "load", REFUSED, id="center"),
    pytest.param("{{ inputs.city | indent('x' * 1000) }}", "load", REFUSED, id="indent"),
    pytest.param("{{ inputs.city | wordwrap(1, wrapstring='x') }}", "load", REFUSED, id="wordwrap"),
    pytest.param("{{ inputs.city | urlize(target='x') }}", "load", REFUSED, id="urlize"),
    pytest.param("{{ inputs | pprint }}", "load", REFUSED, id="pprint"),
    pytest.param("{{ inputs | xmlattr }}", "load", REFUSED, id="xmlattr"),
    # -- methods on str, list, dict, int -----------------------------------------------------
    pytest.param("{{ ('y' * 100).join(['a'] * 100000) }}", "render", OVER, id="str-join"),
    pytest.param("{{ inputs.big.replace('x', 'xx') }}", "render", OVER, id="str-replace"),
    pytest.param("{{ inputs.big.replace('', '-') }}", "render", OVER, id="str-replace-empty"),
    pytest.param("{{ ('\t' * 100000).expandtabs(100000) }}", "render", REFUSED, id="expandtabs"),
    pytest.param("{{ 'a'.translate({97: 'x' * 100000}) }}", "render", REFUSED, id="translate"),
    pytest.param("{{ inputs.big.encode('unicode_escape') }}", "render", REFUSED, id="encode"),
    pytest.param("{{ (1).to_bytes(999999, 'big') }}", "render", REFUSED, id="to-bytes"),
    pytest.param("{{ '{:>999999999}'.format(1) }}", "render", "not allowed", id="str-format"),
    pytest.param("{{ '{x}'.format_map({'x': 1}) }}", "render", "not allowed", id="format-map"),
    pytest.param("{{ 'a'.ljust(99999999) }}", "render", "over the limit", id="ljust"),
    pytest.param("{{ 'a'.center(99999999) }}", "render", "over the limit", id="str-center"),
    pytest.param("{{ inputs.city.zfill(99999999) }}", "render", "over the limit", id="zfill"),
    pytest.param(
        "{{ {}.fromkeys(range(10000), inputs.big[:1000]) }}", "render", OVER, id="dict-fromkeys"
    ),
    pytest.param("{{ dict(a=inputs.big, b=inputs.big) }}", "render", OVER, id="dict-global"),
    # -- globals and statements that are gone ----------------------------------------------
    pytest.param("{{ lipsum(1000000) }}", "load", "unknown variable 'lipsum'", id="lipsum"),
    pytest.param("{{ cycler(1, 2) }}", "load", "unknown variable 'cycler'", id="cycler"),
    pytest.param("{{ joiner() }}", "load", "unknown variable 'joiner'", id="joiner"),
    pytest.param(
        "{% set ns = namespace(s='x') %}{% for i in range(30) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}{{ ns.s }}",
        "load",
        "namespace",
        id="namespace-accumulation",
    ),
    pytest.param(
        "{% macro m(n) %}{{ m(n) }}{{ m(n) }}{% endmacro %}{{ m(1) }}",
        "load",
        r"\{% macro %\} " + REFUSED,
        id="macro-recursion",
    ),
    pytest.param(
        "{% for x in [[1]] recursive %}{{ loop(x) }}{% endfor %}",
        "load",
        "recursive %} " + REFUSED,
        id="recursive-loop",
    ),
    pytest.param(
        "{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}x{% endcall %}",
        "load",
        REFUSED,
        id="call-block",
    ),
    pytest.param(
        "{% filter upper %}{% for i in range(10) %}x{% endfor %}{% endfilter %}",
        "load",
        r"\{% filter %\} " + REFUSED,
        id="filter-block",
    ),
    pytest.param("{% set x %}{{ inputs.big }}{% endset %}", "load", REFUSED, id="set-block"),
    pytest.param("{% include 'x' %}", "load", "include %} " + REFUSED, id="include"),
    pytest.param("{% import 'x' as y %}", "load", "import %} " + REFUSED, id="import"),
    pytest.param("{% extends 'x' %}", "load", "extends %} " + REFUSED, id="extends"),
    pytest.param("{% block b %}x{% endblock %}", "load", "block %} " + REFUSED, id="block"),
    pytest.param("{{ " + "[" * 20000 + "]" * 20000 + " }}", "load", "nests", id="deep-brackets"),
    pytest.param(
        "{{ " + "(" * 20000 + "1" + ")" * 20000 + " }}", "load", "nests", id="deep-parentheses"
    ),
    # -- many values, each under the cap -----------------------------------------------------
    pytest.param(
        "".join(f"{{% set a{i} = 'x'.ljust(999999) %}}" for i in range(25)),
        "render",
        BUILT,
        id="many-sets",
    ),
    pytest.param(
        "".join(f"{{% set a{i} = inputs.big[{i}:] %}}" for i in range(40)),
        "render",
        BUILT,
        id="many-slices",
    ),
    pytest.param(
        "".join(f"{{% set a{i} = inputs.big | safe %}}" for i in range(40)),
        "render",
        BUILT,
        id="many-safe-copies",
    ),
    pytest.param(
        "{% for x in range(10000) | map('string') | map('replace', '', 'x' * 999) %}"
        "{{ loop.length }}{% endfor %}",
        "render",
        BUILT,
        id="loop-buffering-big-items",
    ),
    # -- CPU ---------------------------------------------------------------------------------
    pytest.param(
        "{% for a in range(10000) %}{% for b in range(10000) %}{% endfor %}{% endfor %}",
        "render",
        f"over {limits.MAX_LOOP_ITERATIONS} iterations",
        id="nested-loops",
    ),
    pytest.param(
        "{% for a in inputs.big %}{% for b in inputs.big %}{% endfor %}{% endfor %}",
        "render",
        "iterations",
        id="nested-loops-over-input",
    ),
    pytest.param(
        "{% for a in range(10000) if a is odd %}{% for b in range(10000) %}{% endfor %}"
        "{% endfor %}",
        "render",
        "iterations",
        id="filtered-loops",
    ),
    pytest.param(
        "{% for a in range(10000) %}{% for b in range(10000) %}{% set seen = loop %}{% endfor %}"
        "{% endfor %}",
        "render",
        "iterations",
        id="loops-with-loop-variable",
    ),
]

# The child: render each case under a 1 GiB address-space limit, one JSON line each.
CHILD = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from agentkit.declarative.templates import (
    TemplateRenderError, TemplateSyntaxProblem, compile_template)
cases, context, field = json.loads(sys.stdin.read())
for name, source, seconds in cases:
    started = time.monotonic()
    deadline = None if seconds is None else started + seconds
    try:
        template = compile_template(source, field, ("inputs",))
    except TemplateSyntaxProblem as exc:
        kind, message = "load", str(exc)
    else:
        try:
            value = template.render(context, deadline=deadline)
            kind, message = "ok", repr(value)[:200]
        except TemplateRenderError as exc:
            kind, message = "render", str(exc)
        except BaseException as exc:
            kind, message = "escaped", f"{type(exc).__name__}: {exc}"[:500]
    elapsed = time.monotonic() - started
    print(json.dumps([name, kind, message, elapsed]), flush=True)
"""


def render_bounded(
    cases: list[tuple[str, str, float | None]], *, timeout: float = 60
) -> dict[str, tuple[str, str, float]]:
    """Render ``(id, source, deadline seconds)`` cases in a memory-limited child process.

    A case the child did not finish (it was killed, ran out of memory or time)
    is reported as ``("died", what the child said last)``.
    """
    payload = json.dumps([cases, CONTEXT, FIELD])
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD],
            input=payload,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        output, error = done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        output = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        error = f"timed out after {timeout}s"
    results = {}
    for line in output.splitlines():
        name, kind, message, elapsed = json.loads(line)
        results[name] = (kind, message, elapsed)
    for name, _source, _seconds in cases:
        results.setdefault(name, ("died", error[-2000:], 0.0))
    return results


@pytest.fixture(scope="module")
def attack_results() -> dict[str, tuple[str, str, float]]:
    cases = [(param.id or "", param.values[0], None) for param in ATTACKS]
    assert all(isinstance(source, str) for _name, source, _seconds in cases)
    return render_bounded(cases)  # type: ignore[arg-type]  # values[0] is the source


@pytest.mark.parametrize(("source", "expected", "message"), ATTACKS)
def test_each_attack_is_refused_cleanly(
    request: pytest.FixtureRequest,
    attack_results: dict[str, tuple[str, str, float]],
    source: str,
    expected: str,
    message: str,
) -> None:
    kind, said, _elapsed = attack_results[request.node.callspec.id]
    assert kind == expected, said
    assert re.search(message, said), said
    if kind == "render":
        assert said.startswith(f"{FIELD}: "), "a render error names the field"


def test_nested_loops_end_near_the_deadline() -> None:
    source = (
        "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}"
        "{{ (a ~ b ~ c) | upper }}{% endfor %}{% endfor %}{% endfor %}"
    )
    results = render_bounded([("loops", source, 0.2), ("output-only", "{{ 'x' }}", 0.2)])
    kind, said, elapsed = results["loops"]
    assert (kind, said) == ("render", f"{FIELD}: the template exceeded the call's deadline")
    # Not a speed test: the render stops within a generous margin of its deadline.
    assert elapsed < 0.2 + 5
    assert results["output-only"][:2] == ("ok", "'x'")


def test_a_render_without_a_deadline_is_still_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_RENDER_SECONDS", 0.05)
    template = compile_template(
        "{% for a in range(1000) %}{% for b in range(1000) %}{{ (a ~ b) | upper }}"
        "{% endfor %}{% endfor %}",
        FIELD,
        ROOTS,
    )
    with pytest.raises(TemplateRenderError, match=r"longer than the 0\.05s rendering limit"):
        template.render(CONTEXT)


@pytest.mark.parametrize("seconds", [pytest.param(-1.0, id="passed"), pytest.param(0.0, id="now")])
def test_a_passed_deadline_stops_even_a_short_jinja_template(seconds: float) -> None:
    template = compile_template("{{ inputs.city | upper }}", FIELD, ROOTS)
    with pytest.raises(TemplateRenderError, match=f"^{FIELD}: .*deadline"):
        template.render(CONTEXT, deadline=time.monotonic() + seconds)


def test_plain_paths_need_no_deadline() -> None:
    # The fast paths never run Jinja: nothing there can loop or grow.
    template = compile_template("id-{{ inputs.city }}", FIELD, ROOTS)
    assert template.render(CONTEXT, deadline=time.monotonic() - 1) == "id-Oslo"


@pytest.mark.parametrize(
    ("source", "value"),
    [
        pytest.param("{{ inputs.tags | join(', ') }}", "a, b", id="join"),
        pytest.param("{{ inputs.city | replace('O', '0') }}", "0slo", id="replace"),
        pytest.param("{{ [1, 2, 3] | batch(2, 0) | list }}", [[1, 2], [3, 0]], id="batch"),
        pytest.param("{{ [1, 2, 3] | slice(2) | list }}", [[1, 2], [3]], id="slice"),
        pytest.param("{{ [1, 2, 3] | sum }}", 6, id="sum"),
        pytest.param(
            "{{ {'a': [1]} | tojson(indent=2) }}", '{\n  "a": [\n    1\n  ]\n}', id="tojson"
        ),
        pytest.param(
            "{{ {'b': [1, 2], 'a': 'x y'} | tojson }}", '{"a":"x y","b":[1,2]}', id="tojson-compact"
        ),
        pytest.param("{{ inputs.tags | map('upper') | list }}", ["A", "B"], id="map"),
        pytest.param("{{ ['b', 'a'] | sort | first }}", "a", id="sort-first"),
        pytest.param("{{ inputs.tags + ['c'] }}", ["a", "b", "c"], id="add-lists"),
        pytest.param("{{ inputs.city ~ '!' ~ inputs.n }}", "Oslo!3", id="concat"),
        pytest.param("{{ 'x'.join(inputs.tags) }}", "axb", id="str-join"),
        pytest.param("{{ 2 ** 10 * 3 }}", 3072, id="arithmetic"),
        pytest.param("{{ {'k': inputs.n, 't': (1, 2)} }}", {"k": 3, "t": (1, 2)}, id="literals"),
        pytest.param("{{ dict(a=1) }}", {"a": 1}, id="dict-global"),
        pytest.param(
            "{% for k, v in {'a': 1, 'b': 2} | dictsort %}{{ k }}={{ v }};{% endfor %}",
            "a=1;b=2;",
            id="loop-unpacking",
        ),
        pytest.param(
            "{% for t in inputs.tags %}{{ loop.index }}{{ t }}{% if not loop.last %},{% endif %}"
            "{% endfor %}",
            "1a,2b",
            id="loop-variable",
        ),
        pytest.param(
            "{% for i in range(1000) %}{% for j in range(999) %}{% endfor %}{% endfor %}done",
            "done",
            id="a-million-iterations-are-allowed",
        ),
        pytest.param("{{ inputs.big | length }}", BIG, id="big-input-is-readable"),
        pytest.param("{{ inputs.city[1:3] ~ inputs.tags[::-1] | join }}", "slba", id="slices"),
        pytest.param("{{ ('ab' * 400000) | length }}", 800000, id="repeat-under-the-cap"),
    ],
)
def test_what_templates_need_still_works(source: str, value: Any) -> None:
    assert compile_template(source, FIELD, ROOTS).render(CONTEXT) == value


@pytest.mark.parametrize(
    ("value", "size"),
    [
        pytest.param("abc", 4, id="string"),
        pytest.param([1, 2], 3, id="list"),
        pytest.param({"a": 1}, 4, id="dict"),
        pytest.param([["ab"] * 3] * 2, 1 + 2 * (1 + 3 * 3), id="shared-counts-per-reference"),
    ],
)
def test_weight_counts_a_tree(value: Any, size: int) -> None:
    assert limits.weight(value) == size


def test_weight_stops_counting_over_its_limit_and_survives_any_depth() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert limits.weight(deep) == 100_001
    shared: list[Any] = [[0] * 1000] * 1000
    for _ in range(30):  # 2**30 copies of a thousand-item list, by reference
        shared = [shared, shared]
    assert MAX_OUTPUT_CHARS < limits.weight(shared) <= MAX_OUTPUT_CHARS + 1002


def test_a_deeply_nested_input_gives_an_error_not_a_recursion_error() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    template = compile_template("{{ inputs.deep | tojson }}", FIELD, ROOTS)
    with pytest.raises(TemplateRenderError, match="nests too deeply"):
        template.render({"inputs": {"deep": deep}})


def test_load_time_refusals_name_the_line() -> None:
    with pytest.raises(TemplateSyntaxProblem, match=r"\{% macro %\} is not allowed .*\(line 2\)"):
        compile_template("x\n{% macro m() %}{% endmacro %}", FIELD, ROOTS)


# -- the HTTP backend renders within the call's deadline ------------------------------------------

LOOPS = (
    "{% for a in range(1000) %}{% for b in range(1000) %}{{ (a ~ b) | upper }}"
    "{% endfor %}{% endfor %}"
)
SLOW_TOOL = """\
name: probe
version: 1.0.0
input_schema:
  parameters:
    - {{name: q, type: string}}
output_schema:
  parameters:
    - {{name: title, type: string}}
backend:
  http:
    url: {origin}/p
    query: {{q: "{query}"}}
    timeout: {{total: 0.3}}
    output:
      title: "{title}"
"""


@pytest.mark.parametrize(
    ("query", "title", "field", "hits"),
    [
        pytest.param(LOOPS, "{{ response.json.title }}", "query.q", 0, id="request-template"),
        pytest.param(
            "{{ inputs.q }}", LOOPS.replace("a ~ b", "response.json.title"), "output.title", 1,
            id="output-template",
        ),
    ],
)  # fmt: skip
def test_the_http_backend_renders_within_the_calls_deadline(
    write: WriteFile, query: str, title: str, field: str, hits: int
) -> None:
    served: list[str] = []

    def reply(handler: loopback.Handler) -> None:
        served.append(handler.path)
        handler.reply(200, {"title": "t"})

    with loopback.serve({"/p": reply}) as origin:
        registry = ToolRegistry()
        load_tools(
            write(SLOW_TOOL.format(origin=origin, query=query, title=title)), registry=registry
        )
        started = time.monotonic()
        result = ToolExecutor(credentials={}).execute(
            registry["probe"], {"q": "x"}, raise_on_failure=False
        )
        elapsed = time.monotonic() - started
    assert re.search(rf"{field}: the template exceeded the call's deadline", str(result.error))
    assert elapsed < 0.3 + 5  # stopped by the 0.3 s deadline, with a generous margin
    assert len(served) == hits
