"""Task documents in the `tasks` container, one partition per owner (workspace + user).

Documents (`type`):
- `task` (id uuid4): the task; `category_key` is the category normalised for filtering, `search_text`
  the lower-cased title, description and tags search_tasks matches; dates are UTC strings
  `YYYY-MM-DDTHH:MM:SS.ffffffZ` (one fixed width, so string order is time order and a date range is one
  range filter); soft delete sets `deleted` and `deleted_at`.
- `profile` (id `profile`): the user's IANA zone and the random key confirmation tokens are signed with.
- `bulk_confirmation` (id `bulkdel-<nonce>`): a pending `bulk_delete_tasks` preview, the exact id set it
  showed, whether it was used; it expires by Cosmos TTL an hour after its token does (kept that long so a
  late or replayed token gets a clear answer).
Every query names the owner partition; none crosses owners.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from shared.core.errors import Conflict, ValidationFailed
from shared.identity.models import Principal
from shared.storage.containers import ContainerSpec
from shared.storage.cosmos import CosmosContainer, CosmosDatabase

TASKS_CONTAINER = ContainerSpec(
    "tasks",
    "/owner",
    "Tasks of one user in one workspace (partition `owner`), with the user's task profile and pending"
    " bulk-delete confirmations (expiring by TTL).",
    # The description is never filtered on (search reads `search_text`, which stays indexed: Cosmos may refuse
    # a filter on an excluded path), so leaving it out of the index saves RU on every write.
    excluded_paths=("/description/?",),
    default_ttl=-1,
)

Doc = dict[str, Any]
PROFILE_ID = "profile"
# The fields a list shows (not the internal keys).
TASK_FIELDS = (
    "id",
    "user_id",
    "title",
    "description",
    "category",
    "priority",
    "status",
    "due_date",
    "due_all_day",
    "created_at",
    "updated_at",
    "completed_at",
    "deleted",
    "deleted_at",
    "tags",
)


def owner_key(workspace_id: str, user_id: str) -> str:
    """The partition of one user in one workspace (`Principal.owner_key`, shared with chat)."""
    return Principal(workspace_id=workspace_id, user_id=user_id, source="dev").owner_key


def _scope(owner: str, clause: str, params: dict[str, Any], order_by: str) -> str:
    """What a continuation belongs to: this owner and this query (text and parameter values)."""
    text = json.dumps([owner, clause, sorted(params.items()), order_by], separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _wrap(token: str | None, scope: str) -> str | None:
    """The continuation handed out: the Cosmos token, bound to its owner and query by a check value."""
    if token is None:
        return None
    return f"{scope}.{base64.urlsafe_b64encode(token.encode()).decode()}"


def _unwrap(continuation: str | None, scope: str) -> str | None:
    """The Cosmos token of a continuation this query handed out; anything else is VALIDATION_ERROR.

    Cosmos (and the local server) may take a mangled token for the start of the query or answer 500; a
    token of another query would resume at a meaningless position. Either is refused here instead.
    """
    if continuation is None:
        return None
    check, _, body = continuation.partition(".")
    try:
        if not hmac.compare_digest(check, scope):
            raise ValueError("another query's continuation")
        return base64.urlsafe_b64decode(body.encode()).decode()
    except (ValueError, TypeError):  # TypeError: compare_digest of non-ASCII text
        raise ValidationFailed.on_field(
            "continuation",
            "not a continuation of this query",
            "continuation is not a token this query issued",
            suggestions=["Pass the continuation of the previous page unchanged, with the same filters; or omit it."],
        ) from None


class TaskStore:
    def __init__(self, cosmos: CosmosDatabase) -> None:
        self._cosmos = cosmos

    async def container(self) -> CosmosContainer:
        return await self._cosmos.container(TASKS_CONTAINER.name)

    async def read(self, owner: str, doc_id: str) -> Doc | None:
        return await (await self.container()).read(doc_id, owner)

    async def read_task(self, owner: str, task_id: str) -> Doc | None:
        doc = await self.read(owner, task_id)
        return doc if doc and doc.get("type") == "task" else None

    async def create(self, doc: Doc) -> Doc:
        return await (await self.container()).create(doc)

    async def upsert(self, doc: Doc) -> Doc:
        return await (await self.container()).upsert(doc)

    async def replace(self, doc: Doc, etag: str | None) -> Doc:
        return await (await self.container()).replace(doc, etag=etag)

    async def create_or_get(self, doc: Doc) -> Doc:
        """Create `doc`, or the one a concurrent caller created first under its id."""
        container = await self.container()
        try:
            return await container.create(doc)
        except Conflict:
            found = await container.read(doc["id"], doc["owner"])
            if found is None:  # deleted in between: try once more
                return await container.create(doc)
            return found

    async def page(
        self,
        owner: str,
        where: str,
        params: dict[str, Any],
        *,
        order_by: str,
        limit: int,
        continuation: str | None,
        fields: tuple[str, ...] = TASK_FIELDS,
    ) -> tuple[list[Doc], str | None]:
        """One page of the owner's tasks matching `where` (a task filter is always added)."""
        clause = "c.type = 'task'" + (f" AND ({where})" if where else "")
        scope = _scope(owner, clause, params, order_by)
        docs, token = await (await self.container()).query(
            owner,
            clause,
            params,
            order_by=order_by,
            max_items=limit,
            continuation=_unwrap(continuation, scope),
            fields=fields,
        )
        return docs, _wrap(token, scope)

    async def scan(
        self, owner: str, where: str, params: dict[str, Any], fields: tuple[str, ...], cap: int
    ) -> tuple[list[Doc], bool]:
        """Up to `cap` projected task rows matching `where`, and whether there were more (bounded reading)."""
        rows: list[Doc] = []
        token: str | None = None
        while True:
            batch, token = await self.page(
                owner,
                where,
                params,
                order_by="",
                limit=min(1000, cap + 1 - len(rows)),
                continuation=token,
                fields=fields,
            )
            rows.extend(batch)
            if len(rows) > cap:
                return rows[:cap], True
            if not token:
                return rows, False
