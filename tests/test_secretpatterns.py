"""The pattern a redactor runs: what it costs to build."""

from __future__ import annotations

import base64
import textwrap

from agentkit.redaction import Redactor
from agentkit.secretpatterns import compile_secrets


def test_a_long_tokens_pattern_grows_linearly() -> None:
    sizes = {}
    for length in (1_000, 4_000):
        token = "".join(chr(ord("a") + (i * 7) % 26) for i in range(length))
        sizes[length] = len(compile_secrets(frozenset([token])).pattern.pattern)
        wrapped = "\n".join(
            textwrap.wrap(base64.b64encode(b"\x00" * 50 + token.encode()).decode(), 76)
        )
        assert Redactor([token]).redact(wrapped) != wrapped
    assert sizes[4_000] < 4.2 * sizes[1_000]
    assert sizes[4_000] < 12 * 4_000
