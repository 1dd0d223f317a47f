"""Debug-memory tools: ranked_solutions, record_outcome, add_solution, add_incident, get_incident, list_incidents."""

from __future__ import annotations

from shared.memory.models import (
    AddIncidentRequest,
    AddIncidentResult,
    AddSolutionRequest,
    AddSolutionResult,
    GetIncidentRequest,
    IncidentDetail,
    ListIncidentsRequest,
    ListIncidentsResult,
    RankedSolutionsRequest,
    RankedSolutionsResult,
    RecordOutcomeRequest,
    RecordOutcomeResult,
)
from shared.memory.runtime import runtime_of
from shared.memory.service import MemoryService
from shared.memory.store import MemoryStore
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolSet

toolset = ToolSet("memory")


def _service(ctx: ToolContext) -> MemoryService:
    runtime = runtime_of(ctx.deps)
    return MemoryService(MemoryStore(ctx.deps.cosmos), ctx.deps.clock, runtime.embedders.models, runtime.vectors)


def _render_ranked(r: RankedSolutionsResult) -> str:
    if not r.recommended_solution:
        return (
            f"{r.next_action.type}: {len(r.incidents)} incident(s) matched, no solution to try."
            f" {r.next_action.instructions}"
        )
    top = r.recommended_solution
    steps = "; ".join(top.steps[:5])
    match = "exact signature match" if top.exact_signature_match else f"incident relevance {top.incident_relevance}"
    return (
        f"Recommended {top.solution_id} (score {top.final_solution_score}, {match}; {top.evidence}): {steps}."
        f" {r.next_action.instructions}"
    )


@toolset.tool(
    "ranked_solutions",
    title="Find known fixes, ranked for your environment",
    read_only=False,
    idempotent=False,
    render=_render_ranked,
)
async def ranked_solutions(ctx: ToolContext, args: RankedSolutionsRequest) -> RankedSolutionsResult:
    """Search the debug memory for this failure and rank the fixes that worked before, for your environment.

    Call this first whenever you start debugging an error. Pass the error text (message, log lines or
    stack trace) as query_text and your environment as env. Returns matching incidents (with why they
    matched), solutions ranked by final_solution_score (environment match, reliability from recorded
    outcomes, recency), the recommended_solution and a lookup_id. Then follow next_action: try the
    recommended solution and call record_outcome with the lookup_id; with no match, debug and call
    add_incident once you have a fix. (It stores the lookup, hence not read-only.)
    """
    return await _service(ctx).ranked_solutions(ctx.principal, args)


@toolset.tool("record_outcome", title="Record whether a fix worked", idempotent=False)
async def record_outcome(ctx: ToolContext, args: RecordOutcomeRequest) -> RecordOutcomeResult:
    """Record that you tried a solution and whether it worked, in your environment.

    Call it after every attempt, success or failure, with the solution_id and the lookup_id from
    ranked_solutions. Outcomes are append-only evidence; the solution's per-environment stats
    (returned) update atomically. next_action says whether you are done or should keep debugging.
    """
    return await _service(ctx).record_outcome(ctx.principal, args)


@toolset.tool("add_solution", title="Add a fix to an existing incident", idempotent=True)
async def add_solution(ctx: ToolContext, args: AddSolutionRequest) -> AddSolutionResult:
    """Add a fix (ordered steps) to an existing incident, or record that known steps apply to your environment.

    Use it when ranked_solutions found the incident but no solution worked and you found another fix,
    or when the same fix works in a new environment. The same steps (ignoring case, spacing and list
    markers) return the existing solution_id. Then call record_outcome for the solution_id.
    """
    return await _service(ctx).add_solution(ctx.principal, args)


@toolset.tool("add_incident", title="Store a new incident with its fix and outcome")
async def add_incident(ctx: ToolContext, args: AddIncidentRequest) -> AddIncidentResult:
    """Store a new incident together with the fix you tried and whether it worked, in one call.

    Use it when ranked_solutions found no matching incident and you have debugged the failure. Give a
    searchable title, the error_signature (the characteristic error line), a summary of the root cause,
    tags, the steps and worked. If the workspace already has this incident (same normalised signature,
    or the same title and summary) nothing is written and next_action tells you to call add_solution
    with the existing incident_id.
    """
    return await _service(ctx).add_incident(ctx.principal, args)


@toolset.tool("get_incident", title="Show an incident with its solutions and stats", read_only=True, idempotent=True)
async def get_incident(ctx: ToolContext, args: GetIncidentRequest) -> IncidentDetail:
    """Show one incident with every solution and its worked/failed counts per environment bucket.

    Use it to inspect an incident from ranked_solutions or list_incidents before choosing a fix.
    """
    return await _service(ctx).get_incident(ctx.principal, args.incident_id)


@toolset.tool("list_incidents", title="List or search incidents", read_only=True, idempotent=True)
async def list_incidents(ctx: ToolContext, args: ListIncidentsRequest) -> ListIncidentsResult:
    """List the workspace's incidents, newest first (page with continuation), or search them by words.

    Filter by tag. For debugging a live error prefer ranked_solutions, which also ranks the fixes.
    """
    return await _service(ctx).list_incidents(ctx.principal, args)
