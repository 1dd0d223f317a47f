"""The mobile app's task API: `GET/POST /api/tasks`, `GET/PATCH/DELETE /api/tasks/{task_id}`.

Each route serves the task tool of the same work (get_all_tasks, create_task, get_task, update_task,
delete_task) with the tool's own input model, so REST, MCP and per-tool HTTP validate alike. Query
strings carry no JSON types, so list filters get a parameters model of their own (lax booleans and
numbers) that is turned into the tool's input.
"""

from __future__ import annotations

from typing import cast

from pydantic import Field

from shared.tasks import tools
from shared.tasks.models import (
    MAX_CATEGORY,
    MAX_DATE,
    MAX_DESCRIPTION,
    MAX_ID,
    MAX_QUERY,
    MAX_TAGS,
    MAX_TITLE,
    CreateTaskRequest,
    DeleteTaskResult,
    GetTaskRequest,
    ListTasksRequest,
    Priority,
    Status,
    StatusFilter,
    TaskIdRequest,
    TaskList,
    TaskResult,
    UpdateTaskRequest,
)
from shared.tools.routes import (
    CONTINUATION_MAX,
    CONTINUATION_PATTERN,
    Answer,
    RouteBody,
    RouteCall,
    RouteParams,
    RouteSet,
    as_model,
)

routes = RouteSet("tasks")

_TASK_ID = "The task's id (from POST /api/tasks or a list)."


class TaskListParams(RouteParams):
    status: StatusFilter = Field("all", description="pending, completed or all.")
    category: str | None = Field(None, max_length=MAX_CATEGORY, description="Only this category (case ignored).")
    priority: Priority | None = Field(None, description="Only this priority.")
    limit: int = Field(100, ge=1, le=100, description="Tasks per page (1..100).")
    include_deleted: bool = Field(False, description="Include soft-deleted tasks.")
    q: str | None = Field(
        None, max_length=MAX_QUERY, description="Words found in title, description or tags (case ignored)."
    )
    due_from: str | None = Field(
        None,
        max_length=MAX_DATE,
        description="Due on or after: a date (2026-12-01, from its start in tz) or an ISO timestamp (no zone: tz).",
    )
    due_to: str | None = Field(
        None,
        max_length=MAX_DATE,
        description="Due up to: a date (its whole day in tz included) or an ISO timestamp (exclusive; no zone: tz).",
    )
    tz: str | None = Field(
        None, max_length=64, description="IANA time zone of due_from/due_to (default: your stored zone, else UTC)."
    )
    continuation: str | None = Field(
        None,
        max_length=CONTINUATION_MAX,
        pattern=CONTINUATION_PATTERN,
        description="The continuation of the previous page.",
    )


class TaskIdParams(RouteParams):
    task_id: str = Field(min_length=1, max_length=MAX_ID, description=_TASK_ID)


class GetTaskParams(TaskIdParams):
    include_deleted: bool = Field(False, description="Also find a task that was deleted (soft delete).")


class UpdateTaskBody(RouteBody):
    """Only the fields sent change; `due_date: null` clears the due date, `category: null` the category."""

    title: str | None = Field(None, min_length=1, max_length=MAX_TITLE, description="New title.")
    description: str | None = Field(None, max_length=MAX_DESCRIPTION, description="New description.")
    category: str | None = Field(None, max_length=MAX_CATEGORY, description="New category (null clears it).")
    priority: Priority | None = Field(None, description="New priority: low, medium or high.")
    status: Status | None = Field(None, description="pending or completed (completing sets completed_at).")
    due_date: str | None = Field(None, max_length=MAX_DATE, description="ISO 8601 date or time; null clears it.")
    tags: list[str] | None = Field(None, max_length=MAX_TAGS, description="The new full tag list.")
    user_id: str | None = Field(None, max_length=128, description="Your own user id (optional; else 403).")


@routes.route("GET", "tasks", name="tasks_list")
async def list_tasks(call: RouteCall, *, params: TaskListParams) -> TaskList:
    """List your tasks, newest first, with filters and continuation paging.

    `status` pending|completed|all (default all), `category`, `priority`, `q` (words in title, description or
    tags), `due_from`/`due_to` (dates are whole days in `tz`, default your stored zone; with either, tasks with
    a due date in the range only, earliest due first, and the answer's `window` is the UTC range), `limit`
    (default 100), `include_deleted`; pass `continuation` from the previous page for the next one (null: last
    page, and a continuation only continues the same filters).
    """
    args = as_model(ListTasksRequest, params.model_dump())
    return await tools.list_tasks(call.tool_context(), args)


@routes.route("POST", "tasks", name="tasks_create", status=201, errors=(403,), response=TaskResult)
async def create(call: RouteCall, *, body: CreateTaskRequest) -> Answer:
    """Create a task: 201 with the task and its Location.

    `title` is required; `description`, `category`, `priority` (low|medium|high, default medium),
    `due_date` (ISO 8601; without a zone it is read in your time zone; a date alone is due by its end)
    and `tags` are optional.
    """
    made = cast(TaskResult, await tools.create_task(call.tool_context(), body))
    return Answer(made, 201, {"Location": f"/api/tasks/{made.task.id}"})


@routes.route("GET", "tasks/{task_id}", name="tasks_get", errors=(404,))
async def get(call: RouteCall, *, params: GetTaskParams) -> TaskResult:
    """Get one of your tasks. Another user's id, an unknown one or a deleted one (without include_deleted) is 404."""
    args = as_model(GetTaskRequest, {"task_id": params.task_id, "include_deleted": params.include_deleted})
    return cast(TaskResult, await tools.get_task(call.tool_context(), args))


@routes.route("PATCH", "tasks/{task_id}", name="tasks_update", errors=(403, 404))
async def update(call: RouteCall, *, params: TaskIdParams, body: UpdateTaskBody) -> TaskResult:
    """Change some fields of one of your tasks; fields not sent stay as they are.

    Completing (`status: completed`) records `completed_at`; `pending` clears it. Another user's id is 404.
    """
    changes = body.model_dump(exclude_unset=True)
    args = as_model(UpdateTaskRequest, {**changes, "task_id": params.task_id})
    return cast(TaskResult, await tools.update_task(call.tool_context(), args))


@routes.route("DELETE", "tasks/{task_id}", name="tasks_delete", errors=(404,))
async def delete(call: RouteCall, *, params: TaskIdParams) -> DeleteTaskResult:
    """Delete one of your tasks (soft delete: gone from lists; `GET ?include_deleted=true` still shows it).

    Another user's id, an unknown one or an already deleted one is 404.
    """
    args = as_model(TaskIdRequest, {"task_id": params.task_id})
    return cast(DeleteTaskResult, await tools.delete_task(call.tool_context(), args))
