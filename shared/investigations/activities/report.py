"""The report activity (the final analysis, by the model or the rules) and the failed mark that ends a run early."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

from shared.core.errors import NotFound
from shared.investigations import llm, rules
from shared.investigations.activities.payloads import FAILED_MESSAGE, ReportRequest, ReportSummary
from shared.investigations.activities.runtime import elapsed_ms, model, runtime
from shared.investigations.activities.state import gather, limits_of, rule_partial
from shared.investigations.memory_fit import memory_fit
from shared.investigations.models import ROUTE, TERMINAL_STATUSES, InvestigationPath, InvestigationRecord, MemoryHint
from shared.investigations.store import now_iso
from shared.investigations.tool_policy import ALLOW_WRITE_TOOLS_SETTING, withheld_notes
from shared.tools.capability import ActiveRun
from shared.tools.deps import Deps

ANALYSIS_MAX_CHARS = 2_000


async def write_report(run: ActiveRun, args: ReportRequest, deps: Deps) -> ReportSummary:
    """Activity: the final analysis (the model's, or the rules' when there is none or it failed), recorded."""
    rt = runtime(run, deps)
    started = time.perf_counter()
    limits = limits_of(run)
    got = await gather(rt)
    record = got.record
    stop = args.stop
    notes = _run_notes(record, stop)
    state = got.rule_state(limits, 0)
    rule_report: dict[str, Any] = await asyncio.to_thread(rules.report, state)
    path: InvestigationPath = record.path or "rule"
    path_reason = record.path_reason
    usage: list[dict[str, Any]] = []
    report = rule_report
    if path == "llm":
        try:
            async with model(deps) as client:
                final = await llm.final_analysis(
                    client,
                    llm.FinalState(
                        alert=record.alert.model_dump(mode="json"),
                        runbook=got.runbook,
                        history=got.history(),
                        analyses=[it.partial_analysis for it in record.iterations if it.partial_analysis],
                        memory_hint=_memory_text(record.memory),
                        notes=notes,
                        signals=await asyncio.to_thread(rules.brief, state),
                    ),
                )
            usage = final["usage"]
            if final["ok"]:
                report = {
                    **final["report"],
                    "iteration_summary": rule_report.get("iteration_summary"),
                    "findings": rule_report.get("findings"),
                }
            else:
                path, path_reason = "llm->rule", "the model's report was invalid twice; the rule-based report is shown"
        except llm.LlmUnavailable as exc:
            usage = [u.model_dump() for u in exc.usage]
            path, path_reason = "llm->rule", f"final analysis: {exc.message}; the rule-based report is shown"
    memory = _judged_memory(record, report)
    analysis = _fit(str(report.get("analysis") or ""), path, path_reason, memory)
    report = {
        **report,
        "analysis": analysis,
        "path": path,
        "stopped_because": stop,
        "notes": notes,
        "debug_memory": memory.model_dump(exclude_none=True) if memory else None,
        "next_actions": next_actions(record, report, memory),
    }

    # The last iteration's partial analysis: no later plan wrote it. On the model's path the final report's
    # cause stands for it; the rules' summary when that is empty too, so it is never blank.
    last_partial = str(report.get("root_cause") or "") if path == "llm" else ""
    last_partial = last_partial or await asyncio.to_thread(rule_partial, state)
    report_ms = elapsed_ms(started)

    def put(rec: InvestigationRecord) -> None:
        for u in usage:
            rec.token_usage = rec.token_usage.plus(llm.CallUsage.model_validate(u))
        if rec.status in TERMINAL_STATUSES:
            # Cancelled while the report was being written (the activity had started): it stays cancelled.
            return
        rec.report, rec.path, rec.path_reason = report, path, path_reason
        rec.memory = memory  # with the verdict: attached only when it fits this investigation's evidence
        # The last iteration's partial analysis: no later plan wrote it (the LLM's final report stands for it).
        if rec.iterations and last_partial and not rec.iterations[-1].partial_analysis:
            rec.iterations[-1].partial_analysis = last_partial[:32_000]
        rec.status, rec.phase, rec.progress = "completed", "done", 100
        rec.timings.finished_at = now_iso()
        rec.timings.phases_ms["report"] = report_ms
        if rec.timings.started_at:
            total = datetime.fromisoformat(rec.timings.finished_at) - datetime.fromisoformat(rec.timings.started_at)
            rec.timings.phases_ms["total"] = int(total.total_seconds() * 1000)

    written = await rt.store.update(rt.ws, rt.id, put)
    return ReportSummary(
        investigation_id=rt.id,
        status=written.status,
        path=path,
        root_cause=str(report.get("root_cause") or "")[:500],
        confidence=report.get("confidence"),
        analysis=analysis,
        iterations=args.iterations,
        tool_calls=args.calls,
        stopped_because=stop,
        status_url=ROUTE + rt.id,
        next_action=f"GET {ROUTE}{rt.id} (or get_alert_investigation) for the full report and its next_actions.",
    )


def _run_notes(record: InvestigationRecord, stop: str) -> list[str]:
    notes = [f"stopped: {stop}"] if stop else []
    if record.runbook.status in ("failed", "not_found"):
        notes.append(f"runbook {record.runbook.status}: {record.runbook.error or ''}".strip())
    notes += [f"MCP server {s.name} failed: {s.error or 'no answer'}" for s in record.tools.servers if s.status != "ok"]
    tools = record.tools
    notes += withheld_notes({name: tools.withheld_reasons.get(name, "") for name in tools.withheld})
    if tools.allowed:
        why = f"{ALLOW_WRITE_TOOLS_SETTING} is on" if tools.allow_all else "an operator allowed them by name"
        shown = ", ".join(tools.allowed[:10])
        notes.append(f"tools offered although their server does not mark them read-only ({why}): {shown}")
    if record.tools.tool_count == 0:
        notes.append("no MCP tools were available")
    if record.path_reason:
        notes.append(record.path_reason)
    return [n[:500] for n in notes]


def _judged_memory(record: InvestigationRecord, report: dict[str, Any]) -> MemoryHint | None:
    """The memory hint with the verdict of `memory_fit`: attached only when it fits this evidence."""
    memory = record.memory
    if memory is None or not memory.solution_id:
        return memory
    alert = record.alert
    alert_text = " ".join([alert.title, alert.description or "", " ".join(f"{k} {v}" for k, v in alert.labels.items())])
    fit = memory_fit(memory.model_dump(), report, alert_text)
    return memory.model_copy(update={"attached": fit.attach, "attach_reason": fit.reason[:1_000]})


def _memory_text(memory: MemoryHint | None) -> str | None:
    if memory is None or not memory.solution_id:
        return None
    return f"A fix that worked before for a matching incident ({memory.incident_id}): {memory.solution_summary}"


def _fit(analysis: str, path: str, path_reason: str | None, memory: MemoryHint | None) -> str:
    """The report's Markdown within ANALYSIS_MAX_CHARS, saying when the rules stood in for the model."""
    tail = ""
    if path == "llm->rule" and path_reason:
        tail += f"\n\n_Rule-based report: {path_reason[:200]}_"
    if memory is not None and memory.solution_id and memory.attached:
        tail += (
            f"\n\n**Debug memory:** {memory.solution_id} worked before: {(memory.solution_summary or '')[:200]} "
            f"(attached because {(memory.attach_reason or '')[:160]})"
        )
    room = ANALYSIS_MAX_CHARS - len(tail)
    if len(analysis) > room:
        analysis = analysis[: room - 1].rstrip() + "…"
    return analysis + tail


def next_actions(
    record: InvestigationRecord, report: dict[str, Any], memory: MemoryHint | None = None
) -> list[dict[str, Any]]:
    """What to do with the result in debug memory: offered with the ids to pass, never done for the caller.
    Trying the remembered fix is offered only when it was attached (it fits this investigation's evidence)."""
    actions: list[dict[str, Any]] = []
    memory = memory if memory is not None else record.memory
    if memory is not None and memory.solution_id and memory.attached is not False:
        actions.append(
            {
                "tool": "record_outcome",
                "when": "after trying the fix debug memory recommended",
                "arguments": {
                    "solution_id": memory.solution_id,
                    "lookup_id": memory.lookup_id,
                    "worked": "<true or false>",
                    "env": "<your environment, as for ranked_solutions>",
                },
            }
        )
    remediation = [str(s) for s in (report.get("remediation") or [])][:10]
    actions.append(
        {
            "tool": "add_incident",
            "when": "once the fix is confirmed, so the next occurrence is found in debug memory",
            "arguments": {
                "title": record.alert.title[:300],
                "error_signature": str(report.get("root_cause") or record.alert.title)[:500],
                "summary": str(report.get("root_cause") or "")[:2_000],
                "steps": remediation or ["<the steps that fixed it>"],
                "worked": "<true or false>",
                "lookup_id": memory.lookup_id if memory is not None else None,
                "env": "<your environment>",
            },
        }
    )
    return actions


async def mark_failed(run: ActiveRun, _args: None, deps: Deps) -> None:
    """Activity: the record says failed (the orchestration hit an error it could not go on from)."""
    rt = runtime(run, deps)

    def put(record: InvestigationRecord) -> None:
        if record.status not in ("completed", "cancelled"):
            record.status, record.error = "failed", FAILED_MESSAGE
            record.timings.finished_at = now_iso()

    try:
        await rt.store.update(rt.ws, rt.id, put)
    except NotFound:
        return
