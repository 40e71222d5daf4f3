"""Kubernetes' description (1,014 operations, 4.2 MB of Swagger 2.0), imported whole with
the default budgets: what a large catalog becomes, checked on the real thing.

The description comes from npm (``kubernetes-client``, pinned in
``benchmarks/kubernetes/package-lock.json``; ``make test`` installs it, as ``make bench``
does): too big to vendor, and trimming it would trim what the budgets are for.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
from pathlib import Path

import pytest

from agentkit import ToolRegistry, load_tools
from agentkit.cli import main
from agentkit.schemasize import schema_size

ROOT = Path(__file__).resolve().parent.parent.parent
SPEC = (
    ROOT / "benchmarks" / "kubernetes" / "node_modules" / "kubernetes-client" / "lib" / "specs"
    / "swagger-1.13.json.gz"
)  # fmt: skip
#: The default schema budget of the import and of `agentkit validate`.
BUDGET = 8192

pytestmark = pytest.mark.skipif(
    not SPEC.exists(),
    reason=f"{SPEC.relative_to(ROOT)} is not installed (`make test` installs it with npm)",
)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The folder the default import writes, and what it printed."""
    folder = tmp_path_factory.mktemp("kubernetes")
    spec = folder / "kubernetes.json"
    spec.write_bytes(gzip.decompress(SPEC.read_bytes()))
    out = folder / "tools.d"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["import", "openapi", str(spec), "--source", "kubernetes", "--out", str(out)])
    assert code == 0
    return out, printed.getvalue()


def test_every_operation_becomes_a_tool_within_the_schema_budget(
    imported: tuple[Path, str],
) -> None:
    out, _ = imported
    registry = ToolRegistry()
    load_tools(out, registry=registry)
    assert len(registry) == 1014
    sizes = {tool.name: schema_size(tool).total for tool in registry}
    over = {name: size for name, size in sizes.items() if size > BUDGET}
    assert over == {}
    # The budget cuts nesting, not whole tools: a Deployment's parts are still taken,
    # as free-form objects.
    create = registry["create_apps_v1_namespaced_deployment"]
    properties = create.input_schema.to_json_schema()["properties"]
    assert {"namespace", "metadata", "spec"} <= set(properties)
    assert properties["spec"]["type"] == "object"


def test_streaming_parameters_are_left_out_with_a_note(imported: tuple[Path, str]) -> None:
    out, printed = imported
    registry = ToolRegistry()
    load_tools(out, registry=registry)
    streaming = {
        (tool.name, parameter.name)
        for tool in registry
        for parameter in tool.input_schema.parameters
        if parameter.name in ("watch", "follow")
    }
    assert streaming == set()
    assert re.search(r"left out \d+ streaming parameter\(s\) \(watch, follow\)", printed)
    # A pod's logs still take every other parameter.
    logs = registry["read_core_v1_namespaced_pod_log"]
    assert {"name", "namespace", "container"} <= {p.name for p in logs.input_schema.parameters}


def test_the_summary_says_how_to_choose_among_a_thousand_tools(
    imported: tuple[Path, str],
) -> None:
    _, printed = imported
    assert "1014 tools: over 128, the most providers accept in one request" in printed
    assert "--tag (58 tags:" in printed
    assert "give each agent a toolset" in printed


def test_the_folder_validates_and_names_its_largest_schema(
    imported: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = imported
    assert main(["validate", str(out)]) == 0
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    match = re.fullmatch(
        r"(?:\d+ warning\(s\)|ok): 1014 tools in \d+ file\(s\); largest schema: \w+, (\d+) bytes "
        rf"\(budget {BUDGET}\)",
        summary,
    )
    assert match is not None, summary
    assert int(match[1]) <= BUDGET
