"""A URL whose host or port cannot be used fails the load, located, with the fix.

Every literal URL a definition gives is checked where it is written: a tool's
``url``, a source's ``base_url`` (after ``${VAR}``), an OAuth2 ``token_url`` and a
``proxy:`` URL. A URL that still reaches a call unusable (a spec made in code)
fails naming its host or port, never in urllib3's words, with nothing sent.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools
from agentkit.declarative.backends.http.backend import HttpBackend
from agentkit.declarative.backends.http.url import MAX_HOST_NAME, MAX_LABEL, authority_problem
from agentkit.declarative.tool import DeclarativeTool
from tests.declarative.conftest import WriteFile
from tests.support import loopback

ROOT = Path(__file__).resolve().parents[4]

TOOL = """\
name: probe
version: 1.0.0
output_schema:
  parameters:
    - {{name: ok, type: boolean}}
backend:
  http:
    url: "{url}"
"""

LONG_LABEL = "a" * (MAX_LABEL + 1)
LONG_NAME = ".".join(["b" * 60] * 5) + ".example"  # 312 characters

#: A host or port that cannot be used, and what the problem says (after "the URL's").
BAD = [
    pytest.param(
        "https://a..b.example/x",
        "host 'a..b.example' is not a valid host name: label 2 of 4 is empty",
        id="empty-label",
    ),
    pytest.param("https://.a.example/x", "label 1 of 3 is empty", id="leading-dot"),
    pytest.param(
        f"https://{LONG_LABEL}.example/x",
        f"label 1 of 2 is {MAX_LABEL + 1} characters long, over the {MAX_LABEL}",
        id="long-label",
    ),
    pytest.param(
        f"https://{LONG_NAME}/x",
        f"{len(LONG_NAME)} characters long, over the {MAX_HOST_NAME}",
        id="long-name",
    ),
    pytest.param("https://exa$mple.com/x", "'$' in label 1 of 2", id="dollar"),
    pytest.param("https://exa%41mple.com/x", "'%' in label 1 of 2", id="percent"),
    pytest.param(
        "https://bücher.example/x",
        "is not ASCII; write it as the ASCII name it resolves as (xn--bcher-kva.example)",
        id="not-ascii",
    ),
    pytest.param(
        "http://999.1.1.1/x", "host '999.1.1.1' is not a valid IPv4 address", id="ipv4-over-255"
    ),
    pytest.param(
        "http://1.2.3/x", "host '1.2.3' is not a valid IPv4 address", id="ipv4-three-parts"
    ),
    pytest.param("http://[fe80::1%25lo]:9/x", "has a zone (%25...)", id="ipv6-zone"),
    pytest.param("http://[::g]/x", "host '[::g]' is not a valid IPv6 address", id="ipv6-bad"),
    pytest.param(
        "http://127.0.0.1:0/x", "port 0 is out of range; give one from 1 to 65535", id="port-0"
    ),
    pytest.param("http://127.0.0.1:65536/x", "port 65536 is out of range", id="port-65536"),
    pytest.param(
        "http://127.0.0.1:00080/x",
        "port '00080' has leading zeros; write it 80",
        id="port-leading-zeros",
    ),
    pytest.param("http://127.0.0.1:+80/x", "port '+80' is not a number", id="port-sign"),
    pytest.param("http://127.0.0.1:/x", "the URL has an empty port after ':'", id="port-empty"),
    pytest.param("http://h:" + "9" * 5000 + "/x", "is out of range", id="port-5000-digits"),
    pytest.param("http://user:pw@api.example.com/x", "the URL holds user info", id="user-info"),
]

GOOD = [
    pytest.param("https://api.example.com/x", id="name"),
    pytest.param("https://API.Example.COM/x", id="upper-case"),
    pytest.param("https://api.example.com./x", id="trailing-dot"),
    pytest.param("http://my_service:8080/x", id="underscore"),
    pytest.param(f"https://{'c' * MAX_LABEL}.example/x", id="longest-label"),
    pytest.param("http://127.0.0.1:65535/x", id="highest-port"),
    pytest.param("https://example.com:443/x", id="default-port-written"),
    pytest.param("http://[::1]:8080/x", id="ipv6"),
    pytest.param("http://[::ffff:127.0.0.1]/x", id="ipv4-mapped"),
    pytest.param("http://localhost/x", id="localhost"),
]


def _problems(write: WriteFile, text: str, name: str = "tool.yaml") -> list[str]:
    with pytest.raises(DefinitionError) as info:
        load_tools(write(text, name).parent)
    return [str(problem) for problem in info.value.problems]


@pytest.mark.parametrize(("url", "said"), BAD)
def test_a_tools_url_with_a_bad_host_or_port_is_a_located_problem(
    write: WriteFile, url: str, said: str
) -> None:
    [problem] = _problems(write, TOOL.format(url=url))
    assert problem.startswith(f"{write.folder}/tool.yaml:8:10: backend.http.url: the URL")
    assert said in problem, problem
    assert "pw" not in problem


@pytest.mark.parametrize("url", GOOD)
def test_a_usable_url_loads(write: WriteFile, url: str) -> None:
    assert len(load_tools(write(TOOL.format(url=url)))) == 1


@pytest.mark.parametrize(("url", "said"), BAD[:6] + BAD[11:14])
def test_a_sources_base_url_is_checked_after_substitution(
    write: WriteFile, url: str, said: str
) -> None:
    write("source: api\nbase_url: ${API_BASE}\n", "source.yaml")
    write("name: probe\nversion: 1.0.0\nbackend: {http: {source: api, path: /x}}\n")
    base = url.removesuffix("/x")
    with pytest.raises(DefinitionError) as info:
        load_tools(write.folder, environ={"API_BASE": base})
    # The source's own problem; the tool's, naming the broken source, follows from it.
    (problem,) = [str(problem) for problem in info.value.problems]
    assert "source.yaml:2:11: base_url: base_url's " in problem, problem
    assert problem.endswith(
        "and 1 problem that follows from it, in the tools that use source 'api'"
    )
    assert said.replace("the URL has", "base_url has") in problem
    assert "(from '${API_BASE}')" in problem


@pytest.mark.parametrize(("url", "said"), BAD[:3] + BAD[12:14])
def test_an_oauth2_token_url_is_checked(write: WriteFile, url: str, said: str) -> None:
    text = (
        "name: probe\nversion: 1.0.0\ncredentials: [id, secret]\n"
        "backend:\n  http:\n    url: https://api.example.com/x\n"
        f"    auth: {{oauth2: {{token_url: '{url}', client_id: id, client_secret: secret}}}}\n"
    )
    [problem] = _problems(write, text)
    assert "backend.http.auth.oauth2.token_url: the token URL" in problem, problem
    assert said in problem


def test_validate_names_the_file_line_field_and_fix(write: WriteFile) -> None:
    path = write(TOOL.format(url="http://127.0.0.1:00080/items"))
    done = subprocess.run(
        [sys.executable, "-m", "agentkit", "validate", str(path)],
        env={"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2
    assert (
        f"{path}:8:10: backend.http.url: the URL's port '00080' has leading zeros; write it 80"
        in done.stderr
    )


@pytest.mark.parametrize(
    ("origin", "said"),
    [
        pytest.param("https://a..b.example", "label 2 of 4 is empty", id="empty-label"),
        pytest.param(f"https://{LONG_LABEL}.example", "over the 63", id="long-label"),
        pytest.param("http://a b.example", "' ' in label 1 of 2", id="space"),
        pytest.param("http://127.0.0.1:0", "port 0 is out of range", id="port-0"),
        pytest.param("http://127.0.0.1:00080", "port '00080' has leading zeros", id="zeros"),
        pytest.param("http://[::1", "has an unclosed '['", id="bracket"),
    ],
)
def test_an_unusable_url_at_call_time_is_named_and_nothing_is_sent(
    write: WriteFile, origin: str, said: str
) -> None:
    hits: list[str] = []

    def count(handler: loopback.Handler) -> None:
        hits.append(handler.path)
        handler.reply(200, {"ok": True})

    with loopback.serve({"/x": count}) as served:
        registry = ToolRegistry()
        load_tools(write(TOOL.format(url=served + "/x")), registry=registry)
        tool = registry["probe"]
        assert isinstance(tool, DeclarativeTool)
        assert isinstance(tool.BACKEND, HttpBackend)
        spec = dataclasses.replace(tool.BACKEND.spec, origin=origin)  # no load checks it
        odd = type("Odd", (type(tool),), {"BACKEND": HttpBackend(spec)})()
        result = ToolExecutor().execute(odd, {}, raise_on_failure=False)
    message = str(result.error)
    assert "Tool 'probe' failed" in message
    assert said in message, message
    for words in ("Failed to parse", "label empty or too long", "another origin", "urllib3"):
        assert words not in message, message
    assert hits == []


def test_the_checks_agree_with_what_requests_would_send() -> None:
    # A port or host written so that requests sends another one is refused.
    import requests

    for netloc in ("127.0.0.1:00080", "127.0.0.1:0", "exa%41mple.com"):
        sent = requests.Request("GET", f"http://{netloc}/").prepare().url
        assert sent is not None
        assert netloc not in sent
        assert authority_problem(netloc) is not None
