"""One call for the error of one argument, or of several (issue #28): the envelope's `details.errors` shape, once."""

from __future__ import annotations

from shared.core.errors import MAX_FIELD_CHARS, MAX_REPORTED_ERRORS, Forbidden, ValidationFailed


def test_one_field_in_the_one_shape() -> None:
    err = ValidationFailed.on_field("limit", "must be an integer 1-50", suggestions=["Pass limit as a number."])
    assert err.code == "VALIDATION_ERROR"
    assert err.message == "limit: must be an integer 1-50"
    assert err.details == {"errors": [{"field": "limit", "problem": "must be an integer 1-50"}]}
    assert err.recovery_suggestions == ["Pass limit as a number."]


def test_a_message_of_its_own_and_another_code() -> None:
    err = Forbidden.on_field("user_id", "is not the caller's user id", "tasks are always the caller's own")
    assert isinstance(err, Forbidden)
    assert err.http_status == 403
    assert err.message == "tasks are always the caller's own"
    assert err.recovery_suggestions == []


def test_several_fields_in_the_same_shape_with_extra_details() -> None:
    err = ValidationFailed.on_fields(
        "two problems", [("a", "missing"), ("b", "too long")], suggestions=["Fix a and b."], detection={"ok": False}
    )
    assert err.message == "two problems"
    assert err.details == {
        "errors": [{"field": "a", "problem": "missing"}, {"field": "b", "problem": "too long"}],
        "detection": {"ok": False},
    }
    assert err.recovery_suggestions == ["Fix a and b."]


def test_several_fields_stay_bounded_when_a_caller_sends_many_huge_keys() -> None:
    # Field names may echo a caller's keys (unknown query parameters): neither their number nor length is theirs.
    err = ValidationFailed.on_fields("unknown keys", ((f"k{i}" + "x" * 10_000, "unknown") for i in range(100_000)))
    errors = err.details["errors"]
    assert len(errors) == MAX_REPORTED_ERRORS
    assert max(len(e["field"]) for e in errors) == MAX_FIELD_CHARS
