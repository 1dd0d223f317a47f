"""The mobile app's chat API: send a message and get the assistant's answer, read history, start and list sessions.

Messages are stored by this code directly (`ChatService`), never by the assistant: the assistant only
answers, with the caller's task tools. Shapes are the spec's (../shared/specs/chat-task-tools.md, REST API).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from shared.chat.models import (
    CHAT_ID_PATTERN,
    MAX_LIMIT,
    MAX_MESSAGE_CHARS,
    ChatHistoryResult,
    CreateChatSessionRequest,
    CreateChatSessionResult,
    ExchangeResult,
    HistoryItem,
    RecentChatSessionsResult,
)
from shared.chat.service import chat_service, check_user
from shared.tools.routes import (
    CONTINUATION_MAX,
    CONTINUATION_PATTERN,
    Answer,
    RouteBody,
    RouteCall,
    RouteParams,
    RouteSet,
)

# The session body is the tool's own input model (create_chat_session): one definition for MCP, per-tool
# HTTP and REST. Query parameters get models of their own (lax types, continuations short enough for a URL).

routes = RouteSet("chat")

_USER_ID = "Your own user id (optional; any other user's id is 403 FORBIDDEN)."
_CONTINUATION = "The continuation of the previous page (omit for the first page)."


class SendMessageBody(RouteBody):
    chat_id: str | None = Field(
        None, pattern=CHAT_ID_PATTERN, description="The chat (from POST /api/chat/session); omit to start a new one."
    )
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, description="What the user typed.")
    user_id: str | None = Field(None, max_length=128, description=_USER_ID)


class HistoryParams(RouteParams):
    chat_id: str = Field(pattern=CHAT_ID_PATTERN, description="The chat session's id.")
    limit: int = Field(50, ge=1, le=MAX_LIMIT, description="How many of the newest messages (oldest first).")
    include_metadata: bool = Field(True, description="Include each message's metadata.")
    continuation: str | None = Field(
        None,
        max_length=CONTINUATION_MAX,
        pattern=CONTINUATION_PATTERN,
        description=_CONTINUATION + " It pages to older ones.",
    )


class SessionsParams(RouteParams):
    limit: int = Field(10, ge=1, le=MAX_LIMIT, description="How many sessions, most recently active first.")
    user_id: str | None = Field(None, max_length=128, description=_USER_ID)
    continuation: str | None = Field(
        None, max_length=CONTINUATION_MAX, pattern=CONTINUATION_PATTERN, description=_CONTINUATION
    )


@routes.route("POST", "chat/message", name="chat_send_message", errors=(403, 404, 502))
async def send_message(call: RouteCall, *, body: SendMessageBody) -> ExchangeResult:
    """Send a chat message and get the task assistant's answer.

    The user's message is stored first, then the assistant answers from the chat's history using only
    your task tools (listing, searching, creating, completing and deleting tasks; anything else is
    politely refused), and its answer is stored: `{success, chat_id, user_message_id,
    assistant_message_id, response, tool_calls, task_ids, mode}`. Without chat_id a new session is
    started (its id is in the answer). Without an LLM configured the assistant serves the common
    requests with rules (`mode` "rules"). If the LLM fails, the answer is 502 UPSTREAM_ERROR and your
    message stays stored (send again to retry); nothing else is written. Another user's chat is 404.
    """
    from shared.chat.assistant import HistoryMessage, respond

    check_user(call.principal, body.user_id)
    ctx = call.tool_context()
    llm = call.deps.llm()

    async def answer(history: Sequence[HistoryItem], text: str) -> Any:
        shown = [HistoryMessage.model_validate(h.model_dump()) for h in history]
        return await respond(ctx, shown, text, llm=llm)

    return await chat_service(call.deps).send(call.principal, body.chat_id, body.message, answer)


@routes.route("GET", "chat/{chat_id}/history", name="chat_history", errors=(404,))
async def history(call: RouteCall, *, params: HistoryParams) -> ChatHistoryResult:
    """Read a chat's newest messages, oldest first.

    `limit` (default 50) picks how many of the newest; pass `continuation` back for older ones. Another
    user's chat, or an unknown id, is 404.
    """
    return await chat_service(call.deps).history(
        call.principal, params.chat_id, params.limit, params.include_metadata, params.continuation
    )


@routes.route(
    "POST", "chat/session", name="chat_create_session", status=201, errors=(403,), response=CreateChatSessionResult
)
async def create_session(call: RouteCall, *, body: CreateChatSessionRequest) -> Answer:
    """Start a new chat session: 201 `{success, chat_id, session}`.

    `user_id`, if sent, must be your own (identity comes from your credentials, never from the body).
    """
    made = await chat_service(call.deps).create_session(
        call.principal, body.session_name, body.metadata, user_id=body.user_id
    )
    return Answer(made, 201, {"Location": f"/api/chat/{made.chat_id}/history"})


@routes.route("GET", "chat/sessions", name="chat_sessions", errors=(403,))
async def sessions(call: RouteCall, *, params: SessionsParams) -> RecentChatSessionsResult:
    """List your chat sessions, most recently active first (`limit` default 10; page with `continuation`)."""
    return await chat_service(call.deps).recent_sessions(
        call.principal, params.limit, params.continuation, user_id=params.user_id
    )
