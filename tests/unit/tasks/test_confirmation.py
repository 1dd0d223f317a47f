"""The two-step bulk delete's token: bound to the user and the exact set, expiring, unforgeable."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.core.errors import Conflict, ValidationFailed
from shared.tasks.confirmation import issue, verify

KEY = b"k" * 32
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
IDS = ["t-1", "t-2", "t-3"]


def test_the_previewed_set_is_confirmed_in_any_order_and_names_its_nonce() -> None:
    c = issue(KEY, "alice", IDS, NOW)
    assert verify(KEY, c.token, "alice", list(reversed(IDS)), NOW + timedelta(minutes=4)) == c.nonce
    assert c.expires_at == NOW + timedelta(minutes=5)
    assert issue(KEY, "alice", IDS, NOW).nonce != c.nonce  # every preview is a new token


@pytest.mark.parametrize(
    ("user", "ids", "key"),
    [
        ("bob", IDS, KEY),  # another user
        ("alice", ["t-1", "t-2"], KEY),  # a task left the set since the preview
        ("alice", [*IDS, "t-4"], KEY),  # a task joined it
        ("alice", IDS, b"x" * 32),  # another deployment's key
    ],
)
def test_anything_but_the_previewed_set_of_that_user_is_refused(user: str, ids: list[str], key: bytes) -> None:
    c = issue(KEY, "alice", IDS, NOW)
    with pytest.raises(ValidationFailed) as caught:
        verify(key, c.token, user, ids, NOW)
    assert caught.value.details["errors"][0]["field"] == "confirmation_token"


def test_an_expired_token_is_a_conflict() -> None:
    c = issue(KEY, "alice", IDS, NOW)
    with pytest.raises(Conflict):
        verify(KEY, c.token, "alice", IDS, NOW + timedelta(minutes=5))


@pytest.mark.parametrize(
    "token",
    ["", "abc", "a.b.c", "x" * 600, "eyJleHAiOjk5OTk5OTk5OTl9.AAAA", "!!!.???", "bnVsbA.AAAA"],
)
def test_garbage_and_forged_tokens_are_refused(token: str) -> None:
    with pytest.raises(ValidationFailed):
        verify(KEY, token, "alice", IDS, NOW)


def test_a_token_with_its_expiry_edited_no_longer_matches() -> None:
    c = issue(KEY, "alice", IDS, NOW)
    payload, mac = c.token.split(".")
    later = issue(KEY, "alice", IDS, NOW + timedelta(days=1)).token.split(".")[0]
    with pytest.raises(ValidationFailed):
        verify(KEY, f"{later}.{mac}", "alice", IDS, NOW)
    assert payload != later
