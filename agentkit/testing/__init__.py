"""Tools that test themselves: running their examples against recorded exchanges.

``run_examples`` runs every example of a set of tools through a ``ToolExecutor``
(an HTTP tool against its recordings, offline and without credentials, or with
``record=True`` against the real API, writing them); ``junit_xml`` writes the
outcomes for CI; ``pytest_plugin`` lets pytest collect them. See docs/testing.md.

Inside the package, each module imports only those below it (``lint-imports``, the
``testing-layers`` contract): ``pytest_plugin`` and ``junit`` > ``runner`` >
``adapters`` > ``recordings``.
"""

from __future__ import annotations

from agentkit.testing.junit import junit_xml
from agentkit.testing.recordings import Recording, SecretInRecordingError, placeholder
from agentkit.testing.runner import ExampleOutcome, collect_examples, run_examples, summary_line

__all__ = [
    "ExampleOutcome",
    "Recording",
    "SecretInRecordingError",
    "collect_examples",
    "junit_xml",
    "placeholder",
    "run_examples",
    "summary_line",
]
