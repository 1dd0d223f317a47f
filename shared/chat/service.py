"""Chat sessions, their messages and the message flow; every call is scoped to the caller (its owner key).

Round trips (Cosmos requests) per call, the assistant's own work excluded:
- create_session: 2 (the session, its index entry);
- store_message: 2 (one batch: session counters + message; the index entry);
- history: 2 (the session's point read, which also proves ownership; one page query);
- recent_sessions: 1 (one query in the owner's index partition);
- send to an existing chat: 4 (batch: user message; history query; batch: assistant message; index entry);
- send without a chat_id: 3 (batch: new session + user message; batch: assistant message; index entry).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.chat.models import (
    MAX_LIMIT,
    MAX_MESSAGE_CHARS,
    ChatHistoryResult,
    ChatMessageView,
    ChatSessionView,
    CreateChatSessionResult,
    ExchangeResult,
    HistoryItem,
    RecentChatSessionsResult,
    ReplyLike,
    Respond,
    SessionSummary,
    StoreChatMessageResult,
    ToolCallView,
    check_metadata,
)
from shared.chat.settings import ChatSettings
from shared.chat.store import ChatStore, Doc, owner_key
from shared.core.errors import Forbidden, ValidationFailed
from shared.core.redaction import redact, redact_text
from shared.identity.models import Principal
from shared.tools.deps import Deps

# The assistant's answer may be longer than a user's message (a list of tasks); longer ones are cut.
MAX_REPLY_CHARS = 16_000
MAX_TOOL_CALLS_KEPT = 20


def iso(moment: datetime) -> str:
    """UTC with microseconds and a Z: fixed width, so the text order is the time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _invalid(field: str, problem: str) -> ValidationFailed:
    return ValidationFailed.on_field(
        field,
        problem,
        f"Invalid arguments: {field}",
        suggestions=[f"Fix {field} and call again."],
    )


def check_user(principal: Principal, user_id: str | None) -> None:
    """A `user_id` argument may only name the caller: anyone else's is FORBIDDEN (it names no data)."""
    if user_id is not None and user_id != principal.user_id:
        raise Forbidden(
            "user_id must be your own user id",
            details={"field": "user_id"},
            recovery_suggestions=["Omit user_id, or pass your own."],
        )


def _limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise _invalid("limit", f"between 1 and {MAX_LIMIT}")
    return limit


def _text(message: str) -> str:
    if not 1 <= len(message) <= MAX_MESSAGE_CHARS or not message.strip():
        raise _invalid("message", f"1 to {MAX_MESSAGE_CHARS} characters, not only spaces")
    return redact_text(message)


def _metadata(value: dict[str, Any] | None) -> dict[str, Any]:
    try:
        checked = check_metadata(value)
    except ValueError as exc:
        raise _invalid("metadata", str(exc)) from None
    return dict(redact(checked)) if checked else {}


def _view(doc: Doc, include_metadata: bool) -> ChatMessageView:
    return ChatMessageView(
        id=doc["id"],
        role=doc["role"],
        message=doc["message"],
        timestamp=doc["timestamp"],
        metadata=(doc.get("metadata") or {}) if include_metadata else None,
    )


def _session_view(doc: Doc) -> ChatSessionView:
    return ChatSessionView(
        chat_id=doc["id"],
        user_id=doc["user_id"],
        session_name=doc["session_name"],
        created_at=doc["created_at"],
        last_message_at=doc.get("last_message_at"),
        message_count=doc.get("message_count", 0),
        metadata=doc.get("metadata") or {},
    )


def chat_service(deps: Deps) -> ChatService:
    """The service over the process's Cosmos client, clock and chat settings."""
    settings = deps.settings.section(ChatSettings)
    return ChatService(ChatStore(deps.cosmos), deps.clock, assistant_history=settings.assistant_history)


class ChatService:
    def __init__(self, store: ChatStore, clock: Callable[[], datetime], *, assistant_history: int = 20) -> None:
        """`assistant_history`: how many earlier messages `send` gives the assistant (unless told otherwise)."""
        self._store = store
        self._clock = clock
        self._assistant_history = assistant_history

    # ---- documents -------------------------------------------------------------------------------

    def _session_doc(
        self, principal: Principal, session_name: str | None, metadata: dict[str, Any] | None, now: datetime
    ) -> Doc:
        name = (session_name or "").strip() or f"Chat - {now:%b} {now.day}"
        if len(name) > 200:
            raise _invalid("session_name", "at most 200 characters")
        chat_id = str(uuid.uuid4())
        return {
            "id": chat_id,
            "chat": chat_id,
            "type": "session",
            "owner": owner_key(principal),
            "user_id": principal.user_id,
            "session_name": name,
            "created_at": iso(now),
            "last_message_at": None,
            "message_count": 0,
            "metadata": _metadata(metadata),
        }

    @staticmethod
    def _message_doc(
        principal: Principal, chat_id: str, text: str, role: str, metadata: dict[str, Any], at: str
    ) -> Doc:
        return {
            "id": str(uuid.uuid4()),
            "chat": chat_id,
            "message": text,
            "role": role,
            "timestamp": at,
            "metadata": metadata,
            "owner": owner_key(principal),
        }

    # ---- sessions --------------------------------------------------------------------------------

    async def create_session(
        self,
        principal: Principal,
        session_name: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str | None = None,
    ) -> CreateChatSessionResult:
        check_user(principal, user_id)
        doc = self._session_doc(principal, session_name, metadata, self._clock())
        created = await self._store.create_session(owner_key(principal), doc)
        return CreateChatSessionResult(chat_id=created["id"], session=_session_view(created))

    async def recent_sessions(
        self, principal: Principal, limit: int = 10, continuation: str | None = None, *, user_id: str | None = None
    ) -> RecentChatSessionsResult:
        check_user(principal, user_id)
        docs, token = await self._store.sessions(owner_key(principal), _limit(limit), continuation)
        return RecentChatSessionsResult(
            sessions=[
                SessionSummary(
                    chat_id=d["chat_id"],
                    session_name=d["session_name"],
                    created_at=d["created_at"],
                    last_message_at=d.get("last_message_at"),
                    message_count=d.get("message_count", 0),
                )
                for d in docs
            ],
            continuation=token,
        )

    # ---- messages --------------------------------------------------------------------------------

    async def store_message(
        self,
        principal: Principal,
        chat_id: str,
        message: str,
        role: str,
        metadata: dict[str, Any] | None = None,
    ) -> StoreChatMessageResult:
        """Store one message: the session's counters and the message change together, or nothing does."""
        if role not in ("user", "assistant"):
            raise _invalid("role", 'either "user" or "assistant"')
        owner = owner_key(principal)
        doc = self._message_doc(principal, chat_id, _text(message), role, _metadata(metadata), iso(self._clock()))
        session = await self._store.append(owner, chat_id, doc)
        await self._store.sync_index(owner, session)
        return StoreChatMessageResult(
            message_id=doc["id"], chat_id=chat_id, timestamp=doc["timestamp"], message_count=session["message_count"]
        )

    async def history(
        self,
        principal: Principal,
        chat_id: str,
        limit: int = 50,
        include_metadata: bool = True,
        continuation: str | None = None,
    ) -> ChatHistoryResult:
        """The newest `limit` messages, returned OLDEST FIRST (as a conversation reads).

        The continuation pages backwards: the next page is the `limit` messages before these, again oldest
        first. NotFound for a chat that is not the caller's (or does not exist).
        """
        session = await self._store.session(owner_key(principal), chat_id)
        docs, token = await self._store.messages(chat_id, _limit(limit), continuation)
        return ChatHistoryResult(
            chat_id=chat_id,
            message_count=session.get("message_count", 0),
            messages=[_view(d, include_metadata) for d in reversed(docs)],
            continuation=token,
        )

    # ---- the message flow ------------------------------------------------------------------------

    async def send(
        self,
        principal: Principal,
        chat_id: str | None,
        text: str,
        respond: Respond,
        *,
        history_limit: int | None = None,
    ) -> ExchangeResult:
        """One exchange: store the user's message, answer it with `respond`, store the answer.

        `respond(history, text)` gets the chat's earlier messages (at most `history_limit`, by default the
        service's `assistant_history`; oldest first, without `text`; secret-looking values redacted) and
        returns the assistant's reply. Without a chat_id a session is created first, in the same batch as
        the user's message (its history is empty). If `respond` raises (the LLM is down: an
        UpstreamError), the user's message stays stored, no assistant message is written, the owner's
        session index is brought up to date with the stored message, and the error propagates.
        """
        owner = owner_key(principal)
        message = _text(text)
        history_limit = _limit(self._assistant_history if history_limit is None else history_limit)
        now = self._clock()
        history: list[HistoryItem] = []
        if chat_id is None:
            session_doc = self._session_doc(principal, None, None, now)
            chat_id = session_doc["id"]
            user_doc = self._message_doc(principal, chat_id, message, "user", {}, iso(now))
            session_doc.update(message_count=1, last_message_at=user_doc["timestamp"])
            session = await self._store.create_session(owner, session_doc, first_message=user_doc)
            new = True
        else:
            user_doc = self._message_doc(principal, chat_id, message, "user", {}, iso(now))
            session = await self._store.append(owner, chat_id, user_doc)
            new = False
            docs, _ = await self._store.messages(chat_id, history_limit + 1, None)
            history = [
                HistoryItem(
                    role=d["role"], message=d["message"], timestamp=d["timestamp"], metadata=d.get("metadata") or {}
                )
                for d in reversed(docs)
                if d["id"] != user_doc["id"]
            ][-history_limit:]
        try:
            reply = await respond(history, message)
        except Exception:
            await self._store.sync_index(owner, session, new=new)
            raise
        answer_at = max(self._clock(), datetime.fromisoformat(user_doc["timestamp"]) + timedelta(microseconds=1))
        # The answer quotes task titles and tool results, which may hold what a user pasted: it is redacted
        # like the user's own message before it is stored or returned.
        calls = [
            ToolCallView(
                name=c.name, arguments=redact(dict(c.arguments)), ok=c.ok, summary=redact_text(c.summary[:300])
            )
            for c in reply.tool_calls
        ]
        assistant_doc = self._message_doc(
            principal,
            chat_id,
            redact_text(reply.text[:MAX_REPLY_CHARS]) or "(no answer)",
            "assistant",
            _reply_metadata(reply, calls),
            iso(answer_at),
        )
        session = await self._store.append(owner, chat_id, assistant_doc)
        await self._store.sync_index(owner, session, new=new)
        return ExchangeResult(
            chat_id=chat_id,
            user_message_id=user_doc["id"],
            assistant_message_id=assistant_doc["id"],
            response=assistant_doc["message"],
            tool_calls=calls,
            task_ids=list(reply.task_ids),
            mode=reply.mode,
        )


def _reply_metadata(reply: ReplyLike, calls: list[ToolCallView]) -> dict[str, Any]:
    """The spec's {task_ids, tool_calls (a count)}, the calls' names and the assistant's own metadata
    (such as a pending confirmation, which its next turn reads back from the history)."""
    extra = dict(getattr(reply, "metadata", None) or {})
    # A pending delete confirmation is kept as it is (its token is the owner's own, single use, 5 minutes,
    # and the next turn needs it); everything else the assistant adds is redacted like any stored text.
    pending = extra.pop("pending_confirmation", None)
    kept = redact(extra)
    if pending is not None:
        kept["pending_confirmation"] = pending
    return {
        **kept,
        "task_ids": list(reply.task_ids)[:100],
        "tool_calls": len(calls),
        "tools": [c.name for c in calls][:MAX_TOOL_CALLS_KEPT],
        "mode": reply.mode,
    }
