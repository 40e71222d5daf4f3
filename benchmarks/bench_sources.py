"""Sources: loading 1,000 definitions that share 10 sources vs 1,000 with literal URLs."""

from __future__ import annotations

import gc
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentkit import load_tools
from benchmarks.timing import target_line

# What a source shares, written out in every literal definition: the same work to check.
SHARED = """\
credentials: [api-token]
auth: {{bearer: api-token}}
headers: {{Accept: application/json, X-Api-Version: "2024-01-01"}}
timeout: {{total: 30}}
"""
SOURCE = "source: api_{index}\nbase_url: ${{API_{index}_URL:-https://api{index}.example.com}}/v1\n"
TOOL = """\
name: item_{index}
version: 1.0.0
description: Fetch item number {index}.
input_schema:
  parameters:
    - {{name: id, type: string}}
    - {{name: limit, type: integer, required: false, default: 5}}
output_schema:
  parameters: [{{name: title, type: string}}, {{name: count, type: integer}}]
backend:
  http:
{where}
    query: {{limit: "{{{{ inputs.limit }}}}"}}
    output: {{title: "{{{{ response.json.title }}}}", count: "{{{{ response.json.count }}}}"}}
"""
LITERAL = """\
    url: https://api{source}.example.com/v1/items/{{{{ inputs.id }}}}
    headers: {{Accept: application/json, X-Api-Version: "2024-01-01"}}
    auth: {{bearer: api-token}}
    timeout: {{total: 30}}"""
WITH_SOURCE = """\
    source: api_{source}
    path: /items/{{{{ inputs.id }}}}"""


def write(root: Path, count: int, sources: int, *, shared: bool) -> None:
    for index in range(count):
        source = index % sources
        where = (WITH_SOURCE if shared else LITERAL).format(source=source)
        text = TOOL.format(index=index, where=where)
        if not shared:
            text = text.replace("input_schema:", "credentials: [api-token]\ninput_schema:", 1)
        (root / f"item_{index:05}.yaml").write_text(text)
    if shared:
        for index in range(sources):
            text = SOURCE.format(index=index) + SHARED.format()
            (root / f"source_{index:02}.yaml").write_text(text)


def run(count: int = 1000, sources: int = 10) -> list[str]:
    with tempfile.TemporaryDirectory() as literal, tempfile.TemporaryDirectory() as shared:
        write(Path(literal), count, sources, shared=False)
        write(Path(shared), count, sources, shared=True)
        cases: dict[str, Callable[[], object]] = {
            f"{count} definitions with literal URLs": lambda: load_tools(literal, environ={}),
            f"{count} definitions sharing {sources} sources": lambda: load_tools(
                shared, environ={}
            ),
        }
        best = dict.fromkeys(cases, float("inf"))
        for _ in range(5):  # interleaved rounds: a slow spell hits both alike
            for label, case in cases.items():
                # As timing.best_per_call does: a collection that the previous round's
                # garbage triggers would land on whichever case runs next.
                gc.collect()
                gc.disable()
                try:
                    started = time.perf_counter()
                    case()
                    best[label] = min(best[label], time.perf_counter() - started)
                finally:
                    gc.enable()
    literal_time, shared_time = best.values()
    return [
        f"sources: loading {count} HTTP definitions (best of 5 interleaved rounds)",
        *(f"  {label:<46} {seconds:7.3f} s" for label, seconds in best.items()),
        target_line("sharing sources / literal URLs", shared_time / literal_time, 1.0),
    ]
