"""The prepare activity: create the record, fetch the runbook, list the MCP servers' tools, ask debug memory."""

from __future__ import annotations

import logging
import time
from typing import Any, Literal

from shared.core.errors import Conflict, NotFound
from shared.identity.models import Principal
from shared.investigations.activities.payloads import Prepared, StoredPlan
from shared.investigations.activities.runtime import Runtime, elapsed_ms, llm_config, runtime
from shared.investigations.alerts import Alert
from shared.investigations.loop import status
from shared.investigations.mcp_servers import list_tools
from shared.investigations.models import InvestigationRecord, MemoryHint, RunbookInfo, ServerStatus, ToolsOffered
from shared.investigations.runbooks import fetch_runbook, load_catalogue, match_runbook
from shared.investigations.store import now_iso
from shared.investigations.tool_policy import ALLOW_WRITE_TOOLS_SETTING, offer
from shared.tools.capability import ActiveRun
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext, invoke

log = logging.getLogger("firebreak.investigations")


async def prepare(run: ActiveRun, _args: None, deps: Deps) -> Prepared:
    """Activity: create the record, fetch the runbook, list the MCP servers' tools, ask debug memory."""
    rt = runtime(run, deps)
    plan = StoredPlan.model_validate(run.plan)
    await ensure_record(rt, plan)
    await rt.store.update(rt.ws, rt.id, lambda r: _phase(r, "preparing", started=True))

    started = time.perf_counter()
    runbook, runbook_ms = await _runbook(rt, plan.alert), elapsed_ms(started)
    started = time.perf_counter()
    offered, tools_ms = await _tools(rt), elapsed_ms(started)
    started = time.perf_counter()
    memory = await ask_memory(rt, plan) if rt.settings.ask_memory else None
    memory_ms = elapsed_ms(started)
    path: Literal["llm", "rule"] = "llm" if llm_config(deps) is not None else "rule"

    def put(record: InvestigationRecord) -> None:
        record.runbook, record.tools, record.memory = runbook, offered, memory
        record.path = "llm" if path == "llm" else "rule"
        record.timings.phases_ms.update(runbook=runbook_ms, tools=tools_ms, memory=memory_ms)
        _phase(record, "iterating")

    await rt.store.update(rt.ws, rt.id, put)
    return Prepared(
        path=path,
        runbook=runbook.status,
        tool_count=offered.tool_count,
        servers_failed=sum(1 for s in offered.servers if s.status != "ok"),
        memory=bool(memory and memory.solution_id),
    )


async def ensure_record(rt: Runtime, plan: StoredPlan) -> InvestigationRecord:
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
    mcp = rt.settings.mcp(running_on_azure=rt.deps.settings.running_on_azure)
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
