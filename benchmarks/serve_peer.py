"""The tools ``bench_serve`` serves, and the FastMCP server it measures agentkit against.

``echo`` is the one tool both servers serve for the calls/s figures: agentkit through
a YAML definition whose backend is ``benchmarks.serve_peer:echo``, FastMCP through its
decorator on the same function. Run as a script, this module is the FastMCP side:

    python benchmarks/serve_peer.py stdio [FOLDER]
    python benchmarks/serve_peer.py http [FOLDER]

``FOLDER`` (optional) holds YAML definitions (``bench_declarative.write_definitions``):
each becomes a FastMCP tool of the same name, description and inputs, so both servers
list the same tools. Over HTTP it listens on a free port of 127.0.0.1 and prints
``serving on http://127.0.0.1:PORT/mcp`` on stderr once bound.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

ECHO_DEFINITION = """\
name: echo
version: 1.0.0
description: Give the text back.
input_schema:
  parameters:
    - {name: text, type: string}
output_schema:
  parameters:
    - {name: text, type: string}
backend:
  python: benchmarks.serve_peer:echo
"""

_TYPES = {"string": "str", "integer": "int", "float": "float", "boolean": "bool"}


class Echoed(TypedDict):
    text: str


def echo(text: str) -> Echoed:
    """Give the text back."""
    return {"text": text}


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

    transport, *rest = argv
    server = FastMCP("bench-peer")
    server.tool(echo)
    if rest:
        _add_definitions(server, Path(rest[0]))
    if transport == "stdio":
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
