"""neubird_list_sessions' filters without I/O: values NeuBird is sent, and refusals with the field named."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from shared.core.errors import ValidationFailed
from shared.neubird.sessions import session_query


def args(**kw: Any) -> SimpleNamespace:
    base = {
        "investigation_status": None,
        "session_type": None,
        "only_uninvestigated": False,
        "date_from": None,
        "date_to": None,
        "search_term": None,
        "hide_grouped_incidents": False,
    }
    return SimpleNamespace(**{**base, **kw})


def test_only_uninvestigated_is_not_started_incidents() -> None:
    q = session_query(args(only_uninvestigated=True, search_term="  Load Avg "))
    assert q.filters == [
        {"key": "investigation_status", "value": "INVESTIGATION_STATUS_NOT_STARTED", "operator": "=="},
        {"key": "session_type", "value": "SESSION_TYPE_INCIDENT", "operator": "=="},
        {"key": "incident_info.title", "value": "Load Avg", "operator": "in"},
    ]
    assert q.applied == {
        "investigation_status": "INVESTIGATION_STATUS_NOT_STARTED",
        "session_type": "SESSION_TYPE_INCIDENT",
        "search_term": "Load Avg",
        "only_uninvestigated": True,
    }
    assert q.matches({"incident_info": {"title": "High LOAD AVG on node-3"}})
    assert not q.matches({"incident_info": {"title": "disk full"}})
    assert not q.matches(
        {"incident_info": {"title": "load avg"}, "investigation_status": "INVESTIGATION_STATUS_COMPLETED"}
    )


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        ({"investigation_status": "completed"}, "INVESTIGATION_STATUS_COMPLETED"),
        ({"investigation_status": "investigated"}, "INVESTIGATION_STATUS_COMPLETED"),
        ({"investigation_status": "in progress"}, "INVESTIGATION_STATUS_IN_PROGRESS"),
        ({"investigation_status": "investigation_status_paused"}, "INVESTIGATION_STATUS_PAUSED"),
    ],
)
def test_friendly_status_names(given: dict[str, Any], sent: str) -> None:
    assert session_query(args(**given)).applied["investigation_status"] == sent


@pytest.mark.parametrize(
    ("given", "sent_from", "sent_to"),
    [
        ({"date_from": "2026-11-01"}, "2026-11-01", None),
        ({"date_from": "2026-11-01T08:00:00+02:00", "date_to": "2026-11-02"}, "2026-11-01T06:00:00Z", "2026-11-02"),
        ({"date_to": "2026-11-21T10:00:00"}, None, "2026-11-21T10:00:00Z"),
    ],
)
def test_dates_are_sent_as_dates_or_utc_timestamps(
    given: dict[str, Any], sent_from: str | None, sent_to: str | None
) -> None:
    applied = session_query(args(**given)).applied
    assert applied.get("date_from") == sent_from
    assert applied.get("date_to") == sent_to


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"date_from": "0001-01-01T00:00:00+14:00"}, "date_from"),  # no UTC time exists (was INTERNAL_ERROR)
        ({"date_to": "9999-12-31T23:59:59-14:00"}, "date_to"),
        ({"date_from": "yesterday"}, "date_from"),
        ({"date_from": "2026-11-05", "date_to": "2026-11-01"}, "date_from"),
        ({"investigation_status": "finished"}, "investigation_status"),
        ({"investigation_status": "INVESTIGATION_STATUS_"}, "investigation_status"),
        ({"session_type": "SESSION_TYPE_X Y"}, "session_type"),
        ({"only_uninvestigated": True, "investigation_status": "completed"}, "only_uninvestigated"),
    ],
)
def test_bad_filters_are_refused_naming_the_field(given: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        session_query(args(**given))
    assert caught.value.details["field"] == field
    assert caught.value.details["type"] == "validation"
