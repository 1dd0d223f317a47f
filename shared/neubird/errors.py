"""NeuBird failures in the common envelope: the spec's error `type` travels in `details.type`.

The spec's shape is `{type, message, details, recovery_suggestions}`; the app's envelope already has
message, details and recovery_suggestions, so `type` (authentication | api | validation | investigation)
goes into `details` and the envelope `code` says what a caller's retry logic needs (UPSTREAM_ERROR,
RATE_LIMITED, NOT_FOUND, VALIDATION_ERROR, NOT_CONFIGURED).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from shared.core.errors import AppError

E = TypeVar("E", bound=AppError)
# How much of an upstream text (an error body, an exception) an error message quotes, after scrubbing.
QUOTED_CHARS = 300
ErrorKind = Literal["authentication", "api", "validation", "investigation", "unknown"]


def neubird_error(
    cls: type[E],
    kind: ErrorKind,
    message: str,
    *,
    details: dict[str, Any] | None = None,
    recovery: list[str] | None = None,
) -> E:
    """An AppError of class `cls` whose details carry the spec's error `type`."""
    return cls(message, details={"type": kind, **(details or {})}, recovery_suggestions=recovery or [])
