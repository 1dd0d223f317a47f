"""The task tools' logic: one owner's tasks (workspace + user), dates in the user's time zone."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from shared.core.errors import Conflict, Forbidden, NotFound, ValidationFailed
from shared.identity.models import Principal
from shared.tasks import confirmation
from shared.tasks.date_ranges import Window, between, user_zone, window
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
    StatusChange,
    SummaryGroup,
    SummaryTotals,
    TaskIdRequest,
    TaskList,
    TaskResult,
    TasksSummary,
    UpdateStatusResult,
    UpdateTaskRequest,
    UpdateTaskStatusRequest,
    WindowOut,
    bulk_item,
    task_out,
)
from shared.tasks.store import PROFILE_ID, TaskStore, owner_key

MAX_BULK_MATCH = 500
SUMMARY_CAP = 10_000
CONFIRMATION_TTL = timedelta(minutes=5)
PENDING_RECORD_TTL_SECONDS = 3_900  # the token's 5 minutes + an hour to answer late or replayed tokens clearly
_ETAG_RETRIES = 5
_FAR_PAST = "0001-01-01T00:00:00.000000Z"
_FAR_FUTURE = "9999-12-31T23:59:59.999999Z"  # an open end of a custom range: later than every stored instant
# What a delete preview shows of each task (what a person decides on) and what the confirmation compares.
_PREVIEW_FIELDS = ("id", "title", "status", "priority", "category", "due_date", "due_all_day", "_etag")
_PREVIEW_AGAIN = "Call bulk_delete_tasks with require_confirmation=true again and confirm the new preview."

Doc = dict[str, Any]


def iso(moment: datetime) -> str:
    """The one stored form of an instant: UTC, microseconds, `Z` (fixed width, so strings sort as times)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _refuse(field: str, problem: str, hint: str) -> ValidationFailed:
    return ValidationFailed.on_field(
        field,
        problem,
        f"{field}: {problem}",
        suggestions=[hint],
    )


def parse_due(text: str, zone: ZoneInfo) -> tuple[str, bool]:
    """(stored UTC due instant, whether it was a whole day) for a due_date argument.

    A date alone means "by the end of that day" in the user's zone (23:59:59.999999 local), so the task
    is due `today` all day and becomes overdue only when the day is over. A timestamp without a zone is
    read in the user's zone; one with a zone is converted to UTC.
    """
    value = text.strip()
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            return iso(datetime.combine(day, time(23, 59, 59, 999_999), tzinfo=zone)), True
        moment = datetime.fromisoformat(value)
        moment = moment.replace(tzinfo=zone) if moment.tzinfo is None else moment
        return iso(moment), False
    except (ValueError, OverflowError):
        raise _refuse(
            "due_date",
            f"{text!r} is not an ISO 8601 date or timestamp",
            "Pass 2026-11-30, 2026-11-30T17:00:00 (your zone) or 2026-11-30T17:00:00+01:00.",
        ) from None


def category_key(category: str | None) -> str | None:
    """The category as filters compare it: trimmed, inner spaces collapsed, lower case."""
    if category is None:
        return None
    key = " ".join(category.split()).lower()
    return key or None


def _not_found(task_id: str) -> NotFound:
    return NotFound(
        f"task {task_id!r} not found",
        details={"task_id": task_id},
        recovery_suggestions=["List your tasks with get_all_tasks or search_tasks to find the right id."],
    )


def _window_out(w: Window, tz: str) -> WindowOut:
    return WindowOut(start=iso(w.start) if w.start else None, end=iso(w.end) if w.end else None, label=w.label, tz=tz)


def _bounds(w: Window) -> dict[str, str]:
    """The query parameters of a window; an open side is a bound no stored instant passes."""
    return {"@start": iso(w.start) if w.start else _FAR_PAST, "@end": iso(w.end) if w.end else _FAR_FUTURE}


def _preview_order(rows: list[Doc], task_ids: list[str] | None) -> list[Doc]:
    """The preview's order, the same on every call: the order the ids were given in, else by title."""
    if task_ids:
        rank = {task_id: i for i, task_id in enumerate(task_ids)}
        return sorted(rows, key=lambda r: rank.get(r["id"], len(rank)))
    return sorted(rows, key=lambda r: (str(r.get("title", "")).casefold(), r["id"]))


def _apply_update(doc: Doc, args: UpdateTaskRequest, given: set[str], due: tuple[str | None, bool]) -> None:
    """Copy the fields update_task was given (except status) onto the task document."""
    for field in ("title", "description", "priority"):
        if field in given:
            doc[field] = getattr(args, field)
    if "category" in given:
        category = " ".join(args.category.split()) if args.category and args.category.strip() else None
        doc["category"], doc["category_key"] = category, category_key(category)
    if "tags" in given and args.tags is not None:
        doc["tags"] = args.tags
    if "due_date" in given:
        doc["due_date"], doc["due_all_day"] = due
    doc["search_text"] = search_text(doc)


def search_text(doc: Doc) -> str:
    """What search_tasks matches: title, description and tags, lower-cased, one per line.

    Queries hold no line breaks (control characters are refused), so a match never spans two fields.
    One precomputed field keeps the search one CONTAINS per task (the local server compiles
    LOWER/OR chains slowly; on Cosmos it is also the cheaper filter).
    """
    parts = [doc.get("title", ""), doc.get("description", ""), *doc.get("tags", [])]
    return "\n".join(str(p).lower() for p in parts)


def _date_bounds(now: datetime, tz: str) -> list[tuple[str, str]]:
    """(exclusive end, group) of the summary's date groups after `overdue`, days in the user's zone."""
    names = (("yesterday", "past"), ("today", "today"), ("tomorrow", "tomorrow"), ("this_week", "this_week"))
    return [(_bounds(window(name, now=now, tz=tz))["@end"], label) for name, label in names]


def _date_bucket(row: Doc, now: str, bounds: list[tuple[str, str]]) -> str:
    """overdue (pending, due before now), past (due before today), today, tomorrow, this_week, later, no_due_date."""
    due = row.get("due_date")
    if not isinstance(due, str):
        return "no_due_date"
    if due < now and row.get("status") == "pending":
        return "overdue"
    return next((label for end, label in bounds if due < end), "later")


class TaskService:
    def __init__(self, store: TaskStore, clock: Callable[[], datetime]) -> None:
        self.store = store
        self.clock = clock

    # ---- identity and profile -------------------------------------------------------------------

    @staticmethod
    def owner(principal: Principal, user_id: str | None = None) -> str:
        if user_id is not None and user_id != principal.user_id:
            raise Forbidden.on_field(
                "user_id",
                "is not the caller's user id",
                "user_id is not you: tasks are always the caller's own",
                suggestions=["Omit user_id (it defaults to you)."],
            )
        return owner_key(principal.workspace_id, principal.user_id)

    async def _tz(self, owner: str) -> str:
        profile = await self.store.read(owner, PROFILE_ID)
        return str(profile.get("tz") or "UTC") if profile else "UTC"

    async def _profile(self, owner: str, user_id: str) -> Doc:
        """The profile, created (UTC, a fresh signing key) on first need."""
        profile = await self.store.read(owner, PROFILE_ID)
        if profile is not None and profile.get("confirm_key"):
            return profile
        if profile is not None:  # written before keys existed: add one
            profile["confirm_key"] = secrets.token_hex(32)
            try:
                return await self.store.replace(profile, profile.get("_etag"))
            except Conflict:
                return await self._profile(owner, user_id)
        return await self.store.create_or_get(
            {
                "id": PROFILE_ID,
                "owner": owner,
                "type": "profile",
                "user_id": user_id,
                "tz": "UTC",
                "confirm_key": secrets.token_hex(32),
                "created_at": iso(self.clock()),
            }
        )

    async def set_preferences(self, principal: Principal, args: SetPreferencesRequest) -> Preferences:
        owner = self.owner(principal, args.user_id)
        zone = user_zone(args.tz)  # VALIDATION_ERROR (field tz) for an unknown zone
        for _ in range(_ETAG_RETRIES):
            profile = await self._profile(owner, principal.user_id)
            profile["tz"] = zone.key
            profile["updated_at"] = iso(self.clock())
            try:
                await self.store.replace(profile, profile.get("_etag"))
                break
            except Conflict:
                continue
        else:
            raise Conflict("the profile is busy; retry", recovery_suggestions=["Call set_task_preferences again."])
        return Preferences(
            user_id=principal.user_id,
            tz=zone.key,
            now_local=self._now_local(zone.key),
            message=f"Dates are now read in {zone.key}.",
        )

    def _now_local(self, tz: str) -> str:
        return self.clock().astimezone(user_zone(tz)).replace(microsecond=0).isoformat()

    async def get_preferences(self, principal: Principal, args: GetPreferencesRequest) -> Preferences:
        """The caller's zone and the time there now (UTC until set; reading creates no profile)."""
        tz = await self._tz(self.owner(principal, args.user_id))
        return Preferences(
            user_id=principal.user_id, tz=tz, now_local=self._now_local(tz), message=f"Dates are read in {tz}."
        )

    # ---- single tasks -------------------------------------------------------------------------

    async def create_task(self, principal: Principal, args: CreateTaskRequest) -> TaskResult:
        owner = self.owner(principal, args.user_id)
        now = iso(self.clock())
        tz = await self._tz(owner)
        due, all_day = (None, False)
        if args.due_date:
            due, all_day = parse_due(args.due_date, user_zone(tz))
        category = " ".join(args.category.split()) if args.category and args.category.strip() else None
        doc: Doc = {
            "id": str(uuid.uuid4()),
            "owner": owner,
            "type": "task",
            "user_id": principal.user_id,
            "title": args.title,
            "description": args.description,
            "category": category,
            "category_key": category_key(category),
            "priority": args.priority,
            "status": "pending",
            "due_date": due,
            "due_all_day": all_day,
            "created_at": now,
            "updated_at": now,
            "completed_at": None,
            "deleted": False,
            "deleted_at": None,
            "tags": args.tags,
        }
        doc["search_text"] = search_text(doc)
        created = await self.store.create(doc)
        return TaskResult(task=task_out(created, tz), tz=tz, message=f"Created task {created['id']}.")

    async def _live(self, owner: str, task_id: str, *, include_deleted: bool = False) -> Doc:
        doc = await self.store.read_task(owner, task_id)
        if doc is None or (doc.get("deleted") and not include_deleted):
            raise _not_found(task_id)
        return doc

    async def get_task(self, principal: Principal, args: GetTaskRequest) -> TaskResult:
        owner = self.owner(principal, args.user_id)
        doc, tz = await asyncio.gather(
            self._live(owner, args.task_id, include_deleted=args.include_deleted), self._tz(owner)
        )
        return TaskResult(
            task=task_out(doc, tz), tz=tz, message="Deleted task." if doc.get("deleted") else "Task found."
        )

    async def _change(self, owner: str, task_id: str, apply: Callable[[Doc], bool]) -> tuple[Doc, bool]:
        """Read-modify-write with the etag, retried on a concurrent change; (doc, whether it changed)."""
        for _ in range(_ETAG_RETRIES):
            doc = await self._live(owner, task_id)
            if not apply(doc):
                return doc, False
            doc["updated_at"] = iso(self.clock())
            try:
                return await self.store.replace(doc, doc.get("_etag")), True
            except NotFound:
                raise _not_found(task_id) from None
            except Conflict:
                await asyncio.sleep(0.005 * secrets.randbelow(10))
        raise Conflict(
            f"task {task_id!r} is being changed by someone else; retry",
            details={"task_id": task_id},
            recovery_suggestions=["Read the task again with get_task, then retry the change."],
        )

    def _set_status(self, doc: Doc, status: str) -> bool:
        if doc.get("status") == status:
            return False
        doc["status"] = status
        doc["completed_at"] = iso(self.clock()) if status == "completed" else None
        return True

    async def update_task(self, principal: Principal, args: UpdateTaskRequest) -> TaskResult:
        owner = self.owner(principal, args.user_id)
        given = args.model_fields_set - {"task_id", "user_id"}
        if not given:
            raise _refuse("(root)", "nothing to change", "Pass at least one of title, description, category, ...")
        for field in ("title", "priority", "status", "tags", "description"):
            if field in given and getattr(args, field) is None:
                raise _refuse(field, "may not be null", f"Omit {field} to keep it, or pass a value.")
        due: tuple[str | None, bool] = (None, False)
        tz = await self._tz(owner)
        if "due_date" in given and args.due_date:
            due = parse_due(args.due_date, user_zone(tz))

        def apply(doc: Doc) -> bool:
            before = dict(doc)
            _apply_update(doc, args, given, due)
            if "status" in given and args.status:
                self._set_status(doc, args.status)
            return doc != before

        doc, changed = await self._change(owner, args.task_id, apply)
        return TaskResult(task=task_out(doc, tz), tz=tz, message="Task updated." if changed else "Nothing changed.")

    async def delete_task(self, principal: Principal, args: TaskIdRequest) -> DeleteTaskResult:
        owner = self.owner(principal, args.user_id)
        now = iso(self.clock())

        def apply(doc: Doc) -> bool:
            doc["deleted"], doc["deleted_at"] = True, now
            return True

        doc, _ = await self._change(owner, args.task_id, apply)
        return DeleteTaskResult(
            success=True,
            task_id=doc["id"],
            deleted_at=doc["deleted_at"],
            message="Task deleted (it stays readable with get_task include_deleted=true).",
        )

    # ---- lists ---------------------------------------------------------------------------------

    @staticmethod
    def _filters(
        *,
        status: str | None = None,
        category: str | None = None,
        priority: str | None = None,
        include_deleted: bool = False,
    ) -> tuple[list[str], dict[str, Any]]:
        where: list[str] = [] if include_deleted else ["c.deleted = false"]
        params: dict[str, Any] = {}
        if status and status != "all":
            where.append("c.status = @status")
            params["@status"] = status
        key = category_key(category)
        if key:
            where.append("c.category_key = @category")
            params["@category"] = key
        if priority:
            where.append("c.priority = @priority")
            params["@priority"] = priority
        return where, params

    async def _page(
        self,
        owner: str,
        where: list[str],
        params: dict[str, Any],
        order_by: str,
        args: Any,
        window_out: WindowOut | None = None,
        *,
        tz: str | None = None,
    ) -> TaskList:
        """One page of the owner's tasks matching `where`, with `args.limit` and `args.continuation`; times are
        also given in the user's zone (`tz`, else the window's, else read beside the page)."""
        page = self.store.page(
            owner, " AND ".join(where), params, order_by=order_by, limit=args.limit, continuation=args.continuation
        )
        known = window_out.tz if window_out is not None else tz
        if known is not None:
            (docs, token), zone = await page, known
        else:
            (docs, token), zone = await asyncio.gather(page, self._tz(owner))
        return TaskList(
            count=len(docs), tasks=[task_out(d, zone) for d in docs], continuation=token, window=window_out, tz=zone
        )

    async def get_all_tasks(self, principal: Principal, args: GetAllTasksRequest) -> TaskList:
        owner = self.owner(principal, args.user_id)
        where, params = self._filters(
            status=args.status, category=args.category, priority=args.priority, include_deleted=args.include_deleted
        )
        return await self._page(owner, where, params, "c.created_at DESC", args)

    async def list_tasks(self, principal: Principal, args: ListTasksRequest) -> TaskList:
        """get_all_tasks' filters, plus `q` (words in the search text) and a due range [due_from, due_to] read in
        `tz` (else the stored zone). With a due range the page is in due order, earliest first, and names its
        window; tasks without a due date are left out then."""
        owner = self.owner(principal, args.user_id)
        where, params = self._filters(
            status=args.status, category=args.category, priority=args.priority, include_deleted=args.include_deleted
        )
        if args.q:
            where.append("CONTAINS(c.search_text, @q)")
            params["@q"] = args.q.lower()
        tz = args.tz or await self._tz(owner)
        zone = user_zone(tz)  # a bad tz is refused naming it, with or without a range
        if args.due_from is None and args.due_to is None:
            return await self._page(owner, where, params, "c.created_at DESC", args, tz=tz)
        w = between(args.due_from, args.due_to, zone, fields=("due_from", "due_to"))
        where.append("c.due_date >= @start AND c.due_date < @end")
        params.update(_bounds(w))
        return await self._page(owner, where, params, "c.due_date ASC", args, _window_out(w, tz))

    async def search_tasks(self, principal: Principal, args: SearchTasksRequest) -> TaskList:
        owner = self.owner(principal, args.user_id)
        where, params = self._filters(status=args.status)
        where.append("CONTAINS(c.search_text, @q)")
        params["@q"] = args.query.lower()
        return await self._page(owner, where, params, "c.created_at DESC", args)

    async def _window(self, owner: str, range_name: str, start: str | None, end: str | None) -> tuple[Window, str]:
        tz = await self._tz(owner)
        return window(range_name, now=self.clock(), tz=tz, custom_start=start, custom_end=end), tz

    async def get_completed_tasks(self, principal: Principal, args: GetCompletedTasksRequest) -> TaskList:
        owner = self.owner(principal, args.user_id)
        where, params = self._filters(status="completed", category=args.category)
        w_out = None
        if args.date_range:
            w, tz = await self._window(owner, args.date_range, args.custom_start, args.custom_end)
            where.append("c.completed_at >= @start AND c.completed_at < @end")
            params.update(_bounds(w))
            w_out = _window_out(w, tz)
        return await self._page(owner, where, params, "c.completed_at DESC", args, w_out)

    async def get_tasks_by_date(self, principal: Principal, args: GetTasksByDateRequest) -> TaskList:
        """One range query on the owner's partition: `date_type` in [start, end), ordered by it."""
        owner = self.owner(principal, args.user_id)
        w, tz = await self._window(owner, args.date_range, args.custom_start, args.custom_end)
        where, params = self._filters(status=args.status)
        field = args.date_type  # a Literal: one of three field names, safe in the query text
        where.append(f"c.{field} >= @start AND c.{field} < @end")
        params.update(_bounds(w))
        return await self._page(owner, where, params, f"c.{field} ASC", args, _window_out(w, tz))

    # ---- summary -------------------------------------------------------------------------------

    async def get_tasks_summary(self, principal: Principal, args: GetTasksSummaryRequest) -> TasksSummary:
        owner = self.owner(principal, args.user_id)
        tz = await self._tz(owner)
        rows, truncated = await self.store.scan(
            owner, "c.deleted = false", {}, ("status", "category", "priority", "due_date"), SUMMARY_CAP
        )
        now = self.clock()
        now_s = iso(now)
        bounds = _date_bounds(now, tz)

        def key(row: Doc) -> str:
            if args.group_by == "category":
                return str(row.get("category") or "uncategorised")
            if args.group_by == "date":
                return _date_bucket(row, now_s, bounds)
            return str(row.get(args.group_by) or "")

        # A category groups case-insensitively and shows its most used spelling (on a tie the one that sorts
        # first, "Work" before "work"): the scan's order is not the order tasks were written in.
        groups: dict[str, Counter[str]] = {}
        spellings: dict[str, Counter[str]] = {}
        for row in rows:
            label = key(row)
            gkey = label.lower() if args.group_by == "category" else label
            spellings.setdefault(gkey, Counter())[label] += 1
            c = groups.setdefault(gkey, Counter())
            c["count"] += 1
            c[str(row.get("status"))] += 1
            if row.get("priority") == "high" and row.get("status") == "pending":
                c["high"] += 1
        order = {
            "status": ["pending", "completed"],
            "priority": ["high", "medium", "low"],
            "date": ["overdue", "today", "tomorrow", "this_week", "later", "past", "no_due_date"],
        }.get(args.group_by)
        shown = {k: min(c, key=lambda label: (-c[label], label)) for k, c in spellings.items()}
        keys = [k for k in order if k in groups] if order else sorted(groups, key=lambda k: (-groups[k]["count"], k))
        grouped = [
            SummaryGroup(
                group=shown[k],
                count=groups[k]["count"],
                pending=groups[k]["pending"],
                completed=groups[k]["completed"],
                high_priority=groups[k]["high"],
                **{args.group_by: shown[k]},
            )
            for k in keys
        ]
        pending = [r for r in rows if r.get("status") == "pending"]
        totals = SummaryTotals(
            total=len(rows),
            total_pending=len(pending),
            total_completed=sum(1 for r in rows if r.get("status") == "completed"),
            pending_high_priority=sum(1 for r in pending if r.get("priority") == "high"),
            overdue=sum(1 for r in pending if isinstance(r.get("due_date"), str) and r["due_date"] < now_s),
        )
        return TasksSummary(group_by=args.group_by, tz=tz, totals=totals, grouped_data=grouped, truncated=truncated)

    # ---- bulk ----------------------------------------------------------------------------------

    async def update_task_status(self, principal: Principal, args: UpdateTaskStatusRequest) -> UpdateStatusResult:
        owner = self.owner(principal, args.user_id)
        gate = asyncio.Semaphore(10)

        async def one(task_id: str) -> StatusChange:
            async with gate:
                try:
                    doc, changed = await self._change(owner, task_id, lambda d: self._set_status(d, args.new_status))
                except NotFound:
                    return StatusChange(id=task_id, ok=False, error="NOT_FOUND")
                except Conflict:
                    return StatusChange(id=task_id, ok=False, error="CONFLICT")
                return StatusChange(
                    id=task_id, ok=changed, status=doc["status"], error=None if changed else "UNCHANGED"
                )

        results = await asyncio.gather(*(one(i) for i in args.task_ids))
        updated = sum(1 for r in results if r.ok)
        unchanged = sum(1 for r in results if r.error == "UNCHANGED")
        missing = [r.id for r in results if r.error == "NOT_FOUND"]
        return UpdateStatusResult(
            updated=updated,
            unchanged=unchanged,
            not_found=missing,
            results=list(results),
            message=f"{updated} task(s) set to {args.new_status}, {unchanged} already were, {len(missing)} not found.",
        )

    async def _selection(self, owner: str, args: BulkDeleteTasksRequest) -> tuple[list[Doc], str]:
        """The tasks the selection matches now (at most MAX_BULK_MATCH, in the preview's order) and a
        fingerprint of the selection."""
        if not (args.task_ids or args.status or args.category or args.completed_before):
            raise _refuse(
                "task_ids",
                "give task_ids and/or status, category or completed_before",
                "Say which tasks to delete: ids, a status, a category or completed_before.",
            )
        where, params = self._filters(status=args.status, category=args.category)
        if args.task_ids:
            where.append("ARRAY_CONTAINS(@ids, c.id)")
            params["@ids"] = args.task_ids
        before = None
        if args.completed_before:
            zone = user_zone(await self._tz(owner))
            value = args.completed_before.strip()
            try:
                if len(value) == 10:
                    moment = datetime.combine(date.fromisoformat(value), time(0), tzinfo=zone)
                else:
                    moment = datetime.fromisoformat(value)
                    moment = moment.replace(tzinfo=zone) if moment.tzinfo is None else moment
                before = iso(moment)
            except (ValueError, OverflowError):
                raise _refuse(
                    "completed_before", f"{value!r} is not an ISO 8601 date or timestamp", "Pass 2026-11-01."
                ) from None
            where.append("IS_STRING(c.completed_at) AND c.completed_at < @before")
            params["@before"] = before
        rows, more = await self.store.scan(owner, " AND ".join(where), params, _PREVIEW_FIELDS, MAX_BULK_MATCH)
        if more:
            raise _refuse(
                "task_ids",
                f"the selection matches more than {MAX_BULK_MATCH} tasks",
                "Narrow it (a category, a status, completed_before or explicit task_ids) and preview again.",
            )
        fingerprint = hashlib.sha256(
            json.dumps(
                [sorted(args.task_ids or []), args.status, category_key(args.category), before], separators=(",", ":")
            ).encode()
        ).hexdigest()
        return _preview_order(rows, args.task_ids), fingerprint

    async def bulk_delete_tasks(self, principal: Principal, args: BulkDeleteTasksRequest) -> BulkDeleteResult:
        owner = self.owner(principal, args.user_id)
        if args.require_confirmation:
            return await self._preview(owner, principal, args)
        return await self._confirm(owner, principal, args)

    async def _preview(self, owner: str, principal: Principal, args: BulkDeleteTasksRequest) -> BulkDeleteResult:
        if args.confirmation_token is not None:
            raise _refuse(
                "confirmation_token",
                "is only for require_confirmation=false",
                "To delete, call again with require_confirmation=false and this token.",
            )
        rows, fingerprint = await self._selection(owner, args)
        found = {r["id"] for r in rows}
        unmatched = [i for i in args.task_ids or [] if i not in found]
        if not rows:
            return BulkDeleteResult(
                dry_run=True,
                count=0,
                tasks=[],
                unmatched_ids=unmatched,
                tz=await self._tz(owner),
                message="No task matches: nothing to delete.",
            )
        profile = await self._profile(owner, principal.user_id)
        tz = str(profile.get("tz") or "UTC")
        items = [bulk_item(r, tz) for r in rows]
        ids = sorted(r["id"] for r in rows)
        issued = confirmation.issue(bytes.fromhex(profile["confirm_key"]), owner, ids, self.clock(), CONFIRMATION_TTL)
        await self.store.create(
            {
                "id": f"bulkdel-{issued.nonce}",
                "owner": owner,
                "type": "bulk_confirmation",
                "user_id": principal.user_id,
                "ids": ids,
                "selection": fingerprint,
                "expires_at": iso(issued.expires_at),
                "used": False,
                "ttl": PENDING_RECORD_TTL_SECONDS,
            }
        )
        return BulkDeleteResult(
            dry_run=True,
            count=len(items),
            tasks=items,
            confirmation_token=issued.token,
            expires_at=iso(issued.expires_at),
            unmatched_ids=unmatched,
            tz=tz,
            message=(
                f"{len(items)} task(s) would be deleted. Nothing was deleted."
                + (
                    f" {len(unmatched)} of the given ids match none of your tasks and are left out."
                    if unmatched
                    else ""
                )
                + " Show the list to the user; if they"
                " confirm, call bulk_delete_tasks again with the same selection, require_confirmation=false and"
                " this confirmation_token (valid 5 minutes, once)."
            ),
        )

    async def _confirm(self, owner: str, principal: Principal, args: BulkDeleteTasksRequest) -> BulkDeleteResult:
        token = args.confirmation_token
        forged = _refuse("confirmation_token", "is not a token this server issued to you", _PREVIEW_AGAIN)
        if not token:
            raise _refuse(
                "confirmation_token",
                "is required with require_confirmation=false",
                "Preview first with require_confirmation=true; it returns the token to confirm with.",
            )
        nonce = confirmation.peek_nonce(token)
        if nonce is None:
            raise forged
        profile = await self.store.read(owner, PROFILE_ID)
        pending = await self.store.read(owner, f"bulkdel-{nonce}")
        if not profile or not profile.get("confirm_key") or not pending or pending.get("type") != "bulk_confirmation":
            raise forged
        ids: list[str] = pending["ids"]
        # VALIDATION_ERROR for a token whose MAC does not match (edited or forged); CONFLICT once expired.
        confirmation.verify(bytes.fromhex(profile["confirm_key"]), token, owner, ids, self.clock())
        if pending.get("used"):
            raise Conflict(
                "This confirmation was already used.",
                details={"reason": "used"},
                recovery_suggestions=[_PREVIEW_AGAIN],
            )
        rows, fingerprint = await self._selection(owner, args)
        if fingerprint != pending.get("selection"):
            raise _refuse(
                "selection",
                "differs from the previewed selection (task_ids, status, category, completed_before)",
                "Send exactly the selection you previewed, or " + _PREVIEW_AGAIN[0].lower() + _PREVIEW_AGAIN[1:],
            )
        # Single use across workers: only one etag-checked replace of the pending record can win.
        pending["used"] = True
        pending["used_at"] = iso(self.clock())
        try:
            await self.store.replace(pending, pending.get("_etag"))
        except (Conflict, NotFound):
            raise Conflict(
                "This confirmation was already used.",
                details={"reason": "used"},
                recovery_suggestions=[_PREVIEW_AGAIN],
            ) from None
        if sorted(r["id"] for r in rows) != ids:
            raise Conflict(
                "The tasks matching this selection changed since the preview; nothing was deleted.",
                details={"reason": "changed", "previewed": len(ids), "matching_now": len(rows)},
                recovery_suggestions=[_PREVIEW_AGAIN],
            )
        now = iso(self.clock())
        gate = asyncio.Semaphore(10)

        async def one(row: Doc) -> str | None:
            async with gate:
                doc = await self.store.read_task(owner, row["id"])
                # Deleted only as previewed: an edit after the selection was read leaves the task alone.
                if doc is None or doc.get("deleted") or doc.get("_etag") != row.get("_etag"):
                    return None
                doc["deleted"], doc["deleted_at"], doc["updated_at"] = True, now, now
                try:
                    await self.store.replace(doc, doc["_etag"])
                except (Conflict, NotFound):
                    return None
                return str(doc["id"])

        done = [i for i in await asyncio.gather(*(one(r) for r in rows)) if i]
        skipped = len(rows) - len(done)
        tz = str(profile.get("tz") or "UTC")
        return BulkDeleteResult(
            dry_run=False,
            count=len(done),
            tasks=[bulk_item(r, tz) for r in rows if r["id"] in set(done)],
            tz=tz,
            deleted_count=len(done),
            deleted_ids=done,
            message=f"Deleted {len(done)} task(s)."
            + (f" {skipped} changed at the last moment and were kept." if skipped else ""),
        )
