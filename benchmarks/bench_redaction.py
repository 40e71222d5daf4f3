"""What redaction costs: building a call's redactor, and redacting 100 KB of text.

Building is timed without the pattern cache (a process's first call with a new
credential pays it); redacting with the redactor built. The texts are what a
call's errors and logs carry: prose in lines, a JSON body, MIME-wrapped base64
(76-character lines, CRLF) with the token's base64 inside, a line break falling
in it. Two tokens: a 40-character API key and a 4,000-character JWT-like one.
"""

from __future__ import annotations

import base64
import json
import random
import re
import time
from types import ModuleType
from typing import Any

from benchmarks.timing import Case, best_per_call, target_line

KB_100 = 100_000
SHORT_TOKEN = "sk_live_4eC39HqLyjWDarjtT1zdp7dc9f3Ab2Qx"
LONG_TOKEN = "eyJhbGciOiJSUzI1NiJ9." + "".join(
    random.Random(7).choices(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", k=3979
    )
)


def _prose() -> str:
    words = random.Random(1).choices(
        ["the", "call", "returned", "status", "open", "assigned", "to", "sam", "error", "retry"],
        k=KB_100 // 5,
    )
    lines, line = [], ""
    for word in words:
        line = f"{line} {word}" if line else word
        if len(line) > 70:
            lines.append(line)
            line = ""
    return "\n".join(lines)[:KB_100]


def _json_body() -> str:
    rows = [{"id": n, "state": "open", "owner": f"user-{n}", "note": "x" * 40} for n in range(1200)]
    return json.dumps(rows)[:KB_100]


def _wrapped_base64(token: str) -> str:
    noise = random.Random(2).randbytes(KB_100 * 3 // 4 // 2)
    raw = noise + b"Authorization: Bearer " + token.encode() + b"\r\n" + noise
    encoded = base64.b64encode(raw).decode()
    return "\r\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))[: KB_100 + 4000]


def cases(redaction: ModuleType, patterns: ModuleType, label: str = "") -> list[Case]:
    """Build and redact cases for the ``agentkit.redaction`` module given (or another copy),
    with its ``secretpatterns``."""
    compile_pattern = patterns.compile_secrets.__wrapped__

    def compile_uncached(secrets: frozenset[str]) -> object:
        re.purge()  # re.compile's own cache, else a rebuild only looks the pattern up
        patterns._char.cache_clear()
        return compile_pattern(secrets)

    texts = {
        "prose": _prose(),
        "JSON": _json_body(),
        "wrapped base64": _wrapped_base64(SHORT_TOKEN),
    }
    short = redaction.Redactor([SHORT_TOKEN])
    long = redaction.Redactor([LONG_TOKEN])
    made: list[Case] = [
        Case(f"{label}build, 40-char token", lambda: compile_uncached(frozenset([SHORT_TOKEN]))),
        Case(f"{label}build, 4000-char token", lambda: compile_uncached(frozenset([LONG_TOKEN]))),
    ]
    for name, text in texts.items():
        made.append(Case(f"{label}redact 100 KB {name}, 40-char", _bound(short.redact, text)))
    made.append(Case(f"{label}redact 100 KB prose, 4000-char", _bound(long.redact, texts["prose"])))
    return made


def _bound(redact: Any, text: str) -> Any:
    return lambda: redact(text)


def run() -> list[str]:
    from agentkit import redaction, secretpatterns

    measured = cases(redaction, secretpatterns)
    best = best_per_call(measured, number=5, rounds=5, clock=time.thread_time)
    lines = [
        "redaction: build a redactor (uncached) and redact 100 KB (best of 5 interleaved rounds)"
    ]
    for case in measured:
        lines.append(f"  {case.label:<44} {best[case.label] * 1e3:8.2f} ms")
    slowest = max(seconds for label, seconds in best.items() if "redact" in label)
    lines.append(target_line("slowest redact of 100 KB, ms", slowest * 1e3, 20.0, unit=" ms"))
    build = best["build, 4000-char token"]
    lines.append(target_line("build for a 4000-char token, ms", build * 1e3, 250.0, unit=" ms"))
    return lines
