"""NeuBird's RFC 3339 times as instants: offsets, fractions, 'Z', and what cannot be read (sorted last)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.neubird.times import newest_first, parse_rfc3339


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("2026-11-20T08:14:03Z", datetime(2026, 11, 20, 8, 14, 3, tzinfo=UTC)),
        ("2026-11-20T08:14:03.512Z", datetime(2026, 11, 20, 8, 14, 3, 512000, tzinfo=UTC)),
        ("2026-11-20T13:44:03.5+05:30", datetime(2026, 11, 20, 8, 14, 3, 500000, tzinfo=UTC)),
        ("2026-11-20T00:14:03-08:00", datetime(2026, 11, 20, 8, 14, 3, tzinfo=UTC)),
        ("2026-11-20T08:14:03.123456789Z", datetime(2026, 11, 20, 8, 14, 3, 123456, tzinfo=UTC)),  # nanoseconds
        ("2026-11-20t08:14:03z", datetime(2026, 11, 20, 8, 14, 3, tzinfo=UTC)),  # RFC 3339 allows lower case
        ("2026-11-20 08:14:03+00:00", datetime(2026, 11, 20, 8, 14, 3, tzinfo=UTC)),  # and a space
        ("2026-11-20T08:14:03-00:00", datetime(2026, 11, 20, 8, 14, 3, tzinfo=UTC)),  # offset unknown: UTC
        ("2026-12-31T23:59:60Z", datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)),  # a leap second
    ],
)
def test_rfc3339_times_become_utc_instants(text: str, instant: datetime) -> None:
    assert parse_rfc3339(text) == instant


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "garbage",
        1732090443,
        "2026-11-20",
        "2026-11-20T08:14:03",
        "2026-02-30T00:00:00Z",
        "2026-W47-5T08:14:03Z",
        "20261120T081403Z",
        "2026-11-20T08:14:03+25:00",
        " 2026-11-20T08:14:03Z x",
    ],
)
def test_what_is_not_rfc3339_is_none(text: object) -> None:
    assert parse_rfc3339(text) is None


def test_newest_first_orders_by_instant_not_by_text() -> None:
    rows = [
        {"id": "a", "create_time": "2026-11-20T15:30:00.000+05:30"},  # 10:00Z
        {"id": "b", "create_time": "2026-11-20T03:00:00-08:00"},  # 11:00Z
        {"id": "c", "create_time": "2026-11-20T10:30:00.25Z"},  # 10:30:00.25Z
        {"id": "d", "create_time": "yesterday"},
        {"id": "e"},
        {"id": "f", "create_time": "2026-11-20T10:30:00.250000001Z"},  # ties with c: input order kept
    ]
    assert [r["id"] for r in newest_first(rows)] == ["b", "c", "f", "a", "d", "e"]
    # The text order would have put a first.
    assert max(rows[:3], key=lambda r: r["create_time"])["id"] == "a"


def test_newest_first_reads_another_field_and_never_raises() -> None:
    rows = [{"t": "2026-01-01T00:00:00Z"}, {"t": ["not", "text"]}, {"t": "2027-01-01T00:00:00+14:00"}, "not a row"]
    assert newest_first(rows, "t") == [rows[2], rows[0], rows[1], rows[3]]
