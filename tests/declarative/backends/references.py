"""Objects a Python backend reference may resolve to: the refused and the accepted."""

from __future__ import annotations

import functools
import json
import operator
import os
import subprocess
from collections.abc import Callable
from typing import Any

import agentkit.toolschema

# -- refused: what runs is not the user's own Python function ----------------------------------
shell = os.system
run = subprocess.run
add = operator.add
partial_shell = functools.partial(os.system)
encode = json.JSONEncoder().encode  # a method bound to a standard-library object
own_code = agentkit.toolschema.is_number
made_by_exec: Callable[..., Any] = eval("lambda text, top=3: text")  # no source file


class Caller:
    def __call__(self, text: str, top: int = 3) -> dict[str, Any]:
        return {}


instance = Caller()


def stats(text: str, top: int = 3) -> dict[str, Any]:
    words = text.split()
    return {"words": len(words), "sentences": 0, "characters": len(text), "commonest": []}


cached = functools.lru_cache(stats)
# A partial that claims to wrap a plain function: unwrapping would check `stats`
# while the call runs os.system.
disguised = functools.partial(os.system)
disguised.__wrapped__ = stats  # type: ignore[attr-defined]


# -- accepted: the user's own Python code ---------------------------------------------------------
def logged(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return wrapper


decorated = logged(stats)
as_lambda = lambda text, top=3: stats(text, top)  # noqa: E731  # a lambda is accepted on purpose


class Client:
    def stats(self, text: str, top: int = 3) -> dict[str, Any]:
        return stats(text, top)


client = Client()
