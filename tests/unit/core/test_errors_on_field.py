"""One call for the error of one argument (issue #28): the envelope's `details.errors` shape, once."""

from __future__ import annotations

from shared.core.errors import Forbidden, ValidationFailed


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
