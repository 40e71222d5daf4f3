"""load_tools: definitions become Tool classes; every problem is reported with file:line."""

from __future__ import annotations

import contextlib
import gc
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit import DeclarativeTool, DefinitionError, Tool, ToolRegistry, load_tools
from agentkit.declarative import definition
from agentkit.declarative.backends.http.backend import HttpBackend
from agentkit.declarative.loader import definition_files
from agentkit.declarative.tool import class_name_for
from agentkit.toolregistry import name_key
from tests.declarative.conftest import HTTP_TOOL, WriteFile


def problems(*paths: Path, registry: ToolRegistry | None = None) -> list[str]:
    with pytest.raises(DefinitionError) as info:
        load_tools(*paths, registry=registry)
    return [str(problem) for problem in info.value.problems]


def test_a_definition_becomes_a_tool_class(write: WriteFile) -> None:
    path = write(HTTP_TOOL)
    (cls,) = load_tools(path)
    assert issubclass(cls, DeclarativeTool)
    assert issubclass(cls, Tool)
    assert cls.__name__ == "LookupTool"
    assert cls.TOOL_NAME == "lookup"
    assert cls.TOOL_VERSION == "1.0.0"
    assert cls.TOOL_DESCRIPTION == "Look a thing up."
    assert f"{path}:1" == cls.SOURCE
    tool = cls()
    assert tool.credential_names == ("api-key",)
    assert tool.input_schema.names == ("id", "verbose")
    assert tool.annotations == {"read_only": True, "idempotent": True}
    assert tool.backend_kind == "http"


def test_with_a_registry_instances_are_registered(write: WriteFile) -> None:
    registry = ToolRegistry()
    load_tools(write(HTTP_TOOL), registry=registry)
    assert registry.names() == ["lookup"]


def test_folders_are_read_recursively_and_sorted(write: WriteFile, tmp_path: Path) -> None:
    write(HTTP_TOOL.replace("name: lookup", "name: b_tool"), "z/b.yml")
    write(HTTP_TOOL.replace("name: lookup", "name: a_tool"), "a.yaml")
    write("not: a definition", "notes.txt")
    assert [cls.TOOL_NAME for cls in load_tools(tmp_path)] == ["a_tool", "b_tool"]


def test_several_documents_in_one_file(write: WriteFile) -> None:
    text = HTTP_TOOL + "---\n" + HTTP_TOOL.replace("name: lookup", "name: second")
    path = write(text)
    _, second = load_tools(path)
    assert f"{path}:20" == second.SOURCE


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(
            ("name: lookup", "name: look up"), "1:7: name: invalid tool name 'look up'", id="name"
        ),
        pytest.param(
            ("version: 1.0.0", "version: 1.0"),
            "2:10: version: version 1.0 must be a quoted string",
            id="version-float",
        ),
        pytest.param(
            ("version: 1.0.0", "version: v1"), "2:10: version: invalid version 'v1'", id="version"
        ),
        pytest.param(
            ("description:", "descripton:"),
            "3:13: descripton: unknown key 'descripton' (did you mean 'description'?)",
            id="unknown-key",
        ),
        pytest.param(
            ("type: boolean", "type: bool"),
            "8:29: input_schema.parameters[1].type: unsupported type 'bool' (did you mean 'boolean'?)",
            id="schema",
        ),
        pytest.param(
            ("{{ inputs.id }}\n", "{{ inputs.idd }}\n"),
            "14:10: backend.http.url: 'inputs.idd' is not a declared input (did you mean 'inputs.id'?)",
            id="unknown-input",
        ),
        pytest.param(
            ("credential: api-key", "credential: api-token"),
            "16:34: backend.http.auth.api_key.credential: credential 'api-token' is used but not declared",
            id="undeclared-credential",
        ),
        pytest.param(
            ('title: "{{', 'titel: "{{'),
            "18:14: backend.http.output.titel: 'titel' is not an output parameter (did you mean 'title'?)",
            id="output-key",
        ),
        pytest.param(
            ("response.json.title", "response.jsn.title"),
            "18:14: backend.http.output.title: 'response.jsn' does not exist",
            id="response-field",
        ),
        pytest.param(
            ("https://api.example.com/", "https://{{ inputs.id }}.example.com/"),
            "14:10: backend.http.url: templates may not reach the scheme, host or port",
            id="template-in-host",
        ),
        pytest.param(
            ('{verbose: "{{ inputs.verbose }}"}', '{verbose: "{{ inputs.verbose "}'),
            "15:22: backend.http.query.verbose: template syntax error",
            id="template-syntax",
        ),
        pytest.param(
            ('{verbose: "{{ inputs.verbose }}"}', '{verbose: "{{ secrets.key }}"}'),
            "15:22: backend.http.query.verbose: unknown variable 'secrets'",
            id="unknown-variable",
        ),
        pytest.param(
            ("    output:\n", "    method: FETCH\n    output:\n"),
            "17:13: backend.http.method: unsupported method 'FETCH'",
            id="method",
        ),
    ],
)
def test_problems_name_file_line_column_and_field(
    write: WriteFile, edit: tuple[str, str], expected: str
) -> None:
    path = write(HTTP_TOOL.replace(*edit))
    (found,) = problems(path)  # one mistake, one problem: nothing cascades
    assert found.startswith(f"{path}:{expected}"), found


def test_every_problem_in_every_file_at_once(write: WriteFile, tmp_path: Path) -> None:
    write(HTTP_TOOL.replace("name: lookup", "name: 'bad name'"), "a.yaml")
    write("name: [unclosed\n", "b.yaml")
    write(HTTP_TOOL.replace("version: 1.0.0", "version: x"), "c.yaml")
    found = problems(tmp_path)
    assert [problem.split(":")[0].rsplit("/", 1)[-1] for problem in found] == [
        "a.yaml",
        "b.yaml",
        "c.yaml",
    ]
    assert "YAML syntax error" in found[1]


def test_nothing_is_registered_when_anything_is_wrong(write: WriteFile, tmp_path: Path) -> None:
    write(HTTP_TOOL, "a.yaml")
    write(HTTP_TOOL.replace("name: lookup", "name: other").replace("1.0.0", "one"), "b.yaml")
    registry = ToolRegistry()
    problems(tmp_path, registry=registry)
    assert len(registry) == 0


def test_duplicate_names_across_files_name_both(write: WriteFile, tmp_path: Path) -> None:
    first = write(HTTP_TOOL, "a.yaml")
    second = write(HTTP_TOOL, "b.yaml")
    (found,) = problems(tmp_path)
    assert found == (
        f"{second}:1:1: name: tool 'lookup' is already defined by {first}:1; tool names must be unique"
    )


def test_a_clash_with_a_hand_written_tool_names_the_class(write: WriteFile) -> None:
    class Lookup(Tool):
        TOOL_NAME = "lookup"

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return {}

    registry = ToolRegistry([Lookup()])
    (found,) = problems(write(HTTP_TOOL), registry=registry)
    assert "is already defined by tests.declarative.test_loader." in found
    assert "Lookup, already registered" in found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "- a\n- b\n", "1:1: a tool definition must be a mapping, got a list", id="list"
        ),
        pytest.param("42\n", "must be a mapping, got an integer", id="integer"),
        pytest.param("'x'\n", "must be a mapping, got a string", id="string"),
        pytest.param(
            HTTP_TOOL.replace("input_schema:", "input_schema: [1]\nunused:"),
            "input_schema[0]: expected a mapping with 'name' and 'type', got 1",
            id="schema-list",
        ),
    ],
)
def test_a_wrong_kind_of_value_is_named_in_the_author_s_words(
    write: WriteFile, text: str, expected: str
) -> None:
    found = "\n".join(problems(write(text)))
    assert expected in found
    assert "Located" not in found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "name: a\nname: b\n",
            "2:1: duplicate key 'name' (first given on line 1)",
            id="duplicate-key",
        ),
        pytest.param(
            "a: &x {b: 1}\n<<: *x\n", "merge keys ('<<') are not supported", id="merge-key"
        ),
        pytest.param(
            "!!python/object:os.system {}\n",
            "the tag '!!python/object:os.system' is not supported",
            id="unsafe-tag",
        ),
        pytest.param(
            "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
            "alias bomb",
            id="alias-bomb",
        ),
    ],
)
def test_unsafe_or_ambiguous_yaml_is_refused(write: WriteFile, text: str, expected: str) -> None:
    found = problems(write(text))
    assert any(expected in problem for problem in found), found


def test_large_files_are_refused(write: WriteFile) -> None:
    path = write("# " + "x" * (1024 * 1024) + "\n")
    (found,) = problems(path)
    assert found == f"{path}: the file is over 1048576 bytes, the most a definition may be"


def test_missing_path(tmp_path: Path) -> None:
    (found,) = problems(tmp_path / "nope")
    assert found.endswith("no such file or folder")


@pytest.mark.parametrize(
    "spellings",
    [
        pytest.param(["fetch_weather", "fetch-weather"], id="dash"),
        pytest.param(["fetch_weather", "Fetch_Weather"], id="case"),
        pytest.param(["fetch_weather", "fetch-weather", "FetchWeather"], id="three"),
    ],
)
def test_names_that_collide_name_both_definitions(
    write: WriteFile, tmp_path: Path, spellings: list[str]
) -> None:
    paths = [
        write(HTTP_TOOL.replace("name: lookup", f"name: {name}"), f"{index}.yaml")
        for index, name in enumerate(spellings)
    ]
    found = problems(tmp_path)
    assert found == [
        f"{path}:1:1: name: tool '{name}' collides with '{spellings[0]}' defined by "
        f"{paths[0]}:1; tool names must differ in more than case, '-' and '_'"
        for path, name in zip(paths[1:], spellings[1:], strict=True)
    ]


def test_a_collision_inside_one_file_names_both_lines(write: WriteFile) -> None:
    second = HTTP_TOOL.replace("name: lookup", "name: Look-Up")
    path = write(HTTP_TOOL + "---\n" + second)
    (found,) = problems(path)
    line = HTTP_TOOL.count("\n") + 2
    assert found.startswith(f"{path}:{line}:1: name: tool 'Look-Up' collides with 'lookup'")
    assert f"defined by {path}:1;" in found


def test_a_collision_with_a_registered_tool_is_refused(write: WriteFile) -> None:
    registry = ToolRegistry()
    load_tools(write(HTTP_TOOL, "a.yaml"), registry=registry)
    with pytest.raises(DefinitionError, match="tool 'LOOKUP' collides with 'lookup' defined by"):
        load_tools(
            write(HTTP_TOOL.replace("name: lookup", "name: LOOKUP"), "b.yaml"), registry=registry
        )
    assert registry.names() == ["lookup"]


@given(names=st.lists(st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,12}", fullmatch=True), max_size=8))
def test_generated_class_names_are_unique_whenever_names_do_not_collide(names: list[str]) -> None:
    distinct = {name_key(name): name for name in names}.values()
    assert len({class_name_for(name) for name in distinct}) == len(distinct)


# -- which files are read, and how much of them --------------------------------------------------


def test_a_file_is_read_no_further_than_the_cap_whatever_its_size_claims(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /proc files claim a size of 0 and read megabytes: the size is never trusted.
    path = write("# " + "x" * (2 * 1024 * 1024) + "\n")
    real_fstat = os.fstat

    def claims_empty(fd: int) -> os.stat_result:
        fields = list(real_fstat(fd))
        fields[stat.ST_SIZE] = 0
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", claims_empty)
    (found,) = problems(path)
    assert found == f"{path}: the file is over 1048576 bytes, the most a definition may be"


@pytest.mark.skipif(not os.access("/proc/self/status", os.R_OK), reason="needs /proc")
def test_a_proc_file_is_read_as_what_it_is() -> None:
    found = problems(Path("/proc/self/status"))  # read, and refused as not a definition
    assert found
    assert all(problem.startswith("/proc/self/status:") for problem in found)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "tool.yaml"
    os.mkfifo(fifo)
    for named in (fifo, tmp_path):  # named, and found in a folder
        (found,) = problems(named)
        assert found == f"{fifo}: not a regular file (a folder, FIFO, device or socket)"


def test_a_device_is_refused(tmp_path: Path) -> None:
    (found,) = problems(Path("/dev/zero"))
    assert found == "/dev/zero: not a regular file (a folder, FIFO, device or socket)"
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    (found,) = problems(tmp_path)
    assert "outside the folder" in found


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("/etc/hostname", id="absolute"),
        pytest.param("../outside.yaml", id="relative"),
        pytest.param("/proc/self/status", id="proc"),
        pytest.param("sub/../../outside.yaml", id="through-a-subfolder"),
    ],
)
def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path, target: str) -> None:
    (tmp_path / "outside.yaml").write_text(HTTP_TOOL)
    folder = tmp_path / "tools.d"
    (folder / "sub").mkdir(parents=True)
    link = folder / "link.yaml"
    link.symlink_to(target)
    (found,) = problems(folder)
    assert found.startswith(f"{link}: a symbolic link to '{target}', outside the folder")
    assert found.endswith("copy the file in, or give it as a path of its own")


def test_a_symlink_within_the_folder_and_a_named_symlink_are_read(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text(HTTP_TOOL)
    folder = tmp_path / "tools.d"
    folder.mkdir()
    (folder / "a.yml").write_text(HTTP_TOOL.replace("name: lookup", "name: inside"))
    (folder / "b.yaml").symlink_to("a.yml")
    (found,) = problems(folder)  # read twice, so the name clashes: the link was followed
    assert "tool 'inside' is already defined" in found
    named = tmp_path / "named.yaml"
    named.symlink_to(tmp_path / "real.yaml")
    assert [cls.TOOL_NAME for cls in load_tools(named)] == ["lookup"]


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        pytest.param({"loop.yaml": "loop.yaml"}, "cannot read", id="self-loop"),
        pytest.param({"a.yaml": "b.yaml", "b.yaml": "a.yaml"}, "cannot read", id="two-loop"),
        pytest.param({"gone.yaml": "missing.yaml"}, "cannot read", id="dangling"),
    ],
)
def test_broken_symlinks_are_problems(tmp_path: Path, links: dict[str, str], expected: str) -> None:
    for name, target in links.items():
        (tmp_path / name).symlink_to(target)
    found = problems(tmp_path)
    assert len(found) == len(links)
    assert all(expected in problem for problem in found), found


def test_linked_folders_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "tool.yaml").write_text(HTTP_TOOL)
    folder = tmp_path / "tools.d"
    folder.mkdir()
    (folder / "linked").symlink_to(outside)
    (folder / "own.yaml").write_text(HTTP_TOOL.replace("name: lookup", "name: own"))
    assert [cls.TOOL_NAME for cls in load_tools(folder)] == ["own"]


def test_a_kubernetes_configmap_mount_loads_each_tool_once(tmp_path: Path) -> None:
    # The layout kubelet writes: a timestamped folder, ..data linking to it, and a
    # link per file through ..data.
    folder = tmp_path / "tools.d"
    stamped = folder / "..2026_12_03_13_00_00.000000001"
    stamped.mkdir(parents=True)
    (stamped / "lookup.yaml").write_text(HTTP_TOOL)
    (folder / "..data").symlink_to(stamped.name)
    (folder / "lookup.yaml").symlink_to("..data/lookup.yaml")
    assert [cls.TOOL_NAME for cls in load_tools(folder)] == ["lookup"]


def test_hidden_entries_in_a_folder_are_skipped(write: WriteFile, tmp_path: Path) -> None:
    write(HTTP_TOOL, "tools/lookup.yaml")
    write("on: push\njobs: {}\n", ".github/workflows/ci.yml")
    write("repos: []\n", ".pre-commit-config.yaml")
    write("broken: [\n", "tools/.lookup.yaml.swp.yaml")
    write(HTTP_TOOL.replace("name: lookup", "name: hidden"), ".hidden/sub/tool.yaml")
    assert [cls.TOOL_NAME for cls in load_tools(tmp_path)] == ["lookup"]


def test_a_hidden_file_given_by_name_is_read(write: WriteFile, tmp_path: Path) -> None:
    path = write(HTTP_TOOL, ".hidden/.lookup.yaml")
    assert [cls.TOOL_NAME for cls in load_tools(path)] == ["lookup"]
    assert [cls.TOOL_NAME for cls in load_tools(tmp_path / ".hidden")] == []


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"name: caf\xe9\n", ":1:10: not UTF-8 text (byte 0xe9)", id="latin-1"),
        pytest.param(
            b"a: 1\nb: \xc3\xa9\xff\n", ":2:5: not UTF-8 text (byte 0xff)", id="after-utf8"
        ),
        pytest.param(b"a: \x00\n", ":1:4: character #x0000 is not allowed", id="nul"),
        pytest.param(b"a: \x1b[31m\n", ":1:4: character #x001b is not allowed", id="escape"),
    ],
)
def test_bytes_that_are_not_yaml_text_are_located(
    tmp_path: Path, data: bytes, expected: str
) -> None:
    path = tmp_path / "tool.yaml"
    path.write_bytes(data)
    (found,) = problems(path)
    assert found.startswith(f"{path}{expected}"), found


def test_dates_and_base_60_stay_text(write: WriteFile) -> None:
    text = HTTP_TOOL.replace(
        "description: Look a thing up.",
        "description: 2024-01-01\ntags: {released: 2024-01-01, at: 1:30}",
    )
    (cls,) = load_tools(write(text))
    assert cls.TOOL_DESCRIPTION == "2024-01-01"
    assert cls().tags == {"released": "2024-01-01", "at": "1:30"}


def test_a_definition_reads_its_own_document_again(write: WriteFile) -> None:
    # A loaded definition keeps its file's text, not the located YAML tree.
    text = HTTP_TOOL + "---\n" + HTTP_TOOL.replace("name: lookup", "name: second")
    first, second = load_tools(write(text))
    assert first.DEFINITION.raw["name"] == "lookup"
    assert second.DEFINITION.raw["name"] == "second"
    assert second.DEFINITION.to_dict()["backend"]["http"]["query"] == {
        "verbose": "{{ inputs.verbose }}"
    }


def test_tools_loaded_together_share_equal_strings_and_templates(
    write: WriteFile, tmp_path: Path
) -> None:
    write(HTTP_TOOL, "a.yaml")
    write(HTTP_TOOL.replace("name: lookup", "name: other"), "b.yaml")
    first, second = (cls.DEFINITION for cls in load_tools(tmp_path))
    assert first.input_schema.names[0] is second.input_schema.names[0]
    assert isinstance(first.backend, HttpBackend)
    assert isinstance(second.backend, HttpBackend)
    first_output = first.backend.spec.outputs.default
    second_output = second.backend.spec.outputs.default
    assert first_output is not None
    assert second_output is not None
    assert first_output[0][1] is second_output[0][1]


def test_cyclic_gc_is_paused_while_loading(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    parse = definition.parse_definition

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return parse(*args, **kwargs)

    monkeypatch.setattr("agentkit.declarative.loader.parse_definition", spy)
    load_tools(write(HTTP_TOOL))
    assert seen == [False]
    assert gc.isenabled()


@pytest.mark.parametrize("enabled", [True, False], ids=["gc-on", "gc-off"])
@pytest.mark.parametrize("text", [HTTP_TOOL, "name: 1\n"], ids=["loads", "fails"])
def test_gc_is_left_as_it_was_found(write: WriteFile, text: str, enabled: bool) -> None:
    path = write(text)
    if not enabled:
        gc.disable()
    try:
        with contextlib.suppress(DefinitionError):
            load_tools(path)
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_loading_leaves_objects_the_process_froze_frozen(write: WriteFile) -> None:
    path = write(HTTP_TOOL)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        load_tools(path)
        assert gc.get_freeze_count() == frozen
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_a_folder_lists_its_files_in_path_order_component_by_component(tmp_path: Path) -> None:
    for name in ("a.yaml", "a-c.yaml", "a/b.yaml", "a/z/x.yml", "b.yaml", "a/_y.yaml", "c.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    files, problems = definition_files(tmp_path)
    assert problems == []
    relative = [file.relative_to(tmp_path).as_posix() for file in files]
    assert relative == ["a/_y.yaml", "a/b.yaml", "a/z/x.yml", "a-c.yaml", "a.yaml", "b.yaml"]
    assert relative == [p.relative_to(tmp_path).as_posix() for p in sorted(files)]
