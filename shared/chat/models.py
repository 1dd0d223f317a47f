"""Inputs and outputs of the chat tools and of the message flow (`ChatService.send`)."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, field_validator

from shared.tools.registry import ToolInput, ToolOutput

MAX_MESSAGE_CHARS = 4_000
MAX_SESSION_NAME = 200
MAX_METADATA_BYTES = 4 * 1024
MAX_METADATA_DEPTH = 5
MAX_LIMIT = 100
# Chat ids are minted by the server (uuid4, lower-case): anything else names no chat, in particular no
# owner's session index (partition `sessions~<owner>`), which therefore can never be addressed by a caller.
CHAT_ID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
CHAT_ID = re.compile(CHAT_ID_PATTERN)

_CHAT_ID = "The chat session's id (a UUID from create_chat_session)."
_USER_ID = "Your own user id (optional; any other user's id is refused with FORBIDDEN)."
_CONTINUATION = "The continuation of the previous page (omit for the first page)."


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def check_metadata(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """At most 4 KB of JSON, nested at most 5 levels (the object itself is level 1)."""
    if value is None:
        return None
    if _depth(value) > MAX_METADATA_DEPTH:
        raise ValueError(f"metadata nests deeper than {MAX_METADATA_DEPTH} levels")
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode())
    except ValueError:
        raise ValueError("metadata must be plain JSON (no NaN or Infinity)") from None
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"metadata is larger than {MAX_METADATA_BYTES} bytes of JSON")
    return value


def _metadata_field() -> Any:
    return Field(None, description="Additional data (task_ids, location, ...): JSON, at most 4 KB, 5 levels deep.")


class _WithMetadata(ToolInput):
    metadata: dict[str, Any] | None = _metadata_field()

    _metadata = field_validator("metadata")(classmethod(lambda cls, v: check_metadata(v)))


class StoreChatMessageRequest(_WithMetadata):
    chat_id: str = Field(pattern=CHAT_ID_PATTERN, description=_CHAT_ID)
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, description="The message text.")
    role: Literal["user", "assistant"] = Field(description='Who wrote it: "user" or "assistant".')


class StoreChatMessageResult(ToolOutput):
    success: bool = True
    message_id: str
    chat_id: str
    timestamp: str
    message_count: int = Field(description="Messages in the chat, this one included.")


class GetChatHistoryRequest(ToolInput):
    chat_id: str = Field(pattern=CHAT_ID_PATTERN, description=_CHAT_ID)
    limit: int = Field(20, ge=1, le=MAX_LIMIT, description="How many of the newest messages to return.")
    include_metadata: bool = Field(True, description="Include each message's metadata.")
    continuation: str | None = Field(None, max_length=4_000, description=_CONTINUATION + " It pages to older ones.")


class ChatMessageView(ToolOutput):
    id: str
    role: str
    message: str
    timestamp: str
    metadata: dict[str, Any] | None = Field(None, description="Absent (null) when include_metadata is false.")


class ChatHistoryResult(ToolOutput):
    chat_id: str
    message_count: int = Field(description="Messages stored in the chat in all (not only this page).")
    messages: list[ChatMessageView] = Field(
        description="The newest `limit` messages (of this page), oldest first, as a conversation reads."
    )
    continuation: str | None = Field(description="Pass it back for the messages before these; null at the start.")


class CreateChatSessionRequest(_WithMetadata):
    user_id: str | None = Field(None, max_length=128, description=_USER_ID)
    session_name: str | None = Field(
        None, max_length=MAX_SESSION_NAME, description='A name for the session (default "Chat - <Mon> <day>").'
    )


class ChatSessionView(ToolOutput):
    chat_id: str
    user_id: str
    session_name: str
    created_at: str
    last_message_at: str | None
    message_count: int
    metadata: dict[str, Any]


class CreateChatSessionResult(ToolOutput):
    success: bool = True
    chat_id: str
    session: ChatSessionView


class GetRecentChatSessionsRequest(ToolInput):
    limit: int = Field(10, ge=1, le=MAX_LIMIT, description="How many sessions to return.")
    user_id: str | None = Field(None, max_length=128, description=_USER_ID)
    continuation: str | None = Field(None, max_length=4_000, description=_CONTINUATION)


class SessionSummary(ToolOutput):
    chat_id: str
    session_name: str
    created_at: str
    last_message_at: str | None
    message_count: int


class RecentChatSessionsResult(ToolOutput):
    sessions: list[SessionSummary] = Field(description="Most recently active first.")
    continuation: str | None


# ---- the message flow ------------------------------------------------------------------------------


class HistoryItem(BaseModel):
    """One earlier message as the assistant is given it (the fields of the assistant's HistoryMessage)."""

    role: Literal["user", "assistant"]
    message: str
    timestamp: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class ToolCallLike(Protocol):
    """What the chat keeps of one tool call the assistant made (its ToolCallRecord)."""

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> Mapping[str, Any]: ...

    @property
    def ok(self) -> bool: ...

    @property
    def summary(self) -> str: ...


class ReplyLike(Protocol):
    """The assistant's answer (its AssistantReply); an optional `metadata` mapping is stored with the message."""

    @property
    def text(self) -> str: ...

    @property
    def tool_calls(self) -> Sequence[ToolCallLike]: ...

    @property
    def task_ids(self) -> Sequence[str]: ...

    @property
    def mode(self) -> str: ...


# respond(history, text): history is the chat's earlier messages, oldest first, without `text` itself.
Respond = Callable[[list[HistoryItem], str], Awaitable[ReplyLike]]


class ToolCallView(ToolOutput):
    name: str
    arguments: dict[str, Any]
    ok: bool
    summary: str


class ExchangeResult(ToolOutput):
    success: bool = True
    chat_id: str
    user_message_id: str
    assistant_message_id: str
    response: str
    tool_calls: list[ToolCallView]
    task_ids: list[str]
    mode: str
