"""Where a server's audit trail goes (``agentkit serve --audit FILE|stdout|otel``): each
call's record (``agentkit.audit``) as one JSON line to a file rotated by size, to
stdout, or as an OpenTelemetry log record.

Over stdio, stdout is the protocol's: ``stdout`` writes to stderr there, and the server
says so when it starts. A sink that fails (a full disk) is logged once and the calls go
on: the trail never breaks a call.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
import threading
from collections.abc import Mapping
from typing import Any, Final, TextIO, final

from agentkit.mcp.options import (
    DEFAULT_AUDIT_BACKUPS,
    DEFAULT_AUDIT_MAX_BYTES,
    AuditSink,
)
from agentkit.toolerrors import SemanticError

__all__ = ["AuditTrail", "open_audit"]

logger = logging.getLogger("agentkit.serve")

#: The OpenTelemetry log records' event name and instrumentation scope.
OTEL_EVENT: Final = "agentkit.tool.call"


def _line(record: Mapping[str, Any]) -> str:
    # ensure_ascii: a line stays one line and one encoding whatever the arguments hold.
    return json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str)


@final
class AuditTrail:
    """A sink as ``build_server`` takes it: called with each call's record; ``close``
    releases what it holds (a file). A failing write is logged once, never raised."""

    def __init__(self, write: AuditSink, close: Any = None, describe: str = "") -> None:
        self._write = write
        self._close = close
        self.describe = describe
        self._failed = False

    def __call__(self, record: Mapping[str, Any]) -> None:
        try:
            self._write(record)
        except Exception as exc:  # the trail must never break the call it records
            if not self._failed:
                self._failed = True
                logger.error("agentkit: the audit trail (%s) failed: %s", self.describe, exc)

    def close(self) -> None:
        if self._close is not None:
            self._close()


def open_audit(
    target: str | AuditSink,
    *,
    max_bytes: int = DEFAULT_AUDIT_MAX_BYTES,
    backups: int = DEFAULT_AUDIT_BACKUPS,
    stdio: bool = False,
    logger_provider: Any = None,
) -> AuditTrail:
    """The sink ``target`` names: ``"stdout"`` (stderr when ``stdio``), ``"otel"`` (the
    OpenTelemetry logger provider ``logger_provider``, the global one by default), a
    callable, or a file's path, rotated once it would pass ``max_bytes`` with
    ``backups`` rotated files kept (``FILE.1`` the newest).

    Raises ``SemanticError`` for a file that cannot be opened or an ``otel`` without
    OpenTelemetry installed.
    """
    if callable(target):
        return AuditTrail(target, describe="a callable")
    if target == "stdout":
        return _stream_trail(sys.stderr if stdio else sys.stdout)
    if target == "otel":
        return _otel_trail(logger_provider)
    if max_bytes < 1 or backups < 0:
        raise SemanticError(
            f"--audit {target}: --audit-max-bytes takes a size of 1 or more bytes and "
            f"--audit-backups a count of 0 or more, got {max_bytes} and {backups}"
        )
    try:
        handler = logging.handlers.RotatingFileHandler(
            target, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
        )
    except OSError as exc:
        raise SemanticError(
            f"--audit {target}: cannot open the audit file: {exc.strerror or exc}"
        ) from exc
    handler.setFormatter(logging.Formatter("%(message)s"))

    def write(record: Mapping[str, Any]) -> None:
        entry = logging.LogRecord("agentkit.audit", logging.INFO, "", 0, _line(record), None, None)
        handler.handle(entry)

    return AuditTrail(write, handler.close, describe=target)


def _stream_trail(stream: TextIO) -> AuditTrail:
    lock = threading.Lock()

    def write(record: Mapping[str, Any]) -> None:
        line = _line(record) + "\n"
        with lock:
            stream.write(line)
            stream.flush()

    return AuditTrail(write, describe="stderr" if stream is sys.stderr else "stdout")


def _otel_trail(logger_provider: Any) -> AuditTrail:
    try:
        # The logs API is still underscore-named (not yet stable) in OpenTelemetry's
        # Python API; it is its only public entry to logs, used as documented.
        from opentelemetry._logs import LogRecord, SeverityNumber, get_logger
    except ImportError:
        raise SemanticError(
            "--audit otel needs OpenTelemetry: pip install 'agentkit[otel]'"
        ) from None
    otel = get_logger("agentkit", logger_provider=logger_provider)

    def write(record: Mapping[str, Any]) -> None:
        otel.emit(
            LogRecord(
                severity_number=SeverityNumber.INFO,
                severity_text="INFO",
                body=_line(record),
                attributes={
                    "event.name": OTEL_EVENT,
                    "agentkit.caller": str(record["caller"]),
                    "gen_ai.tool.name": str(record["tool"]),
                    "agentkit.outcome": str(record["outcome"]),
                },
            )
        )

    return AuditTrail(write, describe="OpenTelemetry logs")
