"""Chat storage and the message flow against the local Cosmos server: atomic counters, round trips, isolation."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from shared.chat.models import HistoryItem
from shared.chat.service import ChatService, chat_service
from shared.chat.settings import ChatSettings
from shared.chat.store import ChatStore, index_partition, owner_key
from shared.core.errors import Forbidden, NotFound, UpstreamError, ValidationFailed
from shared.identity.models import Principal
from shared.storage.cosmos import CosmosContainer
from shared.tools.deps import Deps


def person(workspace: str | None = None, user: str = "alice") -> Principal:
    return Principal(workspace_id=workspace or f"ws-chat-{uuid.uuid4().hex[:8]}", user_id=user, source="dev")


@dataclass
class Call:
    name: str
    arguments: dict[str, Any]
    ok: bool
    summary: str


@dataclass
class Reply:
    """A stand-in for the assistant's AssistantReply (the same fields)."""

    text: str
    tool_calls: list[Call] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)
    mode: str = "rules"
    metadata: dict[str, Any] = field(default_factory=dict)


class Assistant:
    """Answers with what it was given, so tests see the history the flow passed."""

    def __init__(self, reply: Reply | None = None, error: Exception | None = None) -> None:
        self.seen: list[tuple[list[HistoryItem], str]] = []
        self._reply = reply
        self._error = error

    async def __call__(self, history: list[HistoryItem], text: str) -> Reply:
        self.seen.append((history, text))
        if self._error is not None:
            raise self._error
        return self._reply or Reply(text=f"answer to {text!r} after {len(history)} message(s)")


@pytest.fixture
def chat(deps: Deps) -> ChatService:
    return ChatService(ChatStore(deps.cosmos), deps.clock)


async def _container(deps: Deps) -> CosmosContainer:
    return await deps.cosmos.container("chat")


async def _partition(deps: Deps, chat_id: str) -> list[dict[str, Any]]:
    return await (await _container(deps)).query_all(chat_id)


async def _index(deps: Deps, who: Principal) -> list[dict[str, Any]]:
    return await (await _container(deps)).query_all(index_partition(owner_key(who)))


async def test_session_and_message_documents_follow_the_spec(deps: Deps, chat: ChatService) -> None:
    me = person()
    created = await chat.create_session(me, "Task planning - Dec 7", {"device": "mobile"}, user_id="alice")
    stored = await chat.store_message(me, created.chat_id, "Show my tasks", "user", {"task_ids": ["t1"]})
    docs = {d["id"]: d for d in await _partition(deps, created.chat_id)}
    session, message = docs[created.chat_id], docs[stored.message_id]
    assert {k for k in session if not k.startswith("_")} == {
        "id", "chat", "type", "user_id", "session_name", "created_at", "last_message_at", "message_count",
        "metadata", "owner",
    }  # fmt: skip
    assert session["type"] == "session"
    assert session["chat"] == created.chat_id
    assert session["user_id"] == "alice"
    assert session["message_count"] == 1
    assert session["last_message_at"] == message["timestamp"]
    assert session["owner"] == owner_key(me)
    assert {k for k in message if not k.startswith("_")} == {
        "id", "chat", "message", "role", "timestamp", "metadata", "owner",
    }  # fmt: skip
    assert message["chat"] == created.chat_id
    assert message["metadata"] == {"task_ids": ["t1"]}
    uuid.UUID(created.chat_id)  # server-minted uuid


async def test_twenty_concurrent_messages_leave_counters_exact(deps: Deps, chat: ChatService) -> None:
    me = person()
    chat_id = (await chat.create_session(me)).chat_id
    results = await asyncio.gather(*(chat.store_message(me, chat_id, f"message {i}", "user") for i in range(20)))
    assert sorted(r.message_count for r in results) == list(range(1, 21))
    docs = await _partition(deps, chat_id)
    messages = [d for d in docs if "role" in d]
    session = next(d for d in docs if d.get("type") == "session")
    assert len(messages) == 20
    assert session["message_count"] == 20
    # The message applied last sets it; concurrent writers may apply in another order than their clocks read.
    assert session["last_message_at"] in {m["timestamp"] for m in messages}
    (entry,) = await _index(deps, me)
    assert entry["message_count"] == 20
    assert entry["last_message_at"] == session["last_message_at"]
    history = await chat.history(me, chat_id, limit=100)
    assert history.message_count == 20
    assert sorted(m.message for m in history.messages) == sorted(f"message {i}" for i in range(20))


async def test_round_trips_per_call(deps: Deps, chat: ChatService) -> None:
    me = person()
    c = await _container(deps)

    before = c.requests
    chat_id = (await chat.create_session(me)).chat_id
    assert c.requests - before == 2

    before = c.requests
    await chat.store_message(me, chat_id, "hello", "user")
    assert c.requests - before == 2

    before = c.requests
    exchange = await chat.send(me, chat_id, "Show my pending tasks", Assistant())
    per_message = c.requests - before
    assert per_message == 4

    before = c.requests
    started = await chat.send(me, None, "What is due today?", Assistant())
    assert c.requests - before == 3

    before = c.requests
    await chat.history(me, chat_id, limit=50)
    assert c.requests - before == 2
    before = c.requests
    listed = await chat.recent_sessions(me)
    assert c.requests - before == 1
    assert [s.chat_id for s in listed.sessions] == [started.chat_id, exchange.chat_id]
    assert [s.message_count for s in listed.sessions] == [2, 3]


async def test_send_gives_the_assistant_the_earlier_messages_and_stores_both(deps: Deps, chat: ChatService) -> None:
    me = person()
    chat_id = (await chat.create_session(me)).chat_id
    for i in range(5):
        await chat.store_message(me, chat_id, f"earlier {i}", "user" if i % 2 == 0 else "assistant")
    reply = Reply(
        text="Delete these 2 tasks? Say yes to confirm.",
        tool_calls=[Call("bulk_delete_tasks", {"status": "completed"}, True, "2 tasks would be deleted")],
        task_ids=["t1", "t2"],
        metadata={"pending_confirmation": {"token": "tok", "task_ids": ["t1", "t2"]}},
    )
    assistant = Assistant(reply)
    result = await chat.send(me, chat_id, "delete all completed tasks", assistant, history_limit=3)
    history, text = assistant.seen[0]
    assert text == "delete all completed tasks"
    # The 3 newest earlier messages, oldest first, without the message being answered.
    assert [h.message for h in history] == ["earlier 2", "earlier 3", "earlier 4"]
    assert result.response == reply.text
    assert [c.name for c in result.tool_calls] == ["bulk_delete_tasks"]
    assert result.task_ids == ["t1", "t2"]
    page = await chat.history(me, chat_id, limit=2)
    assert [m.id for m in page.messages] == [result.user_message_id, result.assistant_message_id]
    assert [m.role for m in page.messages] == ["user", "assistant"]
    meta = page.messages[1].metadata
    assert meta is not None
    assert meta["task_ids"] == ["t1", "t2"]
    assert meta["tool_calls"] == 1
    assert meta["pending_confirmation"] == {"token": "tok", "task_ids": ["t1", "t2"]}
    # The next turn sees that metadata in its history (how a confirmation is found again).
    follow = Assistant()
    await chat.send(me, chat_id, "yes", follow)
    assert follow.seen[0][0][-1].metadata["pending_confirmation"]["token"] == "tok"


async def test_history_is_newest_n_oldest_first_and_pages_backwards(chat: ChatService) -> None:
    me = person()
    chat_id = (await chat.create_session(me)).chat_id
    for i in range(7):
        await chat.store_message(me, chat_id, f"m{i}", "user")
    first = await chat.history(me, chat_id, limit=3)
    assert [m.message for m in first.messages] == ["m4", "m5", "m6"]
    assert first.continuation is not None
    second = await chat.history(me, chat_id, limit=3, continuation=first.continuation)
    assert [m.message for m in second.messages] == ["m1", "m2", "m3"]
    assert second.continuation is not None
    third = await chat.history(me, chat_id, limit=3, continuation=second.continuation)
    assert [m.message for m in third.messages] == ["m0"]
    bare = await chat.history(me, chat_id, limit=1, include_metadata=False)
    assert bare.messages[0].metadata is None


async def test_llm_failure_leaves_exactly_the_user_message(deps: Deps, chat: ChatService) -> None:
    me = person()
    chat_id = (await chat.create_session(me)).chat_id
    down = Assistant(error=UpstreamError("the language model is unavailable"))
    with pytest.raises(UpstreamError):
        await chat.send(me, chat_id, "show my tasks", down)
    docs = await _partition(deps, chat_id)
    messages = [d for d in docs if "role" in d]
    assert [(m["role"], m["message"]) for m in messages] == [("user", "show my tasks")]
    session = next(d for d in docs if d.get("type") == "session")
    assert session["message_count"] == 1
    (entry,) = await _index(deps, me)
    assert entry["message_count"] == 1
    # A new chat whose first answer fails: the session and the user's message stay, listed once.
    other = person()
    with pytest.raises(UpstreamError):
        await chat.send(other, None, "what is due?", down)
    (listed,) = (await chat.recent_sessions(other)).sessions
    assert listed.message_count == 1
    assert [m.role for m in (await chat.history(other, listed.chat_id)).messages] == ["user"]


async def test_two_owners_never_see_each_other(deps: Deps, chat: ChatService) -> None:
    alice = person()
    # The same user id in another workspace is another owner.
    twin = person(user="alice")
    bob = person(workspace=alice.workspace_id, user="bob")
    chat_id = (await chat.create_session(alice, "mine")).chat_id
    await chat.store_message(alice, chat_id, "secret plans", "user")
    before = await _partition(deps, chat_id)
    for other in (twin, bob):
        with pytest.raises(NotFound):
            await chat.history(other, chat_id)
        with pytest.raises(NotFound):
            await chat.store_message(other, chat_id, "let me in", "user")
        with pytest.raises(NotFound):
            await chat.send(other, chat_id, "let me in", Assistant())
        assert (await chat.recent_sessions(other)).sessions == []
    assert await _partition(deps, chat_id) == before
    assert [s.session_name for s in (await chat.recent_sessions(alice)).sessions] == ["mine"]


async def test_guessed_ids_and_index_partitions_are_not_found(deps: Deps, chat: ChatService) -> None:
    me = person()
    await chat.create_session(me)
    c = await _container(deps)
    before = c.requests
    for guess in (str(uuid.uuid4()), index_partition(owner_key(me)), "../x", str(uuid.uuid4()).upper()):
        with pytest.raises(NotFound):
            await chat.history(me, guess)
        with pytest.raises(NotFound):
            await chat.store_message(me, guess, "hi", "user")
    # Ids that are not lower-case uuids never reach Cosmos; the well-formed guess cost a read and a batch.
    assert c.requests - before == 2


async def test_user_id_must_be_the_callers(chat: ChatService) -> None:
    me = person()
    with pytest.raises(Forbidden):
        await chat.create_session(me, user_id="mallory")
    with pytest.raises(Forbidden):
        await chat.recent_sessions(me, user_id="mallory")
    assert (await chat.recent_sessions(me, user_id="alice")).sessions == []


async def test_bounds_are_validation_errors_that_write_nothing(deps: Deps, chat: ChatService) -> None:
    me = person()
    chat_id = (await chat.create_session(me)).chat_id
    deep: dict[str, Any] = {"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}
    bad_calls = [
        chat.store_message(me, chat_id, "", "user"),
        chat.store_message(me, chat_id, "x" * 4001, "user"),
        chat.store_message(me, chat_id, "   ", "user"),
        chat.store_message(me, chat_id, "hi", "system"),
        chat.store_message(me, chat_id, "hi", "user", {"blob": "x" * 5000}),
        chat.store_message(me, chat_id, "hi", "user", deep),
        chat.history(me, chat_id, limit=0),
        chat.history(me, chat_id, limit=101),
        chat.create_session(me, "n" * 201),
        chat.send(me, chat_id, "x" * 4001, Assistant()),
    ]
    for call in bad_calls:
        with pytest.raises(ValidationFailed):
            await call
    assert [d["id"] for d in await _partition(deps, chat_id)] == [chat_id]
    assert (await chat.store_message(me, chat_id, "x" * 4000, "user")).message_count == 1


async def test_secrets_in_messages_are_redacted_before_storage(deps: Deps, chat: ChatService) -> None:
    me = person()
    chat_id = (await chat.create_session(me)).chat_id
    stored = await chat.store_message(me, chat_id, "my key is sk-abcdefghijklmnopqrstuvwxyz123456", "user")
    doc = next(d for d in await _partition(deps, chat_id) if d["id"] == stored.message_id)
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in doc["message"]


async def test_the_assistant_history_setting_bounds_what_send_passes(deps: Deps) -> None:
    tuned = dataclasses.replace(deps, settings=deps.settings.with_section(ChatSettings(assistant_history=2)))
    chat = chat_service(tuned)
    me = person()
    chat_id = (await chat.create_session(me)).chat_id
    for i in range(4):
        await chat.store_message(me, chat_id, f"earlier {i}", "user")
    assistant = Assistant()
    await chat.send(me, chat_id, "now", assistant)
    assert [h.message for h in assistant.seen[0][0]] == ["earlier 2", "earlier 3"]


async def test_concurrent_exchanges_in_one_chat_keep_every_count(deps: Deps, chat: ChatService) -> None:
    me = person()
    chat_id = (await chat.create_session(me)).chat_id
    results = await asyncio.gather(*(chat.send(me, chat_id, f"question {i}", Assistant()) for i in range(10)))
    docs = await _partition(deps, chat_id)
    messages = [d for d in docs if "role" in d]
    session = next(d for d in docs if d.get("type") == "session")
    assert len(messages) == 20
    assert session["message_count"] == 20
    assert {m["id"] for m in messages} == {i for r in results for i in (r.user_message_id, r.assistant_message_id)}
    (entry,) = await _index(deps, me)
    assert entry["message_count"] == 20
    assert entry["last_message_at"] == session["last_message_at"]
