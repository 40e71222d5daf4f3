"""`agentkit import openapi --update`: a newer description over a folder a reviewer edited."""

from __future__ import annotations

import contextlib
import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.adapters.diff import ToolDiff
from agentkit.cli import main
from agentkit.openapi import UpdateReport, import_openapi, update_openapi
from agentkit.toolerrors import AgentKitError, UsageError

TRACKER = Path(__file__).resolve().parents[2] / "examples" / "openapi" / "tracker.yaml"
LOCK = "tracker.openapi-lock.json"


def description() -> dict[str, Any]:
    data = yaml.safe_load(TRACKER.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def edit(out: Path, name: str, change: Callable[[str], str]) -> None:
    path = out / f"{name}.yaml"
    before = path.read_text(encoding="utf-8")
    after = change(before)
    assert after != before, f"the edit of {name} changed nothing"
    path.write_text(after, encoding="utf-8")


def read(out: Path, file: str) -> dict[str, Any]:
    data = yaml.safe_load((out / file).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def params(document: dict[str, Any], side: str = "input_schema") -> dict[str, dict[str, Any]]:
    return {param["name"]: param for param in document[side]["parameters"]}


def newer(v1: dict[str, Any]) -> dict[str, Any]:
    """The next version of the tracker: changes in places the reviewer did and did not edit."""
    v2 = copy.deepcopy(v1)
    paths = v2["paths"]
    get_issue = paths["/issues/{id}"]["get"]
    get_issue["summary"] = "Fetch one issue"  # the reviewer edited the description too
    get_issue["parameters"][1]["description"] = "Filter by a second id"  # a renamed input
    paths["/issues"]["get"]["parameters"][1]["schema"]["maximum"] = 50  # breaking
    v2["components"]["schemas"]["NewIssue"]["properties"]["due"] = {"type": "string"}
    paths["/issues/{id}/close"] = {
        "post": {
            "operationId": "closeIssue",
            "summary": "Close an issue",
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {}}],
            "responses": {"204": {"description": "Closed."}},
        }
    }
    del paths["/health"]  # unedited: removed
    del paths["/attachments/{id}"]  # edited by the reviewer: kept
    paths["/nodes/{id}"]["get"]["summary"] = "A node"  # deleted by the reviewer
    paths["/search"]["get"]["summary"] = "Search the issues"  # renamed by the reviewer
    return v2


@pytest.fixture
def reviewed(tmp_path: Path) -> Path:
    """A fresh import of the tracker, then the reviewer's edits."""
    out = tmp_path / "tools.d"
    import_openapi(write(tmp_path / "v1.json", description()), source="tracker", out=out)
    edit(
        out,
        "get_issue",
        lambda text: text.replace(
            "description: Read one issue\n", "description: Read one issue by its number.\n"
        ).replace("query_id", "id_filter"),
    )
    edit(out, "search", lambda text: text.replace("name: search\n", "name: search_issues\n"))
    edit(
        out,
        "download_attachment",
        lambda text: text.replace("description: GET /attachments/{id}", "description: Mine."),
    )
    (out / "get_node.yaml").unlink()
    assert main(["validate", "--strict", str(out)]) == 0
    return out


def updated(tmp_path: Path, out: Path, document: dict[str, Any]) -> UpdateReport:
    return update_openapi(write(tmp_path / "v2.json", document), source="tracker", out=out)


def test_an_update_keeps_every_edit_and_takes_every_other_change(
    tmp_path: Path, reviewed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = reviewed
    report = updated(tmp_path, out, newer(description()))

    get_issue = read(out, "get_issue.yaml")
    assert get_issue["description"] == "Read one issue by its number."  # edit kept
    assert get_issue["annotations"]["title"] == "Fetch one issue"  # the rest taken
    inputs = params(get_issue)
    assert "query_id" not in inputs
    assert inputs["id_filter"]["description"] == "Filter by a second id"  # renamed, updated
    assert get_issue["backend"]["http"]["query"] == {"id": "{{ inputs.id_filter }}"}
    assert "due" in params(get_issue, "output_schema")

    search = read(out, "search.yaml")
    assert search["name"] == "search_issues"
    assert search["annotations"]["title"] == "Search the issues"
    assert not (out / "get_node.yaml").exists()
    assert not (out / "get_health.yaml").exists()
    assert read(out, "download_attachment.yaml")["description"] == "Mine."
    assert read(out, "close_issue.yaml")["version"] == "1.0.0"

    versions = {tool.name: (tool.severity, tool.new_version) for tool in report.classified}
    assert versions == {
        "list_issues": ("breaking", "2.0.0"),
        "get_issue": ("compatible", "1.1.0"),
        "search_issues": ("compatible", "1.1.0"),
        "create_issue": ("compatible", "1.1.0"),
        "close_issue": ("compatible", "1.0.0"),
        "get_health": ("breaking", None),
    }
    # The records agentkit diff makes: each bump is what its changes need.
    assert all(isinstance(tool, ToolDiff) for tool in report.classified)
    assert [tool.name for tool in report.classified if tool.version_problem] == []
    assert read(out, "list_issues.yaml")["version"] == "2.0.0"
    assert [str(op) for op in report.added] == ["close_issue (POST /issues/{id}/close)"]
    assert [str(op) for op in report.removed] == ["get_health (GET /health)"]
    assert [str(op) for op in report.kept_gone] == ["download_attachment (GET /attachments/{id})"]
    assert [str(op) for op in report.deleted] == ["get_node (GET /nodes/{id})"]

    [conflict] = report.conflicts
    assert str(conflict) == (
        f"{out / 'get_issue.yaml'}:{conflict.line}: get_issue: description: kept yours "
        "('Read one issue by its number.'); the description now gives 'Fetch one issue'"
    )
    line = (out / "get_issue.yaml").read_text().splitlines()[conflict.line - 1]
    assert line == "description: Read one issue by its number."
    capsys.readouterr()
    assert main(["validate", "--strict", str(out)]) == 0


def test_agentkit_diff_agrees_with_the_bumped_versions(tmp_path: Path, reviewed: Path) -> None:
    before = tmp_path / "before"
    before.mkdir()
    for path in reviewed.glob("*.yaml"):
        (before / path.name).write_text(path.read_text())
    updated(tmp_path, reviewed, newer(description()))
    assert main(["diff", str(before), str(reviewed)]) == 0  # no version bump missing


def test_a_second_update_with_the_same_description_changes_nothing(
    tmp_path: Path, reviewed: Path
) -> None:
    updated(tmp_path, reviewed, newer(description()))
    files = {path.name: path.read_text() for path in reviewed.iterdir()}
    report = updated(tmp_path, reviewed, newer(description()))
    assert report.classified == []
    assert report.conflicts == []
    assert report.added == report.removed == []
    assert {path.name: path.read_text() for path in reviewed.iterdir()} == files


def test_an_update_without_edits_gives_what_a_fresh_import_gives(tmp_path: Path) -> None:
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    v1, v2 = description(), newer(description())
    import_openapi(write(tmp_path / "v1.json", v1), source="tracker", out=out)
    spec = write(tmp_path / "v2.json", v2)
    update_openapi(spec, source="tracker", out=out)
    import_openapi(spec, source="tracker", out=fresh)
    for path in fresh.glob("*.yaml"):
        mine, theirs = read(out, path.name), read(fresh, path.name)
        mine.pop("version", None), theirs.pop("version", None)
        assert mine == theirs, path.name


def test_without_a_lock_file_update_says_what_it_needs(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"has no tracker\.openapi-lock\.json: --update needs"):
        update_openapi(TRACKER, source="tracker", out=tmp_path)


def test_a_broken_lock_file_is_a_located_error(tmp_path: Path, reviewed: Path) -> None:
    (reviewed / LOCK).write_text("{}")
    with pytest.raises(
        UsageError, match=r"tracker\.openapi-lock\.json: not a lock file agentkit wrote"
    ):
        update_openapi(TRACKER, source="tracker", out=reviewed)


@pytest.mark.parametrize(
    "selection",
    [{"tags": 5}, {"methods": [5]}, {"deprecated": "yes"}],
    ids=["tags-int", "methods-int-item", "deprecated-str"],
)
def test_a_lock_with_a_malformed_selection_is_a_located_error(
    reviewed: Path, selection: dict[str, Any]
) -> None:
    lock = json.loads((reviewed / LOCK).read_text())
    lock["selection"] = selection
    (reviewed / LOCK).write_text(json.dumps(lock))
    with pytest.raises(
        UsageError, match=r"tracker\.openapi-lock\.json: not a lock file agentkit wrote .*selection"
    ):
        update_openapi(TRACKER, source="tracker", out=reviewed)


@pytest.mark.parametrize(
    ("edited", "problem"),
    [
        ("input_schema: 5\n", r"list_issues\.yaml:\d+:\d+: input_schema: expected a mapping"),
        ("input_schema: {parameters: 5}\n", r"input_schema\.parameters: expected a list"),
        ("input_schema: {parameters: [5]}\n", r"input_schema\.parameters\[0\]: expected a mapping"),
        ("- 1\n", r"list_issues\.yaml:1:1: a tool definition must be a mapping"),
        ("just words\n", r"list_issues\.yaml:1:1: a tool definition must be a mapping"),
    ],
    ids=["schema-int", "parameters-int", "parameter-int", "file-a-list", "file-a-scalar"],
)
def test_a_malformed_tool_file_is_for_the_reviewer_to_fix_first(
    tmp_path: Path, reviewed: Path, edited: str, problem: str
) -> None:
    path = reviewed / "list_issues.yaml"
    text = path.read_text()
    if edited.startswith("input_schema"):
        head, _, rest = text.partition("input_schema:\n")
        tail = re.sub(r"\A(?:[ -].*\n)*", "", rest)
        text = head + edited + tail
    else:
        text = edited
    path.write_text(text)
    before = {file.name: file.read_text() for file in reviewed.iterdir()}
    spec = write(tmp_path / "v2.json", newer(description()))
    with pytest.raises(UsageError, match=r"fix it first \(agentkit validate\)") as caught:
        update_openapi(spec, source="tracker", out=reviewed)
    assert re.search(problem, str(caught.value))
    assert {file.name: file.read_text() for file in reviewed.iterdir()} == before


def test_a_malformed_tool_is_located_at_its_own_line_in_a_shared_file(tmp_path: Path) -> None:
    """The folder is read without positions; a problem is still located in the file."""
    out = tmp_path / "tools.d"
    spec = write(tmp_path / "v1.json", description())
    import_openapi(spec, source="tracker", out=out, layout="tag")
    path = next(
        path for path in sorted(out.glob("tracker.*.yaml")) if "\n---\n" in path.read_text()
    )
    lines = path.read_text().splitlines(keepends=True)
    second = lines.index("---\n") + 1
    at = next(index for index in range(second, len(lines)) if lines[index].startswith("version:"))
    lines[at] = "version: [1]\n"
    path.write_text("".join(lines))
    with pytest.raises(UsageError, match=r"fix it first") as caught:
        update_openapi(spec, source="tracker", out=out)
    assert f"{path}:{at + 1}:10: version: " in str(caught.value)


@pytest.mark.parametrize("tracked", [True, False], ids=["operations", "none"])
def test_the_lock_is_json_with_a_line_per_operation(tmp_path: Path, tracked: bool) -> None:
    from agentkit.openapi.base import Lock

    out = tmp_path / "tools.d"
    import_openapi(write(tmp_path / "v1.json", description()), source="tracker", out=out)
    lock = Lock.read(out / LOCK)
    if not tracked:
        lock.entries.clear()
    lock.write(out / LOCK)
    text = (out / LOCK).read_text()
    assert Lock.read(out / LOCK).entries.keys() == lock.entries.keys()
    operations = json.loads(text)["operations"]
    assert len(operations) == len(lock.entries)
    assert [line[3:].split('"', 1)[0] for line in text.splitlines() if line.startswith("  ")] == (
        sorted(operations)
    )


# -- the command ---------------------------------------------------------------------------


def test_the_cli_prints_each_tools_classification_and_exits_1_on_conflicts(
    tmp_path: Path, reviewed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write(tmp_path / "v2.json", newer(description()))
    argv = ["import", "openapi", str(spec), "--source", "tracker", "--out", str(reviewed)]
    assert main([*argv, "--update"]) == 1
    captured = capsys.readouterr()
    assert (
        "list_issues 1.0.0 -> 2.0.0: changed, breaking\n  breaking: input 'per_page': maximum 100 -> 50\n"
        in captured.out
    )
    assert "close_issue - -> 1.0.0: added, compatible\n" in captured.out
    assert "stays deleted: get_node (GET /nodes/{id}) (you deleted it)\n" in captured.out
    assert re.search(
        rf"conflict: {re.escape(str(reviewed / 'get_issue.yaml'))}:\d+: get_issue: description:",
        captured.err,
    )
    assert re.search(r"1 added, 4 changed, 1 removed, \d+ unchanged, 1 conflict\(s\)", captured.out)
    assert "Traceback" not in captured.out + captured.err
    assert main([*argv, "--update"]) == 0  # nothing left to reconcile


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--tag", "issues"],
            "--update keeps the first import's selection (in the lock file); --tag cannot change it",
        ),
        (["--include-deprecated"], "--include-deprecated cannot change it"),
        (
            ["--server-variable", "region"],
            "--update keeps the first import's server variables (in the lock file); "
            "--server-variable cannot change them",
        ),
    ],
    ids=["filter", "deprecated", "server-variable"],
)
def test_update_refuses_new_filters(
    tmp_path: Path,
    reviewed: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    argv = ["import", "openapi", str(TRACKER), "--source", "tracker", "--out", str(reviewed)]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--update", *extra])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("none", "has no tracker.openapi-lock.json: --update needs the lock file"),
        ("other-source", "is the lock of source 'tracker', not 'other'"),
        ("broken-yaml", "get_issue.yaml:{line}: YAML syntax error"),
        ("bad-spec", "cannot import"),
    ],
)
def test_update_errors_exit_2_without_a_traceback(
    tmp_path: Path, reviewed: Path, capsys: pytest.CaptureFixture[str], setup: str, message: str
) -> None:
    out, source, spec = reviewed, "tracker", TRACKER
    if setup == "none":
        out = tmp_path / "empty"
    elif setup == "other-source":
        (reviewed / "other.openapi-lock.json").write_text((reviewed / LOCK).read_text())
        source = "other"
    elif setup == "broken-yaml":
        edit(reviewed, "get_issue", lambda text: text.replace("description:", "description: [", 1))
        lines = (reviewed / "get_issue.yaml").read_text().splitlines()
        # PyYAML notices the unclosed list on the line after it
        broken = next(n for n, line in enumerate(lines, 1) if line.startswith("description: ["))
        message = message.format(line=broken + 1)
    else:
        spec = tmp_path / "bad.json"
        spec.write_text("{not json")
    before = {path.name: path.read_text() for path in reviewed.iterdir()}
    argv = ["import", "openapi", str(spec), "--source", source, "--out", str(out), "--update"]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert {path.name: path.read_text() for path in reviewed.iterdir()} == before


# -- what the merge keeps, case by case -----------------------------------------------------


def imported_v1(tmp_path: Path, document: dict[str, Any] | None = None) -> Path:
    out = tmp_path / "tools.d"
    spec = write(tmp_path / "v1.json", document or description())
    import_openapi(spec, source="tracker", out=out)
    return out


def insert_before(text: str, start: str, line: str) -> str:
    """``line`` put above the first line of ``text`` that starts with ``start``."""
    lines = text.splitlines(keepends=True)
    index = next(n for n, each in enumerate(lines) if each.startswith(start))
    return "".join([*lines[:index], line + "\n", *lines[index:]])


def edit_document(out: Path, name: str, change: Callable[[dict[str, Any]], None]) -> None:
    """A structural edit: the reviewer's file rewritten whole (its comments go)."""
    document = read(out, f"{name}.yaml")
    change(document)
    (out / f"{name}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))


def test_the_reviewers_comments_are_kept_at_their_keys(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)

    def comment(text: str) -> str:
        text = insert_before(text, "name: list_issues", "# Team: keep this tool small.")
        text = insert_before(text, "  - name: state", "  # the model always passes a state")
        text = insert_before(text, "  - name: tag", "  # tag goes away below")
        tags = "tags:\n  source: tracker\n"
        return text.replace(tags, tags[:-1] + "  # tagged by hand\n", 1)

    edit(out, "list_issues", comment)
    assert main(["validate", "--strict", str(out)]) == 0
    v2 = description()
    v2["paths"]["/issues"]["get"]["parameters"][1]["schema"]["maximum"] = 50
    del v2["paths"]["/issues"]["get"]["parameters"][3]  # tag
    updated(tmp_path, out, v2)
    text = (out / "list_issues.yaml").read_text()
    lines = text.splitlines()
    assert "# Team: keep this tool small." in lines  # above the document
    state = lines.index("  - name: state")
    assert lines[state - 1] == "  # the model always passes a state"
    assert lines[lines.index("tags:") + 1] == "  source: tracker  # tagged by hand"
    # its parameter is gone: the comment is kept above the document
    assert lines.index("# tag goes away below") < lines.index("name: list_issues")
    assert "maximum: 50" in text


def test_a_removed_parameter_stays_removed_and_a_change_to_it_is_a_conflict(
    tmp_path: Path,
) -> None:
    out = imported_v1(tmp_path)

    def remove_labels(document: dict[str, Any]) -> None:
        inputs = document["input_schema"]["parameters"]
        document["input_schema"]["parameters"] = [p for p in inputs if p["name"] != "labels"]
        del document["backend"]["http"]["query"]["labels"]

    edit_document(out, "list_issues", remove_labels)
    assert main(["validate", "--strict", str(out)]) == 0
    v2 = description()
    v2["paths"]["/issues"]["get"]["parameters"][2]["description"] = "Labels, comma-separated."
    report = updated(tmp_path, out, v2)
    assert "labels" not in params(read(out, "list_issues.yaml"))
    [conflict] = report.conflicts
    assert conflict.field == "input_schema.parameters[labels]"
    assert "kept removed, as you left it; the description now gives {" in str(conflict)


def test_removed_outputs_stay_removed_and_new_ones_are_added(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    edit(
        out,
        "get_issue",
        lambda text: text.replace("  - name: body\n    type: string\n    required: false\n", "", 1),
    )
    v2 = description()
    v2["components"]["schemas"]["NewIssue"]["properties"]["due"] = {"type": "string"}
    report = updated(tmp_path, out, v2)
    outputs = params(read(out, "get_issue.yaml"), "output_schema")
    assert "body" not in outputs
    assert "due" in outputs
    assert report.conflicts == []


def test_a_tool_renamed_and_moved_to_another_file_is_found(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    text = (out / "get_issue.yaml").read_text().replace("name: get_issue\n", "name: read_issue\n")
    (out / "get_issue.yaml").unlink()
    (out / "issues").mkdir()
    (out / "issues" / "read.yaml").write_text(text)
    v2 = description()
    v2["paths"]["/issues/{id}"]["get"]["summary"] = "Fetch one issue"
    report = updated(tmp_path, out, v2)
    moved = read(out, "issues/read.yaml")
    assert moved["name"] == "read_issue"
    assert moved["annotations"]["title"] == "Fetch one issue"
    assert not (out / "get_issue.yaml").exists()
    assert report.deleted == []
    assert main(["validate", "--strict", str(out)]) == 0


def test_operations_are_matched_by_operation_id_or_by_method_and_path(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    v2 = description()
    paths = v2["paths"]
    paths["/issues/{id}"]["get"]["operationId"] = "fetchIssue"  # same path: renamed tool
    paths["/v2/search"] = paths.pop("/search")  # same operationId: same tool, moved
    report = updated(tmp_path, out, v2)
    assert read(out, "get_issue.yaml")["name"] == "fetch_issue"
    assert read(out, "search.yaml")["backend"]["http"]["path"] == "/v2/search"
    classified = {tool.name: tool for tool in report.classified}
    assert classified["fetch_issue"].severity == "breaking"
    assert classified["fetch_issue"].new_version == "2.0.0"
    assert "breaking: renamed from 'get_issue'" in map(str, classified["fetch_issue"].changes)
    # The rest compares the tool with itself before the rename: not with nothing.
    assert "compatible: tool added" not in map(str, classified["fetch_issue"].changes)
    assert report.added == report.removed == []
    assert main(["validate", "--strict", str(out)]) == 0


def test_a_new_operation_does_not_take_a_name_the_reviewer_gave(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    edit(out, "search", lambda text: text.replace("name: search\n", "name: close_issue\n"))
    v2 = newer(description())  # adds closeIssue
    report = updated(tmp_path, out, v2)
    assert read(out, "search.yaml")["name"] == "close_issue"
    assert read(out, "close_issue_2.yaml")["name"] == "close_issue_2"
    assert [(r.wanted, r.name) for r in report.generation.renamed][-1] == (
        "close_issue",
        "close_issue_2",
    )
    assert main(["validate", "--strict", str(out)]) == 0


def test_the_source_file_is_merged_too(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    path = out / "tracker.source.yaml"
    path.write_text(path.read_text().replace("https://eu.tracker", "https://us.tracker"))
    v2 = description()
    v2["info"]["version"] = "2.2"
    v2["servers"][0]["variables"]["region"]["default"] = "ap"
    report = updated(tmp_path, out, v2)
    source = read(out, "tracker.source.yaml")
    assert source["description"] == "Tracker API 2.2"
    assert source["base_url"] == "${TRACKER_BASE_URL:-https://us.tracker.example.com/v2}"
    [conflict] = report.conflicts
    assert conflict.tool == "tracker"
    assert conflict.field == "base_url"
    line = path.read_text().splitlines()[conflict.line - 1]
    assert line.startswith("base_url: ")
    # The source's description is for people, and its base URL is the reviewer's:
    # what every tool does is the same.
    assert report.classified == []


def test_an_update_keeps_the_exposed_server_variables(tmp_path: Path) -> None:
    out = tmp_path / "tools.d"
    import_openapi(
        write(tmp_path / "v1.json", description()),
        source="tracker",
        out=out,
        server_variables=["region"],
    )
    assert json.loads((out / LOCK).read_text())["server_variables"] == ["region"]
    v2 = description()
    v2["servers"][0]["variables"]["region"]["default"] = "ap"
    updated(tmp_path, out, v2)
    source = read(out, "tracker.source.yaml")
    assert source["base_url"] == "https://${TRACKER_SERVER_REGION:-ap}.tracker.example.com/v2"
    assert json.loads((out / LOCK).read_text())["server_variables"] == ["region"]
    # The description drops the variable: the update goes on, and says so.
    v3 = description()
    v3["servers"] = [{"url": "https://tracker.example.com/v3"}]
    updated(tmp_path, out, v3)
    text = (out / "tracker.source.yaml").read_text()
    assert yaml.safe_load(text)["base_url"] == "${TRACKER_BASE_URL:-https://tracker.example.com/v3}"
    assert (
        "# note: base_url: --server-variable 'region' of the first import: the URL has no "
        "{region} (its variables: none) (#/servers/0/url)"
    ) in text
    assert json.loads((out / LOCK).read_text())["server_variables"] == ["region"]


def test_an_update_stops_a_folder_reading_a_variable_the_description_named(
    tmp_path: Path,
) -> None:
    # A folder as an earlier importer wrote it: {region} read from TRACKER_REGION.
    out = imported_v1(tmp_path)
    earlier = "https://${TRACKER_REGION:-eu}.tracker.example.com/v2"
    lock = json.loads((out / LOCK).read_text())
    lock["source_generated"]["base_url"] = earlier
    del lock["server_variables"]
    (out / LOCK).write_text(json.dumps(lock))
    path = out / "tracker.source.yaml"
    path.write_text(
        path.read_text().replace("${TRACKER_BASE_URL:-https://eu.tracker.example.com/v2}", earlier)
    )
    report = updated(tmp_path, out, description())
    assert report.conflicts == []
    assert read(out, "tracker.source.yaml")["base_url"] == (
        "${TRACKER_BASE_URL:-https://eu.tracker.example.com/v2}"
    )


def test_a_lock_written_before_server_variables_exposes_none(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    lock = json.loads((out / LOCK).read_text())
    del lock["server_variables"]
    (out / LOCK).write_text(json.dumps(lock))
    updated(tmp_path, out, description())
    assert read(out, "tracker.source.yaml")["base_url"].startswith("${TRACKER_BASE_URL:-")
    assert json.loads((out / LOCK).read_text())["server_variables"] == []


def test_an_operation_that_cannot_be_imported_any_more_is_kept_as_it_is(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    before = (out / "get_issue.yaml").read_text()
    v2 = description()
    v2["paths"]["/issues/{id}"]["get"]["parameters"].append(
        {"name": "x", "in": "query", "required": True, "content": {"text/csv": {}}}
    )
    report = updated(tmp_path, out, v2)
    assert (out / "get_issue.yaml").read_text() == before
    assert "get_issue" in [skipped.operation for skipped in report.generation.skipped]
    assert report.removed == []
    report = updated(tmp_path, out, description())  # and comes back in step later
    assert report.conflicts == []


def test_documents_sharing_a_file_are_updated_in_place(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    shared = out / "issues.yaml"
    shared.write_text(
        (out / "get_issue.yaml").read_text() + "---\n" + (out / "delete_issue.yaml").read_text()
    )
    (out / "get_issue.yaml").unlink()
    (out / "delete_issue.yaml").unlink()
    v2 = description()
    v2["paths"]["/issues/{id}"]["delete"]["summary"] = "Remove an issue"
    report = updated(tmp_path, out, v2)
    documents = list(yaml.safe_load_all(shared.read_text()))
    assert [document["name"] for document in documents] == ["get_issue", "delete_issue"]
    assert documents[1]["description"] == "Remove an issue"
    assert documents[1]["version"] == "1.0.1"  # cosmetic: a patch
    assert [tool.name for tool in report.classified] == ["delete_issue"]
    assert main(["validate", "--strict", str(out)]) == 0


def test_the_real_github_subset_updates_over_itself_without_a_change(tmp_path: Path) -> None:
    github = (
        Path(__file__).parent.parent / "fixtures" / "openapi" / "github" / "api.github.com.json"
    )
    out = tmp_path / "github"
    import_openapi(github, source="github", out=out)
    files = {path: path.read_bytes() for path in out.rglob("*")}
    report = update_openapi(github, source="github", out=out)
    assert report.classified == []
    assert report.conflicts == []
    assert {path: path.read_bytes() for path in out.rglob("*")} == files


def test_a_new_operation_wanting_a_tracked_tools_name_gets_another(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    v2 = description()
    # first in the description's order, and named like the tracked getIssue
    v2["paths"] = {
        "/issue-by-key/{key}": {
            "get": {
                "operationId": "get-issue",
                "parameters": [{"name": "key", "in": "path", "required": True, "schema": {}}],
                "responses": {"204": {"description": "ok"}},
            }
        },
        **v2["paths"],
    }
    report = updated(tmp_path, out, v2)
    assert read(out, "get_issue.yaml")["backend"]["http"]["path"] == "/issues/{{ inputs.id }}"
    assert (
        read(out, "get_issue_2.yaml")["backend"]["http"]["path"] == "/issue-by-key/{{ inputs.key }}"
    )
    assert [str(op) for op in report.added] == ["get_issue_2 (GET /issue-by-key/{key})"]
    assert [tool.name for tool in report.classified] == ["get_issue_2"]


def test_a_tracked_operation_that_became_deprecated_is_still_updated(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    v2 = description()
    v2["paths"]["/issues/{id}"]["delete"].update(deprecated=True, summary="Gone soon")
    v2["paths"]["/old"] = {"get": {"deprecated": True, "responses": {"204": {"description": "ok"}}}}
    report = updated(tmp_path, out, v2)
    assert read(out, "delete_issue.yaml")["description"] == "Gone soon"
    assert report.removed == report.added == []
    assert not (out / "get_old.yaml").exists()


def test_every_tool_deleted_stays_deleted(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    for path in out.glob("*.yaml"):
        if not path.name.endswith(".source.yaml"):
            path.unlink()
    report = updated(tmp_path, out, newer(description()))
    assert sorted(path.name for path in out.glob("*.yaml")) == [
        "close_issue.yaml",
        "tracker.source.yaml",
    ]
    assert {op.name for op in report.deleted} >= {"get_issue", "list_issues", "search"}
    report = updated(tmp_path, out, newer(description()))
    assert report.deleted
    assert report.added == []


# -- a hostile or broken lock file ----------------------------------------------------------


def corruptions(lock: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The lock with one value at a time replaced by a value of the wrong type."""
    places: list[tuple[str, ...]] = [(key,) for key in lock]
    key, entry = next(iter(lock["operations"].items()))
    places += [("operations", key, field) for field in entry]
    places += [("operations", key, "generated", field) for field in entry["generated"]]
    places += [("selection", field) for field in lock["selection"]]
    cases = []
    for place in places:
        bad_values: tuple[Any, ...] = (5, "x", [], {}, None, [1, {"a": None}])
        for bad in bad_values:
            broken = copy.deepcopy(lock)
            node = broken
            for step in place[:-1]:
                node = node[step]
            node[place[-1]] = bad
            cases.append(("/".join(place) + f"={bad!r}", broken))
    return cases


def test_a_corrupted_lock_file_is_an_error_never_a_traceback(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    pristine = json.loads((out / LOCK).read_text())
    files = {path: path.read_text() for path in out.glob("*.yaml")}
    spec = write(tmp_path / "v2.json", newer(description()))
    for case, broken in corruptions(pristine):
        (out / LOCK).write_text(json.dumps(broken))
        with contextlib.suppress(AgentKitError):  # an error is fine; any other exception fails
            update_openapi(spec, source="tracker", out=out)
        for path in out.glob("*.yaml"):  # start each case from the reviewed folder
            path.unlink()
        for path, text in files.items():
            path.write_text(text)
        assert all(path.resolve().is_relative_to(out.resolve()) for path in out.rglob("*")), case


def test_paths_in_the_lock_file_never_lead_outside_the_folder(tmp_path: Path) -> None:
    out = imported_v1(tmp_path)
    lock = json.loads((out / LOCK).read_text())
    lock["source_file"] = "../outside.source.yaml"
    for entry in lock["operations"].values():
        entry["file"] = "../../outside.yaml"
    (out / LOCK).write_text(json.dumps(lock))
    before = sorted(path.name for path in tmp_path.iterdir())
    updated(tmp_path, out, newer(description()))
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([*before, "v2.json"])
    assert json.loads((out / LOCK).read_text())["source_file"] == "tracker.source.yaml"


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda info: info.update(version="2.2"), id="version"),
        pytest.param(lambda info: info.update(title="Tracker"), id="title"),
        pytest.param(lambda info: info.update(description="Now longer."), id="text"),
    ],
)
def test_a_change_of_the_apis_version_or_text_bumps_no_tool(
    tmp_path: Path, change: Callable[[dict[str, Any]], None]
) -> None:
    out = imported_v1(tmp_path)
    v2 = description()
    change(v2["info"])
    report = updated(tmp_path, out, v2)
    assert report.classified == []
    assert report.unchanged == len(json.loads((out / LOCK).read_text())["operations"])
    assert read(out, "get_issue.yaml")["version"] == "1.0.0"
    # A change of what the source does still changes every tool.
    v3 = copy.deepcopy(v2)
    v3["servers"][0]["variables"]["region"]["default"] = "ap"
    report = updated(tmp_path, out, v3)
    assert {tool.new_version for tool in report.classified} == {"1.1.0"}


def in_flow_style(text: str) -> str:
    """A generated file as the import wrote it before block style: each document's
    collections of scalars in flow style and long strings folded at 120 columns."""
    documents = []
    for segment in re.split(r"^---\n", text, flags=re.MULTILINE):
        comments = "".join(line for line in segment.splitlines(keepends=True) if line[:1] == "#")
        document = yaml.safe_load(segment)
        dumped = yaml.dump(
            document,
            Dumper=yaml.SafeDumper,
            sort_keys=False,
            allow_unicode=True,
            width=120,
            default_flow_style=None,
        )
        documents.append(comments + dumped)
    return "---\n".join(documents)


def test_an_update_reads_a_folder_written_in_flow_style(tmp_path: Path) -> None:
    """A folder imported before the import wrote block style updates: the files the
    update leaves alone keep their text, the ones it changes are written in block style."""
    out = imported_v1(tmp_path)
    for path in out.glob("*.yaml"):
        path.write_text(in_flow_style(path.read_text(encoding="utf-8")), encoding="utf-8")
    flow = {path.name: path.read_text(encoding="utf-8") for path in out.glob("*.yaml")}
    assert "  - {name: id, type: integer, minimum: 1}\n" in flow["get_issue.yaml"]
    assert updated(tmp_path, out, description()).written == []
    v2 = description()
    v2["paths"]["/issues/{id}"]["get"]["summary"] = "Fetch one issue"
    report = updated(tmp_path, out, v2)
    assert report.written == [out / "get_issue.yaml"]
    assert report.conflicts == []
    text = (out / "get_issue.yaml").read_text(encoding="utf-8")
    assert "  - name: id\n    type: integer\n    minimum: 1\n" in text
    assert "{name:" not in text
    assert read(out, "get_issue.yaml")["annotations"]["title"] == "Fetch one issue"
    for name, before in flow.items():
        if name != "get_issue.yaml":
            assert (out / name).read_text(encoding="utf-8") == before, name
    assert main(["validate", "--strict", str(out)]) == 0
