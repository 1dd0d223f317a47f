"""NeuBird's objects in the spec's shapes: named fields only, each of the type the spec gives it.

NeuBird may send fields the contract does not name (clients must ignore them, contract 2.2) and fields of another
type than documented. Nothing here copies an object through: each output field is picked by name and kept only
when it has the expected type, so an unknown field never reaches a tool's answer (the session summary keeps
NeuBird's whole object under its one documented `raw` key, and nowhere else).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.neubird.models import (
    AccuracyScore,
    AnalysisScore,
    CompletenessScore,
    IncidentReport,
    IncidentTypeReport,
    Number,
    PriorityReport,
    QualitativeScore,
    ShortSummary,
    TimeSaved,
)
from shared.neubird.stream import strip_html

INCIDENT_INFO_TEXT = ("id", "title", "priority", "status", "type")
_YES_NO_PARTIAL = ("Yes", "No", "Partial")
_YES_NO_MAYBE = ("Yes", "No", "Maybe")


def obj(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def number(value: Any) -> Number | None:
    """A JSON number (not a boolean, not a numeric string: the contract documents numbers)."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def texts(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def incident_info(value: Any) -> dict[str, Any] | None:
    """The spec's incident_info: id, title, priority, status, type (text) and grouped_incidents {id[], reason}."""
    if not isinstance(value, Mapping):
        return None
    out: dict[str, Any] = {k: value[k] for k in INCIDENT_INFO_TEXT if isinstance(value.get(k), str)}
    group = value.get("grouped_incidents")
    if isinstance(group, Mapping):
        out["grouped_incidents"] = {"id": texts(group.get("id")), "reason": text(group.get("reason")) or ""}
    return out


def prompt_cycle_count(row: Mapping[str, Any]) -> int | None:
    """How many prompts a listed session holds: from `prompt_cycle_ids` [SAMPLES] or a count; None when NeuBird's
    row says neither (the CLI's rows do not)."""
    ids = row.get("prompt_cycle_ids")
    if isinstance(ids, list):
        return len(ids)
    count = row.get("prompt_cycle_count")
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None


def prompt_request(value: Any) -> dict[str, Any]:
    """The spec's request: {messages: [{content: {content_type, parts: [text]}}]} (what was asked)."""
    messages = []
    for message in value.get("messages") or [] if isinstance(value, Mapping) else []:
        content = obj(obj(message).get("content"))
        if content:
            messages.append(
                {
                    "content": {
                        "content_type": text(content.get("content_type")) or "",
                        "parts": texts(content.get("parts")),
                    }
                }
            )
    return {"messages": messages}


# --- the session summary -----------------------------------------------------------------------------------


def _choice(value: Any, allowed: tuple[str, ...]) -> Any:
    return value if value in allowed else None


def _accuracy(raw: Mapping[str, Any]) -> AccuracyScore:
    return AccuracyScore(
        root_cause_correct=_choice(raw.get("root_cause_correct"), _YES_NO_PARTIAL),
        impact_analysis_correct=_choice(raw.get("impact_analysis_correct"), _YES_NO_PARTIAL),
        timeline_accurate=_choice(raw.get("timeline_accurate"), _YES_NO_PARTIAL),
        # The spec's overall_score; NeuBird's documented summary calls it `score`.
        overall_score=number(raw.get("overall_score"))
        if number(raw.get("overall_score")) is not None
        else number(raw.get("score")),
        summary=text(raw.get("summary")),
    )


def _completeness(raw: Mapping[str, Any]) -> CompletenessScore:
    picked = {
        k: number(raw.get(k)) for k in ("data_sources", "remediation_steps", "prevention_measures", "business_impact")
    }
    overall = number(raw.get("overall_score"))
    return CompletenessScore(
        **picked,
        overall_score=overall if overall is not None else number(raw.get("score")),
        summary=text(raw.get("summary")),
    )


def _lines(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    listed = texts(value)
    return "\n".join(listed) if listed else None


def _qualitative(raw: Mapping[str, Any]) -> QualitativeScore:
    return QualitativeScore(
        trust_without_review=_choice(raw.get("trust_without_review"), _YES_NO_MAYBE),
        missing_elements=_lines(raw.get("missing_elements")),
        additional_notes=_lines(raw.get("additional_notes")),
        # The spec's improvement_suggestions; NeuBird's documented summary lists `improvements`.
        improvement_suggestions=_lines(raw.get("improvement_suggestions")) or _lines(raw.get("improvements")),
        strengths=texts(raw.get("strengths")),
    )


def analysis_score(value: Any) -> AnalysisScore | None:
    if not isinstance(value, Mapping):
        return None
    recording = value.get("call_recording_url")
    return AnalysisScore(
        accuracy=_accuracy(obj(value.get("accuracy"))),
        completeness=_completeness(obj(value.get("completeness"))),
        qualitative=_qualitative(obj(value.get("qualitative"))),
        scored_by=text(value.get("scored_by")),
        scored_during_call=value.get("scored_during_call")
        if isinstance(value.get("scored_during_call"), bool)
        else None,
        call_recording_url=text(recording),
    )


def missing(score: AnalysisScore | None, raw: Any) -> list[str]:
    """The spec's analysis_score fields this answer cannot give (null in it), as dotted paths. A
    call_recording_url NeuBird sent as null is an answer (no recording), not a gap."""
    if score is None:
        return ["analysis_score"]
    gaps = [
        f"analysis_score.{part}.{name}"
        for part in ("accuracy", "completeness", "qualitative")
        for name, value in getattr(score, part).model_dump().items()
        if value is None and name != "summary"
    ]
    gaps += [f"analysis_score.{name}" for name in ("scored_by", "scored_during_call") if getattr(score, name) is None]
    if score.call_recording_url is None and "call_recording_url" not in obj(raw):
        gaps.append("analysis_score.call_recording_url")
    return gaps


def short_summary(value: Any) -> ShortSummary | None:
    if not isinstance(value, Mapping):
        return None
    return ShortSummary(
        question=strip_html(text(value.get("question")) or ""), analysis=strip_html(text(value.get("analysis")) or "")
    )


def time_saved(value: Any) -> TimeSaved | None:
    if not isinstance(value, Mapping):
        return None
    names = ("time_saved_minutes", "standard_investigation_time_minutes", "hawkeye_investigation_time_minutes")
    return TimeSaved(**{k: number(value.get(k)) for k in names})


# --- the incident report -----------------------------------------------------------------------------------

_REPORT_NUMBERS = (
    "avg_investigation_time_saved_minutes",
    "avg_mttr",
    "noise_reduction",
    "total_incidents",
    "total_investigation_time_saved_hours",
    "total_investigations",
)
_PRIORITY_NUMBERS = (
    "total_incidents",
    "investigated_incidents",
    "percent_grouped",
    "avg_mttr",
    "avg_investigation_time_minutes",
    "avg_time_saved_minutes",
)


def _objects(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _priority(value: Any) -> PriorityReport:
    raw = obj(value)
    return PriorityReport(
        priority=text(raw.get("priority")) or "", **{k: number(raw.get(k)) for k in _PRIORITY_NUMBERS}
    )


def incident_report(value: Any) -> IncidentReport:
    raw = obj(value)
    kinds = [
        IncidentTypeReport(
            incident_type=text(obj(t).get("incident_type")) or "",
            priority_reports=[_priority(p) for p in _objects(obj(t).get("priority_reports"))],
        )
        for t in _objects(raw.get("incident_type_reports"))
    ]
    report = IncidentReport.model_validate(
        {
            **{k: number(raw.get(k)) for k in _REPORT_NUMBERS},
            "start_time": text(raw.get("start_time")) or "",
            "end_time": text(raw.get("end_time")) or "",
            "incident_type_reports": kinds,
        }
    )
    absent = [k for k in _REPORT_NUMBERS if getattr(report, k) is None]
    absent += [k for k in ("start_time", "end_time") if not getattr(report, k)]
    if not isinstance(raw.get("incident_type_reports"), list):
        absent.append("incident_type_reports")
    report.not_reported = sorted(absent)
    return report
