"""The plan activity: iteration n's calls, chosen by the model, or by the rules when there is none or it failed."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any, cast

from shared.investigations import llm, rules
from shared.investigations.activities.payloads import MAX_ARGS_JSON_CHARS, PlanChoice, PlanRequest
from shared.investigations.activities.runtime import model, runtime
from shared.investigations.activities.state import Gathered, gather, limits_of, rule_partial
from shared.investigations.loop import Limits, Planned, status
from shared.investigations.models import TERMINAL_STATUSES, InvestigationPath, InvestigationRecord, PlannedReasoning
from shared.investigations.secret_calls import secret_read
from shared.tools.capability import ActiveRun
from shared.tools.deps import Deps

log = logging.getLogger("firebreak.investigations")


@dataclass(frozen=True)
class _Candidate:
    """A call the model or the rules proposed, before the budget and secret checks make it a Planned call."""

    tool: str
    args: dict[str, Any]  # free-form: the tool's own arguments (its inputSchema is the MCP server's)
    reason: str


@dataclass
class _Choice:
    calls: list[_Candidate]
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
        [_Candidate(c.tool, c.arguments, c.reason) for c in answer.calls],
        "llm",
        False,
        done=answer.done,
        partial=answer.analysis_so_far,
        stop="the model said it had what it needed" if answer.done else None,
        notes=notes,
        usage=answer.usage,
        reasoning=answer.reasoning or "; ".join(f"{c.tool}: {c.reason}" for c in answer.calls if c.reason),
    )


async def plan(run: ActiveRun, args: PlanRequest, deps: Deps) -> PlanChoice:
    """Activity: choose iteration n's calls (the model, or the rules when there is none or it failed)."""
    rt = runtime(run, deps)
    n, calls_left, per_iteration = args.n, args.calls_left, args.per_iteration
    limits = limits_of(run)
    got = await gather(rt)
    path = got.record.path or "rule"
    if path == "llm":
        choice = await _llm_choice(deps, got, limits, n, calls_left, per_iteration)
    else:
        choice = _Choice([], path, True)
    if choice.use_rules:
        state = got.rule_state(limits, calls_left)
        picked = await asyncio.to_thread(rules.first_calls if not state.calls else rules.next_calls, state)
        choice.calls = [_Candidate(c.tool, c.args, c.reason) for c in picked]
        choice.partial = choice.partial or await asyncio.to_thread(rule_partial, state)
        choice.stop = None if choice.calls else "the rules found nothing more to check"
        choice.reasoning = choice.reasoning or "; ".join(c.reason for c in choice.calls)
    notes = list(choice.notes or [])
    planned: list[Planned] = []
    for j, c in enumerate(choice.calls):
        if len(_json(c.args)) > MAX_ARGS_JSON_CHARS:
            notes.append(f"call {c.tool} dropped: its arguments are over {MAX_ARGS_JSON_CHARS} characters")
            continue
        why = None if rt.settings.read_secrets else secret_read(c.tool, c.args)
        if why is not None:
            notes.append(
                f"call {c.tool} dropped: {why}; investigations do not read Secrets (their data would be recorded)"
            )
            continue
        entry = Planned(key=f"i{n}-c{j + 1}", tool=c.tool, args=c.args, reason=c.reason[:2_000])
        planned.append(entry)

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
    return PlanChoice(
        calls=planned,
        done=choice.done,
        path=cast(InvestigationPath, choice.path),
        stop=choice.stop,
        notes=[x[:300] for x in notes[:5]],
    )


def _keep_reasoning(record: InvestigationRecord, n: int, reasoning: str) -> None:
    """Why iteration n's calls were chosen: kept on the record until the iteration's first call lands (the store
    moves it there), so a plan the loop then refuses (repeated calls) leaves no empty iteration behind."""
    record.planned_reasoning = PlannedReasoning(n=n, text=reasoning[:4_000])


def _json(value: Any) -> str:
    return json.dumps(value, default=str)


def _last_partial(record: InvestigationRecord) -> str:
    return next((it.partial_analysis for it in reversed(record.iterations) if it.partial_analysis), "") or ""
