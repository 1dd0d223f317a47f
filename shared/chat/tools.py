"""Chat tools: store_chat_message, get_chat_history, create_chat_session, get_recent_chat_sessions."""

from __future__ import annotations

from shared.chat.models import (
    ChatHistoryResult,
    CreateChatSessionRequest,
    CreateChatSessionResult,
    GetChatHistoryRequest,
    GetRecentChatSessionsRequest,
    RecentChatSessionsResult,
    StoreChatMessageRequest,
    StoreChatMessageResult,
)
from shared.chat.service import ChatService, chat_service
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolSet

toolset = ToolSet("chat")


def service(ctx: ToolContext) -> ChatService:
    return chat_service(ctx.deps)


def _render_history(r: ChatHistoryResult) -> str:
    lines = [f"{m.timestamp} {m.role}: {m.message[:200]}" for m in r.messages]
    more = " (older messages: pass the continuation)" if r.continuation else ""
    return f"{len(r.messages)} of {r.message_count} message(s) in chat {r.chat_id}{more}:\n" + "\n".join(lines)


def _render_sessions(r: RecentChatSessionsResult) -> str:
    lines = [
        f"{s.chat_id} {s.session_name!r}: {s.message_count} message(s), last {s.last_message_at}" for s in r.sessions
    ]
    return f"{len(r.sessions)} session(s):\n" + "\n".join(lines)


@toolset.tool("store_chat_message", title="Store a chat message", idempotent=False)
async def store_chat_message(ctx: ToolContext, args: StoreChatMessageRequest) -> StoreChatMessageResult:
    """Store one message (role "user" or "assistant") in one of your chat sessions, for its history.

    The chat_id comes from create_chat_session. The message (1..4000 characters) and the session's
    message_count and last_message_at change together or not at all. Optional metadata (task_ids, ...)
    is kept with it (JSON, at most 4 KB). A chat that is not yours is NOT_FOUND.
    """
    return await service(ctx).store_message(ctx.principal, args.chat_id, args.message, args.role, args.metadata)


@toolset.tool(
    "get_chat_history", title="Read a chat's messages", read_only=True, idempotent=True, render=_render_history
)
async def get_chat_history(ctx: ToolContext, args: GetChatHistoryRequest) -> ChatHistoryResult:
    """Read the newest messages of one of your chat sessions, returned oldest first.

    limit (default 20, at most 100) picks how many of the newest; pass the continuation back for the
    messages before those. include_metadata=false leaves each message's metadata out. A chat that is
    not yours is NOT_FOUND.
    """
    return await service(ctx).history(ctx.principal, args.chat_id, args.limit, args.include_metadata, args.continuation)


@toolset.tool("create_chat_session", title="Start a chat session", idempotent=False)
async def create_chat_session(ctx: ToolContext, args: CreateChatSessionRequest) -> CreateChatSessionResult:
    """Start a new chat session of yours and return its chat_id (a UUID) with the session.

    session_name is optional (at most 200 characters; default "Chat - <Mon> <day>"); metadata is
    optional JSON (at most 4 KB). user_id, if given, must be your own (another user's is FORBIDDEN).
    """
    return await service(ctx).create_session(ctx.principal, args.session_name, args.metadata, user_id=args.user_id)


@toolset.tool(
    "get_recent_chat_sessions",
    title="List your recent chat sessions",
    read_only=True,
    idempotent=True,
    render=_render_sessions,
)
async def get_recent_chat_sessions(ctx: ToolContext, args: GetRecentChatSessionsRequest) -> RecentChatSessionsResult:
    """List your chat sessions, most recently active first (limit default 10, at most 100; page with
    continuation), each with its name, creation time, last message time and message count.

    Use it to resume a conversation: pass a chat_id to get_chat_history. user_id, if given, must be your
    own (another user's is FORBIDDEN).
    """
    return await service(ctx).recent_sessions(ctx.principal, args.limit, args.continuation, user_id=args.user_id)
