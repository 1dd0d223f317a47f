"""General gaps the blind topic set showed (tests/fixtures/chat/topic_blind.json), tested on other phrasings:
past tenses of list verbs, a reschedule later in the message, one-letter slips in long task words, and other
apps' actions (messages to people, the address book)."""

from __future__ import annotations

import pytest

from shared.chat.assistant.guardrail import _one_slip, classify


@pytest.mark.parametrize(
    "message",
    [
        "which ones have I checked off this week",
        "anything I crossed off yesterday?",
        "can't do the car wash today, postpone it to sunday",
        "the plumber cancelled so reschedule that for next month",
        "whats overdeu",
        "list my remindres",
        "anything with a deadlnie this week",
        "show me the completd ones",
    ],
)
def test_task_requests_in_other_words_are_served(message: str) -> None:
    assert classify(message).kind == "task"


@pytest.mark.parametrize(
    "message",
    [
        "shoot a text to dave that the match is off",
        "send a message to the team channel",
        "email my landlord about the boiler",
        "put grandma's new number in my contacts",
        "add jo to my address book",
    ],
)
def test_other_apps_actions_are_refused(message: str) -> None:
    assert classify(message).refuse


@pytest.mark.parametrize(
    ("typed", "word", "slip"),
    [
        ("priorty", "priority", True),  # a letter left out
        ("prioritty", "priority", True),  # one added
        ("prierity", "priority", True),  # one changed
        ("priroity", "priority", True),  # two swapped
        ("pirorty", "priority", False),  # two slips
        ("tomorrow", "tomorrow", False),  # the word itself is not a slip
    ],
)
def test_one_slip(typed: str, word: str, slip: bool) -> None:
    assert _one_slip(typed, word) is slip


def test_reminders_of_messages_stay_tasks() -> None:
    # A to-do about messaging someone is still the user's to-do.
    assert classify("remind me to email my landlord on friday").kind == "task"
    assert classify("I need to text dave").kind == "task"
