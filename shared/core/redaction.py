"""The one list of secret names and secret-looking values, and the redaction every log, manifest and stored text uses.

Logs (every handler, through the LogRecord factory installed by `install_log_redaction`), collect
manifests (`is_secret_name` on header names) and stored free text (memory lookups and outcome notes,
`redact_text`) all read the patterns below, so a new kind of secret is added here once.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
import traceback
from collections.abc import Mapping
from typing import Any

REDACTED = "[REDACTED]"
_MAX_DEPTH = 6

# Name fragments (header names, JSON keys, query and form parameter names) whose values are secrets.
SECRET_NAME_FRAGMENTS = (
    "authorization",
    "cookie",
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "api-key",
    "apikey",
    "credential",
    "signature",
    "functions-key",
    "functions_key",
    "subscription-key",
    "subscription_key",
    "accountkey",
    "account_key",
    "access_key",
    "access-key",
    "accesskey",
    "private_key",
    "private-key",
    "sharedaccesskey",
    "sharedaccesssignature",
    "session",
)
# Short names that are secrets only when they are the whole name: `sig` (SAS) and `code` (function keys
# in query strings); as fragments they would hit `error_code` or `signature_norm`.
SECRET_EXACT_NAMES = frozenset({"sig", "code", "pwd", "key", "x-api-key", "sas"})

_NAME = re.compile("|".join(re.escape(f) for f in SECRET_NAME_FRAGMENTS), re.IGNORECASE)

_VALUE_END = r"[^\s\"'&;,<>)\]}]+"
# `name=value` in query strings, form bodies and connection strings (`;AccountKey=...;`).
_PARAM_NAMES = "|".join(
    [re.escape(n) for n in sorted(SECRET_EXACT_NAMES, key=len, reverse=True)]
    + [r"[\w.-]*(?:" + "|".join(re.escape(f) for f in SECRET_NAME_FRAGMENTS) + r")"]
)
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # Authorization schemes: keep the scheme word, drop the credential (Basic is checked below).
    (re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]+"), r"\1" + REDACTED),
    (re.compile(r"(?i)\b(SharedAccessSignature\s+)[^\s\"',;]+"), r"\1" + REDACTED),
    # Header lines and JSON-ish `"name": "value"` pairs for the headers that carry keys themselves.
    (
        re.compile(
            r"(?i)\b((?:x-functions-key|ocp-apim-subscription-key|x-api-key|api-key|cookie|set-cookie)[\"']?\s*:\s*[\"']?)"
            + _VALUE_END
        ),
        r"\1" + REDACTED,
    ),
    (re.compile(r"(?i)(?<![\w.-])((?:" + _PARAM_NAMES + r")=)" + _VALUE_END), r"\1" + REDACTED),
    # Quoted pairs in JSON or a Python repr: {"password": "..."}, {'client_secret': '...'}.
    (re.compile(r"(?i)([\"'](?:" + _PARAM_NAMES + r")[\"']\s*:\s*[\"'])[^\"'\n]+"), r"\1" + REDACTED),
    # Our API keys and bare JWTs (three base64url segments, the header always starts `eyJ`).
    (re.compile(r"\bfbk_[A-Za-z0-9_-]+"), REDACTED),
    # Vendors' token formats that stand alone in text: GitHub (ghp_, gho_, ghs_, ghu_, ghr_, github_pat_),
    # AWS access key ids, OpenAI-style keys (sk-, sk-proj-), Slack (xoxb-, xoxp-, ...).
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), REDACTED),
    (re.compile(r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_-]{20,}"), REDACTED),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), REDACTED),
    # A JWT starts where a run of base64url characters starts. `\b` also matched after each `-` inside a run,
    # and every such start rescanned the rest of the run: quadratic (`eyJ-` x 8192 took a second, x 65536
    # minutes). The price: a token glued to a word by `-` (`x-eyJ...`) is left; `=`, `:`, quotes, spaces and
    # `Bearer ` in front of one still separate it.
    (re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"), REDACTED),
    # Prose and YAML-ish forms people type into chats and tickets: "password: hunter2", "my password is x".
    (
        re.compile(
            r"(?i)\b((?:password|passwd|passphrase|pwd|client_secret|secret|api[_ -]?key|token)\s*:\s*)" + _VALUE_END
        ),
        r"\1" + REDACTED,
    ),
    (re.compile(r"(?i)\b((?:password|passphrase|pin)\s+(?:is|was)\s+)" + _VALUE_END), r"\1" + REDACTED),
    # Credentials in a URL's user info: scheme://user:password@host.
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,20}://[^\s/:@]{1,200}:)[^\s/@]{1,200}(@)"), r"\1" + REDACTED + r"\2"),
    # PEM private keys (the body, and the END line when present).
    (
        re.compile(
            r"-----BEGIN [A-Z ]{0,30}PRIVATE KEY-----[A-Za-z0-9+/=\s]*(?:-----END [A-Z ]{0,30}PRIVATE KEY-----)?"
        ),
        REDACTED,
    ),
]
# `Basic <base64 of user:password>`; only when it decodes to something with a colon, so prose
# ("a basic restart fixed it") is left alone.
_BASIC = re.compile(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{4,}={0,2})(?![\w+/=])")


def is_secret_name(name: str) -> bool:
    """True when a header, key or parameter with this name holds a secret (manifests keep only such names)."""
    lowered = name.strip().lower()
    return lowered in SECRET_EXACT_NAMES or bool(_NAME.search(lowered))


def _basic(match: re.Match[str]) -> str:
    try:
        decoded = base64.b64decode(match.group(2), validate=True)
    except (binascii.Error, ValueError):
        return match.group(0)
    return match.group(1) + REDACTED if b":" in decoded else match.group(0)


def redact_text(text: str) -> str:
    """`text` with every secret-looking value replaced by [REDACTED] (linear-time patterns)."""
    if not text:
        return text
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return _BASIC.sub(_basic, text)


def redact(value: Any, _depth: int = 0) -> Any:
    """A copy of `value` with secret-named keys and secret-looking strings replaced."""
    if _depth > _MAX_DEPTH:
        return "…"
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if isinstance(k, str) and is_secret_name(k) and v not in (None, "") else redact(v, _depth + 1))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact(v, _depth + 1) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, (bytes, bytearray)):
        return redact_text(bytes(value).decode("utf-8", "replace"))
    return value


# ---- logs ----------------------------------------------------------------------------------------

# Attributes every LogRecord has; anything else on a record came from `extra=` and is redacted.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class _RedactingDict(dict[str, Any]):
    """A record's `__dict__`: `Logger.makeRecord` writes `extra=` into it after the factory returns."""

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, str) and key not in _RECORD_FIELDS:
            value = REDACTED if is_secret_name(key) and value not in (None, "") else redact(value)
        super().__setitem__(key, value)


class LoggedException(Exception):
    """Stands in for a logged exception on the record: its text is the original's, redacted.

    Handlers that read `record.exc_info` themselves (OpenTelemetry, Application Insights) would
    otherwise format the live exception, whose message may carry a URL with `sig=` or a header.
    """


def _redact_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: the handler reports it; still never keep secret args
        message = str(record.msg)
    record.msg, record.args = redact_text(message), ()
    if record.exc_info and record.exc_info[1] is not None:
        # Formatters print exc_text when it is set; precompute it redacted so none formats the raw one.
        if not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        exc_type, exc, tb = record.exc_info
        summary = redact_text("".join(traceback.format_exception_only(exc_type, exc)).strip())
        record.exc_info = (LoggedException, LoggedException(summary), tb)
    if record.stack_info:
        record.stack_info = redact_text(record.stack_info)
    record.__dict__ = _RedactingDict(record.__dict__)


def install_log_redaction() -> None:
    """Redact every log record when it is created, for every handler present or added later (idempotent).

    The Azure Functions Python worker installs its own root handler before the app logs anything;
    redacting in our formatter would not reach it. A LogRecord factory runs before any handler.
    """
    previous = logging.getLogRecordFactory()
    if getattr(previous, "firebreak_redacting", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        _redact_record(record)
        return record

    factory.firebreak_redacting = True  # type: ignore[attr-defined]  # marks the installed factory for the next call
    logging.setLogRecordFactory(factory)
