"""SSE parsing and aggregation of NeuBird's prompt stream, fed as byte chunks split every possible way."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.neubird.stream import (
    Aggregator,
    InvestigationResults,
    SseEvent,
    SseLineTooLong,
    SseParser,
    TurnState,
    aggregate,
    is_delta,
    is_end_of_turn,
    parse_chunks,
    state_from_inspect,
    state_from_prompt_cycle,
    strip_html,
)

# Contract section 12, E5, verbatim (the session-name part keeps its trailing space; LF line ends).
E5 = (Path(__file__).parents[2] / "fixtures" / "neubird" / "e5_stream.txt").read_bytes()

E7_CYCLE: dict[str, Any] = {
    "id": "pc-1",
    "create_time": "2026-11-21T10:00:01Z",
    "status": "PROMPT_STATUS_COMPLETED",
    "request": {
        "messages": [
            {
                "content": {
                    "content_type": "CONTENT_TYPE_CHAT_PROMPT",
                    "parts": ["Investigate alert /aws/alerts/checkout-5xx-4411"],
                }
            }
        ]
    },
    "final_answer": "**Root cause:** DB pool exhausted.<br>",
    "rating": "",
    "follow_up_suggestions": ["Has this happened before?", "Which deploy changed the pool size?"],
    "sources": [{"id": "s1", "title": "log_datadog.datadog_logs", "category": "logs"}],
    "chain_of_thoughts": [
        {
            "id": "c1",
            "category": "CATEGORY_LOG_ANALYSIS",
            "description": "Which pods logged 5xx?",
            "explanation": "Scan error logs",
            "investigation": "checkout-7f9 logged 412 errors",
            "status": "CHAIN_OF_THOUGHT_STATUS_COMPLETED",
            "cot_status": "CHAIN_OF_THOUGHT_STATUS_COMPLETED",
            "sources_involved": ["log_datadog.datadog_logs"],
            "processing_time": "5120",
        }
    ],
}

E5_RESULTS = {
    "final_answer": "**Root cause:** DB pool exhausted.",
    "chain_of_thoughts": [
        {
            "description": "Which pods logged 5xx?",
            "investigation": "checkout-7f9 logged 412 errors",
            "category": "CATEGORY_LOG_ANALYSIS",
            "status": "CHAIN_OF_THOUGHT_STATUS_COMPLETED",
            "sources_involved": ["log_datadog.datadog_logs"],
        }
    ],
    "sources": [{"id": "s1", "category": "logs", "title": "log_datadog.datadog_logs"}],
    "follow_up_suggestions": ["Has this happened before?", "Which deploy changed the pool size?"],
}


def splits(body: bytes) -> Iterator[tuple[str, list[bytes]]]:
    """The body whole, byte by byte, in 2/3/7/64-byte pieces, and with \\r\\n line endings byte by byte."""
    yield "whole", [body]
    yield "bytes", [body[i : i + 1] for i in range(len(body))]
    for size in (2, 3, 7, 64):
        yield f"{size}b", [body[i : i + size] for i in range(0, len(body), size)]
    crlf = body.replace(b"\n", b"\r\n")
    yield "crlf-bytes", [crlf[i : i + 1] for i in range(len(crlf))]
    yield "crlf-5b", [crlf[i : i + 5] for i in range(0, len(crlf), 5)]


def events(chunks: list[bytes], **kw: Any) -> list[SseEvent]:
    return list(parse_chunks(chunks, **kw))


def sse(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def msg(content_type: str, parts: list[Any], *, delta: Any = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": "pc-1",
        "content": {"content_type": content_type, "parts": [p if isinstance(p, str) else json.dumps(p) for p in parts]},
        **extra,
    }
    if delta is not None:
        message["metadata"] = {"is_delta": delta}
    return {"message": message}


def state_of(*items: tuple[str, dict[str, Any]]) -> TurnState:
    return aggregate(SseEvent(name, data) for name, data in items)


# --- the parser ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("how", "chunks"), list(splits(E5)), ids=[h for h, _ in splits(E5)])
def test_e5_parses_to_the_same_events_however_it_is_split(how: str, chunks: list[bytes]) -> None:
    got = events(chunks)
    assert [e.name for e in got] == ["message"] * 3 + ["cot_start", "cot_delta", "cot_end"] + ["message"] * 4
    assert got[0].data["session_uuid"] == "69a1b2c3d4e5f60718293a4c"
    assert got[-1].data["message"]["end_turn"] is True


@pytest.mark.parametrize(("how", "chunks"), list(splits(E5)), ids=[h for h, _ in splits(E5)])
def test_e5_aggregates_to_the_spec_results(how: str, chunks: list[bytes]) -> None:
    state = aggregate(parse_chunks(chunks))
    assert state.results.to_dict() == E5_RESULTS
    assert state.ended is True
    assert state.session_name == "Checkout 5xx spike"
    assert state.session_uuid == "69a1b2c3d4e5f60718293a4c"
    assert state.message_id == "pc-1"
    assert state.progress_text == "PromptGate (Preparing Telemetry Sources)"
    assert state.execution_time_ms == 84213
    assert (state.total_steps, state.completed_steps, state.current_step_number) == (1, 1, 1)
    assert state.current_step == "Which pods logged 5xx?"
    assert state.errors == ()
    assert state.sources_consulted == 1


def test_a_utf8_character_split_across_chunks_survives() -> None:
    body = sse(
        'data: {"message":{"content":{"content_type":"CONTENT_TYPE_SESSION_NAME","parts":["Überlast - 数据库"]}}}'
    )
    cut = body.index("数".encode()) + 1  # inside the 3-byte character
    got = events([body[:cut], body[cut:]])
    assert got[0].data["message"]["content"]["parts"] == ["Überlast - 数据库"]


def test_event_name_resets_after_a_blank_line_and_not_before() -> None:
    body = sse("event: cot_delta", 'data: {"a":1}', 'data: {"a":2}', "", 'data: {"a":3}')
    assert [(e.name, e.data["a"]) for e in events([body])] == [("cot_delta", 1), ("cot_delta", 2), ("message", 3)]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param(['data:{"x":1}'], [{"x": 1}], id="data-without-space"),
        pytest.param(['data:   {"x":1}   '], [{"x": 1}], id="data-surrounding-whitespace"),
        pytest.param([": keepalive", ":", "id: 7-0", "retry: 3000", 'data: {"x":1}'], [{"x": 1}], id="ignored-lines"),
        pytest.param(["data: [DONE]", "data: :keepalive", 'data: {"x":1}'], [{"x": 1}], id="done-and-keepalive"),
        pytest.param(["data: not json", "data: {broken", 'data: {"x":1}'], [{"x": 1}], id="non-json-skipped"),
        pytest.param(["data: [1,2]", 'data: "s"', "data: 3", "data: null"], [], id="json-not-object-skipped"),
        pytest.param(['data: {"x":1}', 'data: {"x":2}'], [{"x": 1}, {"x": 2}], id="one-json-per-line"),
        pytest.param(['data: {"x":', "data: 1}"], [], id="lines-never-joined"),
        pytest.param(["nonsense line", "data"], [], id="unknown-fields"),
        pytest.param(["event:", 'data: {"x":1}'], [{"x": 1}], id="empty-event-name"),
    ],
)
def test_line_rules(lines: list[str], expected: list[dict[str, Any]]) -> None:
    assert [e.data for e in events([sse(*lines)])] == expected


def test_last_line_without_a_line_break_is_read_at_close() -> None:
    assert [e.data for e in events([b'data: {"x":1}'])] == [{"x": 1}]
    parser = SseParser()
    assert parser.feed(b'data: {"x":2}') == []
    assert [e.data for e in parser.close()] == [{"x": 2}]
    assert parser.close() == []


def test_json_nested_past_the_parsers_stack_is_skipped_like_other_non_json() -> None:
    # json.loads raises RecursionError, not ValueError, past ~1,000 levels: it broke the stream's iteration.
    deep = b"data: " + b"[" * 50_000 + b"\n"
    part = json.dumps("[" * 50_000)  # a chain-of-thought part is JSON inside the JSON
    cot = {"message": {"content": {"content_type": "CONTENT_TYPE_CHAIN_OF_THOUGHT", "parts": [json.loads(part)]}}}
    chunks = [deep, b"data: " + json.dumps(cot).encode() + b"\n", b'data: {"end_turn": true}\n']
    found = list(events(chunks))
    assert [e.data for e in found] == [cot, {"end_turn": True}]
    assert aggregate(found).total_steps == 1


def test_a_line_over_the_cap_fails_clearly_even_when_it_never_ends() -> None:
    parser = SseParser(max_line_bytes=1024)
    parser.feed(b"data: " + b"x" * 500)
    for _ in range(2):  # 900 bytes buffered: still under the cap
        assert parser.feed(b"y" * 200) == []
    with pytest.raises(SseLineTooLong, match="passed 1024 bytes"):  # a line that never ends fails at the cap
        parser.feed(b"y" * 200)
    assert len(parser._buffer) == 0


def test_a_complete_long_line_in_one_chunk_fails_too() -> None:
    with pytest.raises(SseLineTooLong):
        events([b"data: " + b"x" * 2000 + b"\n"], max_line_bytes=1024)


def test_lines_at_the_cap_pass() -> None:
    value = "x" * (1024 - len('data: {"v":""}'))
    line = ('data: {"v":"' + value + '"}').encode()
    assert len(line) == 1024
    assert events([line + b"\r\n"], max_line_bytes=1024)[0].data == {"v": value}


def test_the_default_cap_is_one_mib() -> None:
    big = b'data: {"v":"' + b"a" * (1024 * 1024) + b'"}\n'
    with pytest.raises(SseLineTooLong, match="1048576"):
        events([big])


# --- payload rules ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), ("true", True), (False, False), ("false", False), (1, False), ("TRUE", False), (None, False)],
)
def test_is_delta_accepts_only_true_and_the_string_true(value: Any, expected: bool) -> None:
    assert is_delta(value) is expected


def test_is_delta_decides_append_or_replace_of_the_answer() -> None:
    for value, answer in [(True, "ab"), ("true", "ab"), (1, "b"), ("false", "b"), ("yes", "b")]:
        state = state_of(
            ("message", msg("CONTENT_TYPE_CHAT_RESPONSE", ["a"], delta=True)),
            ("message", msg("CONTENT_TYPE_CHAT_RESPONSE", ["b"], delta=value)),
        )
        assert state.results.final_answer == answer, value


@pytest.mark.parametrize(
    ("data", "ended"),
    [
        ({"message": {"end_turn": True}}, True),
        ({"message": {"status": "STATUS_DONE"}}, True),
        ({"end_turn": True}, True),
        ({"result": {"message": {"end_turn": True}}}, True),
        ({"message": {"end_turn": "true"}}, False),
        ({"message": {"status": "STATUS_RUNNING"}}, False),
        ({}, False),
    ],
)
def test_end_of_turn(data: dict[str, Any], ended: bool) -> None:
    assert is_end_of_turn(data) is ended
    assert aggregate([SseEvent("message", data)]).ended is ended


def test_result_wrapping_is_unwrapped() -> None:
    wrapped = {"result": {"session_uuid": "s-9", **msg("CONTENT_TYPE_SESSION_NAME", ["Name"])}}
    state = state_of(("message", wrapped))
    assert (state.session_uuid, state.session_name) == ("s-9", "Name")


def test_a_top_level_message_wins_over_result() -> None:
    data = {**msg("CONTENT_TYPE_SESSION_NAME", ["Outer"]), "result": msg("CONTENT_TYPE_SESSION_NAME", ["Inner"])}
    assert state_of(("message", data)).session_name == "Outer"


def test_chat_response_replace_mode_joins_parts_and_replaces() -> None:
    state = state_of(
        ("message", msg("CONTENT_TYPE_CHAT_RESPONSE", ["first draft"])),
        ("message", msg("CONTENT_TYPE_CHAT_RESPONSE", ["line one", "line two"], delta=False)),
    )
    assert state.results.final_answer == "line one\nline two"


def test_chat_deltas_after_a_replace_append() -> None:
    state = state_of(
        ("message", msg("CONTENT_TYPE_CHAT_RESPONSE", ["Root "])),
        ("message", msg("CONTENT_TYPE_CHAT_RESPONSE", ["cause"], delta=True)),
    )
    assert state.results.final_answer == "Root cause"


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("a<br>b<br/>c<BR />d", "a\nb\nc\nd"),
        ("<p>one</p><p>two</p>", "one\ntwo"),
        ("**bold** &amp; <b>tag</b>", "**bold** & tag"),
        ("latency < 2s and > 1s", "latency < 2s and > 1s"),
        ("trailing   <br>   \n\n\n\nnext", "trailing\n\nnext"),
        ("  padded  ", "padded"),
        ('<a href="https://x">link</a>', "link"),
    ],
)
def test_strip_html(raw: str, text: str) -> None:
    assert strip_html(raw) == text


def test_progress_keeps_the_latest_text_and_a_deduplicated_history() -> None:
    texts = [
        "PromptGate (Preparing Telemetry Sources)",
        "(Found 9 results)",
        "(Found 12 results)",
        "(Selected 3 data sources)",
        "PromptGate (Preparing Telemetry Sources)",
        "(Found 9 results)",
    ]
    state = state_of(*(("message", msg("CONTENT_TYPE_PROGRESS_STATUS", [t])) for t in texts))
    assert state.progress_text == "(Found 9 results)"
    assert state.progress_history == (
        "PromptGate (Preparing Telemetry Sources)",
        "(Found 9 results)",
        "(Selected 3 data sources)",
    )


def test_sources_are_deduplicated_by_id_else_title() -> None:
    state = state_of(
        ("message", msg("CONTENT_TYPE_SOURCES", [{"id": "s1", "title": "logs A", "category": "logs"}])),
        (
            "message",
            msg("CONTENT_TYPE_SOURCES", [{"id": "s1", "title": "logs A (renamed)"}, {"id": "s2", "title": "logs A"}]),
        ),
        ("message", msg("CONTENT_TYPE_SOURCES", [{"title": "metrics"}, "metrics", "plain source", "", "{not json"])),
        ("message", msg("CONTENT_TYPE_SOURCES", [{"category": "no key"}])),
    )
    assert state.results.sources == [
        {"id": "s1", "title": "logs A (renamed)", "category": "logs"},
        {"id": "s2", "title": "logs A"},
        {"title": "metrics"},
        {"title": "plain source"},
        {"title": "{not json"},
    ]


def test_follow_up_suggestions_replace_earlier_ones() -> None:
    state = state_of(
        ("message", msg("CONTENT_TYPE_FOLLOW_UP_SUGGESTIONS", ["old?"])),
        ("message", msg("CONTENT_TYPE_FOLLOW_UP_SUGGESTIONS", ["new one?", "  ", "and two?"])),
    )
    assert state.results.follow_up_suggestions == ["new one?", "and two?"]


def test_error_message_content_is_ignored_and_in_stream_errors_are_recorded() -> None:
    state = state_of(
        ("message", msg("CONTENT_TYPE_ERROR_MESSAGE", ["SQL failed, retrying"])),
        ("message", {"error": "project 5a1f does not exist"}),
        ("message", {"response": {"error_code": 500, "error_message": "backend hiccup"}}),
        ("message", {"response": {"error_code": 0, "error_message": ""}}),
    )
    assert state.errors == ("project 5a1f does not exist", "backend hiccup")
    assert state.results.final_answer == ""
    assert state.results.chain_of_thoughts == []
    assert state.ended is False


def test_execution_time_that_is_not_a_number_is_ignored() -> None:
    assert state_of(("message", msg("CONTENT_TYPE_EXECUTION_TIME", ["soon"]))).execution_time_ms is None
    assert state_of(("message", msg("CONTENT_TYPE_EXECUTION_TIME", ["1500.0"]))).execution_time_ms == 1500


def test_unknown_content_types_and_payloads_without_message_are_ignored() -> None:
    state = state_of(
        ("message", msg("CONTENT_TYPE_VISUALIZATION", ["chart"])),
        ("falcon", {"type": "phase", "phase": "investigating"}),
        ("message", {"message": "not an object"}),
        ("message", {"message": {"content": {"content_type": "CONTENT_TYPE_CHAT_RESPONSE", "parts": "no list"}}}),
    )
    assert state.results == InvestigationResults("", [], [], [])


# --- chain of thought ------------------------------------------------------------------------------------------


def step(step_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": step_id, **fields}


IN_PROGRESS = "CHAIN_OF_THOUGHT_STATUS_IN_PROGRESS"
COMPLETED = "CHAIN_OF_THOUGHT_STATUS_COMPLETED"
COT = "CONTENT_TYPE_CHAIN_OF_THOUGHT"


def test_delta_mode_two_steps_with_a_late_cot_end_and_interleaved_progress() -> None:
    agg = Aggregator()
    feed = [
        ("cot_start", msg(COT, [step("c1", description="Q1", category="CATEGORY_LOG_ANALYSIS", status=IN_PROGRESS)])),
        ("cot_delta", msg(COT, [step("c1", investigation="part one ")], delta=True)),
        ("message", msg("CONTENT_TYPE_PROGRESS_STATUS", ["(Found 3 results)"])),
        ("cot_delta", msg(COT, [step("c1", investigation="part two")], delta=True)),
        ("cot_start", msg(COT, [step("c2", description="Q2", status=IN_PROGRESS)])),
        # Late cot_end of c1, after c2 started: c2 stays current, c1 only gets its status and sources.
        ("cot_end", msg(COT, [step("c1", status=COMPLETED, sources_involved=["x"], description="IGNORED")])),
        ("cot_end", msg(COT, [step("c0", status=COMPLETED)])),  # late end of a step never started: ignored
        ("cot_delta", msg(COT, [step("c2", investigation="found it")], delta=True)),
    ]
    for name, data in feed:
        agg.feed(SseEvent(name, data))
    mid = agg.state()
    assert [s.to_dict() for s in mid.steps] == [
        {
            "description": "Q1",
            "investigation": "part one part two",
            "category": "CATEGORY_LOG_ANALYSIS",
            "status": COMPLETED,
            "sources_involved": ["x"],
        },
        {"description": "Q2", "investigation": "found it", "status": IN_PROGRESS},
    ]
    assert (mid.total_steps, mid.completed_steps, mid.current_step_number, mid.current_step) == (2, 1, 2, "Q2")
    assert mid.progress_text == "(Found 3 results)"
    agg.feed(SseEvent("cot_end", msg(COT, [step("c2", status=COMPLETED, sources_involved=["log_a", "log_b"])])))
    end = agg.state()
    assert end.steps[1].status == COMPLETED
    assert end.steps[1].sources_involved == ["log_a", "log_b"]
    assert (end.completed_steps, end.current_step_number) == (2, 2)
    # the snapshot taken earlier did not change
    assert mid.steps[1].status == IN_PROGRESS


def test_delta_mode_cot_end_keeps_the_text_and_cot_delta_without_start_opens_the_step() -> None:
    state = state_of(
        ("cot_delta", msg(COT, [step("c7", investigation="orphan text")], delta=True)),
        ("cot_end", msg(COT, [step("c7", status=COMPLETED, investigation="IGNORED full text")])),
    )
    assert state.results.chain_of_thoughts == [{"description": "", "investigation": "orphan text", "status": COMPLETED}]
    assert state.completed_steps == 1


def test_delta_mode_a_plain_text_delta_appends_to_the_active_step() -> None:
    state = state_of(
        ("cot_start", msg(COT, [step("c1", description="Q")])),
        ("cot_delta", msg(COT, ["plain fragment"], delta=True)),
    )
    assert state.steps[0].investigation == "plain fragment"


def test_snapshot_mode_full_texts_replace_and_the_active_step_is_the_first_in_progress() -> None:
    s1 = step("c1", description="Q1", investigation="done text", status=COMPLETED)
    state = state_of(
        ("message", msg(COT, [step("c1", description="Q1", investigation="Investigating...", status=IN_PROGRESS)])),
        ("message", msg(COT, [step("c1", description="Q1", investigation="done te", status=IN_PROGRESS)])),
        ("message", msg(COT, [s1, step("c2", description="Q2", investigation="Thinking...", status=IN_PROGRESS)])),
        ("message", msg(COT, [s1, step("c2", description="Q2", investigation="second", cot_status=IN_PROGRESS)])),
        ("message", msg(COT, [s1, step("c3", description="Q3", status="CHAIN_OF_THOUGHT_STATUS_PENDING")])),
    )
    assert [(s.id, s.investigation, s.status) for s in state.steps] == [
        ("c1", "done text", COMPLETED),
        ("c2", "second", IN_PROGRESS),
        ("c3", "", "CHAIN_OF_THOUGHT_STATUS_PENDING"),
    ]
    # no step of the latest snapshot is in progress: the last one is current
    assert (state.total_steps, state.completed_steps, state.current_step_number, state.current_step) == (3, 1, 3, "Q3")


def test_snapshot_mode_with_is_delta_appends_to_the_active_step_only() -> None:
    state = state_of(
        ("message", msg(COT, [step("c1", investigation="alpha ", status=IN_PROGRESS)], delta=True)),
        ("message", msg(COT, [step("c1", investigation="beta", status=IN_PROGRESS)], delta=True)),
        (
            "message",
            msg(
                COT,
                [step("c1", investigation="x", status=COMPLETED), step("c2", investigation="g", status=IN_PROGRESS)],
                delta=True,
            ),
        ),
    )
    assert [s.investigation for s in state.steps] == ["alpha beta", "g"]
    assert state.current_step_number == 2


def test_snapshot_steps_without_ids_are_numbered_by_position_and_cot_status_wins() -> None:
    state = state_of(
        (
            "message",
            msg(COT, [{"description": "A", "status": IN_PROGRESS, "cot_status": COMPLETED}, {"description": "B"}]),
        ),
    )
    assert [s.id for s in state.steps] == ["step-1", "step-2"]
    assert state.steps[0].status == COMPLETED
    assert state.completed_steps == 1


@pytest.mark.parametrize(
    ("status", "done"),
    [
        (COMPLETED, True),
        ("CHAIN_OF_THOUGHT_STATUS_DONE", True),
        ("DONE", True),
        ("COMPLETED", True),
        (IN_PROGRESS, False),
        ("CHAIN_OF_THOUGHT_STATUS_ERROR", False),
        (None, False),
    ],
)
def test_completed_statuses(status: str | None, done: bool) -> None:
    state = state_of(("cot_start", msg(COT, [step("c1", **({"status": status} if status else {}))])))
    assert state.completed_steps == int(done)


# --- inspect agrees with the stream ----------------------------------------------------------------------------


def test_the_e7_prompt_cycle_gives_the_same_results_as_the_e5_stream() -> None:
    streamed = aggregate(parse_chunks([E5]))
    inspected = state_from_prompt_cycle(E7_CYCLE, session_name="Checkout 5xx spike")
    assert inspected.results == streamed.results
    assert inspected.results.to_dict() == E5_RESULTS
    assert (inspected.total_steps, inspected.completed_steps, inspected.current_step) == (
        1,
        1,
        "Which pods logged 5xx?",
    )
    assert inspected.ended is True
    assert inspected.prompt_status == "PROMPT_STATUS_COMPLETED"
    assert inspected.message_id == "pc-1"
    assert inspected.session_name == "Checkout 5xx spike"


def test_state_from_inspect_takes_the_last_cycle() -> None:
    running = {
        "id": "pc-2",
        "status": "PROMPT_STATUS_IN_PROGRESS",
        "chain_of_thoughts": [
            {"id": "a", "description": "A", "status": COMPLETED},
            {"id": "b", "description": "B", "status": IN_PROGRESS},
            {"id": "c", "description": "C", "status": "CHAIN_OF_THOUGHT_STATUS_PENDING"},
        ],
    }
    response = {"session_info": {"session_uuid": "s-1", "name": "N"}, "prompt_cycle": [E7_CYCLE, running]}
    state = state_from_inspect(response)
    assert state is not None
    assert (state.message_id, state.session_uuid, state.session_name) == ("pc-2", "s-1", "N")
    assert (state.total_steps, state.completed_steps, state.current_step_number, state.current_step) == (3, 1, 2, "B")
    assert state.ended is False
    assert state.results.final_answer == ""
    assert state.results.sources == []
    assert state_from_inspect({"prompt_cycle": []}) is None
    assert state_from_inspect({}) is None


def test_an_error_cycle_has_ended() -> None:
    state = state_from_prompt_cycle({"id": "pc-3", "status": "PROMPT_STATUS_ERROR"})
    assert state.ended is True
    assert state.results == InvestigationResults("", [], [], [])


def test_turn_state_to_dict_is_json() -> None:
    state = aggregate(parse_chunks([E5]))
    data = json.loads(json.dumps(state.to_dict()))
    assert data["investigation_results"] == E5_RESULTS
    assert data["ended"] is True
    assert (data["total_steps"], data["completed_steps"], data["current_step_number"]) == (1, 1, 1)
    assert data["progress_history"] == ["PromptGate (Preparing Telemetry Sources)"]
    assert data["execution_time_ms"] == 84213
