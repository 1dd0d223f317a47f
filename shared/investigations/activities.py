"""The investigation's activities: every read, write, fetch, tool call and model call of the orchestration.

Each loads its run by id (the functions layer does that before calling here), keeps the bulk in the
record and in Blob (`<workspace>/investigations/<id>/...`) and returns a small summary for the
orchestrator's history. Each is safe to run again: the engine retries a failed attempt, and a host
restart may repeat one that had finished. A failing tool, runbook, MCP server or model never raises:
it is recorded and the investigation goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.core.errors import Conflict, NotFound
from shared.core.outbound import OutboundGuard
from shared.core.redaction import redact_text
from shared.identity.models import Principal
from shared.investigations import llm, rules
from shared.investigations.alerts import Alert
from shared.investigations.loop import Limits, Planned, status
from shared.investigations.mcp_servers import ToolCatalogue, call_tool, list_tools
from shared.investigations.memory_fit import memory_fit
from shared.investigations.models import (
    ROUTE,
    TERMINAL_STATUSES,
    CallEntry,
    InvestigationPath,
    InvestigationRecord,
    MemoryHint,
    PlannedReasoning,
    RunbookInfo,
    ServerStatus,
    ToolsOffered,
)
from shared.investigations.runbooks import fetch_runbook, load_catalogue, match_runbook
from shared.investigations.secret_calls import secret_read
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import InvestigationStore, now_iso, workspace_segment
from shared.investigations.tool_policy import ALLOW_WRITE_TOOLS_SETTING, offer, withheld_notes
from shared.tools.capability import ActiveRun
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext, invoke

log = logging.getLogger("firebreak.investigations")

PREPARE = "investigation_prepare"
PLAN = "investigation_plan"
CALL = "investigation_call"
REPORT = "investigation_report"
FAILED = "investigation_failed"

ANALYSIS_MAX_CHARS = 2_000
MAX_ARGS_JSON_CHARS = 4 * 1024
FAILED_MESSAGE = "The investigation stopped on an error before its report; start it again."


class StartedBy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str = Field(min_length=1, max_length=128)
    source: str = Field(pattern=r"^(entra|appservice|api_key|dev)$")


class StoredPlan(BaseModel):
    """What the run record keeps for the orchestration: the alert, the limits, who started it. No secret."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alert: Alert
    limits: Limits
    started_by: StartedBy
    dedup_key: str | None = Field(None, max_length=64)


def validate_plan(stored: dict[str, Any]) -> dict[str, Any]:
    """The stored plan re-validated when the orchestration claims its run (ValueError when it does not)."""
    try:
        return StoredPlan.model_validate(stored).model_dump(mode="json")
    except ValidationError as exc:
        raise ValueError(f"invalid investigation plan ({exc.error_count()} problems)") from None


# ---- what every activity needs -------------------------------------------------------------------------


@dataclass
class Runtime:
    deps: Deps
    settings: InvestigationSettings
    store: InvestigationStore
    # One guard per feature: an MCP server's allow-list entry must not open its host to runbook URLs.
    runbook_guard: OutboundGuard
    mcp_guard: OutboundGuard
    run: ActiveRun

    @property
    def ws(self) -> str:
        return self.run.workspace_id

    @property
    def id(self) -> str:
        return self.run.run_id

    def blob(self, name: str) -> str:
        # Quoted like the store's output blobs: a workspace id is one segment, never a path.
        return f"{workspace_segment(self.ws)}/investigations/{self.id}/{name}"


def runtime(run: ActiveRun, deps: Deps) -> Runtime:
    section = deps.settings.section(InvestigationSettings)
    store = InvestigationStore(deps.cosmos, deps.blobs, inline_output_bytes=section.inline_output_bytes)
    guards = OutboundGuard(deps.settings, "runbooks"), OutboundGuard(deps.settings, "mcp")
    return Runtime(deps, section, store, *guards, run)


def _on_azure(deps: Deps) -> bool:
    """The hosting plan's markers, read when settings loaded (shared/core/hosting.py)."""
    return deps.settings.running_on_azure


def llm_config(deps: Deps) -> llm.LlmConfig | None:
    """The model to ask, or None for the rule path (the platform's LLM settings)."""
    return llm.LlmConfig.from_settings(deps.settings)


@asynccontextmanager
async def model(deps: Deps) -> AsyncIterator[llm.LlmClient]:
    """The process's LLM client (`deps.llm()`, shared by every activity; Deps closes it, not this);
    LlmUnavailable when none is configured."""
    client = deps.llm()
    if client is None:
        raise llm.LlmUnavailable("error", "the LLM is no longer configured")
    yield client


async def _ensure_record(rt: Runtime, plan: StoredPlan) -> InvestigationRecord:
    """The run's record; created here when the start request had not written it yet (it races the engine)."""
    try:
        return await rt.store.get(rt.ws, rt.id)
    except NotFound:
        pass
    stamp = now_iso()
    record = InvestigationRecord(
        id=rt.id,
        workspace_id=rt.ws,
        user_id=plan.started_by.user_id,
        alert=plan.alert,
        dedup_key=plan.dedup_key,
        created_at=stamp,
        updated_at=stamp,
        ttl=rt.settings.record_ttl_days * 86400 if not rt.deps.settings.is_local else None,
    )
    try:
        return await rt.store.create(record)
    except Conflict:
        return await rt.store.get(rt.ws, rt.id)


def _elapsed_ms(start: float) -> int:
    return int((time.perf_counter() - start) * 1000)


# ---- prepare: runbook, tools, memory ---------------------------------------------------------------------


async def prepare(run: ActiveRun, _args: Any, deps: Deps) -> dict[str, Any]:
    """Activity: create the record, fetch the runbook, list the MCP servers' tools, ask debug memory."""
    rt = runtime(run, deps)
    plan = StoredPlan.model_validate(run.plan)
    await _ensure_record(rt, plan)
    await rt.store.update(rt.ws, rt.id, lambda r: _phase(r, "preparing", started=True))

    started = time.perf_counter()
    runbook, runbook_ms = await _runbook(rt, plan.alert), _elapsed_ms(started)
    started = time.perf_counter()
    offered, tools_ms = await _tools(rt), _elapsed_ms(started)
    started = time.perf_counter()
    memory = await ask_memory(rt, plan) if rt.settings.ask_memory else None
    memory_ms = _elapsed_ms(started)
    path = "llm" if llm_config(deps) is not None else "rule"

    def put(record: InvestigationRecord) -> None:
        record.runbook, record.tools, record.memory = runbook, offered, memory
        record.path = "llm" if path == "llm" else "rule"
        record.timings.phases_ms.update(runbook=runbook_ms, tools=tools_ms, memory=memory_ms)
        _phase(record, "iterating")

    await rt.store.update(rt.ws, rt.id, put)
    return {
        "path": path,
        "runbook": runbook.status,
        "tool_count": offered.tool_count,
        "servers_failed": sum(1 for s in offered.servers if s.status != "ok"),
        "memory": bool(memory and memory.solution_id),
    }


def _phase(record: InvestigationRecord, phase: str, *, started: bool = False) -> None:
    body = status(phase)
    record.phase, record.progress = phase, max(record.progress, body["percent"])
    if record.status == "pending":
        record.status = "running"
    if started and not record.timings.started_at:
        record.timings.started_at = now_iso()


async def _runbook(rt: Runtime, alert: Alert) -> RunbookInfo:
    config = rt.settings.runbooks()
    url = alert.runbook_url
    if not url:
        catalogue = await load_catalogue(config, blobs=rt.deps.blobs, workspace=rt.ws)
        ref = match_runbook(alert.name, alert.labels, catalogue)
        if ref is None:
            return RunbookInfo(status="none")
        url = ref.url
    result = await fetch_runbook(url, config, guard=rt.runbook_guard, blobs=rt.deps.blobs, workspace=rt.ws)
    if not result.ok:
        return RunbookInfo(
            source=result.source[:2048],
            status="not_found" if result.status == "not_found" else "failed",
            error=(result.error or result.status)[:1000],
        )
    await rt.deps.blobs.put(rt.blob("runbook.md"), result.text, content_type="text/markdown; charset=utf-8")
    return RunbookInfo(source=result.source[:2048], status="fetched", truncated=result.truncated)


async def _tools(rt: Runtime) -> ToolsOffered:
    mcp = rt.settings.mcp(running_on_azure=_on_azure(rt.deps))
    catalogue = await list_tools(
        mcp.servers,
        guard=rt.mcp_guard,
        allow_stdio=mcp.allow_stdio,
        timeout_s=mcp.list_timeout_seconds,
        max_response_bytes=mcp.max_response_bytes,
    )
    policy = rt.settings.tool_policy()
    offered = offer(catalogue, policy)
    if policy.allow_all and offered.allowed:
        log.warning(
            "investigation %s: %s is on: %d tool(s) their server does not mark read-only are offered: %s",
            rt.id,
            ALLOW_WRITE_TOOLS_SETTING,
            len(offered.allowed),
            ", ".join(offered.allowed[:20]),
        )
    # The catalogue (names, descriptions, schemas; never headers) is what plan and call read back: a tool
    # left out here can be neither planned nor called (call_tool refuses a name not in it).
    await rt.deps.blobs.put(rt.blob("tools.json"), offered.catalogue.model_dump_json(), content_type="application/json")
    withheld = list(offered.withheld)[:100]
    return ToolsOffered(
        servers=[
            ServerStatus(name=s.name[:128], status="ok" if s.ok else "failed", tool_count=s.tool_count, error=s.error)
            for s in offered.catalogue.servers
        ][:20],
        tool_count=len(offered.catalogue.tools),
        withheld=[name[:128] for name in withheld],
        withheld_reasons={name[:128]: offered.withheld[name] for name in withheld},
        allowed=[name[:128] for name in offered.allowed][:100],
        allow_all=policy.allow_all,
    )


async def ask_memory(rt: Runtime, plan: StoredPlan) -> MemoryHint | None:
    """Debug memory's ranked_solutions for this alert, asked in-process as the investigation's starter."""
    tool = rt.deps.tools.get("ranked_solutions") if rt.deps.tools is not None else None
    if tool is None:
        return None
    alert = plan.alert
    query = "\n".join(
        p for p in (alert.title, alert.description, " ".join(f"{k}={v}" for k, v in sorted(alert.labels.items()))) if p
    )[:8_000]
    env = {
        k: v
        for k, v in {
            "runtime": "kubernetes" if (alert.cluster or alert.namespace) else None,
            "cluster": alert.cluster,
            "namespace": alert.namespace,
            "source": alert.source,
        }.items()
        if v
    }
    principal = Principal.model_validate(
        {"workspace_id": rt.ws, "user_id": plan.started_by.user_id, "source": plan.started_by.source}
    )
    outcome = await invoke(
        tool, {"query_text": query, "env": env, "limit": 3}, ToolContext(principal, rt.deps, f"inv-{rt.id}")
    )
    if not outcome.ok or outcome.output is None:
        code = outcome.error.code if outcome.error is not None else "no output"
        return MemoryHint(error=f"debug memory could not be asked ({code})")
    best = outcome.output.get("recommended_solution")
    if not best:
        return MemoryHint(lookup_id=outcome.output.get("lookup_id"))
    steps = "; ".join(str(s) for s in best.get("steps", [])[:8])
    incidents = outcome.output.get("incidents") or []
    incident: dict[str, Any] = next((i for i in incidents if i.get("incident_id") == best.get("incident_id")), {})
    return MemoryHint(
        solution_summary=steps[:2_000],
        incident_id=best.get("incident_id"),
        solution_id=best.get("solution_id"),
        lookup_id=outcome.output.get("lookup_id"),
        incident_title=str(incident.get("title") or "")[:500] or None,
        matched_terms=[str(t)[:100] for t in (incident.get("matched_terms") or [])[:50]],
        exact_signature_match=bool(incident.get("exact_signature_match")),
        score=best.get("final_solution_score"),
    )


# ---- state as the planners and the report read it -------------------------------------------------------


@dataclass
class Gathered:
    record: InvestigationRecord
    runbook: str | None
    catalogue: ToolCatalogue
    outputs: dict[str, str]

    def history(self) -> list[llm.HistoryEntry]:
        return [
            llm.HistoryEntry(
                iteration=it.n,
                tool=c.tool,
                arguments=c.args,
                reason=c.reason,
                output=self.outputs.get(c.key, ""),
                is_error=c.is_error,
            )
            for it in self.record.iterations
            for c in it.calls
        ]

    def rule_state(self, limits: Limits, calls_left: int) -> rules.InvestigationState:
        calls = [
            rules.CallRecord(
                tool=h.tool,
                args=h.arguments,
                output=h.output,
                is_error=h.is_error,
                iteration=h.iteration,
                reason=h.reason,
            )
            for h in self.history()
        ]
        return rules.InvestigationState(
            alert=self.record.alert.model_dump(mode="json"),
            runbook=self.runbook,
            tools=[
                rules.ToolSpec.model_validate(
                    {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                )
                for t in self.catalogue.tools
            ],
            calls=calls,
            budget=rules.Budget(
                max_calls=len(calls) + calls_left,
                max_iterations=limits.max_iterations,
                max_calls_per_iteration=limits.max_calls_per_iteration,
            ),
        )

    def tool_specs(self) -> list[llm.ToolSpec]:
        return [
            llm.ToolSpec.model_validate({"name": t.name, "description": t.description, "inputSchema": t.input_schema})
            for t in self.catalogue.tools
        ]


async def gather(rt: Runtime) -> Gathered:
    record = await rt.store.get(rt.ws, rt.id)
    runbook_raw = await rt.deps.blobs.get(rt.blob("runbook.md")) if record.runbook.status == "fetched" else None
    tools_raw = await rt.deps.blobs.get(rt.blob("tools.json"))
    catalogue = await _catalogue(rt, tools_raw)
    calls = record.calls()
    texts = await asyncio.gather(*(rt.store.output_of(rt.ws, c) for c in calls))
    return Gathered(
        record,
        runbook_raw.decode("utf-8", "replace") if runbook_raw is not None else None,
        catalogue,
        {c.key: t for c, t in zip(calls, texts, strict=True)},
    )


async def _catalogue(rt: Runtime, raw: bytes | None) -> ToolCatalogue:
    """The stored tool catalogue, parsed off the event loop (it can be a few MB), within today's tool policy.

    prepare stored only the offered tools; the policy is applied again so a catalogue stored by an older
    version, or before an operator narrowed the allow-list, cannot offer or call more than the policy does now.
    """
    if not raw:
        return ToolCatalogue()
    stored = await asyncio.to_thread(ToolCatalogue.model_validate_json, raw)
    return offer(stored, rt.settings.tool_policy()).catalogue


def _limits(run: ActiveRun) -> Limits:
    return StoredPlan.model_validate(run.plan).limits


# ---- plan: the next calls --------------------------------------------------------------------------------


@dataclass
class _Choice:
    calls: list[dict[str, Any]]
    path: str
    use_rules: bool
    done: bool = False
    partial: str = ""
    stop: str | None = None
    reason: str | None = None
    notes: list[str] | None = None
    usage: list[llm.CallUsage] | None = None
    reasoning: str = ""


async def _llm_choice(
    deps: Deps, got: Gathered, limits: Limits, n: int, calls_left: int, per_iteration: int
) -> _Choice:
    """The model's calls for iteration n; a model that cannot be asked hands over to the rules for good."""
    # The model starts from what the rules see: the objects found and the signals read from the outputs.
    brief = await asyncio.to_thread(rules.brief, got.rule_state(limits, calls_left))
    try:
        async with model(deps) as client:
            answer = await llm.plan_calls(
                client,
                got.record.alert.model_dump(mode="json"),
                got.runbook,
                got.tool_specs(),
                got.history(),
                llm.PlanBudget(
                    iteration=n,
                    max_iterations=limits.max_iterations,
                    calls_left=calls_left,
                    max_calls_per_iteration=per_iteration,
                ),
                analysis_so_far=_last_partial(got.record),
                brief=brief,
            )
    except llm.LlmUnavailable as exc:
        log.warning("investigation %s: LLM unavailable (%s), rule path takes over", got.record.id, exc.reason)
        return _Choice(
            [],
            "llm->rule",
            True,
            reason=f"iteration {n}: {exc.message}; the rule-based path took over",
            usage=exc.usage,
        )
    notes = [*answer.notes, *answer.errors[:3]]
    if answer.dropped:
        notes.append("the model's plan was invalid twice and was dropped; the rules chose this iteration")
        return _Choice([], "llm", True, partial=answer.analysis_so_far, notes=notes, usage=answer.usage)
    return _Choice(
        [{"tool": c.tool, "args": c.arguments, "reason": c.reason} for c in answer.calls],
        "llm",
        False,
        done=answer.done,
        partial=answer.analysis_so_far,
        stop="the model said it had what it needed" if answer.done else None,
        notes=notes,
        usage=answer.usage,
        reasoning=answer.reasoning or "; ".join(f"{c.tool}: {c.reason}" for c in answer.calls if c.reason),
    )


async def plan(run: ActiveRun, args: Any, deps: Deps) -> dict[str, Any]:
    """Activity: choose iteration n's calls (the model, or the rules when there is none or it failed)."""
    rt = runtime(run, deps)
    n, calls_left, per_iteration = int(args["n"]), int(args["calls_left"]), int(args["per_iteration"])
    limits = _limits(run)
    got = await gather(rt)
    path = got.record.path or "rule"
    if path == "llm":
        choice = await _llm_choice(deps, got, limits, n, calls_left, per_iteration)
    else:
        choice = _Choice([], path, True)
    if choice.use_rules:
        state = got.rule_state(limits, calls_left)
        picked = await asyncio.to_thread(rules.first_calls if not state.calls else rules.next_calls, state)
        choice.calls = [{"tool": c.tool, "args": c.args, "reason": c.reason} for c in picked]
        choice.partial = choice.partial or await asyncio.to_thread(_rule_partial, state)
        choice.stop = None if choice.calls else "the rules found nothing more to check"
        choice.reasoning = choice.reasoning or "; ".join(c["reason"] for c in choice.calls)
    notes = list(choice.notes or [])
    planned: list[dict[str, Any]] = []
    for j, c in enumerate(choice.calls):
        if len(_json(c["args"])) > MAX_ARGS_JSON_CHARS:
            notes.append(f"call {c['tool']} dropped: its arguments are over {MAX_ARGS_JSON_CHARS} characters")
            continue
        why = None if rt.settings.read_secrets else secret_read(c["tool"], c["args"])
        if why is not None:
            notes.append(
                f"call {c['tool']} dropped: {why}; investigations do not read Secrets (their data would be recorded)"
            )
            continue
        entry = Planned(key=f"i{n}-c{j + 1}", tool=c["tool"], args=c["args"], reason=c["reason"][:2_000])
        planned.append(entry.model_dump())

    def put(record: InvestigationRecord) -> None:
        record.path = cast(InvestigationPath, choice.path)
        if choice.reason:
            record.path_reason = choice.reason[:1_000]
        for u in choice.usage or []:
            record.token_usage = record.token_usage.plus(u)
        previous = next((it for it in record.iterations if it.n == n - 1), None)
        if previous is not None and choice.partial:
            previous.partial_analysis = choice.partial[:32_000]
        if planned and choice.reasoning:
            _keep_reasoning(record, n, choice.reasoning)
        if record.status in TERMINAL_STATUSES:
            return  # cancelled while this plan was made: the record keeps its final phase
        record.phase = "iterating"
        record.progress = max(record.progress, status("iterating", iteration=n, limits=limits)["percent"])

    await rt.store.update(rt.ws, rt.id, put)
    return {
        "calls": planned,
        "done": choice.done,
        "path": choice.path,
        "stop": choice.stop,
        "notes": [x[:300] for x in notes[:5]],
    }


def _keep_reasoning(record: InvestigationRecord, n: int, reasoning: str) -> None:
    """Why iteration n's calls were chosen: kept on the record until the iteration's first call lands (the store
    moves it there), so a plan the loop then refuses (repeated calls) leaves no empty iteration behind."""
    record.planned_reasoning = PlannedReasoning(n=n, text=reasoning[:4_000])


def _json(value: Any) -> str:
    return json.dumps(value, default=str)


def _last_partial(record: InvestigationRecord) -> str:
    return next((it.partial_analysis for it in reversed(record.iterations) if it.partial_analysis), "") or ""


def _rule_partial(state: rules.InvestigationState) -> str:
    found = rules.findings(state)
    causes = [f for f in found if not f.symptom] or found
    if not causes:
        return f"{len(state.calls)} call(s) made; no cause found yet."
    return "So far: " + "; ".join(f.cause for f in causes[:3])


# ---- call: one tool ----------------------------------------------------------------------------------------


async def call(run: ActiveRun, args: Any, deps: Deps) -> dict[str, Any]:
    """Activity: make one planned tool call and record it (the output inline, or in Blob past the limit)."""
    rt = runtime(run, deps)
    n = int(args["n"])
    planned = Planned.model_validate({k: v for k, v in args.items() if k != "n"})
    raw = await rt.deps.blobs.get(rt.blob("tools.json"))
    catalogue = await _catalogue(rt, raw)
    mcp = rt.settings.mcp(running_on_azure=_on_azure(rt.deps))
    result = await call_tool(
        mcp.servers,
        catalogue,
        planned.tool,
        planned.args,
        guard=rt.mcp_guard,
        allow_stdio=mcp.allow_stdio,
        timeout_s=mcp.call_timeout_seconds,
        max_output_bytes=mcp.max_output_bytes,
        max_response_bytes=mcp.max_response_bytes,
    )
    # A tool can answer with what it should not (an env listing, a Secret, a log line with a token): the
    # output is kept, shown to the workspace and sent to the model, so secret-looking values go first.
    text = await asyncio.to_thread(redact_text, result.text)
    stored = await rt.store.put_output(rt.ws, rt.id, planned.key, text)
    entry = CallEntry(
        key=planned.key,
        tool=planned.tool[:256],
        args=planned.args,
        reason=planned.reason,
        output=stored.output,
        output_ref=stored.output_ref,
        output_bytes=result.output_bytes or stored.output_bytes,
        is_error=result.is_error,
        truncated=result.truncated or stored.truncated,
        duration_ms=int(result.duration_ms),
    )
    await rt.store.put_call(rt.ws, rt.id, n, entry)
    return {
        "key": planned.key,
        "tool": planned.tool,
        "ok": not result.is_error,
        "error_kind": result.error_kind,
        "bytes": result.output_bytes,
        "data": not result.is_error and bool(text.strip()),
    }


# ---- report ------------------------------------------------------------------------------------------------


async def write_report(run: ActiveRun, args: Any, deps: Deps) -> dict[str, Any]:
    """Activity: the final analysis (the model's, or the rules' when there is none or it failed), recorded."""
    rt = runtime(run, deps)
    started = time.perf_counter()
    limits = _limits(run)
    got = await gather(rt)
    record = got.record
    stop = str(args.get("stop") or "")
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
    last_partial = last_partial or await asyncio.to_thread(_rule_partial, state)
    report_ms = _elapsed_ms(started)

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
    return {
        "investigation_id": rt.id,
        "status": written.status,
        "path": path,
        "root_cause": str(report.get("root_cause") or "")[:500],
        "confidence": report.get("confidence"),
        "analysis": analysis,
        "iterations": int(args.get("iterations") or 0),
        "tool_calls": int(args.get("calls") or 0),
        "stopped_because": stop,
        "status_url": ROUTE + rt.id,
        "next_action": f"GET {ROUTE}{rt.id} (or get_alert_investigation) for the full report and its next_actions.",
    }


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


async def mark_failed(run: ActiveRun, _args: Any, deps: Deps) -> None:
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
