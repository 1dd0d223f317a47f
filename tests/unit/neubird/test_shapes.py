"""NeuBird objects in the spec's shapes, without I/O: named fields of the right type only, derivations, gaps."""

from __future__ import annotations

from typing import Any

from shared.neubird import shapes


def test_the_documented_summary_scores_fill_what_they_can_and_name_the_rest() -> None:
    raw = {
        "accuracy": {"score": 88, "summary": "Correct root cause"},
        "completeness": {"score": 76, "summary": "No timeline"},
        "qualitative": {"strengths": ["Cited logs"], "improvements": ["Add metrics", "Add a timeline"]},
        "scored_by": "auto",
    }
    score = shapes.analysis_score(raw)
    assert score is not None
    assert score.accuracy.overall_score == 88
    assert score.accuracy.summary == "Correct root cause"
    assert score.completeness.overall_score == 76
    assert score.qualitative.improvement_suggestions == "Add metrics\nAdd a timeline"
    assert score.qualitative.strengths == ["Cited logs"]
    gaps = shapes.missing(score, raw)
    assert "analysis_score.accuracy.root_cause_correct" in gaps
    assert "analysis_score.completeness.data_sources" in gaps
    assert "analysis_score.qualitative.trust_without_review" in gaps
    assert "analysis_score.call_recording_url" in gaps
    assert "analysis_score.accuracy.overall_score" not in gaps
    assert "analysis_score.scored_by" not in gaps


def test_a_summary_already_in_the_spec_s_shape_is_taken_as_is() -> None:
    raw = {
        "accuracy": {
            "root_cause_correct": "Yes",
            "impact_analysis_correct": "Partial",
            "timeline_accurate": "No",
            "overall_score": 7.5,
        },
        "completeness": {
            "data_sources": 4,
            "remediation_steps": 3,
            "prevention_measures": 2,
            "business_impact": 1,
            "overall_score": 2.5,
        },
        "qualitative": {
            "trust_without_review": "Maybe",
            "missing_elements": "timeline",
            "additional_notes": "good",
            "improvement_suggestions": "add metrics",
        },
        "scored_by": "sre@example.com",
        "scored_during_call": True,
        "call_recording_url": None,
    }
    score = shapes.analysis_score(raw)
    assert score is not None
    assert score.accuracy.root_cause_correct == "Yes"
    assert score.completeness.business_impact == 1
    assert score.qualitative.trust_without_review == "Maybe"
    assert score.scored_during_call is True
    assert shapes.missing(score, raw) == []  # a recording sent as null is an answer


def test_values_of_another_type_become_null_never_an_error() -> None:
    raw: dict[str, Any] = {
        "accuracy": {"root_cause_correct": "yes!", "score": "88"},
        "completeness": [],
        "qualitative": {"improvements": "just text"},
        "scored_during_call": "true",
    }
    score = shapes.analysis_score(raw)
    assert score is not None
    assert score.accuracy.root_cause_correct is None
    assert score.accuracy.overall_score is None  # a numeric string is not a number
    assert score.completeness.overall_score is None
    assert score.qualitative.improvement_suggestions == "just text"
    assert score.scored_during_call is None
    assert shapes.analysis_score("not an object") is None
    assert shapes.missing(None, None) == ["analysis_score"]


def test_the_incident_report_keeps_spec_fields_and_names_the_absent_ones() -> None:
    report = shapes.incident_report(
        {
            "avg_mttr": 18.2,
            "total_incidents": 140,
            "noise_reduction": True,  # not a number
            "start_time": "2026-10-01",
            "incident_type_reports": [
                {"incident_type": "alert", "priority_reports": [{"priority": "P1", "total_incidents": 12, "x": 1}, 7]},
                "junk",
            ],
            "x_unlisted": {"a": 1},
        }
    )
    dumped = report.model_dump()
    assert "x_unlisted" not in dumped
    assert dumped["total_incidents"] == 140
    assert dumped["incident_type_reports"][0]["priority_reports"][0]["total_incidents"] == 12
    assert "x" not in dumped["incident_type_reports"][0]["priority_reports"][0]
    assert len(dumped["incident_type_reports"]) == 1
    assert "noise_reduction" in report.not_reported
    assert "end_time" in report.not_reported
    assert "avg_mttr" not in report.not_reported


def test_rows_keep_the_spec_s_incident_fields_as_text() -> None:
    info = shapes.incident_info(
        {"id": "/aws/alerts/x", "title": 7, "priority": "P1", "grouped_incidents": {"id": ["a", 3], "reason": None}}
    )
    assert info == {"id": "/aws/alerts/x", "priority": "P1", "grouped_incidents": {"id": ["a"], "reason": ""}}
    assert shapes.prompt_cycle_count({"prompt_cycle_ids": ["a", "b"]}) == 2
    assert shapes.prompt_cycle_count({"prompt_cycle_count": 3}) == 3
    assert shapes.prompt_cycle_count({"prompt_cycle_count": "3"}) is None
    assert shapes.prompt_request(
        {"messages": [{"content": {"content_type": "T", "parts": ["q", 1]}, "y": 2}], "z": 3}
    ) == {"messages": [{"content": {"content_type": "T", "parts": ["q"]}}]}
    assert shapes.prompt_request("junk") == {"messages": []}
