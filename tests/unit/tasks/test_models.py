"""Task tool inputs: bounds, control characters, normalisation; and the unverified nonce peek."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from shared.core.errors import ValidationFailed
from shared.tasks.confirmation import issue, peek_nonce
from shared.tasks.models import BulkDeleteTasksRequest, CreateTaskRequest, SearchTasksRequest, UpdateTaskRequest
from shared.tasks.service import category_key, parse_due, search_text


def fields_of(err: pytest.ExceptionInfo[ValidationError]) -> set[str]:
    return {str(e["loc"][0]) for e in err.value.errors()}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"title": "a\x00b"}, "title"),
        ({"title": "a\u0085b"}, "title"),  # C1 control (NEL)
        ({"title": "ok", "description": "x\x1b[31m"}, "description"),
        ({"title": "ok", "category": "a\tb"}, "category"),
        ({"title": "ok", "tags": ["a\nb"]}, "tags"),
        ({"title": "ok", "tags": ["  "]}, "tags"),
        ({"title": "ok", "priority": "HIGH"}, "priority"),
    ],
)
def test_control_characters_and_bad_values_are_refused(args: dict, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        CreateTaskRequest.model_validate(args)
    assert fields_of(err) == {field}


def test_normalisation() -> None:
    r = CreateTaskRequest(title="  Call mum  ", description="line 1\nline 2\ttab", tags=["A", "a", " b "])
    assert (r.title, r.tags) == ("Call mum", ["A", "b"])
    assert category_key("  Home   Office ") == "home office"
    assert search_text({"title": "Call MUM", "description": "Line", "tags": ["X"]}) == "call mum\nline\nx"
    assert SearchTasksRequest(query="  Milk ").query == "Milk"
    assert UpdateTaskRequest(task_id="t", due_date=None).model_fields_set == {"task_id", "due_date"}


def test_bulk_ids_bounded_and_deduplicated() -> None:
    assert BulkDeleteTasksRequest(task_ids=["a", "b", "a"]).task_ids == ["a", "b"]
    with pytest.raises(ValidationError):
        BulkDeleteTasksRequest(task_ids=["x"] * 501)
    with pytest.raises(ValidationError):
        BulkDeleteTasksRequest(task_ids=["x" * 65])


def test_due_dates() -> None:
    ny = ZoneInfo("America/New_York")
    assert parse_due("2026-11-23", ny) == ("2026-11-24T04:59:59.999999Z", True)
    assert parse_due("2026-11-23T09:00:00", ny) == ("2026-11-23T14:00:00.000000Z", False)
    assert parse_due("2026-11-23T09:00:00+01:00", ny) == ("2026-11-23T08:00:00.000000Z", False)
    assert parse_due("2026-03-08T02:30:00", ny)[0] == "2026-03-08T07:30:00.000000Z"  # a skipped local time
    for bad in ("tomorrow", "2026-13-01", "9999-12-31T23:00:00-05:00", "2026-11-23T25:00"):
        with pytest.raises(ValidationFailed):
            parse_due(bad, ny)


def test_peek_nonce() -> None:
    c = issue(b"k" * 32, "owner", ["a"], datetime(2026, 11, 23, tzinfo=UTC))
    assert peek_nonce(c.token) == c.nonce
    for bad in ("", "a.b", "..", "x" * 600, "eyJuIjoiLi4vcHJvZmlsZSJ9.x", "eyJuIjpbMV19.x", "bm9wZQ.x"):
        assert peek_nonce(bad) is None, bad
