"""`--layout tag`: one file per tag, each a YAML stream of that tag's tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit import ToolRegistry, load_tools
from agentkit.cli import main
from agentkit.openapi import import_openapi, update_openapi
from agentkit.toolerrors import UsageError
from tests.openapi.test_import import OK, TRACKER, minimal, write_spec


def streams(out: Path) -> dict[str, list[str]]:
    """File name -> the names of the tools it holds, in order."""
    return {
        path.name: [doc["name"] for doc in yaml.safe_load_all(path.read_text()) if "name" in doc]
        for path in sorted(out.glob("*.yaml"))
    }


def test_a_file_per_tag_holds_that_tags_tools_in_description_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tools.d"
    argv = ["import", "openapi", str(TRACKER), "--source", "tracker", "--out", str(out)]
    assert main([*argv, "--layout", "tag"]) == 0
    assert "wrote 11 tool(s) in 4 file(s) and a source" in capsys.readouterr().out
    assert streams(out) == {
        "tracker.comments.yaml": ["comment_on_issue"],
        "tracker.issues.yaml": [
            "list_issues",
            "create_issue",
            "get_issue",
            "delete_issue",
            "search",
        ],
        "tracker.source.yaml": [],
        "tracker.tree.yaml": ["get_node", "create_node"],
        "tracker.untagged.yaml": ["download_attachment", "upload", "get_health"],
    }
    issues = (out / "tracker.issues.yaml").read_text()
    # each document keeps its own header: where it comes from, and its notes
    assert issues.count("# Imported from tracker.yaml") == 5
    assert (
        "---\n# Imported from tracker.yaml by `agentkit import openapi`; review before use.\n"
        in (issues)
    )
    assert "# GET /issues/{id} (#/paths/~1issues~1{id}/get)\n" in issues
    assert main(["validate", "--strict", str(out)]) == 0
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ={})
    assert len(registry) == 11


def test_the_layout_gives_the_same_documents_as_a_file_each(tmp_path: Path) -> None:
    import_openapi(TRACKER, source="tracker", out=tmp_path / "each")
    import_openapi(TRACKER, source="tracker", out=tmp_path / "tag", layout="tag")

    def documents(folder: Path) -> dict[str, Any]:
        return {
            doc.get("name", "source"): doc
            for path in folder.glob("*.yaml")
            for doc in yaml.safe_load_all(path.read_text())
        }

    assert documents(tmp_path / "each") == documents(tmp_path / "tag")


def test_tag_file_names_are_unique_and_never_the_source_file(tmp_path: Path) -> None:
    def op(name: str, tags: list[str]) -> dict[str, Any]:
        return {"get": {"operationId": name, "tags": tags, "responses": OK}}

    document = minimal(
        {
            "/a": op("a", ["Pet Store"]),
            "/b": op("b", ["pet-store"]),
            "/c": op("c", ["source", "other"]),
            "/d": op("d", ["untagged"]),
            "/e": op("e", []),
            "/f": op("f", ["Pet Store"]),
        }
    )
    out = tmp_path / "tools.d"
    import_openapi(write_spec(tmp_path, document), source="api", out=out, layout="tag")
    assert streams(out) == {
        "api.pet_store.yaml": ["a", "f"],
        "api.pet_store_2.yaml": ["b"],
        "api.source.yaml": [],
        "api.source_2.yaml": ["c"],
        "api.untagged.yaml": ["d"],
        "api.untagged_2.yaml": ["e"],
    }
    assert main(["validate", "--strict", str(out)]) == 0


def test_an_update_keeps_the_layout_and_the_edits_in_a_tag_file(tmp_path: Path) -> None:
    out = tmp_path / "tools.d"
    import_openapi(TRACKER, source="tracker", out=out, layout="tag")
    lock = json.loads((out / "tracker.openapi-lock.json").read_text())
    assert lock["layout"] == "tag"
    assert lock["operations"]["GET /issues/{id}"]["file"] == "tracker.issues.yaml"
    path = out / "tracker.issues.yaml"
    edited = path.read_text().replace("description: Read one issue\n", "description: One issue.\n")
    assert edited != path.read_text()
    path.write_text(edited)
    report = update_openapi(TRACKER, source="tracker", out=out)
    assert not report.conflicts
    assert path.read_text() == edited  # nothing else changed: the file is untouched
    assert sorted(p.name for p in out.glob("*.yaml")) == sorted(streams(out))
    assert len(list(out.glob("*.yaml"))) == 5


def test_update_refuses_a_new_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tools.d"
    import_openapi(TRACKER, source="tracker", out=out)
    argv = ["import", "openapi", str(TRACKER), "--source", "tracker", "--out", str(out)]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--update", "--layout", "tag"])
    assert exc.value.code == 2
    assert "--update keeps the first import's layout (in the lock file)" in (
        capsys.readouterr().err
    )


def test_an_unknown_layout_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"unknown layout 'tags': expected one of operation, tag"):
        import_openapi(TRACKER, source="tracker", out=tmp_path, layout="tags")  # type: ignore[arg-type]


def test_a_new_operation_joins_its_tag_file_on_update(tmp_path: Path) -> None:
    out = tmp_path / "tools.d"
    import_openapi(TRACKER, source="tracker", out=out, layout="tag")
    newer = yaml.safe_load(TRACKER.read_text())
    newer["paths"]["/issues/{id}/lock"] = {
        "put": {"operationId": "lockIssue", "tags": ["issues"], "responses": {"204": OK["200"]}}
    }
    spec = write_spec(tmp_path, newer)
    report = update_openapi(spec, source="tracker", out=out)
    assert [operation.name for operation in report.added] == ["lock_issue"]
    assert streams(out)["tracker.issues.yaml"][-1] == "lock_issue"
    assert len(list(out.glob("*.yaml"))) == 5
    assert main(["validate", "--strict", str(out)]) == 0
