"""Task date ranges in the user's time zone: around midnight, across DST, weeks, months, overdue, custom."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from shared.core.errors import ValidationFailed
from shared.tasks.date_ranges import between, window


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


NY = "America/New_York"
BERLIN = "Europe/Berlin"


@pytest.mark.parametrize(
    ("name", "now", "tz", "start", "end"),
    [
        # UTC by default.
        ("today", "2026-11-23T17:00:00", None, "2026-11-23T00:00:00", "2026-11-24T00:00:00"),
        ("tomorrow", "2026-11-23T17:00:00", None, "2026-11-24T00:00:00", "2026-11-25T00:00:00"),
        ("yesterday", "2026-11-23T17:00:00", None, "2026-11-22T00:00:00", "2026-11-23T00:00:00"),
        # One minute before local midnight in New York it is still the 22nd there.
        ("today", "2026-11-23T04:59:00", NY, "2026-11-22T05:00:00", "2026-11-23T05:00:00"),
        ("today", "2026-11-23T05:00:00", NY, "2026-11-23T05:00:00", "2026-11-24T05:00:00"),
        ("tomorrow", "2026-11-23T04:59:00", NY, "2026-11-23T05:00:00", "2026-11-24T05:00:00"),
        # Berlin is ahead: 23:30 UTC on the 23rd is already the 24th there.
        ("today", "2026-11-23T23:30:00", BERLIN, "2026-11-23T23:00:00", "2026-11-24T23:00:00"),
        # DST starts in New York on 2026-03-08: that day has 23 hours; it ends on 2026-11-01: 25 hours.
        ("today", "2026-03-08T12:00:00", NY, "2026-03-08T05:00:00", "2026-03-09T04:00:00"),
        ("today", "2026-11-01T12:00:00", NY, "2026-11-01T04:00:00", "2026-11-02T05:00:00"),
        ("yesterday", "2026-03-09T12:00:00", NY, "2026-03-08T05:00:00", "2026-03-09T04:00:00"),
        # Weeks start on Monday; Berlin's week that holds the end of DST (Sunday 2026-10-25) is 7 days and 1 hour,
        # the next one 7 days.
        ("this_week", "2026-10-28T10:00:00", BERLIN, "2026-10-25T23:00:00", "2026-11-01T23:00:00"),
        ("this_week", "2026-10-22T10:00:00", BERLIN, "2026-10-18T22:00:00", "2026-10-25T23:00:00"),
        ("last_week", "2026-11-23T12:00:00", None, "2026-11-16T00:00:00", "2026-11-23T00:00:00"),
        ("next_week", "2026-11-23T12:00:00", None, "2026-11-30T00:00:00", "2026-12-07T00:00:00"),
        # Sunday night in New York is still that week, though it is Monday in UTC.
        ("this_week", "2026-11-30T03:00:00", NY, "2026-11-23T05:00:00", "2026-11-30T05:00:00"),
        ("this_month", "2026-11-23T12:00:00", None, "2026-11-01T00:00:00", "2026-12-01T00:00:00"),
        ("this_month", "2026-12-31T23:30:00", BERLIN, "2026-12-31T23:00:00", "2027-01-31T23:00:00"),
        ("this_month", "2026-02-10T12:00:00", NY, "2026-02-01T05:00:00", "2026-03-01T05:00:00"),
    ],
)
def test_named_ranges(name: str, now: str, tz: str | None, start: str, end: str) -> None:
    w = window(name, now=utc(now), tz=tz)
    assert (w.start, w.end) == (utc(start), utc(end))
    assert w.contains(utc(start))
    assert not w.contains(utc(end))


def test_overdue_is_everything_due_before_now() -> None:
    now = utc("2026-11-23T17:00:00")
    w = window("overdue", now=now, tz=NY)
    assert w.start is None
    assert w.end == now
    assert w.contains(now - timedelta(days=400))
    assert not w.contains(now)


@pytest.mark.parametrize(
    ("start", "end", "tz", "expected"),
    [
        ("2026-11-01", "2026-11-03", None, ("2026-11-01T00:00:00", "2026-11-04T00:00:00")),  # the end day included
        ("2026-11-01", "2026-11-01", BERLIN, ("2026-10-31T23:00:00", "2026-11-01T23:00:00")),
        ("2026-11-01T08:00:00", "2026-11-01T10:00:00", NY, ("2026-11-01T13:00:00", "2026-11-01T15:00:00")),
        ("2026-11-01T08:00:00Z", "2026-11-01T10:00:00+01:00", None, ("2026-11-01T08:00:00", "2026-11-01T09:00:00")),
    ],
)
def test_custom_ranges(start: str, end: str, tz: str | None, expected: tuple[str, str]) -> None:
    w = window("custom", now=utc("2026-11-23T12:00:00"), tz=tz, custom_start=start, custom_end=end)
    assert (w.start, w.end) == (utc(expected[0]), utc(expected[1]))


@pytest.mark.parametrize(
    ("start", "end", "tz", "expected"),
    [
        # From a day on, no end (issue #27: an open end is accepted): from local midnight.
        ("2026-11-01", None, BERLIN, ("2026-10-31T23:00:00", None)),
        # Up to a day, included, no start (New York leaves daylight time that day: the next midnight is EST).
        (None, "2026-11-01", NY, (None, "2026-11-02T05:00:00")),
        ("", "2026-11-01T10:00:00Z", None, (None, "2026-11-01T10:00:00")),
        # An open end is not held to the 366-day limit (there is no length to hold).
        ("2020-01-01", None, None, ("2020-01-01T00:00:00", None)),
    ],
)
def test_custom_ranges_with_an_open_end(
    start: str | None, end: str | None, tz: str | None, expected: tuple[str | None, str | None]
) -> None:
    w = window("custom", now=utc("2026-11-23T12:00:00"), tz=tz, custom_start=start, custom_end=end)
    assert w.start == (utc(expected[0]) if expected[0] else None)
    assert w.end == (utc(expected[1]) if expected[1] else None)


def test_an_open_ended_window_contains_everything_on_its_open_side() -> None:
    now = utc("2026-11-23T12:00:00")
    since = window("custom", now=now, custom_start="2026-11-01")
    assert since.contains(utc("9999-01-01T00:00:00"))
    assert not since.contains(utc("2026-10-31T23:59:59"))
    until = window("custom", now=now, custom_end="2026-11-01")
    assert until.contains(utc("0001-01-02T00:00:00"))
    assert not until.contains(utc("2026-11-02T00:00:00"))
    assert since.as_dict()["end"] is None
    assert until.as_dict()["start"] is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"range_name": "fortnight"}, "date_range"),
        ({"range_name": "today", "tz": "Mars/Olympus_Mons"}, "tz"),
        ({"range_name": "today", "tz": "../../etc/passwd"}, "tz"),
        ({"range_name": "custom"}, "custom_start"),
        ({"range_name": "custom", "custom_start": " ", "custom_end": ""}, "custom_start"),
        ({"range_name": "custom", "custom_start": "2026-11-05", "custom_end": "2026-11-01"}, "custom_end"),
        ({"range_name": "custom", "custom_start": "2025-01-01", "custom_end": "2026-11-01"}, "custom_end"),
        ({"range_name": "custom", "custom_start": "soon", "custom_end": "2026-11-01"}, "custom_start"),
        (
            {"range_name": "custom", "custom_start": "0001-01-01T00:00:00+14:00", "custom_end": "2026-11-01"},
            "custom_start",
        ),
    ],
)
def test_bad_ranges_name_the_field(kwargs: dict[str, str], field: str) -> None:
    name = kwargs.pop("range_name")
    with pytest.raises(ValidationFailed) as caught:
        window(name, now=utc("2026-11-23T12:00:00"), **kwargs)
    assert caught.value.details["errors"][0]["field"] == field


def test_between_reads_dates_as_whole_local_days_and_names_the_callers_fields() -> None:
    day = between("2026-12-02", "2026-12-02", ZoneInfo("Pacific/Auckland"), fields=("due_from", "due_to"))
    assert day.as_dict()["start"] == "2026-12-01T11:00:00Z"
    assert day.as_dict()["end"] == "2026-12-02T11:00:00Z"
    assert between(None, "2026-12-02", ZoneInfo("UTC"), fields=("due_from", "due_to")).start is None
    for first, last, field in (
        ("soon", None, "due_from"),
        (None, "2026-02-30", "due_to"),
        ("2026-12-03", "2026-12-01", "due_to"),
    ):
        with pytest.raises(ValidationFailed) as caught:
            between(first, last, ZoneInfo("UTC"), fields=("due_from", "due_to"))
        assert [e["field"] for e in caught.value.details["errors"]] == [field]
