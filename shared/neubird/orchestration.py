"""`neubird_wait_orchestrator`: the rest of a long wait, as a Durable run the caller polls.

A tool waits at most `sync_wait_seconds` inside its request; when the caller asked for more, this run
polls the session (inspect, never cached) on durable timers until it completes, fails or the wait is
used up, and its output is the investigation's results (get_run_status). The plan holds the session,
project, organization, instance URL and seconds to wait: no credential. The poll activity logs in with
the deployment's credentials itself and re-checks the instance against the allow-list, so a stored plan
cannot point the account at another host.
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import timedelta
from typing import Any

from shared.neubird.activity import poll_once
from shared.neubird.settings import NeubirdSettings
from shared.neubird.wait_models import PollSnapshot, WaitOutput, WaitPlan
from shared.neubird.wait_plan import validate_plan
from shared.neubird.waiting import poll_plan
from shared.tools.capability import ActiveRun, ActivitySpec, Orchestration, RetryPolicy, RunContext
from shared.tools.deps import Deps

ORCHESTRATOR = "neubird_wait_orchestrator"
POLL = "neubird_poll_activity"
# A poll that fails (NeuBird down, throttled past the client's own retries) is retried by the engine.
POLL_RETRY = RetryPolicy(first_interval_seconds=5, max_attempts=3, backoff=2.0, max_interval_seconds=60)


def orchestrate(ctx: RunContext, plan: WaitPlan) -> Generator[Any, Any, WaitOutput]:
    deadline = ctx.current_utc_datetime + timedelta(seconds=plan.wait_seconds)
    snap = PollSnapshot(status="unknown")
    for attempt in range(1, plan.poll_attempts + 1):
        snap = yield ctx.call_activity(POLL, retry=POLL_RETRY)
        ctx.set_custom_status({"status": snap.status, "poll": attempt, "progress": snap.progress})
        if snap.status in ("completed", "failed"):
            break
        fire_at = ctx.current_utc_datetime + timedelta(seconds=plan.poll_interval_seconds)
        if fire_at > deadline:
            break
        yield ctx.create_timer(fire_at)
    status = snap.status
    waiting = status not in ("completed", "failed")
    return WaitOutput(
        session_uuid=plan.session_uuid,
        project_uuid=plan.project_uuid,
        status=status,
        progress=snap.progress,
        investigation_results=snap.investigation_results,
        message=(
            f"Waited {plan.wait_seconds:.0f} s in the background; NeuBird is still investigating. Poll "
            f"neubird_get_investigation_status with session_uuid {plan.session_uuid!r}."
            if waiting
            else f"NeuBird's investigation {status}."
            + (
                " The results here are shortened: neubird_get_investigation_status has them whole."
                if (snap.investigation_results or {}).get("truncated")
                else ""
            )
        ),
    )


def _with_schedule(plan: dict[str, Any], deps: Deps) -> WaitPlan:
    settings = deps.settings.section(NeubirdSettings)
    checked = validate_plan(plan, deps)
    interval, attempts = poll_plan(checked["wait_seconds"], settings.poll_interval_ms, settings.max_poll_attempts)
    return WaitPlan.model_validate({**checked, "poll_interval_seconds": interval, "poll_attempts": attempts})


async def poll(run: ActiveRun, _args: None, deps: Deps) -> PollSnapshot:
    """One status read of the run's session: {status, progress, investigation_results when finished}."""
    return await poll_once(run, deps)


WAIT = Orchestration(
    name=ORCHESTRATOR,
    orchestrator=orchestrate,
    activities={POLL: ActivitySpec(poll, output=PollSnapshot)},
    plan=WaitPlan,
    validate_plan=_with_schedule,
    description="The rest of a NeuBird investigation's wait: poll the session on durable timers until it ends.",
)
