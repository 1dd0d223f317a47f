"""Chat documents in the `chat` container (partition key `/chat`).

Partition `<chat id>` (one per session) holds:
- the session (`id` == `chat` == the chat id, `type` "session"): owner, user_id, session_name, created_at,
  last_message_at, message_count, metadata;
- its messages (`id` a uuid): chat, owner, message, role, timestamp, metadata {task_ids, tool_calls, ...}.
A message and the session's counters change in ONE transactional batch: patch the session (condition: it
belongs to the owner; `incr` message_count, `set` last_message_at) and create the message. Another owner's
chat or a missing one fails the condition or the patch, and nothing is written. last_message_at is the
timestamp of the message applied last (concurrent writers may apply in another order than their clocks read).

Partition `sessions~<owner>` holds the owner's session index, one document per session (`id` the chat id,
`type` "session_index": chat_id, session_name, created_at, last_message_at, message_count, updated_at), so
listing a user's sessions is one single-partition query. The index follows the session: after each message
it is set to the session's counters under the condition `c.message_count < N`, so concurrent writers
converge on the newest state and an older one never overwrites it.

`owner` is an opaque key of the (workspace_id, user_id) pair: the first 32 hex digits of
sha256(workspace_id + "\\n" + user_id). Lower-case hex only, so it is safe to inline in a patch condition.
"""

from __future__ import annotations

from typing import Any

from shared.chat.models import CHAT_ID
from shared.core.errors import Conflict, NotFound
from shared.identity.models import Principal
from shared.storage.containers import ContainerSpec
from shared.storage.cosmos import CosmosContainer, CosmosDatabase, PreconditionFailed, batch_create, batch_patch

CHAT_CONTAINER = ContainerSpec(
    "chat",
    "/chat",
    "Chat sessions and their messages, one partition per session; each owner's session index in "
    "partition `sessions~<owner>`.",
    # Message text and metadata are never filtered on; leaving them out of the index saves RU on every write.
    excluded_paths=("/message/?", "/metadata/*"),
)

INDEX_PREFIX = "sessions~"
Doc = dict[str, Any]
_INDEX_FIELDS = ("chat_id", "session_name", "created_at", "last_message_at", "message_count")


def owner_key(principal: Principal) -> str:
    return principal.owner_key


def index_partition(owner: str) -> str:
    return INDEX_PREFIX + owner


def _not_found(chat_id: str) -> NotFound:
    return NotFound(
        f"chat {chat_id[:100]!r} not found",
        details={"chat_id": chat_id[:100]},
        recovery_suggestions=["Use a chat_id from create_chat_session or get_recent_chat_sessions."],
    )


def index_doc(owner: str, session: Doc) -> Doc:
    return {
        "id": session["id"],
        "chat": index_partition(owner),
        "type": "session_index",
        "owner": owner,
        "chat_id": session["id"],
        "session_name": session["session_name"],
        "created_at": session["created_at"],
        "last_message_at": session.get("last_message_at"),
        "message_count": session.get("message_count", 0),
        "updated_at": session.get("last_message_at") or session["created_at"],
    }


class ChatStore:
    def __init__(self, cosmos: CosmosDatabase) -> None:
        self._cosmos = cosmos

    async def container(self) -> CosmosContainer:
        return await self._cosmos.container(CHAT_CONTAINER.name)

    async def create_session(self, owner: str, session: Doc, first_message: Doc | None = None) -> Doc:
        """Create the session (with its first message, in one batch) and then its index entry.

        Without a first message the index entry is written now (two round trips); with one it is left to
        `sync_index` after the exchange, so a new chat's first exchange costs no extra round trip.
        """
        container = await self.container()
        if first_message is None:
            created = await container.create(session)
            try:
                await container.upsert(index_doc(owner, created))
            except Exception:
                await container.delete(created["id"], created["chat"])  # no session without its index entry
                raise
            return created
        results = await container.batch(session["chat"], [batch_create(session), batch_create(first_message)])
        assert results[0] is not None
        return results[0]

    async def session(self, owner: str, chat_id: str) -> Doc:
        """The owner's session, else NotFound (a missing chat and another owner's answer the same)."""
        if not CHAT_ID.fullmatch(chat_id):
            raise _not_found(chat_id)
        doc = await (await self.container()).read(chat_id, chat_id)
        if doc is None or doc.get("type") != "session" or doc.get("owner") != owner:
            raise _not_found(chat_id)
        return doc

    async def append(self, owner: str, chat_id: str, message: Doc) -> Doc:
        """Store `message` and move the session's counters in one transaction; the session as it is after.

        NotFound, with nothing written, when the chat does not exist or belongs to someone else.
        """
        if not CHAT_ID.fullmatch(chat_id):
            raise _not_found(chat_id)
        container = await self.container()
        ops = [
            {"op": "incr", "path": "/message_count", "value": 1},
            {"op": "set", "path": "/last_message_at", "value": message["timestamp"]},
        ]
        # `owner` is lower-case hex (owner_key), never caller text: safe to inline in the predicate.
        condition = f"from c where c.owner = '{owner}' AND c.type = 'session'"
        try:
            results = await container.batch(
                chat_id, [batch_patch(chat_id, ops, condition=condition), batch_create(message)]
            )
        except (PreconditionFailed, NotFound):
            raise _not_found(chat_id) from None
        session = results[0]
        assert session is not None
        return session

    async def messages(self, chat_id: str, limit: int, continuation: str | None) -> tuple[list[Doc], str | None]:
        """One page of the chat's messages, NEWEST first (the caller reverses them for reading)."""
        return await (await self.container()).query(
            chat_id,
            "IS_DEFINED(c.role)",
            order_by="c.timestamp DESC",
            max_items=limit,
            continuation=continuation,
            fields=("id", "role", "message", "timestamp", "metadata"),
        )

    async def sync_index(self, owner: str, session: Doc, *, new: bool = False) -> None:
        """Bring the owner's index entry up to `session` (as a write returned it); an entry already newer stays.

        One round trip; a missing entry (a session whose index write was lost) is created. `new`: the
        session was just created without its entry, so create it straight away.
        """
        container = await self.container()
        if new:
            try:
                await container.create(index_doc(owner, session))
                return
            except Conflict:
                pass
        count = int(session.get("message_count", 0))
        at = session.get("last_message_at")
        ops = [
            {"op": "set", "path": "/message_count", "value": count},
            {"op": "set", "path": "/last_message_at", "value": at},
            {"op": "set", "path": "/updated_at", "value": at or session["created_at"]},
        ]
        try:
            await container.patch(
                session["id"], index_partition(owner), ops, condition=f"from c where c.message_count < {count}"
            )
        except PreconditionFailed:
            return  # the entry already shows this state or a newer one
        except NotFound:
            try:
                await container.create(index_doc(owner, session))
            except Conflict:
                await self.sync_index(owner, session)  # created meanwhile by a concurrent writer

    async def sessions(self, owner: str, limit: int, continuation: str | None) -> tuple[list[Doc], str | None]:
        """One page of the owner's sessions, most recently active first: one single-partition query."""
        return await (await self.container()).query(
            index_partition(owner),
            "c.type = 'session_index'",
            order_by="c.updated_at DESC",
            max_items=limit,
            continuation=continuation,
            fields=_INDEX_FIELDS,
        )
