"""Templates: the sandbox holds, the caps hold, and the fast paths agree with Jinja."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit.declarative.templates import (
    MAX_OUTPUT_CHARS,
    TemplateRenderError,
    TemplateSyntaxProblem,
    compile_template,
)
from agentkit.declarative.templates.sandbox import ENVIRONMENT

ROOTS = ("inputs", "credentials")
CONTEXT: dict[str, Any] = {
    "inputs": {
        "city": "Oslo",
        "n": 3,
        "tags": ["a", "b"],
        "items": 7,
        "nested": {"k": [1, {"z": 2}]},
    },
    "credentials": {"api-key": "k"},
}


def render(source: str, context: dict[str, Any] = CONTEXT) -> Any:
    return compile_template(source, "f", ROOTS).render(context)


@pytest.mark.parametrize(
    ("source", "value", "kind"),
    [
        pytest.param("plain", "plain", "literal", id="literal"),
        pytest.param("{{ inputs.n }}", 3, "expression", id="native-int"),
        pytest.param("{{ inputs.tags }}", ["a", "b"], "expression", id="native-list"),
        pytest.param("{{ inputs['city'] }}", "Oslo", "expression", id="subscript"),
        pytest.param("{{ inputs.nested.k[1].z }}", 2, "expression", id="deep-path"),
        pytest.param("{{ inputs.items }}", 7, "expression", id="key-beats-dict-method"),
        pytest.param("{{ inputs.n * 2 }}", 6, "expression", id="jinja-expression"),
        pytest.param("{{ credentials['api-key'] }}", "k", "expression", id="credential"),
        pytest.param("in {{ inputs.city }}!", "in Oslo!", "text", id="text"),
        pytest.param("{{ inputs.city | upper }}-{{ inputs.n }}", "OSLO-3", "text", id="text-jinja"),
    ],
)
def test_kinds_and_values(source: str, value: Any, kind: str) -> None:
    template = compile_template(source, "f", ROOTS)
    assert template.kind == kind
    assert template.render(CONTEXT) == value


def test_references_are_collected_for_load_time_checks() -> None:
    template = compile_template(
        "{{ inputs.city }} {{ inputs['n'] | string }} {{ credentials.x }}", "f", ROOTS
    )
    assert template.references == {("inputs", "city"), ("inputs", "n"), ("credentials", "x")}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param("{{ secrets.x }}", "unknown variable 'secrets'", id="unknown-root"),
        pytest.param("{{ inputs.city ", "template syntax error", id="syntax"),
        pytest.param("{{ inputs.city | nosuch }}", "No filter named 'nosuch'", id="unknown-filter"),
        pytest.param(
            "{{ inputs.city | center(10) }}", "the 'center' filter is not allowed", id="center"
        ),
        pytest.param(
            "{{ inputs.city | format(1) }}", "the 'format' filter is not allowed", id="format"
        ),
        pytest.param(
            "{{ cycler.__init__.__globals__.os }}", "unknown variable 'cycler'", id="globals"
        ),
        pytest.param(
            "{{ lipsum.__globals__['os'] }}", "unknown variable 'lipsum'", id="lipsum-globals"
        ),
    ],
)
def test_problems_found_at_load_time(source: str, message: str) -> None:
    with pytest.raises(TemplateSyntaxProblem, match=message):
        compile_template(source, "f", ROOTS)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("{{ inputs.__class__ }}", id="dunder-class"),
        pytest.param("{{ inputs.city.__class__.__mro__[1].__subclasses__() }}", id="subclasses"),
        pytest.param("{{ inputs.tags.append(1) }}", id="mutate-list"),
        pytest.param("{{ inputs.city.format.__globals__ }}", id="format-globals"),
        pytest.param("{{ '{0.__class__}'.format(inputs) }}", id="str-format-attribute"),
        pytest.param("{{ '{x.__class__}'.format_map({'x': 1}) }}", id="format-map"),
        pytest.param("{{ 'a' * 10000000 }}", id="repeat"),
        pytest.param("{{ [1] * 10000000 }}", id="repeat-list"),
        pytest.param("{{ 9 ** 99999 }}", id="power"),
        pytest.param("{% for i in range(100000000) %}{% endfor %}", id="range"),
        pytest.param("{{ '%99999999s' % 1 }}", id="percent-format"),
        pytest.param("{{ 'a'.ljust(99999999) }}", id="ljust"),
        pytest.param("{{ inputs.city.zfill(99999999) }}", id="zfill"),
        pytest.param("{{ inputs.missing }}", id="strict-undefined"),
        pytest.param("x{{ inputs.missing }}", id="strict-undefined-text"),
        pytest.param("{{ inputs.city.upper }}", id="function-value"),
    ],
)
def test_the_sandbox_and_the_caps_hold(source: str) -> None:
    with pytest.raises(TemplateRenderError):
        render(source)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        # Jinja's truncate asserts its length covers the ellipsis: an argument picks it.
        pytest.param("{{ inputs.city | truncate(inputs.n - 2) }}", "expected length", id="assert"),
        # dictsort of what is not a mapping: an upstream answer picks the type.
        pytest.param("{{ inputs.city | dictsort }}", "has no attribute", id="attribute"),
        pytest.param("x{{ inputs.tags | dictsort }}", "has no attribute", id="attribute-text"),
    ],
)
def test_a_filter_failing_on_a_value_fails_naming_the_field(source: str, said: str) -> None:
    """What a filter raises for the value it is given, whatever its type, is a
    ``TemplateRenderError`` naming the field, never a bare Python exception."""
    template = compile_template(source, "query.q", ROOTS)
    with pytest.raises(TemplateRenderError, match=said) as info:
        template.render(CONTEXT)
    assert info.value.field == "query.q"
    assert str(info.value).startswith("query.q: ")


def test_text_output_is_capped() -> None:
    source = "{% for i in range(10000) %}" + "x" * 200 + "{% endfor %}"
    with pytest.raises(TemplateRenderError, match=f"over {MAX_OUTPUT_CHARS} characters"):
        render(source)


def test_plain_text_output_is_capped_too() -> None:
    big = {"inputs": {"city": "x" * (MAX_OUTPUT_CHARS // 2 + 1)}}
    with pytest.raises(TemplateRenderError, match="over"):
        render("{{ inputs.city }}{{ inputs.city }}", big)


# A value's text in a template must be the same whichever path renders it. (Text
# here means something besides the one expression: surrounding whitespace alone
# is stripped, and the template is then a native-valued expression.)
SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
)


@given(
    value=SCALARS,
    before=st.text(alphabet="abc-/", max_size=5),
    after=st.text(alphabet="xyz.", min_size=1, max_size=5),
)
def test_the_text_fast_path_agrees_with_jinja(value: Any, before: str, after: str) -> None:
    source = f"{before}{{{{ inputs.v }}}}{after}"
    context = {"inputs": {"v": value}}
    fast = compile_template(source, "f", ("inputs",)).render(context)
    assert fast == ENVIRONMENT.from_string(source).render(context)


@given(value=SCALARS | st.lists(SCALARS, max_size=3))
def test_the_expression_fast_path_agrees_with_jinja(value: Any) -> None:
    context = {"inputs": {"v": {"w": value}}}
    fast = compile_template("{{ inputs.v.w }}", "f", ("inputs",)).render(context)
    assert fast == ENVIRONMENT.compile_expression("inputs.v.w")(**context)


@given(st.text(max_size=40))
def test_an_argument_is_never_template_source(text: str) -> None:
    assert render("{{ inputs.city }}", {"inputs": {"city": text}}) == text


def test_plain_templates_never_import_jinja() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from agentkit.declarative.templates import compile_template as c;"
        "t = c('id-{{ inputs.id }}', 'f', ('inputs',)); u = c('{{ inputs.n }}', 'f', ('inputs',));"
        "print(t.render({'inputs': {'id': 7}}), u.render({'inputs': {'n': 1}}), 'jinja2' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["id-7", "1", "False"]
