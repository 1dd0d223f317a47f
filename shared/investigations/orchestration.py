"""The alert investigation as a Durable orchestration: prepare, iterate (plan, call in parallel), report.

Deterministic: the loop's decisions come from `loop.py` and from activity results (which the history
replays), the clock is the orchestration's. Every read and write is in an activity with a retry
policy. Activities keep the bulk (runbook, tool outputs, the tool list) in the investigation record
and Blob and hand the orchestrator only small summaries, so the history stays small however much the
tools say (15 outputs of 100 KB: a history of a few KB, see the README).

Nothing secret is in the plan, the history or the output: MCP headers, the GitHub token and the LLM
key are the process's settings, read by the activities.
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import timedelta
from typing import Any

from shared.investigations.activities.call import call
from shared.investigations.activities.decide import plan as decide
from shared.investigations.activities.payloads import (
    CALL,
    FAILED,
    PLAN,
    PREPARE,
    REPORT,
    CallDone,
    CallRequest,
    PlanChoice,
    PlanRequest,
    Prepared,
    ReportRequest,
    ReportSummary,
    StoredPlan,
    validate_plan,
)
from shared.investigations.activities.prepare import prepare
from shared.investigations.activities.report import mark_failed, write_report
from shared.investigations.loop import admit, status
from shared.investigations.models import ORCHESTRATOR
from shared.tools.capability import ActivitySpec, Orchestration, RetryPolicy, RunContext

# Store and network hiccups: three attempts, 2 s then 4 s apart. The model's and the tools' own
# timeouts are inside the activities, which never raise for a failing tool or model.
RETRY = RetryPolicy(first_interval_seconds=2.0, max_attempts=3, backoff=2.0, max_interval_seconds=30.0)


def orchestrate(ctx: RunContext, plan: StoredPlan) -> Generator[Any, Any, ReportSummary]:
    """Investigate the alert in `plan`; output: the report summary (analysis, path, counts, stop reason)."""
    limits = plan.limits
    deadline = ctx.current_utc_datetime + timedelta(seconds=limits.time_budget_seconds)
    ctx.set_custom_status(status("preparing", limits=limits))
    try:
        prepared: Prepared = yield ctx.call_activity(PREPARE, retry=RETRY)
        path: str = prepared.path
        made: list[str] = []
        planned_per_iteration: list[list[str]] = []
        data_points = 0
        stop: str | None = None
        n = 0
        while stop is None:
            if n >= limits.max_iterations:
                stop = f"iteration limit ({limits.max_iterations})"
                break
            if ctx.current_utc_datetime >= deadline:
                stop = f"time budget ({limits.time_budget_seconds} s) used up"
                break
            n += 1
            ctx.set_custom_status(status("iterating", iteration=n, limits=limits, calls_made=len(made), path=path))
            asked = PlanRequest(
                n=n, calls_left=limits.max_tool_calls - len(made), per_iteration=limits.max_calls_per_iteration
            )
            chosen: PlanChoice = yield ctx.call_activity(PLAN, asked, retry=RETRY)
            path = chosen.path
            calls, repeat = admit(
                chosen.calls,
                made,
                planned_per_iteration,
                limits.max_tool_calls - len(made),
                limits.max_calls_per_iteration,
            )
            planned_per_iteration.append([c.signature for c in chosen.calls])
            if not calls:
                n -= 1  # nothing ran: this was not an iteration
                stop = repeat or chosen.stop or "the planner found nothing more to call"
                break
            ctx.set_custom_status(
                status(
                    "iterating",
                    iteration=n,
                    limits=limits,
                    calls_made=len(made),
                    tools=[c.tool for c in calls],
                    path=path,
                )
            )
            results: list[CallDone] = yield ctx.task_all(
                [ctx.call_activity(CALL, CallRequest(n=n, **c.model_dump()), retry=RETRY) for c in calls]
            )
            made.extend(c.signature for c in calls)
            data_points += sum(1 for r in results if r.data)
            if chosen.done:
                stop = chosen.stop or "the planner had what it needed"
            elif len(made) >= limits.max_tool_calls:
                stop = f"tool call limit ({limits.max_tool_calls})"
            elif n >= limits.min_iterations and data_points >= limits.data_threshold:
                stop = f"data threshold ({data_points} data points after {n} iterations)"
        ctx.set_custom_status(status("reporting", iteration=n, limits=limits, calls_made=len(made), path=path))
        summary = ReportRequest(stop=stop or "", iterations=n, calls=len(made), data_points=data_points)
        report: ReportSummary = yield ctx.call_activity(REPORT, summary, retry=RETRY)
    except Exception:
        # The record says failed (the run frame records the run's failure); then the frame sees the error.
        yield ctx.call_activity(FAILED, retry=RETRY)
        raise
    ctx.set_custom_status(status("done", iteration=n, limits=limits, calls_made=len(made), path=report.path))
    return report.model_copy(update={"correlation_id": ctx.correlation_id})


INVESTIGATE = Orchestration(
    name=ORCHESTRATOR,
    orchestrator=orchestrate,
    activities={
        PREPARE: ActivitySpec(prepare, output=Prepared),
        PLAN: ActivitySpec(decide, input=PlanRequest, output=PlanChoice),
        CALL: ActivitySpec(call, input=CallRequest, output=CallDone),
        REPORT: ActivitySpec(write_report, input=ReportRequest, output=ReportSummary),
        FAILED: ActivitySpec(mark_failed),
    },
    plan=StoredPlan,
    validate_plan=lambda stored, _deps: validate_plan(stored),
    description="An alert investigation: runbook, tools, memory, up to N iterations of tool calls, the report.",
)
