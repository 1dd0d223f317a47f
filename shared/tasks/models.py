"""Inputs and outputs of the task tools (names and defaults as in the chat-task-tools spec)."""

from __future__ import annotations

import unicodedata
from typing import Any, Literal

from pydantic import Field, StrictBool, field_validator

from shared.core.local_time import local_iso
from shared.tools.registry import ToolInput, ToolOutput

MAX_TITLE = 200
MAX_DESCRIPTION = 4_000
MAX_CATEGORY = 50
MAX_TAGS = 20
MAX_TAG = 40
MAX_QUERY = 200
MAX_BULK_IDS = 500
MAX_STATUS_IDS = 100
MAX_ID = 64
MAX_CONTINUATION = 4_000
MAX_TOKEN = 512
MAX_DATE = 40

Priority = Literal["low", "medium", "high"]
Status = Literal["pending", "completed"]
StatusFilter = Literal["pending", "completed", "all"]

_DUE = (
    "When the task is due: an ISO 8601 timestamp with a zone (2026-11-30T17:00:00+01:00; stored in UTC),"
    " a timestamp without a zone (read in your time zone, see set_task_preferences), or a date alone"
    " (2026-11-30: due by the end of that day in your time zone)."
)
_USER = "Optional; if given it must be your own user id (tasks are always yours)."
_LIMIT = "Page size (1..100). A `continuation` in the answer means more: pass it back for the next page."
_CONT = "The `continuation` of the previous page, unchanged; omit it for the first page."
_CUSTOM_START = (
    "With date_range=custom: the first day (2026-11-01) or instant (ISO 8601) of the range; leave it out for a"
    " range with no start (everything up to custom_end)."
)
_CUSTOM_END = (
    "With date_range=custom: the last day (included) or the instant the range ends (ISO 8601); leave it out for"
    " a range with no end (everything from custom_start on). At least one of the two is required."
)
_TZ_OUT = "The user's IANA time zone (set_task_preferences; UTC by default): every *_local time is in it."


def _no_controls(value: str, *, multiline: bool = False) -> str:
    allowed = {"\n", "\t", "\r"} if multiline else set()
    if any(unicodedata.category(c) == "Cc" and c not in allowed for c in value):
        raise ValueError("must not contain control characters")
    return value


def _line(value: str | None) -> str | None:
    return None if value is None else _no_controls(value)


def _tags(value: list[str] | None) -> list[str] | None:
    if value is None:
        return None
    out: list[str] = []
    seen: set[str] = set()
    for tag in value:
        tag = _no_controls(tag).strip()
        if not tag:
            raise ValueError("tags must not be empty")
        if len(tag) > MAX_TAG:
            raise ValueError(f"each tag is at most {MAX_TAG} characters")
        if tag.lower() not in seen:
            seen.add(tag.lower())
            out.append(tag)
    return out


def _ids(value: list[str] | None) -> list[str] | None:
    if value is None:
        return None
    for item in value:
        _no_controls(item)
    return list(dict.fromkeys(value))


class _TaskInput(ToolInput):
    user_id: str | None = Field(None, max_length=128, description=_USER)


class CreateTaskRequest(_TaskInput):
    title: str = Field(min_length=1, max_length=MAX_TITLE, description="What to do, in a short line.")
    description: str = Field("", max_length=MAX_DESCRIPTION, description="Details (optional, may span lines).")
    category: str | None = Field(
        None, max_length=MAX_CATEGORY, description="A category such as Shopping or Work (filtering ignores case)."
    )
    priority: Priority = Field("medium", description="low, medium or high.")
    due_date: str | None = Field(None, max_length=MAX_DATE, description=_DUE)
    tags: list[str] = Field(
        default_factory=list, max_length=MAX_TAGS, description=f"Up to {MAX_TAGS} keywords, each <= {MAX_TAG} chars."
    )

    _t = field_validator("title", "category", "due_date")(classmethod(lambda cls, v: _line(v)))
    _d = field_validator("description")(classmethod(lambda cls, v: _no_controls(v, multiline=True)))
    _g = field_validator("tags")(classmethod(lambda cls, v: _tags(v)))

    @field_validator("title")
    @classmethod
    def _title(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class TaskIdRequest(_TaskInput):
    task_id: str = Field(min_length=1, max_length=MAX_ID, description="The task's id (from create_task or a list).")

    _i = field_validator("task_id")(classmethod(lambda cls, v: _line(v)))


class GetTaskRequest(TaskIdRequest):
    include_deleted: StrictBool = Field(False, description="Also find a task that was deleted (soft delete).")


class UpdateTaskRequest(TaskIdRequest):
    """Only the fields given change; `due_date: null` clears the due date, `category: null` the category."""

    title: str | None = Field(None, min_length=1, max_length=MAX_TITLE, description="New title.")
    description: str | None = Field(None, max_length=MAX_DESCRIPTION, description="New description.")
    category: str | None = Field(None, max_length=MAX_CATEGORY, description="New category (null clears it).")
    priority: Priority | None = Field(None, description="New priority: low, medium or high.")
    status: Status | None = Field(
        None, description="pending or completed (completing sets completed_at, reopening clears it)."
    )
    due_date: str | None = Field(None, max_length=MAX_DATE, description=_DUE + " null clears it.")
    tags: list[str] | None = Field(None, max_length=MAX_TAGS, description="The new full tag list.")

    _t = field_validator("title", "category", "due_date")(classmethod(lambda cls, v: _line(v)))
    _d = field_validator("description")(classmethod(lambda cls, v: v if v is None else _no_controls(v, multiline=True)))
    _g = field_validator("tags")(classmethod(lambda cls, v: _tags(v)))

    @field_validator("title")
    @classmethod
    def _title(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value.strip() if value is not None else None


class GetPreferencesRequest(_TaskInput):
    """No arguments: the caller's own preferences."""


class SetPreferencesRequest(_TaskInput):
    tz: str = Field(
        min_length=1, max_length=64, description="Your IANA time zone, e.g. Europe/Berlin or America/New_York."
    )

    _z = field_validator("tz")(classmethod(lambda cls, v: _line(v)))


class GetAllTasksRequest(_TaskInput):
    status: StatusFilter = Field("all", description="pending, completed or all.")
    category: str | None = Field(None, max_length=MAX_CATEGORY, description="Only this category (case ignored).")
    priority: Priority | None = Field(None, description="Only this priority.")
    limit: int = Field(100, ge=1, le=100, description=_LIMIT)
    include_deleted: StrictBool = Field(False, description="Include soft-deleted tasks.")
    continuation: str | None = Field(None, max_length=MAX_CONTINUATION, description=_CONT)

    _c = field_validator("category", "continuation")(classmethod(lambda cls, v: _line(v)))


class ListTasksRequest(GetAllTasksRequest):
    """GET /api/tasks: get_all_tasks' filters plus words and a due date range (the phone's list screen)."""

    q: str | None = Field(
        None, max_length=MAX_QUERY, description="Words found in title, description or tags (case ignored)."
    )
    due_from: str | None = Field(
        None, max_length=MAX_DATE, description="Due on or after: a date (from its start, local) or a timestamp."
    )
    due_to: str | None = Field(
        None, max_length=MAX_DATE, description="Due up to: a date (its whole day included, local) or a timestamp."
    )
    tz: str | None = Field(None, max_length=64, description="IANA zone of the dates (default: your stored zone).")

    _l = field_validator("q", "due_from", "due_to", "tz")(classmethod(lambda cls, v: _line(v)))

    @field_validator("q", "due_from", "due_to", "tz")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None


class SearchTasksRequest(_TaskInput):
    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY,
        description="A word or phrase, found in title, description or tags (case ignored).",
    )
    status: StatusFilter | None = Field(None, description="pending, completed or all (default all).")
    limit: int = Field(20, ge=1, le=100, description=_LIMIT)
    continuation: str | None = Field(None, max_length=MAX_CONTINUATION, description=_CONT)

    _c = field_validator("query", "continuation")(classmethod(lambda cls, v: _line(v)))

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


CompletedRange = Literal["today", "yesterday", "this_week", "last_week", "this_month", "custom"]
DateRange = Literal["today", "tomorrow", "this_week", "next_week", "this_month", "overdue", "custom"]


class GetCompletedTasksRequest(_TaskInput):
    date_range: CompletedRange | None = Field(
        None, description="today, yesterday, this_week, last_week, this_month or custom (omit: any time)."
    )
    custom_start: str | None = Field(None, max_length=MAX_DATE, description=_CUSTOM_START)
    custom_end: str | None = Field(None, max_length=MAX_DATE, description=_CUSTOM_END)
    category: str | None = Field(None, max_length=MAX_CATEGORY, description="Only this category (case ignored).")
    limit: int = Field(50, ge=1, le=100, description=_LIMIT)
    continuation: str | None = Field(None, max_length=MAX_CONTINUATION, description=_CONT)

    _c = field_validator("custom_start", "custom_end", "category", "continuation")(classmethod(lambda cls, v: _line(v)))


class GetTasksSummaryRequest(_TaskInput):
    group_by: Literal["status", "category", "priority", "date"] = Field(
        "status", description="status, category, priority or date (due-date buckets of pending tasks)."
    )


class GetTasksByDateRequest(_TaskInput):
    date_type: Literal["due_date", "created_at", "completed_at"] = Field(
        "due_date", description="Which date to filter on."
    )
    date_range: DateRange = Field(
        description="today, tomorrow, this_week, next_week, this_month, overdue (before now) or custom."
    )
    custom_start: str | None = Field(None, max_length=MAX_DATE, description=_CUSTOM_START)
    custom_end: str | None = Field(None, max_length=MAX_DATE, description=_CUSTOM_END)
    status: StatusFilter = Field("pending", description="pending, completed or all.")
    limit: int = Field(100, ge=1, le=100, description=_LIMIT)
    continuation: str | None = Field(None, max_length=MAX_CONTINUATION, description=_CONT)

    _c = field_validator("custom_start", "custom_end", "continuation")(classmethod(lambda cls, v: _line(v)))


class BulkDeleteTasksRequest(_TaskInput):
    task_ids: list[str] | None = Field(
        None, max_length=MAX_BULK_IDS, description=f"Specific task ids (up to {MAX_BULK_IDS})."
    )
    status: Status | None = Field(None, description="Only tasks with this status.")
    category: str | None = Field(None, max_length=MAX_CATEGORY, description="Only this category (case ignored).")
    completed_before: str | None = Field(
        None, max_length=MAX_DATE, description="Only tasks completed before this date (your zone) or instant."
    )
    require_confirmation: StrictBool = Field(
        True, description="true (default): delete nothing, preview and get a confirmation_token. false: delete."
    )
    confirmation_token: str | None = Field(
        None, max_length=MAX_TOKEN, description="With require_confirmation=false: the token of the preview."
    )

    _c = field_validator("category", "completed_before", "confirmation_token")(classmethod(lambda cls, v: _line(v)))
    _i = field_validator("task_ids")(classmethod(lambda cls, v: _ids(v)))

    @field_validator("task_ids")
    @classmethod
    def _ids_bounded(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or any(not 0 < len(i) <= MAX_ID for i in value)):
            raise ValueError(f"must hold 1..{MAX_BULK_IDS} ids of 1..{MAX_ID} characters")
        return value


class UpdateTaskStatusRequest(_TaskInput):
    task_ids: list[str] = Field(
        min_length=1, max_length=MAX_STATUS_IDS, description=f"The tasks to change (1..{MAX_STATUS_IDS} ids)."
    )
    new_status: Status = Field(description="pending or completed.")

    _i = field_validator("task_ids")(classmethod(lambda cls, v: _ids(v)))

    @field_validator("task_ids")
    @classmethod
    def _ids_bounded(cls, value: list[str]) -> list[str]:
        if any(not 0 < len(i) <= MAX_ID for i in value):
            raise ValueError(f"each id is 1..{MAX_ID} characters")
        return value


# ---- outputs ---------------------------------------------------------------------------------------


class Task(ToolOutput):
    id: str
    user_id: str
    title: str
    description: str
    category: str | None
    priority: Priority
    status: Status
    due_date: str | None = Field(description="UTC, ISO 8601 (…Z).")
    due_date_local: str | None = Field(
        None, description="due_date in the user's time zone, ISO 8601 with its offset: show this one to the user."
    )
    due_all_day: bool = Field(description="true when the due date was given as a day (due by its end).")
    created_at: str
    updated_at: str
    completed_at: str | None
    completed_at_local: str | None = Field(None, description="completed_at in the user's time zone (with offset).")
    deleted: bool
    deleted_at: str | None
    tags: list[str]


class TaskResult(ToolOutput):
    task: Task
    message: str
    tz: str = Field("UTC", description=_TZ_OUT)


class DeleteTaskResult(ToolOutput):
    success: bool
    task_id: str
    deleted_at: str
    message: str


class Preferences(ToolOutput):
    user_id: str
    tz: str
    now_local: str = Field(description="The current time in that zone, ISO 8601 with its offset.")
    message: str


class WindowOut(ToolOutput):
    start: str | None = Field(description="First instant (UTC); null: no lower bound.")
    end: str | None = Field(description="Instant after the last (UTC); null: no upper bound (custom only).")
    label: str
    tz: str


class TaskList(ToolOutput):
    count: int = Field(description="Tasks on this page.")
    tasks: list[Task]
    continuation: str | None = Field(description="Pass back for the next page; null: this was the last page.")
    window: WindowOut | None = None
    tz: str = Field("UTC", description=_TZ_OUT)


class SummaryTotals(ToolOutput):
    total: int
    total_pending: int
    total_completed: int
    pending_high_priority: int
    overdue: int


class SummaryGroup(ToolOutput):
    group: str = Field(description="The group's value (the status, category, priority or date bucket).")
    count: int
    pending: int
    completed: int
    high_priority: int
    status: str | None = None
    category: str | None = None
    priority: str | None = None
    date: str | None = None


class TasksSummary(ToolOutput):
    group_by: str
    tz: str
    totals: SummaryTotals
    grouped_data: list[SummaryGroup]
    truncated: bool = Field(False, description="true if you have more than 10,000 tasks and only those were counted.")


class BulkItem(ToolOutput):
    """One task of a delete preview, with what a person decides on: its priority and when it is due."""

    id: str
    title: str
    status: Status
    priority: Priority = "medium"
    category: str | None = None
    due_date: str | None = Field(None, description="UTC, ISO 8601 (…Z).")
    due_date_local: str | None = Field(None, description="due_date in the user's time zone (with offset).")
    due_all_day: bool = False


class BulkDeleteResult(ToolOutput):
    dry_run: bool
    count: int
    tasks: list[BulkItem]
    confirmation_token: str | None = None
    expires_at: str | None = None
    deleted_count: int = 0
    deleted_ids: list[str] = Field(default_factory=list)
    unmatched_ids: list[str] = Field(
        default_factory=list,
        description="task_ids given that are not among these tasks: not yours, unknown, deleted or outside the"
        " other filters. Nothing happens to them.",
    )
    tz: str = Field("UTC", description=_TZ_OUT)
    message: str


class StatusChange(ToolOutput):
    id: str
    ok: bool
    status: Status | None = None
    error: str | None = None


class UpdateStatusResult(ToolOutput):
    updated: int
    unchanged: int
    not_found: list[str]
    results: list[StatusChange]
    message: str


def task_out(doc: dict[str, Any], tz: str = "UTC") -> Task:
    """The tool output of a stored task, its times also shown in the user's zone `tz`."""
    return Task(
        id=doc["id"],
        user_id=doc["user_id"],
        title=doc["title"],
        description=doc.get("description", ""),
        category=doc.get("category"),
        priority=doc.get("priority", "medium"),
        status=doc.get("status", "pending"),
        due_date=doc.get("due_date"),
        due_date_local=local_iso(doc.get("due_date"), tz),
        due_all_day=bool(doc.get("due_all_day")),
        created_at=doc["created_at"],
        updated_at=doc["updated_at"],
        completed_at=doc.get("completed_at"),
        completed_at_local=local_iso(doc.get("completed_at"), tz),
        deleted=bool(doc.get("deleted")),
        deleted_at=doc.get("deleted_at"),
        tags=list(doc.get("tags", [])),
    )


def bulk_item(doc: dict[str, Any], tz: str) -> BulkItem:
    """A preview line of a stored task (the fields the preview's scan projects)."""
    return BulkItem(
        id=doc["id"],
        title=doc["title"],
        status=doc.get("status", "pending"),
        priority=doc.get("priority", "medium"),
        category=doc.get("category"),
        due_date=doc.get("due_date"),
        due_date_local=local_iso(doc.get("due_date"), tz),
        due_all_day=bool(doc.get("due_all_day")),
    )
