"""The import's fast paths write the files the plain ones write, byte for byte.

Each vendored description is imported twice: as users get it (schema conversions
kept for the operations after the first, ``yamlwriter.Writer`` writing the YAML)
and through the reference paths (every schema converted afresh, PyYAML and
libyaml writing the YAML). The two folders must hold the same files with the
same bytes, or both imports fail with the same error.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.openapi import Selection, import_openapi, importer, update_openapi
from agentkit.openapi.emit import libyaml_dump
from agentkit.openapi.memo import Conversions
from agentkit.openapi.verify import Verifier
from agentkit.openapi.yamlwriter import Writer
from agentkit.toolerrors import AgentKitError
from tests.openapi.test_update import description, newer, write

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"
TRACKER = Path(__file__).resolve().parents[2] / "examples" / "openapi" / "tracker.yaml"
DESCRIPTIONS = sorted(
    [
        FIXTURES / "github" / "api.github.com.json",
        TRACKER,
        FIXTURES / "notes.json",
        FIXTURES / "kennel-swagger.yaml",
        *(FIXTURES / "oas-examples").glob("*/*.json"),
        *(FIXTURES / "fuzz").iterdir(),
    ]
)
IDS = [path.name if path == TRACKER else str(path.relative_to(FIXTURES)) for path in DESCRIPTIONS]

pytestmark = pytest.mark.skipif(
    not hasattr(yaml, "CSafeDumper"), reason="the reference is libyaml's emitter"
)


def reference_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every schema converted and verified afresh, and the YAML written by PyYAML with
    libyaml."""
    monkeypatch.setattr(importer, "Conversions", lambda: None)
    monkeypatch.setattr(importer, "dump", lambda document, writer=None: libyaml_dump(document))

    def verifier(sources: Any, **options: Any) -> Verifier:
        return Verifier(sources, **{**options, "unchanging": False})

    monkeypatch.setattr(importer, "Verifier", verifier)


def imported(spec: Path, out: Path, **options: Any) -> dict[str, bytes] | str:
    """The files an import writes (name -> bytes), or its error."""
    try:
        import_openapi(spec, source="api", out=out, **options)
    except AgentKitError as exc:
        return f"{type(exc).__name__}: {exc}"
    return files(out)


def assert_block_style_and_templates_whole(name: str, text: str) -> None:
    """Every collection in block style but empty ones, and every string that holds a
    template (and no line break of its own) on one line, whatever its length."""
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    pending: list[yaml.Node] = list(yaml.compose_all(text, Loader=loader))
    while pending:
        node = pending.pop()
        if isinstance(node, yaml.ScalarNode):
            one_line = "\n" not in node.value
            if one_line and ("{{" in node.value or "{%" in node.value):
                where = f"{name}:{node.start_mark.line + 1}"
                assert node.start_mark.line == node.end_mark.line, where
            continue
        assert isinstance(node, yaml.CollectionNode)
        items = node.value
        assert not node.flow_style or not items, f"{name}:{node.start_mark.line + 1}"
        if isinstance(node, yaml.MappingNode):
            pending += [part for pair in items for part in pair]
        else:
            pending += items


def files(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())}


@pytest.mark.parametrize("layout", ["operation", "tag"])
@pytest.mark.parametrize("spec", DESCRIPTIONS, ids=IDS)
def test_an_import_writes_the_bytes_the_reference_paths_write(
    spec: Path, layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = imported(spec, tmp_path / "fast", layout=layout)
    if isinstance(fast, dict):
        for name, text in fast.items():
            if name.endswith(".yaml"):
                assert_block_style_and_templates_whole(name, text.decode("utf-8"))
    reference_paths(monkeypatch)
    assert imported(spec, tmp_path / "reference", layout=layout) == fast


@pytest.mark.parametrize("spec", DESCRIPTIONS, ids=IDS)
def test_verifying_shared_schemas_once_finds_what_verifying_each_finds(spec: Path) -> None:
    try:
        generation = importer.generate(spec, source="api", out="out", selection=Selection())
    except AgentKitError:
        return  # nothing generated to verify (test_an_import_... compares the errors)
    documents = [(tool.file.name, tool.document) for tool in generation.tools]
    found = []
    for unchanging in (True, False):
        verifier = Verifier(
            [(generation.source.file.name, generation.source.document)], unchanging=unchanging
        )
        found.append([verifier.problems(document, path=name) for name, document in documents])
    assert found[0] == found[1]


def test_an_update_writes_the_bytes_the_reference_paths_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    v1 = description()
    v2 = newer(v1)
    outputs: list[dict[str, bytes]] = []
    for name in ("fast", "reference"):
        if name == "reference":
            reference_paths(monkeypatch)
        (tmp_path / name).mkdir()
        out = tmp_path / name / "out"
        import_openapi(write(tmp_path / name / "v1.json", v1), source="tracker", out=out)
        update_openapi(write(tmp_path / name / "v2.json", v2), source="tracker", out=out)
        outputs.append(files(out))
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) > 2


def test_the_fast_paths_are_taken_on_a_real_description(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparisons above compare something: conversions are given back, and the
    writer replays shared collections."""
    memos: list[Conversions] = []
    writers: list[Writer] = []

    def conversions() -> Conversions:
        memos.append(Conversions())
        return memos[-1]

    def writer() -> Writer:
        writers.append(Writer())
        return writers[-1]

    monkeypatch.setattr(importer, "Conversions", conversions)
    monkeypatch.setattr(importer, "Writer", writer)
    import_openapi(FIXTURES / "github" / "api.github.com.json", source="gh", out=tmp_path)
    assert memos[0].served > 10
    assert writers[0].replayed > 10


def _recursive_description() -> dict[str, Any]:
    """A and B refer to each other. Reached as A then B, B is cut at its A; reached
    alone at the same depth, it is not: one component, two conversions."""
    ok = {"description": "ok"}

    def returning(schema: dict[str, Any]) -> dict[str, Any]:
        content = {"application/json": {"schema": schema}}
        return {"get": {"responses": {"200": {**ok, "content": content}}}}

    ref = {"A": {"$ref": "#/components/schemas/A"}, "B": {"$ref": "#/components/schemas/B"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "loops", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/both": returning(
                {"type": "object", "properties": {"first": ref["A"], "second": ref["B"]}}
            ),
            "/b": returning({"type": "object", "properties": {"only": ref["B"]}}),
            "/deep": returning(
                {
                    "type": "object",
                    "properties": {"n": {"type": "object", "properties": {"m": ref["B"]}}},
                }
            ),
            "/a-deep": returning(
                {
                    "type": "object",
                    "properties": {"n": {"type": "object", "properties": {"m": ref["A"]}}},
                }
            ),
        },
        "components": {
            "schemas": {
                "A": {"type": "object", "properties": {"b": ref["B"], "x": {"type": "string"}}},
                "B": {"type": "object", "properties": {"a": ref["A"], "y": {"type": "integer"}}},
            }
        },
    }


def test_a_conversion_is_given_back_only_to_a_stack_that_cuts_the_same_loops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = write(tmp_path / "loops.json", _recursive_description())
    fast = imported(spec, tmp_path / "fast")
    assert isinstance(fast, dict)
    both = yaml.safe_load(fast["get_both.yaml"])
    deep = yaml.safe_load(fast["get_deep.yaml"])
    # /both: first.b is B under A, whose a is cut; /deep: n.m is B alone, whose a is not.
    first_b = both["output_schema"]["parameters"][0]["parameters"][0]
    deep_b = deep["output_schema"]["parameters"][0]["parameters"][0]
    assert [p["name"] for p in first_b["parameters"]] == ["a", "y"]
    assert "parameters" not in first_b["parameters"][0]  # cut: a free-form dictionary
    assert "parameters" in deep_b["parameters"][0]  # followed into A
    reference_paths(monkeypatch)
    assert imported(spec, tmp_path / "reference") == fast


def test_an_import_leaves_the_cycle_collector_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import has Python collect cycles less often while it runs, and only then."""
    before = gc.get_threshold()
    during: list[tuple[int, int, int]] = []
    generate = importer.generate

    def watched(*args: Any, **options: Any) -> Any:
        during.append(gc.get_threshold())
        return generate(*args, **options)

    monkeypatch.setattr(importer, "generate", watched)
    import_openapi(FIXTURES / "github" / "api.github.com.json", source="gh", out=tmp_path / "a")
    assert gc.get_threshold() == before
    with pytest.raises(AgentKitError):
        import_openapi(FIXTURES / "fuzz" / "empty.json", source="e", out=tmp_path / "b")
    assert gc.get_threshold() == before
    assert len(during) == 2
    assert all(threshold[0] > before[0] for threshold in during)
