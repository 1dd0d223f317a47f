"""The investigation record's shape: JSON round trip, Cosmos system fields ignored, every bound enforced."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from shared.investigations.alerts import Alert
from shared.investigations.llm import CallUsage
from shared.investigations.models import (
    MAX_ARGS_JSON_CHARS,
    MAX_INLINE_OUTPUT_CHARS,
    MAX_ITERATIONS,
    MAX_REPORT_JSON_CHARS,
    CallEntry,
    InvestigationRecord,
    Iteration,
    Timings,
    TokenUsage,
)

RUN_ID = "0123456789abcdef0123456789abcdef"


def _record(**extra: Any) -> InvestigationRecord:
    alert = Alert(
        name="KubePodCrashLooping",
        title="Pod api-1 is crash looping",
        source="prometheus",
        starts_at=datetime(2026, 11, 23, 12, 0, tzinfo=UTC),
    )
    return InvestigationRecord(
        id=RUN_ID,
        workspace_id="ws",
        user_id="u",
        alert=alert,
        created_at="2026-11-23T12:00:00.000000+00:00",
        updated_at="2026-11-23T12:00:00.000000+00:00",
        **extra,
    )


def test_the_document_round_trips_through_json_with_cosmos_fields_ignored() -> None:
    rec = _record(
        status="completed",
        path="llm->rule",
        path_reason="the model answered with no tool call",
        iterations=[
            Iteration(
                n=1,
                calls=[CallEntry(key="i1-c1", tool="pods_log", args={"pod": "a"}, output="x", output_bytes=1)],
                partial_analysis="so far",
            )
        ],
        report={"analysis": "# Cause\n\nOOM", "findings": [{"rule": "oom"}]},
        timings=Timings(started_at="a", finished_at="b", phases_ms={"runbook": 12}),
    )
    doc = json.loads(json.dumps(rec.to_doc()))
    doc.update(_etag='"x"', _rid="r", _ts=1, _self="s", _attachments="a")
    back = InvestigationRecord.model_validate(doc)
    assert back == rec
    assert doc["type"] == "investigation"
    assert back.calls()[0].tool == "pods_log"


def test_token_usage_adds_a_calls_usage() -> None:
    usage = TokenUsage(prompt=1, completion=2, total=3).plus(
        CallUsage(purpose="plan", model="m", prompt_tokens=10, completion_tokens=5, total_tokens=15)
    )
    assert usage == TokenUsage(prompt=11, completion=7, total=18)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: CallEntry(key="k", tool="t", output="x" * (MAX_INLINE_OUTPUT_CHARS + 1)), "output"),
        (lambda: CallEntry(key="k", tool="t", args={"q": "x" * MAX_ARGS_JSON_CHARS}), "args"),
        (lambda: CallEntry(key="../k", tool="t"), "key"),
        (lambda: CallEntry(key="k" * 65, tool="t"), "key"),
        (lambda: Iteration(n=MAX_ITERATIONS + 1), "n"),
        (lambda: Iteration(n=1, calls=[CallEntry(key="k", tool="t")] * 51), "calls"),
        (lambda: _record(iterations=[Iteration(n=1)] * (MAX_ITERATIONS + 1)), "iterations"),
        (lambda: _record(report={"analysis": "x" * MAX_REPORT_JSON_CHARS}), "report"),
        (lambda: _record(progress=101), "progress"),
        (lambda: _record(status="done"), "status"),
        (lambda: _record(path="magic"), "path"),
        (
            lambda: _record(
                iterations=[Iteration(n=i, calls=[CallEntry(key="k", tool="t")] * 6) for i in range(1, 10)]
            ),
            "",
        ),
        (
            lambda: _record(
                iterations=[
                    Iteration(n=i, calls=[CallEntry(key="k", tool="t", output="x" * MAX_INLINE_OUTPUT_CHARS)] * 4)
                    for i in range(1, 5)
                ]
            ),
            "",
        ),
        (lambda: Timings(phases_ms={f"p{i}": i for i in range(21)}), "phases_ms"),
    ],
)
def test_bounds_are_enforced(build: Any, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        build()
    # Record-wide bounds (total calls, total inline output) report no field: loc is empty.
    assert any(field in map(str, e["loc"]) if field else not e["loc"] for e in err.value.errors())
