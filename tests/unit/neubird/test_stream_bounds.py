"""A verbose or hostile stream stays bounded: text per step and answer is capped, state is built on demand."""

from __future__ import annotations

import json
from typing import Any

from shared.neubird.stream import MAX_ANSWER_CHARS, MAX_STEP_CHARS, Aggregator, SseEvent, state_from_prompt_cycle

COT = "CONTENT_TYPE_CHAIN_OF_THOUGHT"
CHAT = "CONTENT_TYPE_CHAT_RESPONSE"


def _event(name: str, content_type: str, part: Any, *, delta: bool = True) -> SseEvent:
    message: dict[str, Any] = {"id": "pc-1", "content": {"content_type": content_type, "parts": [part]}}
    if delta:
        message["metadata"] = {"is_delta": True}
    return SseEvent(name, {"message": message})


def test_fifty_thousand_deltas_keep_one_capped_step_and_a_capped_answer() -> None:
    agg = Aggregator()
    agg.feed(_event("cot_start", COT, json.dumps({"id": "c1", "description": "Which pods?"}), delta=False))
    fragment = "x" * 100
    for _ in range(50_000):  # 5 MB of step text, 5 MB of answer: far past both caps
        agg.feed(_event("cot_delta", COT, json.dumps({"id": "c1", "investigation": fragment})))
        agg.feed(_event("message", CHAT, fragment))
    state = agg.state()
    assert state.total_steps == 1
    assert len(state.steps[0].investigation) == MAX_STEP_CHARS
    assert len(state.results.chain_of_thoughts[0]["investigation"]) == MAX_STEP_CHARS
    assert len(state.results.final_answer) == MAX_ANSWER_CHARS


def test_a_full_snapshot_replaces_the_streamed_fragments() -> None:
    agg = Aggregator()
    agg.feed(_event("cot_start", COT, json.dumps({"id": "c1", "description": "d"}), delta=False))
    agg.feed(_event("cot_delta", COT, json.dumps({"id": "c1", "investigation": "partial "})))
    agg.feed(_event("message", COT, json.dumps({"id": "c1", "investigation": "the whole text"}), delta=False))
    assert agg.state().steps[0].investigation == "the whole text"


def test_odd_inspect_shapes_do_not_raise() -> None:
    for sources in (5, "abc", None, {"id": "s"}, [1, None, "logs"]):
        state = state_from_prompt_cycle({"status": "PROMPT_STATUS_COMPLETED", "sources": sources})
        assert state.ended
        assert all(isinstance(s, dict) for s in state.results.sources)


def test_a_snapshot_repeating_one_step_id_counts_it_once() -> None:
    agg = Aggregator()
    agg.feed(_event("cot_start", COT, json.dumps({"id": "c1", "description": "d"}), delta=False))
    part = json.dumps({"id": "c1", "investigation": "more ", "status": "CHAIN_OF_THOUGHT_STATUS_IN_PROGRESS"})
    message = {"id": "pc-1", "content": {"content_type": COT, "parts": [part] * 5_000}, "metadata": {"is_delta": True}}
    for _ in range(20):
        agg.feed(SseEvent("message", {"message": message}))
    state = agg.state()
    assert state.total_steps == 1
    assert state.steps[0].investigation == "more " * 20  # one fragment per event, not 5,000


def test_an_inspected_answer_is_capped_like_a_streamed_one() -> None:
    # From inspect the answer was whole (up to the 16 MiB response cap), and strip_html read it on the event loop.
    state = state_from_prompt_cycle({"status": "PROMPT_STATUS_COMPLETED", "final_answer": "<p>x</p>" * 1_000_000})
    assert len(state.results.final_answer) <= MAX_ANSWER_CHARS


def test_an_answer_with_an_absurd_character_reference_is_kept() -> None:
    # html.unescape raised ValueError on a decimal reference of 4,300+ digits: the status read failed.
    state = state_from_prompt_cycle({"status": "PROMPT_STATUS_COMPLETED", "final_answer": "a&#" + "9" * 5000 + ";b"})
    assert state.results.final_answer == "a\ufffdb"
