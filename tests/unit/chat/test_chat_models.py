"""The chat's pure rules: owner keys, chat ids, metadata bounds, timestamps that sort, the user_id rule."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from shared.chat.models import (
    CHAT_ID,
    CreateChatSessionRequest,
    GetChatHistoryRequest,
    StoreChatMessageRequest,
    check_metadata,
)
from shared.chat.service import check_user, iso
from shared.chat.store import index_partition, owner_key
from shared.core.errors import Forbidden
from shared.identity.models import Principal


def p(workspace: str, user: str) -> Principal:
    return Principal(workspace_id=workspace, user_id=user, source="dev")


def test_owner_key_is_32_lower_hex_of_the_pair() -> None:
    key = owner_key(p("ws-1", "alice"))
    assert key == hashlib.sha256(b"ws-1\nalice").hexdigest()[:32]
    assert key == key.lower()
    assert len(key) == 32
    # The separator keeps ("ws-1a", "lice") and ("ws-1", "alice") apart; so are two workspaces' alices.
    assert owner_key(p("ws-1a", "lice")) != key
    assert owner_key(p("ws-2", "alice")) != key


def test_only_server_minted_uuids_are_chat_ids() -> None:
    assert CHAT_ID.fullmatch(str(uuid.uuid4()))
    for other in (str(uuid.uuid4()).upper(), index_partition("0" * 32), "", "x", str(uuid.uuid1()), uuid.uuid4().hex):
        assert not CHAT_ID.fullmatch(other)
    with pytest.raises(ValidationError):
        GetChatHistoryRequest(chat_id=index_partition("0" * 32))


@pytest.mark.parametrize(
    "value",
    [
        {"x": "y" * 4_100},
        {"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}},
        {"a": [[[[[1]]]]]},
        {"n": float("nan")},
    ],
)
def test_metadata_bounds(value: dict) -> None:
    with pytest.raises(ValueError, match="metadata"):
        check_metadata(value)


def test_metadata_within_bounds_passes_unchanged() -> None:
    ok = {"task_ids": ["t1", "t2"], "a": {"b": {"c": {"d": 1}}}, "text": "é" * 1_000}
    assert check_metadata(ok) is ok
    assert check_metadata(None) is None
    with pytest.raises(ValidationError):
        StoreChatMessageRequest(chat_id=str(uuid.uuid4()), message="hi", role="user", metadata={"x": "é" * 2_100})


def test_request_bounds() -> None:
    chat_id = str(uuid.uuid4())
    StoreChatMessageRequest(chat_id=chat_id, message="x" * 4_000, role="assistant")
    for bad in ({"message": ""}, {"message": "x" * 4_001}, {"role": "system"}, {"extra": 1}):
        with pytest.raises(ValidationError):
            StoreChatMessageRequest.model_validate({"chat_id": chat_id, "message": "hi", "role": "user", **bad})
    with pytest.raises(ValidationError):
        CreateChatSessionRequest(session_name="n" * 201)
    assert GetChatHistoryRequest(chat_id=chat_id).limit == 20
    for limit in (0, 101):
        with pytest.raises(ValidationError):
            GetChatHistoryRequest(chat_id=chat_id, limit=limit)


def test_timestamps_are_fixed_width_utc_so_text_order_is_time_order() -> None:
    base = datetime(2025, 12, 7, 10, 30, tzinfo=UTC)
    moments = [base, base + timedelta(microseconds=1), base + timedelta(seconds=1), base + timedelta(days=40)]
    texts = [iso(m) for m in moments]
    assert texts[0] == "2025-12-07T10:30:00.000000Z"
    assert texts == sorted(texts)
    assert len(set(map(len, texts))) == 1
    assert iso(datetime(2025, 12, 7, 12, 30, tzinfo=timezone(timedelta(hours=2)))) == texts[0]


def test_user_id_may_only_name_the_caller() -> None:
    me = p("ws", "alice")
    check_user(me, None)
    check_user(me, "alice")
    with pytest.raises(Forbidden):
        check_user(me, "bob")
    with pytest.raises(Forbidden):
        check_user(me, "Alice")
