"""Structured JSON logs that carry the correlation id and never carry a secret."""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import uuid
from typing import Any, TypeGuard

from shared.core.redaction import install_log_redaction, redact, redact_text

_correlation_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("correlation_id", default=None)

CORRELATION_HEADER = "x-correlation-id"
_SAFE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}", re.ASCII)
# The same rule as a JSON Schema pattern (anchored), for schemas that declare a correlation id.
SAFE_CORRELATION_ID_PATTERN = f"^{_SAFE_ID.pattern}$"


def is_safe_correlation_id(candidate: object) -> TypeGuard[str]:
    """1-128 ASCII letters, digits, '.', '_', ':' or '-': safe in a header, a log line and a URL."""
    return isinstance(candidate, str) and _SAFE_ID.fullmatch(candidate) is not None


def new_correlation_id(candidate: str | None = None) -> str:
    """Accept a caller's id when it is a safe token, else mint one (ids end up in logs, headers and URLs)."""
    if is_safe_correlation_id(candidate):
        return candidate
    return uuid.uuid4().hex


def set_correlation_id(value: str) -> contextvars.Token[str | None]:
    return _correlation_id.set(value)


def reset_correlation_id(token: contextvars.Token[str | None]) -> None:
    _correlation_id.reset(token)


def current_correlation_id() -> str | None:
    return _correlation_id.get()


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, correlation_id and redacted extras."""

    _RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()) | {"message", "asctime"}

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
            "correlation_id": getattr(record, "correlation_id", None) or current_correlation_id(),
        }
        extras = {k: v for k, v in vars(record).items() if k not in self._RESERVED and k != "correlation_id"}
        doc.update(redact(extras))
        if record.exc_text:
            doc["exception"] = redact_text(record.exc_text)
        elif record.exc_info:
            doc["exception"] = redact_text(self.formatException(record.exc_info))
        return json.dumps(doc, default=str)


def configure_logging(level: str = "INFO") -> None:
    """Install the JSON formatter on the root logger once (idempotent: hosts may call it per worker)."""
    install_log_redaction()
    root = logging.getLogger()
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    # The Azure SDKs log every HTTP request at INFO, headers included; keep them at WARNING.
    for noisy in (
        "azure",
        "azure.core.pipeline.policies.http_logging_policy",
        "httpx",
        "httpx2",
        "mcp",
        "openai",
        "uvicorn.access",
    ):
        logging.getLogger(noisy).setLevel(logging.WARNING)
