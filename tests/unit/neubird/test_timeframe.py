"""The timeframe grammar of neubird_create_investigation, table-driven against a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from shared.core.errors import ValidationFailed
from shared.neubird.timeframe import (
    MAX_TEXT_CHARS,
    Timeframe,
    enhance_prompt,
    parse_timeframe,
)

# Monday 2026-11-23 17:00:00 UTC.
NOW = datetime(2026, 11, 23, 17, 0, 0, tzinfo=UTC)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


# (text, start, end) — all UTC.
ACCEPTED: list[tuple[str, str, str]] = [
    # relative windows
    ("last 2 hours", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("past 2 hours", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("previous 3 hours", "2026-11-23T14:00Z", "2026-11-23T17:00Z"),
    ("last 1 hour", "2026-11-23T16:00Z", "2026-11-23T17:00Z"),
    ("last hour", "2026-11-23T16:00Z", "2026-11-23T17:00Z"),
    ("past 24 hours", "2026-11-22T17:00Z", "2026-11-23T17:00Z"),
    ("last 45 minutes", "2026-11-23T16:15Z", "2026-11-23T17:00Z"),
    ("last minute", "2026-11-23T16:59Z", "2026-11-23T17:00Z"),
    ("last 30m", "2026-11-23T16:30Z", "2026-11-23T17:00Z"),
    ("last 30 min", "2026-11-23T16:30Z", "2026-11-23T17:00Z"),
    ("last 30 mins", "2026-11-23T16:30Z", "2026-11-23T17:00Z"),
    ("last 2h", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("last 2 hr", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("last 2hrs", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("last 3 days", "2026-11-20T17:00Z", "2026-11-23T17:00Z"),
    ("last day", "2026-11-22T17:00Z", "2026-11-23T17:00Z"),
    ("last 3d", "2026-11-20T17:00Z", "2026-11-23T17:00Z"),
    ("past week", "2026-11-16T17:00Z", "2026-11-23T17:00Z"),
    ("last week", "2026-11-16T17:00Z", "2026-11-23T17:00Z"),
    ("last 2 weeks", "2026-11-09T17:00Z", "2026-11-23T17:00Z"),
    ("last 2w", "2026-11-09T17:00Z", "2026-11-23T17:00Z"),
    ("last 2 wks", "2026-11-09T17:00Z", "2026-11-23T17:00Z"),
    ("last 90 days", "2026-08-25T17:00Z", "2026-11-23T17:00Z"),
    ("past two days", "2026-11-21T17:00Z", "2026-11-23T17:00Z"),
    ("last an hour", "2026-11-23T16:00Z", "2026-11-23T17:00Z"),
    # case, whitespace, fillers, punctuation
    ("  LAST   2   Hours  ", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("Last\t2\nHours.", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("in the last 2 hours", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("over the past week", "2026-11-16T17:00Z", "2026-11-23T17:00Z"),
    ("the last 15 minutes", "2026-11-23T16:45Z", "2026-11-23T17:00Z"),
    # bare and ISO 8601 durations
    ("2 hours", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("90m", "2026-11-23T15:30Z", "2026-11-23T17:00Z"),
    ("PT2H", "2026-11-23T15:00Z", "2026-11-23T17:00Z"),
    ("pt1h30m", "2026-11-23T15:30Z", "2026-11-23T17:00Z"),
    ("P1D", "2026-11-22T17:00Z", "2026-11-23T17:00Z"),
    ("P1W", "2026-11-16T17:00Z", "2026-11-23T17:00Z"),
    # named days and weeks (whole UTC days)
    ("today", "2026-11-23T00:00Z", "2026-11-23T17:00Z"),
    ("Yesterday", "2026-11-22T00:00Z", "2026-11-23T00:00Z"),
    ("this week", "2026-11-23T00:00Z", "2026-11-23T17:00Z"),
    # since
    ("since 2026-11-20", "2026-11-20T00:00Z", "2026-11-23T17:00Z"),
    ("Since 2026-11-23T08:30:00Z", "2026-11-23T08:30Z", "2026-11-23T17:00Z"),
    ("since 2026-11-23 08:30", "2026-11-23T08:30Z", "2026-11-23T17:00Z"),
    ("since 2026-11-23T09:30+01:00", "2026-11-23T08:30Z", "2026-11-23T17:00Z"),
    ("since yesterday", "2026-11-22T00:00Z", "2026-11-23T17:00Z"),
    ("since 3 hours ago", "2026-11-23T14:00Z", "2026-11-23T17:00Z"),
    ("3 hours ago", "2026-11-23T14:00Z", "2026-11-23T17:00Z"),
    ("from 2026-11-21", "2026-11-21T00:00Z", "2026-11-23T17:00Z"),
    ("after 2026-11-23T12:00:00Z", "2026-11-23T12:00Z", "2026-11-23T17:00Z"),
    # ranges: dates are whole days (the end date is included)
    ("between 2026-11-20 and 2026-11-21", "2026-11-20T00:00Z", "2026-11-22T00:00Z"),
    ("Between 2026-11-20 AND 2026-11-20", "2026-11-20T00:00Z", "2026-11-21T00:00Z"),
    ("between 2026-11-20 and today", "2026-11-20T00:00Z", "2026-11-23T17:00Z"),
    ("between 2026-11-22 and 2026-11-23", "2026-11-22T00:00Z", "2026-11-23T17:00Z"),
    ("between 2026-11-23T08:00Z and 2026-11-23T09:15Z", "2026-11-23T08:00Z", "2026-11-23T09:15Z"),
    ("from 2026-11-23T08:00Z to 2026-11-23T12:00Z", "2026-11-23T08:00Z", "2026-11-23T12:00Z"),
    ("from 2026-11-20 until 2026-11-21", "2026-11-20T00:00Z", "2026-11-22T00:00Z"),
    ("since 2026-11-20 till 2026-11-21", "2026-11-20T00:00Z", "2026-11-22T00:00Z"),
    ("2026-11-20 through 2026-11-21", "2026-11-20T00:00Z", "2026-11-22T00:00Z"),
    ("2026-11-20 to 2026-11-21", "2026-11-20T00:00Z", "2026-11-22T00:00Z"),
    ("2026-11-23 08:00 to 2026-11-23 10:00", "2026-11-23T08:00Z", "2026-11-23T10:00Z"),
    ("2026-11-23 08:00 - 2026-11-23 10:00", "2026-11-23T08:00Z", "2026-11-23T10:00Z"),
    ("yesterday to now", "2026-11-22T00:00Z", "2026-11-23T17:00Z"),
    ("2 days ago to 1 day ago", "2026-11-21T17:00Z", "2026-11-22T17:00Z"),
    # a slightly future end (clock skew, inside 5 minutes) is clamped to now
    ("from 2026-11-23T16:00Z to 2026-11-23T17:03Z", "2026-11-23T16:00Z", "2026-11-23T17:00Z"),
    # ISO 8601 timestamps and intervals, offsets to UTC
    ("2026-11-23T08:00:00Z/2026-11-23T12:00:00Z", "2026-11-23T08:00Z", "2026-11-23T12:00Z"),
    ("2026-11-23T09:00:00+01:00/2026-11-23T12:00:00-02:00", "2026-11-23T08:00Z", "2026-11-23T14:00Z"),
    ("2026-11-23T08:00:00.250Z/2026-11-23T12:00:00,5Z", "2026-11-23T08:00Z", "2026-11-23T12:00Z"),
    ("2026-11-23T08:00+0530/2026-11-23T12:00Z", "2026-11-23T02:30Z", "2026-11-23T12:00Z"),
    ("2026-11-23T08:00Z/PT2H", "2026-11-23T08:00Z", "2026-11-23T10:00Z"),
    ("PT2H/2026-11-23T12:00Z", "2026-11-23T10:00Z", "2026-11-23T12:00Z"),
    ("2026-11-20/2026-11-21", "2026-11-20T00:00Z", "2026-11-22T00:00Z"),
    ("2026-11-23T08:00:00Z", "2026-11-23T08:00Z", "2026-11-23T17:00Z"),
    ("2026-11-23T08:00:00", "2026-11-23T08:00Z", "2026-11-23T17:00Z"),
    ("2026-11-23 08:00 UTC", "2026-11-23T08:00Z", "2026-11-23T17:00Z"),
    # a single date is that whole day (today: so far)
    ("2026-11-20", "2026-11-20T00:00Z", "2026-11-21T00:00Z"),
    ("2026-11-23", "2026-11-23T00:00Z", "2026-11-23T17:00Z"),
]


@pytest.mark.parametrize(("text", "start", "end"), ACCEPTED)
def test_accepted_forms(text: str, start: str, end: str) -> None:
    tf = parse_timeframe(text, now=NOW)
    assert (tf.start, tf.end) == (at(start), at(end))
    assert tf.start.tzinfo is UTC
    assert tf.end.tzinfo is UTC
    assert tf.description


# (text, words the message must contain)
REFUSED: list[tuple[str, str]] = [
    # Offsets that push a timestamp out of the representable range (was INTERNAL_ERROR).
    ("since 0001-01-01T00:00:00+14:00", "impossible date or time"),
    ("9999-12-31T23:59:59-14:00/9999-12-31T23:59:59-14:00", "impossible date or time"),
    ("last 0 hours", "positive"),
    ("last -2 hours", "positive"),
    ("past 0m", "positive"),
    ("PT0S", "positive"),
    ("last 91 days", "90-day maximum"),
    ("last 13 weeks", "90-day maximum"),
    ("last 99999999999999999999999999999999 hours", "90-day maximum"),
    ("P100D", "90-day maximum"),
    ("since 2026-01-01", "90-day maximum"),
    ("between 2026-11-22 and 2026-11-20", "reversed"),
    ("from 2026-11-23T12:00Z to 2026-11-23T08:00Z", "reversed"),
    ("2026-11-23T12:00Z/2026-11-23T12:00Z", "empty"),
    ("since 2026-12-01", "future"),
    ("since 2026-11-23T18:00Z", "future"),
    ("2026-11-30", "future"),
    ("between 2026-11-20 and 2026-11-30", "future"),
    ("2026-11-23T17:10Z/2026-11-23T18:00Z", "future"),
    ("2026-11-23T16:00Z/PT2H", "future"),
    ("tomorrow", "not a date or time"),
    ("last 30 seconds", "not a duration"),
    ("last month", "not a duration"),
    ("last", "not a duration"),
    ("blah blah", "not a date or time"),
    ("between 2026-11-20", "A or B is missing"),
    ("between 2026-11-20 and 2026-11-21 and 2026-11-22", "A or B is missing"),
    ("2026-11-20 to 2026-11-21 to 2026-11-22", "range separator"),
    ("to 2026-11-21", "range separator"),
    ("2026-02-30", "impossible"),
    ("2026-11-23T25:00Z", "impossible"),
    ("2026-11-23T08:00+25:00", "impossible"),
    ("2026-11-23+01:00", "whole UTC days"),
    ("PT2H/P1D", "at least one date"),
    ("PT", "ISO 8601 duration"),
    ("last ٢ hours", "not a duration"),
    ("x" * (MAX_TEXT_CHARS + 1), f"at most {MAX_TEXT_CHARS}"),
]


@pytest.mark.parametrize(("text", "words"), REFUSED)
def test_refused_forms_name_the_field_and_show_accepted_ones(text: str, words: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_timeframe(text, now=NOW)
    error = caught.value
    assert words in error.message
    assert error.message.startswith("Invalid timeframe:")
    assert "'last 2 hours'" in error.message
    assert error.details["type"] == "validation"
    assert error.details["field"] == "timeframe"
    assert "last 2 hours" in error.details["examples"]
    assert error.recovery_suggestions
    assert error.code == "VALIDATION_ERROR"


@pytest.mark.parametrize(
    "hostile",
    [
        "last " + "1" * 10_000 + " hours",
        ("between " + "2026-11-20 and " * 700)[:10_240],
        "a" * 10_240 + "!",
        ("from " + "- " * 5_000 + "to"),
        "\x00" * 10_240,
    ],
)
def test_hostile_long_input_is_refused_by_length(hostile: str) -> None:
    assert len(hostile) >= 10_000
    with pytest.raises(ValidationFailed) as caught:
        parse_timeframe(hostile, now=NOW)
    assert caught.value.details["field"] == "timeframe"
    assert hostile[:100] not in caught.value.message


@pytest.mark.parametrize(
    "hostile",
    [
        "last " + "9" * 180 + " hours",
        "between " + "and " * 48,
        "2026-11-23T08:00:00." + "0" * 150 + "Z",
        "p" + "1w" * 90,
        "- " * 99,
    ],
)
def test_hostile_input_within_the_length_cap_is_refused(hostile: str) -> None:
    assert len(hostile) <= MAX_TEXT_CHARS
    with pytest.raises(ValidationFailed):
        parse_timeframe(hostile, now=NOW)


@pytest.mark.parametrize("empty", [None, "", "   ", "\n\t"])
def test_nothing_given_is_the_default(empty: str | None) -> None:
    assert parse_timeframe(empty, now=NOW) == parse_timeframe("last 1 hour", now=NOW)
    tf = parse_timeframe(empty, now=NOW, default="last 4 hours")
    assert (tf.start, tf.end) == (at("2026-11-23T13:00Z"), NOW)


def test_a_bad_default_names_the_setting() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_timeframe(None, now=NOW, default="the last fortnight")
    assert caught.value.details["field"] == "default_timeframe"


def test_start_and_end_arguments() -> None:
    tf = parse_timeframe(None, now=NOW, start_time="2026-11-23T08:00:00Z", end_time="2026-11-23T10:00:00+01:00")
    assert (tf.start, tf.end) == (at("2026-11-23T08:00Z"), at("2026-11-23T09:00Z"))
    dates = parse_timeframe(None, now=NOW, start_time="2026-11-20", end_time="2026-11-21")
    assert (dates.start, dates.end) == (at("2026-11-20T00:00Z"), at("2026-11-22T00:00Z"))


def test_start_alone_runs_until_now() -> None:
    tf = parse_timeframe(None, now=NOW, start_time="2026-11-23T12:00:00Z")
    assert (tf.start, tf.end) == (at("2026-11-23T12:00Z"), NOW)
    assert tf.description.startswith("since 2026-11-23 12:00 UTC")


def test_end_alone_is_the_default_span_ending_there() -> None:
    tf = parse_timeframe(None, now=NOW, end_time="2026-11-23T12:00:00Z")
    assert (tf.start, tf.end) == (at("2026-11-23T11:00Z"), at("2026-11-23T12:00Z"))
    assert tf.description.startswith("the hour ending at 2026-11-23 12:00 UTC")
    wider = parse_timeframe(None, now=NOW, end_time="2026-11-23T12:00:00Z", default="last 6 hours")
    assert (wider.start, wider.end) == (at("2026-11-23T06:00Z"), at("2026-11-23T12:00Z"))


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"text": "last 2 hours", "start_time": "2026-11-23T08:00Z"}, "timeframe", "not both"),
        ({"text": "last 2 hours", "end_time": "2026-11-23T08:00Z"}, "timeframe", "not both"),
        ({"start_time": "yesterday-ish"}, "start_time", "not a date or time"),
        ({"end_time": "2026-11-24T12:00Z"}, "end_time", "future"),
        ({"start_time": "2026-11-24T12:00Z"}, "start_time", "future"),
        ({"start_time": "2026-11-23T12:00Z", "end_time": "2026-11-23T08:00Z"}, "start_time", "reversed"),
        ({"start_time": "2026-06-01T00:00Z", "end_time": "2026-11-01T00:00Z"}, "start_time", "90-day"),
        ({"start_time": "2" * 300}, "start_time", "at most 200"),
    ],
)
def test_start_and_end_argument_errors(kwargs: dict[str, str], field: str, words: str) -> None:
    text = kwargs.pop("text", None)
    with pytest.raises(ValidationFailed) as caught:
        parse_timeframe(text, now=NOW, **kwargs)
    assert caught.value.details["field"] == field
    assert words in caught.value.message
    assert f"Invalid {field}" in caught.value.message


def test_now_in_another_zone_and_with_fractions() -> None:
    paris = timezone(timedelta(hours=1))
    tf = parse_timeframe("last 2 hours", now=datetime(2026, 11, 23, 18, 0, 0, 999_999, tzinfo=paris))
    assert (tf.start, tf.end) == (at("2026-11-23T15:00Z"), NOW)
    with pytest.raises(ValueError, match="aware"):
        parse_timeframe("last 2 hours", now=datetime(2026, 11, 23, 17, 0))  # noqa: DTZ001 - the naive case


def test_as_dict_is_the_spec_shape_and_description_is_human() -> None:
    tf = parse_timeframe("last 2 hours", now=NOW)
    assert tf.as_dict() == {
        "start": "2026-11-23T15:00:00Z",
        "end": "2026-11-23T17:00:00Z",
        "description": "the last 2 hours (2026-11-23 15:00 to 17:00 UTC)",
    }
    assert parse_timeframe("yesterday", now=NOW).description == "yesterday (2026-11-22 00:00 to 2026-11-23 00:00 UTC)"
    assert parse_timeframe("between 2026-11-20 and 2026-11-21", now=NOW).description == (
        "the window 2026-11-20 00:00 to 2026-11-22 00:00 UTC"
    )


def test_timeframe_is_frozen() -> None:
    tf = parse_timeframe("today", now=NOW)
    with pytest.raises(AttributeError):
        tf.start = NOW  # type: ignore[misc]
    assert isinstance(tf, Timeframe)


def test_enhance_prompt_adds_one_clear_window_sentence() -> None:
    tf = parse_timeframe("last 2 hours", now=NOW)
    prompt = enhance_prompt("Analyze my EKS cluster for security vulnerabilities  \n", tf)
    assert prompt == (
        "Analyze my EKS cluster for security vulnerabilities\n\n"
        "Timeframe: focus on the last 2 hours (2026-11-23 15:00 to 17:00 UTC), "
        "that is from 2026-11-23T15:00:00Z to 2026-11-23T17:00:00Z (UTC)."
    )


def test_this_week_starts_on_monday() -> None:
    sunday = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)
    tf = parse_timeframe("this week", now=sunday)
    assert (tf.start, tf.end) == (at("2026-11-23T00:00Z"), sunday)
    assert tf.description == "this week so far (2026-11-23 00:00 to 2026-11-29 09:30 UTC)"
