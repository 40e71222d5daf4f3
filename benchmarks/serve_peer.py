"""The tools the serving benchmarks serve, and the FastMCP server they measure agentkit against.

Both servers serve the same Python functions: agentkit through YAML definitions whose
backend names them (``benchmarks.serve_peer:echo``), FastMCP through its decorator on
the functions themselves:

- ``echo`` gives its text back (sync);
- ``sleep_50ms`` awaits 50 ms, then gives its text back (async);
- ``fail`` always raises;
- ``fetch`` asks the loopback upstream (``benchmarks/upstream.py``, answering after
  20 ms) for its text: agentkit through a YAML definition with an HTTP backend, FastMCP
  through an async function sending the same request with httpx2 (the SDK's HTTP
  client), one client and its connection pool for every call.

``bench_serve`` serves echo alone; ``bench_serve_concurrency`` and ``soak`` serve all four
(``write_tools``). Run as a script, this module is the FastMCP side:

    python benchmarks/serve_peer.py stdio [FOLDER] [--upstream URL]
    python benchmarks/serve_peer.py http [FOLDER] [--upstream URL]

``FOLDER`` (optional) holds YAML definitions (``bench_declarative.write_definitions``):
each becomes a FastMCP tool of the same name, description and inputs, so both servers
list the same tools. ``--upstream URL`` serves the other three tools beside echo,
``fetch`` asking ``URL``. Over HTTP it listens on a free port of 127.0.0.1 and prints
``serving on http://127.0.0.1:PORT/mcp`` on stderr once bound.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

_TEXT_IN_AND_OUT = """\
input_schema:
  parameters:
    - {name: text, type: string}
output_schema:
  parameters:
    - {name: text, type: string}
"""


def _definition(name: str, description: str, backend: str) -> str:
    """The YAML definition of a tool that takes ``text`` and gives ``text``."""
    return (
        f"name: {name}\nversion: 1.0.0\ndescription: {description}\n"
        f"{_TEXT_IN_AND_OUT}backend:\n{backend}"
    )


ECHO_DEFINITION = _definition(
    "echo", "Give the text back.", "  python: benchmarks.serve_peer:echo\n"
)
SLEEP_DEFINITION = _definition(
    "sleep_50ms",
    "Wait 50 ms, then give the text back.",
    "  python: benchmarks.serve_peer:sleep_50ms\n",
)
FAIL_DEFINITION = _definition("fail", "Always fail.", "  python: benchmarks.serve_peer:fail\n")


def fetch_definition(upstream: str) -> str:
    """``fetch``'s YAML definition, asking ``upstream`` (``benchmarks.upstream.start``)."""
    return _definition(
        "fetch",
        "Ask the upstream for the text back.",
        "  http:\n"
        "    method: GET\n"
        f"    url: {upstream}/echo\n"
        '    query: {text: "{{ inputs.text }}"}\n'
        "    timeout: {connect: 5, read: 10, total: 20}\n"
        "    output:\n"
        '      text: "{{ response.json.text }}"\n',
    )


#: How long ``sleep_50ms`` waits.
SLEEP = 0.050
#: ``fetch``'s timeouts on the FastMCP side, as the YAML definition's.
_CONNECT_SECONDS = 5.0
_READ_SECONDS = 10.0

_TYPES = {"string": "str", "integer": "int", "float": "float", "boolean": "bool"}


class Echoed(TypedDict):
    text: str


def echo(text: str) -> Echoed:
    """Give the text back."""
    return {"text": text}


async def sleep_50ms(text: str) -> Echoed:
    """Wait 50 ms, then give the text back."""
    await asyncio.sleep(SLEEP)
    return {"text": text}


class Failed(RuntimeError):
    """What ``fail`` raises, every time."""


def fail(text: str) -> Echoed:
    """Always fail."""
    raise Failed(f"fail fails on purpose (text of {len(text)} characters)")


def write_tools(folder: Path, upstream: str) -> None:
    """Write the four tools' YAML definitions into ``folder``, ``fetch`` asking ``upstream``."""
    definitions = {
        "echo": ECHO_DEFINITION,
        "sleep_50ms": SLEEP_DEFINITION,
        "fail": FAIL_DEFINITION,
        "fetch": fetch_definition(upstream),
    }
    for name, text in definitions.items():
        (folder / f"{name}.yaml").write_text(text)


def fetch_tool(upstream: str) -> Callable[[str], Awaitable[Echoed]]:
    """FastMCP's ``fetch``: the request the YAML definition sends, through one httpx2
    client made on the first call (on the server's event loop)."""
    import httpx2

    clients: list[httpx2.AsyncClient] = []

    async def fetch(text: str) -> Echoed:
        """Ask the upstream for the text back."""
        if not clients:
            timeout = httpx2.Timeout(_READ_SECONDS, connect=_CONNECT_SECONDS)
            clients.append(httpx2.AsyncClient(timeout=timeout))
        response = await clients[0].get(f"{upstream}/echo", params={"text": text})
        response.raise_for_status()
        return {"text": response.json()["text"]}

    return fetch


def _tool_source(definition: dict[str, Any]) -> str:
    """A Python function with a definition's name and inputs, for FastMCP to read."""
    parameters = []
    for parameter in definition["input_schema"]["parameters"]:
        annotation = _TYPES[parameter["type"]]
        if parameter.get("required", True):
            parameters.append(f"{parameter['name']}: {annotation}")
        else:
            parameters.append(f"{parameter['name']}: {annotation} = {parameter['default']!r}")
    return f"def {definition['name']}({', '.join(parameters)}) -> dict:\n    return {{}}\n"


def _add_definitions(server: Any, folder: Path) -> None:
    import yaml

    for file in sorted(folder.glob("*.yaml")):
        definition = yaml.load(file.read_text(), Loader=yaml.CSafeLoader)
        namespace: dict[str, Any] = {}
        exec(_tool_source(definition), namespace)  # trusted: the bench wrote these files
        server.tool(
            namespace[definition["name"]],
            name=definition["name"],
            description=definition["description"],
        )


def main(argv: list[str]) -> None:
    from fastmcp import FastMCP

    parser = argparse.ArgumentParser(description="The FastMCP side of the serving benchmarks.")
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("folder", nargs="?", type=Path, help="YAML definitions to serve too")
    parser.add_argument("--upstream", metavar="URL", help="serve sleep_50ms, fail and fetch too")
    args = parser.parse_args(argv)
    server = FastMCP("bench-peer")
    server.tool(echo)
    if args.upstream:
        server.tool(sleep_50ms)
        server.tool(fail)
        server.tool(fetch_tool(args.upstream), name="fetch")
    if args.folder:
        _add_definitions(server, args.folder)
    if args.transport == "stdio":
        server.run(transport="stdio", show_banner=False)
        return
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(socket.SOMAXCONN)
    port = sock.getsockname()[1]
    print(f"serving on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    server.run(transport="http", show_banner=False, log_level="warning", sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1:])
