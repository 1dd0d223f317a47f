"""Typed application errors and the one error envelope every edge answers with."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Any, ClassVar, Self

# The code -> HTTP status table of DESIGN.md; edges map with it, services never pick statuses.
HTTP_STATUS: dict[str, int] = {
    "VALIDATION_ERROR": 400,
    "INVALID_REQUEST": 400,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "NOT_FOUND": 404,
    "METHOD_NOT_FOUND": 404,  # the perf spec's code for a tool that is not registered
    "CONFLICT": 409,
    "RATE_LIMITED": 429,
    "UPSTREAM_ERROR": 502,
    "NOT_CONFIGURED": 503,
    "SERVICE_UNAVAILABLE": 503,  # a store (Cosmos DB, Blob) did not answer: retry after Retry-After
    "INTERNAL_ERROR": 500,
}


class AppError(Exception):
    """An error a caller can act on; `code` selects the envelope code and HTTP status."""

    code: ClassVar[str] = "INTERNAL_ERROR"
    # Seconds after which the same request may succeed; HTTP edges send it as the Retry-After header.
    retry_after_seconds: int | None = None

    def __init__(
        self,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        recovery_suggestions: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}
        self.recovery_suggestions = recovery_suggestions or []

    @property
    def http_status(self) -> int:
        return HTTP_STATUS[self.code]

    @classmethod
    def on_field(
        cls, field: str, problem: str, message: str | None = None, *, suggestions: list[str] | None = None
    ) -> Self:
        """The error of one argument, in the envelope's one shape: `details.errors` = [{field, problem}], and the
        message "field: problem" unless another is given."""
        return cls(
            message or f"{field}: {problem}",
            details={"errors": [{"field": field, "problem": problem}]},
            recovery_suggestions=suggestions,
        )

    @classmethod
    def on_fields(
        cls,
        message: str,
        problems: Iterable[tuple[str, str]],
        *,
        suggestions: list[str] | None = None,
        **details: Any,
    ) -> Self:
        """The error of several arguments in the same shape: `details.errors` = [{field, problem}, ...], cut to
        MAX_REPORTED_ERRORS entries (fields to MAX_FIELD_CHARS: they may echo a caller's keys), plus `details`."""
        listed = [
            {"field": field if len(field) <= MAX_FIELD_CHARS else field[: MAX_FIELD_CHARS - 3] + "...", "problem": p}
            for field, p in islice(problems, MAX_REPORTED_ERRORS)
        ]
        return cls(message, details={"errors": listed, **details}, recovery_suggestions=suggestions)


class ValidationFailed(AppError):
    code = "VALIDATION_ERROR"


class InvalidRequest(AppError):
    code = "INVALID_REQUEST"


class Unauthorized(AppError):
    code = "UNAUTHORIZED"


class Forbidden(AppError):
    code = "FORBIDDEN"


class NotFound(AppError):
    code = "NOT_FOUND"


class MethodNotFound(AppError):
    code = "METHOD_NOT_FOUND"


class Conflict(AppError):
    code = "CONFLICT"


class RateLimited(AppError):
    code = "RATE_LIMITED"


class UpstreamError(AppError):
    code = "UPSTREAM_ERROR"


class NotConfigured(AppError):
    code = "NOT_CONFIGURED"


class ServiceUnavailable(AppError):
    """A dependency the request needs is down or not answering: nothing was done, the same call may work later.

    `details` say so for callers that never see headers (an MCP result): `retryable` and `retry_after_seconds`.
    """

    code = "SERVICE_UNAVAILABLE"

    def __init__(
        self,
        message: str,
        *,
        retry_after_seconds: int,
        details: dict[str, Any] | None = None,
        recovery_suggestions: list[str] | None = None,
    ) -> None:
        super().__init__(
            message,
            details={**(details or {}), "retryable": True, "retry_after_seconds": retry_after_seconds},
            recovery_suggestions=recovery_suggestions
            or [f"Retry the same call after {retry_after_seconds} seconds; health.check shows when the store is back."],
        )
        self.retry_after_seconds = retry_after_seconds


class InternalError(AppError):
    code = "INTERNAL_ERROR"


def envelope(error: AppError, correlation_id: str) -> dict[str, Any]:
    """The wire shape of an error: `{"error": {code, message, details, recovery_suggestions, correlation_id}}`."""
    return {
        "error": {
            "code": error.code,
            "message": error.message,
            "details": error.details,
            "recovery_suggestions": error.recovery_suggestions,
            "correlation_id": correlation_id,
        }
    }


def internal_error() -> InternalError:
    """The answer to an unexpected exception: its message stays in the log, never on the wire."""
    return InternalError(
        "An unexpected error occurred; it has been logged with the correlation id.",
        recovery_suggestions=["Retry once; if it persists, report the correlation_id."],
    )


MAX_FIELD_CHARS = 120
MAX_REPORTED_ERRORS = 50


def validation_failed_from_pydantic(exc: Any, *, what: str = "arguments") -> ValidationFailed:
    """Turn a pydantic ValidationError into VALIDATION_ERROR naming each offending field."""
    problems = []
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    # Field names come from the caller (an unknown key is echoed as its field): each is cut, and so is the
    # list, so a body of many or huge keys cannot come back as a huge error.
    for err in errors[:MAX_REPORTED_ERRORS]:
        field = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
        if len(field) > MAX_FIELD_CHARS:
            field = field[: MAX_FIELD_CHARS - 3] + "..."
        problems.append({"field": field, "problem": err.get("msg", "invalid"), "type": err.get("type", "")})
    fields = ", ".join(p["field"] for p in problems[:5])
    details: dict[str, Any] = {"errors": problems}
    if len(errors) > MAX_REPORTED_ERRORS:
        details["more_errors"] = len(errors) - MAX_REPORTED_ERRORS
    return ValidationFailed(
        f"Invalid {what}: {fields}",
        details=details,
        recovery_suggestions=["Fix the named fields to match the tool's inputSchema and call again."],
    )
