"""Investigation records in Cosmos `investigations` (one partition per workspace), large tool outputs in Blob.

The record's id is the run id of its Durable run (shared.runs mints it: 32 hex), so an id that does
not look like one is NOT_FOUND without a read. Every read is a point read or a query inside the
caller's partition, so another workspace's investigation is invisible, and it answers exactly as an
unknown id does. Writes after creation are etag-checked replaces, retried on a lost race, so
concurrent activities never drop each other's changes. Outputs above the inline limit go to Blob
under `<workspace>/investigations/<id>/<call key>.txt` first; the record then names them.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, Field, ValidationError

from shared.core.errors import Conflict, NotFound, ValidationFailed
from shared.investigations.models import (
    MAX_INLINE_OUTPUT_CHARS,
    MAX_INLINE_TOTAL_CHARS,
    SUMMARY_FIELDS,
    CallEntry,
    InvestigationRecord,
    InvestigationSummary,
    Iteration,
    inline_chars,
)
from shared.runs.models import RUN_ID_PATTERN
from shared.storage.blob import BlobStore
from shared.storage.containers import ContainerSpec
from shared.storage.cosmos import CosmosContainer, CosmosDatabase

INVESTIGATIONS_CONTAINER = ContainerSpec(
    "investigations",
    "/workspace_id",
    "Alert investigations: alert, path, iterations of tool calls (large outputs in Blob), report; id = run id.",
    # Free text and tool outputs are never filtered on; leaving them out of the index saves RU on every write.
    excluded_paths=("/analysis/*", "/iterations/*", "/report/*"),
    default_ttl=-1,
)

T = TypeVar("T")
# Edits the record in place (returns None) or returns the new one; may be async.
Mutation = Callable[[InvestigationRecord], InvestigationRecord | Awaitable[InvestigationRecord | None] | None]

_RUN_ID = re.compile(RUN_ID_PATTERN)
_CALL_KEY = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$")
_MAX_ETAG_RETRIES = 50
_MAX_PAGE = 100
# Blob holds what the record cannot, but not without end: a tool answering more than this is cut.
MAX_BLOB_OUTPUT_BYTES = 4 * 1024 * 1024
# What metrics read of a record: its state, alert name, times, iteration count and each call's tool and error
# flag. Calls are narrowed in the query itself, so inline outputs (up to 768 KB a record) never leave Cosmos.
METRICS_SELECT = (
    "c.id, c.status, c.alert.name AS alert_name, c.created_at, c.timings.started_at AS started_at, "
    "c.timings.finished_at AS finished_at, ARRAY_LENGTH(c.iterations) AS iterations, "
    "ARRAY(SELECT VALUE [k.tool, k.is_error] FROM it IN c.iterations JOIN k IN it.calls) AS calls"
)


class StoredOutput(BaseModel):
    """Where one tool output went: `output` inline, or `output_ref` (a blob name) when it was large."""

    output: str | None = None
    output_ref: str | None = None
    output_bytes: int = Field(0, description="UTF-8 size of the output as the tool returned it.")
    truncated: bool = False


def now_iso() -> str:
    """UTC now with microseconds: records sort by it, so it must not tie within one process."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def valid_investigation_id(value: object) -> bool:
    """True for what could be a run id; anything else names no investigation."""
    return isinstance(value, str) and _RUN_ID.fullmatch(value) is not None


def valid_call_key(value: object) -> bool:
    """True for what could be a call's key ('i2-c3'); anything else names no call."""
    return isinstance(value, str) and _CALL_KEY.fullmatch(value) is not None


def _not_found(investigation_id: object) -> NotFound:
    # One body for an unknown id, another workspace's id and a malformed id, so none tells them apart.
    shown = investigation_id if valid_investigation_id(investigation_id) else None
    return NotFound(
        "no investigation with this id in this workspace",
        details={"investigation_id": shown},
        recovery_suggestions=["List this workspace's investigations for their ids."],
    )


def workspace_segment(workspace: str) -> str:
    """The workspace as one blob-name segment: quoting keeps '/' and '..' from reaching other prefixes."""
    if not workspace or len(workspace) > 255:
        raise ValidationFailed("workspace id must be 1-255 characters")
    return quote(workspace, safe="")


def output_blob_name(workspace: str, investigation_id: str, call_key: str) -> str:
    """`<workspace>/investigations/<id>/<call key>.txt`, the only names put_output writes and read_output reads."""
    return f"{workspace_segment(workspace)}/investigations/{investigation_id}/{call_key}.txt"


class InvestigationStore:
    """Per-workspace investigation records and their offloaded outputs; every call has a time limit."""

    def __init__(
        self,
        cosmos: CosmosDatabase,
        blobs: BlobStore,
        *,
        inline_output_bytes: int = 32 * 1024,
        timeout_seconds: float = 30.0,
    ) -> None:
        self._cosmos = cosmos
        self._blobs = blobs
        # The model caps inline text; a larger setting still offloads past that cap.
        self.inline_output_bytes = min(inline_output_bytes, MAX_INLINE_OUTPUT_CHARS)
        self._timeout = timeout_seconds

    async def container(self) -> CosmosContainer:
        """The `investigations` container (created on first use when the app bootstraps locally)."""
        return await self._cosmos.container(INVESTIGATIONS_CONTAINER.name)

    async def _limited(self, call: Awaitable[T]) -> T:
        async with asyncio.timeout(self._timeout):
            return await call

    # ---- records -----------------------------------------------------------------------------

    async def create(self, record: InvestigationRecord) -> InvestigationRecord:
        """Store a new record; Conflict when its id exists in the workspace (a retried activity: read it instead)."""
        if not valid_investigation_id(record.id):
            raise ValidationFailed.on_field(
                "id",
                "not a run id",
                "an investigation id is the run id of its Durable run (32 lowercase hex)",
            )
        container = await self.container()
        await self._limited(container.create(record.to_doc()))
        return record

    async def _load(self, workspace: str, investigation_id: str) -> tuple[InvestigationRecord, str]:
        if not valid_investigation_id(investigation_id) or not workspace:
            raise _not_found(investigation_id)
        container = await self.container()
        raw = await self._limited(container.read(investigation_id, workspace))
        # The partition already scopes the read; the field checks keep a foreign or foreign-typed doc out anyway.
        if raw is None or raw.get("type") != "investigation" or raw.get("workspace_id") != workspace:
            raise _not_found(investigation_id)
        return InvestigationRecord.model_validate(raw), str(raw.get("_etag", ""))

    async def get(self, workspace: str, investigation_id: str) -> InvestigationRecord:
        """The record, or NotFound (same body for unknown, malformed and other workspaces' ids)."""
        record, _ = await self._load(workspace, investigation_id)
        return record

    async def list_recent(
        self, workspace: str, limit: int = 20, continuation: str | None = None
    ) -> tuple[list[InvestigationRecord], str | None]:
        """One page of the workspace's records, newest first, and the token of the next page (None at the end)."""
        docs, token = await self._page(workspace, limit, continuation)
        return [InvestigationRecord.model_validate(d) for d in docs], token

    async def list_summaries(
        self, workspace: str, limit: int = 20, continuation: str | None = None
    ) -> tuple[list[InvestigationSummary], str | None]:
        """Like list_recent, with each item projected to its summary: a page never carries iterations or reports."""
        docs, token = await self._page(workspace, limit, continuation, SUMMARY_FIELDS)
        return [InvestigationSummary.of(d) for d in docs], token

    async def _page(
        self, workspace: str, limit: int, continuation: str | None, fields: tuple[str, ...] = ()
    ) -> tuple[list[dict[str, Any]], str | None]:
        if not workspace:
            return [], None
        container = await self.container()
        return await self._limited(
            container.query(
                workspace,
                "c.type = 'investigation'",
                order_by="c.created_at DESC",
                max_items=max(1, min(limit, _MAX_PAGE)),
                continuation=continuation,
                fields=fields,
            )
        )

    async def active(self, workspace: str, since: str) -> list[tuple[str, str | None]]:
        """(id, dedup_key) of the workspace's pending or running investigations created since `since` (ISO time),
        newest first; one page of at most 100 (the active cap's largest value)."""
        if not workspace:
            return []
        where = "c.type = 'investigation' AND (c.status = 'pending' OR c.status = 'running') AND c.created_at >= @since"
        container = await self.container()
        docs, _ = await self._limited(
            container.query(
                workspace,
                where,
                {"@since": since},
                order_by="c.created_at DESC",
                max_items=_MAX_PAGE,
                fields=("id", "dedup_key"),
            )
        )
        return [(str(d["id"]), d.get("dedup_key")) for d in docs]

    async def metrics_rows(
        self, workspace: str, *, since: str | None = None, alert_name: str | None = None, cap: int = 1000
    ) -> tuple[list[dict[str, Any]], bool]:
        """The workspace's investigations (newest first, at most `cap`), each narrowed to what metrics count
        (METRICS_SELECT: no output, argument or report is read), and whether older ones were left unread.

        `since` (ISO time) keeps those created at or after it; `alert_name` those of that alert name exactly.
        """
        if not workspace:
            return [], False
        where = "c.type = 'investigation'"
        params: dict[str, Any] = {}
        if since is not None:
            where += " AND c.created_at >= @since"
            params["@since"] = since
        if alert_name is not None:
            where += " AND c.alert.name = @alert_name"
            params["@alert_name"] = alert_name
        container = await self.container()
        rows: list[dict[str, Any]] = []
        token: str | None = None
        while len(rows) <= cap:  # one row past the cap says whether there were more
            page, token = await self._limited(
                container.query(
                    workspace,
                    where,
                    params,
                    order_by="c.created_at DESC",
                    max_items=min(_MAX_PAGE, cap + 1 - len(rows)),
                    continuation=token,
                    select=METRICS_SELECT,
                )
            )
            rows.extend(page)
            if not token:
                break
        return rows[:cap], len(rows) > cap

    async def update(self, workspace: str, investigation_id: str, mutate: Mutation) -> InvestigationRecord:
        """Read, apply `mutate` (sync or async; edits in place or returns a new record), write if unchanged since.

        On a lost race the read and `mutate` run again, so `mutate` must be a function of the record it
        gets (side effects only where repeating them is harmless, as append_iteration's blob writes are).
        `id`, `workspace_id`, `type` and `created_at` cannot be changed.
        """
        container = await self.container()
        for _ in range(_MAX_ETAG_RETRIES):
            current, etag = await self._load(workspace, investigation_id)
            draft = current.model_copy(deep=True)
            result = mutate(draft)
            if inspect.isawaitable(result):
                result = await result
            changed = result if isinstance(result, InvestigationRecord) else draft
            doc = changed.to_doc()
            doc.update(
                id=current.id,
                workspace_id=current.workspace_id,
                type="investigation",
                created_at=current.created_at,
                updated_at=now_iso(),
            )
            try:
                # Validate again: a mutation that broke a bound must fail here, not as a 2 MB Cosmos error.
                final = InvestigationRecord.model_validate(doc)
            except ValidationError as exc:
                raise ValidationFailed.on_fields(
                    "the change would break the investigation record's bounds",
                    ((".".join(map(str, e["loc"])), e["msg"]) for e in exc.errors()),
                ) from None
            try:
                await self._limited(container.replace(final.to_doc(), etag=etag))
                return final
            except Conflict:
                await asyncio.sleep(0.002 * secrets.randbelow(20))
        raise Conflict(
            "the investigation is too busy to update; retry",
            details={"investigation_id": investigation_id},
        )

    async def append_iteration(
        self, workspace: str, investigation_id: str, iteration: Iteration
    ) -> InvestigationRecord:
        """Add an iteration, or replace the one with the same `n` (a retried activity writes it once).

        Inline outputs that would take the record past MAX_INLINE_TOTAL_CHARS move to Blob first
        (their `output_ref` replaces `output`), so many mid-sized outputs cannot outgrow a Cosmos item.
        """

        async def put(record: InvestigationRecord) -> None:
            kept = [it for it in record.iterations if it.n != iteration.n]
            room = MAX_INLINE_TOTAL_CHARS - inline_chars([c for it in kept for c in it.calls])
            calls: list[CallEntry] = []
            for call in iteration.calls:
                size = len(call.output or "")
                if call.output is not None and size > room:
                    ref = output_blob_name(workspace, investigation_id, call.key)
                    await self._limited(self._blobs.put(ref, call.output, content_type="text/plain; charset=utf-8"))
                    call = call.model_copy(update={"output": None, "output_ref": ref})
                else:
                    room -= size
                calls.append(call)
            moved = iteration.model_copy(update={"calls": calls})
            record.iterations = sorted([*kept, moved], key=lambda it: it.n)

        return await self.update(workspace, investigation_id, put)

    async def put_call(self, workspace: str, investigation_id: str, n: int, call: CallEntry) -> InvestigationRecord:
        """Add one call to iteration `n` (created when missing), or replace the call with the same key.

        Parallel calls of one iteration each write their own entry (etag-checked, retried); a retried
        activity writes its entry once. An inline output the record has no room for moves to Blob.
        """

        async def put(record: InvestigationRecord) -> None:
            others = [c for c in record.calls() if c.key != call.key]
            room = MAX_INLINE_TOTAL_CHARS - inline_chars(others)
            entry = call
            if entry.output is not None and len(entry.output) > room:
                ref = output_blob_name(workspace, investigation_id, entry.key)
                await self._limited(self._blobs.put(ref, entry.output, content_type="text/plain; charset=utf-8"))
                entry = entry.model_copy(update={"output": None, "output_ref": ref})
            iteration = next((it for it in record.iterations if it.n == n), None)
            if iteration is None:
                iteration = Iteration(n=n)
                record.iterations = sorted([*record.iterations, iteration], key=lambda it: it.n)
            planned = record.planned_reasoning
            if planned is not None and planned.n == n:
                iteration.reasoning, record.planned_reasoning = planned.text, None
            # Parallel calls land in any order; the record lists them as planned (i2-c1, i2-c2, ...).
            calls = [*(c for c in iteration.calls if c.key != entry.key), entry]
            iteration.calls = sorted(calls, key=lambda c: (len(c.key), c.key))

        return await self.update(workspace, investigation_id, put)

    async def output_of(self, workspace: str, call: CallEntry) -> str:
        """A call's whole stored output, inline or from Blob ("" when the blob is gone)."""
        if call.output is not None:
            return call.output
        if not call.output_ref:
            return ""
        try:
            return await self.read_output(workspace, call.output_ref)
        except NotFound:
            return ""

    # ---- outputs -----------------------------------------------------------------------------

    async def put_output(self, workspace: str, investigation_id: str, call_key: str, text: str) -> StoredOutput:
        """Keep `text` inline when it fits the inline limit, else write it to Blob and return its name.

        Deterministic in its arguments: a retried call overwrites the same blob. Outputs over
        MAX_BLOB_OUTPUT_BYTES are cut there (truncated=True).
        """
        if not valid_investigation_id(investigation_id):
            raise _not_found(investigation_id)
        if not _CALL_KEY.fullmatch(call_key):
            raise ValidationFailed.on_field(
                "call_key",
                "not a call key",
                "call_key is 1-64 characters of letters, digits, '_', '-', '.', not starting with '.'",
            )
        data = text.encode("utf-8")
        size = len(data)
        if size <= self.inline_output_bytes:
            return StoredOutput(output=text, output_bytes=size)
        truncated = size > MAX_BLOB_OUTPUT_BYTES
        if truncated:
            # Cut on a character boundary: a half UTF-8 sequence would not decode on read.
            data = data[:MAX_BLOB_OUTPUT_BYTES].decode("utf-8", errors="ignore").encode("utf-8")
        name = output_blob_name(workspace, investigation_id, call_key)
        await self._limited(self._blobs.put(name, data, content_type="text/plain; charset=utf-8"))
        return StoredOutput(output_ref=name, output_bytes=size, truncated=truncated)

    async def read_output(self, workspace: str, ref: str) -> str:
        """The text of an offloaded output; NotFound for a missing blob or a name outside this workspace's prefix."""
        prefix = f"{workspace_segment(workspace)}/investigations/"
        rest = ref[len(prefix) :] if isinstance(ref, str) and ref.startswith(prefix) else ""
        parts = rest.split("/")
        if (
            len(parts) != 2
            or not valid_investigation_id(parts[0])
            or not parts[1].endswith(".txt")
            or not _CALL_KEY.fullmatch(parts[1][: -len(".txt")])
        ):
            raise NotFound("no such output in this workspace", details={})
        data = await self._limited(self._blobs.get(ref))
        if data is None:
            raise NotFound("no such output in this workspace", details={})
        return data.decode("utf-8", errors="replace")


def new_record_fields(workspace: str, user: str, run_id: str) -> dict[str, Any]:
    """The identity and timestamps of a new record (`InvestigationRecord(**fields, alert=...)`)."""
    stamp = now_iso()
    return {"id": run_id, "workspace_id": workspace, "user_id": user, "created_at": stamp, "updated_at": stamp}
