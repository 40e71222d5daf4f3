"""Real descriptions from public packages, imported whole and offline.

tests/fixtures/openapi/README.md says where they come from and how they were
trimmed (``scripts/trim_openapi.py`` redoes it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.cli import main
from agentkit.openapi import ImportReport, OpenAPIError, import_openapi
from agentkit.openapi.operations import METHODS

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"
GITHUB = FIXTURES / "github" / "api.github.com.json"
EXAMPLES = sorted((FIXTURES / "oas-examples").glob("3.*/*.json"))
REAL = [GITHUB, *EXAMPLES]
IDS = ["github", *(f"{spec.parent.name}/{spec.stem}" for spec in EXAMPLES)]
#: Descriptions whose OAuth2 token URL is plain http:// (http://example.com/oauth/token):
#: the client secret would travel in clear, which `validate` rightly warns about.
PLAIN_TOKEN_URL = {"security", "security-multiple"}
#: Descriptions with no operation an import can write a tool for (no paths; each one
#: deprecated or needing a security scheme they never define): an error, located.
NOTHING_TO_IMPORT = {"webhooks", "schema-deprecated", "response-http-behavior"}


def load(spec: Path) -> dict[str, Any]:
    document = json.loads(spec.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def at(document: Any, pointer: str) -> Any:
    """The node a JSON pointer (``#/paths/~1a/get``) names, read as the importer writes
    them: through ``$ref`` and into the parts of an ``allOf`` (as merged: the rest of
    the pointer may go on in any part); KeyError if none."""
    keys = [
        raw.replace("~1", "/").replace("~0", "~")
        for raw in pointer.removeprefix("#").split("/")[1:]
    ]
    return descend(document, document, keys)


def descend(document: Any, node: Any, keys: list[str]) -> Any:
    if not keys:
        return node  # as written: a $ref named by the pointer is not followed
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        node = at(document, node["$ref"])
    key, rest = keys[0], keys[1:]
    if isinstance(node, list):
        return descend(document, node[int(key)], rest)
    if key in node:
        try:
            return descend(document, node[key], rest)
        except (KeyError, IndexError, ValueError):
            pass
    for part in node.get("allOf", ()):
        try:
            return descend(document, part, keys)
        except (KeyError, IndexError, ValueError):
            continue
    raise KeyError(key)


def resolves(document: Any, pointer: str) -> bool:
    """``pointer`` names a node, or the place of a missing one in a node that is there."""
    parent, _, key = pointer.rpartition("/")
    try:
        at(document, pointer)
    except (KeyError, IndexError, ValueError):
        node = at(document, parent)
        return isinstance(node, dict) and key not in node
    return True


def operations(document: dict[str, Any]) -> int:
    return sum(1 for item in document.get("paths", {}).values() for key in item if key in METHODS)


def import_real(tmp_path: Path, spec: Path) -> tuple[Path, ImportReport]:
    out = tmp_path / "tools.d"
    return out, import_openapi(spec, source="api", out=out)


def test_the_vendored_files_are_the_ones_the_readme_lists() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    assert (FIXTURES / "github" / "LICENSE").exists()
    assert (FIXTURES / "oas-examples" / "LICENSE.md").exists()
    assert "@octokit/openapi@23.0.2" in readme
    assert "@readme/oas-examples@8.2.2" in readme
    assert len(EXAMPLES) > 40


@pytest.mark.parametrize("spec", REAL, ids=IDS)
def test_every_generated_file_passes_validate_strict(
    tmp_path: Path,
    spec: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if spec.stem in NOTHING_TO_IMPORT:
        with pytest.raises(OpenAPIError) as raised:
            import_real(tmp_path, spec)
        assert not (tmp_path / "tools.d").exists()
        assert all(resolves(load(spec), found.path) for found in raised.value.problems)
        return
    out, report = import_real(tmp_path, spec)
    assert len(report.written) - 1 + len(report.skipped) + len(report.deprecated) == operations(
        load(spec)
    )
    # Some examples serve on plain http:// and take credentials, which `validate` warns
    # about (rightly); pointed at https://, as a deployment would be, they load clean.
    monkeypatch.setenv("API_BASE_URL", "https://api.example.com")
    capsys.readouterr()
    code = main(["validate", "--strict", str(out)])
    err = capsys.readouterr().err
    if spec.stem in PLAIN_TOKEN_URL:
        warnings = [line for line in err.splitlines() if line.startswith("warning: /")]
        assert code == 1
        assert warnings
        assert all(
            "auth.oauth2.token_url: the client secret would be sent over plain http://" in line
            for line in warnings
        )
    else:
        assert code == 0, err
    tools = {path.stem for path in out.glob("*.yaml")} - {"api.source"}
    assert len(tools) == len(report.written) - 1


@pytest.mark.parametrize("spec", REAL, ids=IDS)
def test_skips_and_notes_point_into_the_description(tmp_path: Path, spec: Path) -> None:
    document = load(spec)
    if spec.stem in NOTHING_TO_IMPORT:
        with pytest.raises(OpenAPIError) as raised:
            import_real(tmp_path, spec)
        pointers = [found.path for found in raised.value.problems]
        assert pointers[0] == "#/paths"
        assert all(resolves(document, pointer) for pointer in pointers[1:])
        return
    out, report = import_real(tmp_path, spec)
    for skipped in report.skipped:
        assert skipped.problem.path.startswith("#/")
        assert resolves(document, skipped.problem.path), skipped
        assert skipped.problem.message
    for path in out.glob("*.yaml"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# note: "):
                start = line.rfind(" (#/")
                assert start > 0, f"{path.name}: a note without a pointer: {line}"
                assert line.endswith(")"), f"{path.name}: a note without a pointer: {line}"
                assert resolves(document, line[start + 2 : -1]), f"{path.name}: {line}"


def test_the_github_subset_imports_its_operations(tmp_path: Path) -> None:
    out, report = import_real(tmp_path, GITHUB)
    assert report.skipped == []  # issues_create and issues_update too (#11)
    issue = yaml.safe_load((out / "issues_get.yaml").read_text(encoding="utf-8"))
    assert issue["backend"]["http"]["path"] == (
        "/repos/{{ inputs.owner }}/{{ inputs.repo }}/issues/{{ inputs.issue_number }}"
    )
    fields = {field["name"] for field in issue["output_schema"]["parameters"]}
    assert {"number", "title", "state", "user", "labels"} <= fields


def test_a_path_fragment_is_not_sent(tmp_path: Path) -> None:
    out, _ = import_real(tmp_path, FIXTURES / "oas-examples" / "3.0" / "parameters-style.json")
    text = (out / "cookies_form_exploded.yaml").read_text(encoding="utf-8")
    assert "path: /cookies\n" in text
    assert "# note: path: the fragment of '/cookies#formExploded' is not sent" in text
