"""The task tools of the chat-task-tools spec, plus create/get/update/delete and set_task_preferences."""

from __future__ import annotations

from shared.core.local_time import local_text
from shared.tasks.models import (
    BulkDeleteResult,
    BulkDeleteTasksRequest,
    CreateTaskRequest,
    DeleteTaskResult,
    GetAllTasksRequest,
    GetCompletedTasksRequest,
    GetPreferencesRequest,
    GetTaskRequest,
    GetTasksByDateRequest,
    GetTasksSummaryRequest,
    ListTasksRequest,
    Preferences,
    SearchTasksRequest,
    SetPreferencesRequest,
    Task,
    TaskIdRequest,
    TaskList,
    TaskResult,
    TasksSummary,
    UpdateStatusResult,
    UpdateTaskRequest,
    UpdateTaskStatusRequest,
)
from shared.tasks.service import TaskService
from shared.tasks.store import TaskStore
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolSet

toolset = ToolSet("tasks")


def _service(ctx: ToolContext) -> TaskService:
    return TaskService(TaskStore(ctx.deps.cosmos), ctx.deps.clock)


def _render_list(r: TaskList) -> str:
    """The text form of a list: due times in the user's zone, with the zone (never a bare UTC wall time)."""

    def due(t: Task) -> str:
        return f", due {local_text(t.due_date, r.tz, all_day=t.due_all_day)}" if t.due_date else ""

    lines = [f"- {t.title} [{t.status}, {t.priority}{due(t)}] (id {t.id})" for t in r.tasks[:50]]
    more = " More: pass continuation." if r.continuation else ""
    return f"{r.count} task(s) (times in {r.tz}).{more}\n" + "\n".join(lines)


@toolset.tool("create_task", title="Create a task", idempotent=False)
async def create_task(ctx: ToolContext, args: CreateTaskRequest) -> TaskResult:
    """Create a task for the user (title required; description, category, priority, due_date, tags optional).

    Use it when the user asks to add, note or remember something to do. A due_date without a zone is read
    in the user's time zone (set_task_preferences); a date alone means due by the end of that day. Returns
    the task with its id: tell the user it was created; use the id for get_task, update_task or delete_task.
    """
    return await _service(ctx).create_task(ctx.principal, args)


@toolset.tool("get_task", title="Show one task", read_only=True, idempotent=True)
async def get_task(ctx: ToolContext, args: GetTaskRequest) -> TaskResult:
    """Show one task by id (NOT_FOUND if it is not the user's, or deleted unless include_deleted=true).

    Use it to check a task's details before changing it. If you do not know the id, find it first with
    search_tasks or get_all_tasks.
    """
    return await _service(ctx).get_task(ctx.principal, args)


@toolset.tool("update_task", title="Change a task", idempotent=True)
async def update_task(ctx: ToolContext, args: UpdateTaskRequest) -> TaskResult:
    """Change some fields of one task; fields not given stay as they are (due_date or category null clears).

    Use it when the user edits a task (rename, re-prioritise, re-schedule, re-tag, complete or reopen).
    Setting status completed records completed_at; pending clears it. For many tasks' status at once use
    update_task_status. Returns the updated task: confirm the change to the user.
    """
    return await _service(ctx).update_task(ctx.principal, args)


@toolset.tool("delete_task", title="Delete a task", destructive=True, idempotent=False)
async def delete_task(ctx: ToolContext, args: TaskIdRequest) -> DeleteTaskResult:
    """Delete one task (soft delete: it disappears from lists; get_task with include_deleted still shows it).

    Use it only when the user clearly asked to delete this task; confirm which task first if in doubt. For
    several tasks use bulk_delete_tasks, which previews before deleting.
    """
    return await _service(ctx).delete_task(ctx.principal, args)


@toolset.tool("set_task_preferences", title="Set the user's time zone", idempotent=True)
async def set_task_preferences(ctx: ToolContext, args: SetPreferencesRequest) -> Preferences:
    """Set the user's IANA time zone (e.g. Europe/Berlin); every date range (today, this_week, ...) uses it.

    Use it when the user tells you where they are or that "today" looks wrong; the default is UTC.
    Then repeat the date question the user asked.
    """
    return await _service(ctx).set_preferences(ctx.principal, args)


@toolset.tool("get_task_preferences", title="Read the user's time zone", read_only=True, idempotent=True)
async def get_task_preferences(ctx: ToolContext, args: GetPreferencesRequest) -> Preferences:
    """The user's IANA time zone (UTC until set with set_task_preferences) and the current time there.

    Use it before working out a date the user said in words ("friday", "tomorrow evening"): days and
    times are the user's own, not UTC. Then pass due dates as local dates or times (see create_task).
    """
    return await _service(ctx).get_preferences(ctx.principal, args)


@toolset.tool("get_all_tasks", title="List tasks", read_only=True, idempotent=True, render=_render_list)
async def get_all_tasks(ctx: ToolContext, args: GetAllTasksRequest) -> TaskList:
    """List the user's tasks, newest first, filtered by status, category and priority.

    Use it for "show my tasks", "list pending tasks", "what tasks do I have". Pages hold up to `limit`
    tasks; when `continuation` is not null there are more: pass it back to get the next page. For words
    use search_tasks; for dates use get_tasks_by_date; for counts use get_tasks_summary.
    """
    return await _service(ctx).get_all_tasks(ctx.principal, args)


async def list_tasks(ctx: ToolContext, args: ListTasksRequest) -> TaskList:
    """GET /api/tasks (not a tool: agents have get_all_tasks, search_tasks and get_tasks_by_date): every filter
    of the phone's list screen in one call."""
    return await _service(ctx).list_tasks(ctx.principal, args)


@toolset.tool("search_tasks", title="Search tasks by words", read_only=True, idempotent=True, render=_render_list)
async def search_tasks(ctx: ToolContext, args: SearchTasksRequest) -> TaskList:
    """Find the user's tasks whose title, description or tags contain `query` (case ignored), newest first.

    Use it for "find the dentist task", "tasks mentioning John", or to get the id of a task the user names
    before updating or deleting it. Pass `continuation` back for more results.
    """
    return await _service(ctx).search_tasks(ctx.principal, args)


@toolset.tool("get_completed_tasks", title="List completed tasks", read_only=True, idempotent=True, render=_render_list)
async def get_completed_tasks(ctx: ToolContext, args: GetCompletedTasksRequest) -> TaskList:
    """List the tasks the user completed, most recent first, optionally in a date range of completion.

    Use it for "what did I finish today / this week / last week". Ranges are in the user's time zone
    (set_task_preferences); custom takes custom_start and custom_end. The answer's `window` shows the
    exact range used. Pass `continuation` back for more.
    """
    return await _service(ctx).get_completed_tasks(ctx.principal, args)


@toolset.tool("get_tasks_summary", title="Count tasks", read_only=True, idempotent=True)
async def get_tasks_summary(ctx: ToolContext, args: GetTasksSummaryRequest) -> TasksSummary:
    """Count the user's tasks: totals (total, pending, completed, pending high priority, overdue) and groups.

    Use it for "how many tasks do I have", "task summary", "what's my workload". group_by status,
    category, priority or date (overdue, today, tomorrow, this_week, later, past, no_due_date in the
    user's zone). To list the tasks behind a number use get_all_tasks or get_tasks_by_date.
    """
    return await _service(ctx).get_tasks_summary(ctx.principal, args)


@toolset.tool(
    "get_tasks_by_date",
    title="Tasks due (or created/completed) in a range",
    read_only=True,
    idempotent=True,
    render=_render_list,
)
async def get_tasks_by_date(ctx: ToolContext, args: GetTasksByDateRequest) -> TaskList:
    """List tasks whose due_date (or created_at / completed_at) falls in a range, earliest first.

    Use it for "what's due today / tomorrow / this week", "overdue tasks" (due before now). Ranges are
    whole days in the user's time zone (set_task_preferences; weeks start Monday); custom takes
    custom_start and custom_end. Only pending tasks unless status says otherwise. The answer's `window`
    shows the exact UTC range; pass `continuation` back for more.
    """
    return await _service(ctx).get_tasks_by_date(ctx.principal, args)


@toolset.tool("bulk_delete_tasks", title="Delete many tasks (preview, then confirm)", destructive=True)
async def bulk_delete_tasks(ctx: ToolContext, args: BulkDeleteTasksRequest) -> BulkDeleteResult:
    """Delete several tasks in two steps: preview, then confirm with the token the preview returned.

    Select by task_ids and/or status, category, completed_before (at least one; at most 500 matches).
    Step 1 (require_confirmation=true, the default) deletes nothing: it returns the count, the tasks and a
    confirmation_token valid 5 minutes. Show the list to the user and ask. Step 2, only after the user
    agreed: the same selection with require_confirmation=false and the confirmation_token; it deletes
    exactly the previewed tasks. If the tasks changed, the token expired or was used, nothing is deleted:
    preview again.
    """
    return await _service(ctx).bulk_delete_tasks(ctx.principal, args)


@toolset.tool("update_task_status", title="Complete or reopen tasks", idempotent=True)
async def update_task_status(ctx: ToolContext, args: UpdateTaskStatusRequest) -> UpdateStatusResult:
    """Set the status of 1..100 tasks to completed or pending (sets or clears completed_at).

    Use it for "mark X as done", "complete these 3 tasks", "reopen Y". Find ids first with search_tasks
    or get_all_tasks. The answer lists per id whether it changed, already had that status, or was not found.
    """
    return await _service(ctx).update_task_status(ctx.principal, args)
