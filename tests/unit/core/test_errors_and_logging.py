"""The envelope's shape, the code->status table, and that logs carry correlation ids but never secrets."""

from __future__ import annotations

import io
import json
import logging

import pytest

from shared.core import errors
from shared.core.logging import JsonFormatter, new_correlation_id, reset_correlation_id, set_correlation_id
from shared.core.redaction import redact


def test_every_code_maps_to_the_design_status() -> None:
    expected = {
        "VALIDATION_ERROR": 400,
        "INVALID_REQUEST": 400,
        "UNAUTHORIZED": 401,
        "FORBIDDEN": 403,
        "NOT_FOUND": 404,
        "CONFLICT": 409,
        "RATE_LIMITED": 429,
        "UPSTREAM_ERROR": 502,
        "NOT_CONFIGURED": 503,
        "INTERNAL_ERROR": 500,
    }
    classes = [
        errors.ValidationFailed,
        errors.InvalidRequest,
        errors.Unauthorized,
        errors.Forbidden,
        errors.NotFound,
        errors.Conflict,
        errors.RateLimited,
        errors.UpstreamError,
        errors.NotConfigured,
        errors.InternalError,
    ]
    assert {c.code: c("x").http_status for c in classes} == expected


def test_envelope_shape() -> None:
    env = errors.envelope(errors.Conflict("taken", details={"id": "a"}, recovery_suggestions=["pick another"]), "c1")
    assert env == {
        "error": {
            "code": "CONFLICT",
            "message": "taken",
            "details": {"id": "a"},
            "recovery_suggestions": ["pick another"],
            "correlation_id": "c1",
        }
    }


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        ({"Authorization": "Bearer abc.def.ghi"}, "abc.def.ghi"),
        ({"headers": {"cookie": "session=s3cr3t"}}, "s3cr3t"),
        ({"password": "hunter2"}, "hunter2"),
        ({"client_secret": "xyz"}, "xyz"),
        ({"api_key": "k-123"}, "k-123"),
        ({"x-functions-key": "fk-1"}, "fk-1"),
        ({"note": "used key fbk_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, "fbk_0123456789abcdef"),
        ({"url": "https://a.blob.core.windows.net/c/b?sv=1&sig=SIGNATURE"}, "SIGNATURE"),
        ({"url": "http://h/api/mcp?code=FUNCKEY"}, "FUNCKEY"),
        ({"conn": "AccountName=a;AccountKey=KEYVALUE;"}, "KEYVALUE"),
        ("Bearer tok123", "tok123"),
    ],
)
def test_redaction(value, secret) -> None:
    assert secret not in json.dumps(redact(value))


def test_redaction_keeps_innocent_fields() -> None:
    assert redact({"error_code": "NOT_FOUND", "tool": "health.check"}) == {
        "error_code": "NOT_FOUND",
        "tool": "health.check",
    }


def test_json_log_line_has_correlation_id_and_redacted_extras() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("test.json")
    logger.addHandler(handler)
    logger.propagate = False
    token = set_correlation_id("corr-xyz")
    try:
        logger.warning(
            "called %s", "tool", extra={"tool": "t", "duration_ms": 1.5, "headers": {"authorization": "Bearer SECRET"}}
        )
    finally:
        reset_correlation_id(token)
        logger.removeHandler(handler)
    line = json.loads(stream.getvalue())
    assert line["correlation_id"] == "corr-xyz"
    assert line["tool"] == "t"
    assert line["duration_ms"] == 1.5
    assert line["message"] == "called tool"
    assert line["level"] == "WARNING"
    assert "SECRET" not in stream.getvalue()


@pytest.mark.parametrize(
    ("candidate", "kept"),
    [("abc-123", True), ("a" * 129, False), ("bad id", False), ("<script>", False), (None, False)],
)
def test_caller_correlation_ids_are_kept_only_when_safe(candidate, kept) -> None:
    cid = new_correlation_id(candidate)
    assert (cid == candidate) is kept
    assert cid


def test_validation_errors_cut_caller_chosen_field_names_and_their_number() -> None:
    from pydantic import BaseModel, ConfigDict, ValidationError

    from shared.core.errors import MAX_FIELD_CHARS, MAX_REPORTED_ERRORS, validation_failed_from_pydantic

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")

    body = {"k" * 100_000: 1, **{f"extra{i}": i for i in range(500)}}
    try:
        Strict.model_validate(body)
    except ValidationError as exc:
        failed = validation_failed_from_pydantic(exc)
    problems = failed.details["errors"]
    assert len(problems) == MAX_REPORTED_ERRORS
    assert failed.details["more_errors"] == len(body) - MAX_REPORTED_ERRORS
    assert all(len(p["field"]) <= MAX_FIELD_CHARS for p in problems)
    assert len(failed.message) < 1000
