"""Each generated definition checked as ``agentkit validate`` would check it.

The converters aim to write only what loads, but a description can hold what they
did not foresee (a header name with a colon, ``maximum: NaN``, a path key that is
a number): rather than write a folder ``validate`` rejects, the import checks
every document it made, in memory, against the source it made, with the loader's
own rules and no environment variables (the ``${VAR:-default}`` defaults).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from typing import Any

from agentkit.declarative.backends.base import SourceTable
from agentkit.declarative.backends.http.sources import parse_source
from agentkit.declarative.definition import parse_definition
from agentkit.declarative.environment import Environment, Substituter
from agentkit.declarative.problems import ProblemLog, Problems
from agentkit.declarative.yamlsource import MAX_NUMBER_CHARS
from agentkit.openapi.reader import problem
from agentkit.schema.parse import Built, unchanging
from agentkit.toolerrors import Problem

_START = (1, 1)
#: Integers from here on (and from minus a tenth of it) take more than
#: ``MAX_NUMBER_CHARS`` characters to write, which the reader refuses.
_TOO_LONG = 10**MAX_NUMBER_CHARS


class Verifier:
    """Checks source documents once, then each tool document against them.

    ``environ`` is what ``${VAR}`` may name: none by default (an import's own
    ``${VAR:-default}``), the process's for a folder a reviewer keeps (``--update``).
    """

    def __init__(
        self,
        sources: Iterable[tuple[str, Any]],
        *,
        environ: Mapping[str, str] | None = None,
        unchanging: bool = False,
    ) -> None:
        """``unchanging``: the documents checked do not change while the verifier is in
        use (an import's): a schema they share is parsed once (``schema.parse.unchanging``)."""
        self._built: Built | None = {} if unchanging else None
        self.environment = Environment.load(environ={} if environ is None else environ)
        self.sources = SourceTable()
        log = ProblemLog()
        for path, source in sources:
            problems = Problems(path, source, _START, log)
            parsed = parse_source(source, problems, Substituter(self.environment, problems))
            if parsed is not None:
                self.sources.sources[str(source["source"])] = parsed
        #: What is wrong with the source documents themselves.
        self.source_problems: list[Problem] = list(log.shown)

    def problems(self, document: Any, *, path: str = "tool") -> list[Problem]:
        """What ``agentkit validate`` would say about ``document``; empty when it loads."""
        log = ProblemLog()
        with nullcontext() if self._built is None else unchanging(self._built):
            parse_definition(
                document,
                Problems(path, document, _START, log),
                text="",
                document=0,
                environment=self.environment,
                sources=self.sources,
            )
        return list(log.shown) or _unwritable(document)


def _unwritable(document: Any) -> list[Problem]:
    """What the definition holds that its file could not: an integer too long for the
    reader (a description's ``maximum: 1e400`` written out as an integer bound)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:  # one visit per value: bounded by the document's size
        value, location = stack.pop()
        if isinstance(value, dict):
            stack.extend((item, (*location, str(key))) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, (*location, index)) for index, item in enumerate(value))
        elif type(value) is int and not -_TOO_LONG // 10 < value < _TOO_LONG:
            return [
                Problem(
                    location=location,
                    message=f"an integer of more than {MAX_NUMBER_CHARS} characters written out, "
                    "longer than a definition file may write a number",
                )
            ]
    return []


def unloadable(pointer: str, found: Problem) -> Problem:
    """``found`` (in a generated document) as a problem of the description at ``pointer``."""
    text = f"would write a definition that does not load: {found.path}: {found.message}"
    # A field can be a header name from the description, line breaks and all.
    return problem(pointer, "".join(c if c.isprintable() else repr(c)[1:-1] for c in text))
