"""A CronJob that stops succeeding because one run never ends: with `concurrencyPolicy: Forbid` the controller
skips every later run while the hung Job is active (JobAlreadyActive), and nothing ends it when neither the Job
(`activeDeadlineSeconds`) nor what it does (a timeout of 0) is bounded."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.object_view.values import cron_period_minutes, find_time, span
from shared.investigations.rules.state import Finding
from shared.investigations.rules.state_rules import alert_time
from shared.investigations.rules.toolshape import Role

_TIMEOUT_OFF = re.compile(r"(?im)^[ \t]*([A-Z][A-Z0-9_]{0,60}TIMEOUT[A-Z0-9_]{0,30}):\s+0\s*$")


def hung_runs(ctx: Context) -> list[Finding]:
    """A Forbid CronJob whose active Job has run far longer than its schedule allows."""
    out: list[Finding] = []
    now = alert_time(ctx.state.alert)
    for s in ctx.seen:
        if s.kind != "CronJob" or s.role is not Role.DESCRIBE or s.rec.is_error:
            continue
        policy = parse.field_value(s.rec.output[:50_000], "Concurrency Policy")
        active = parse.field_value(s.rec.output[:50_000], "Active Jobs")
        if policy != "Forbid" or not active or active == "<none>":
            continue
        job_name = active.split(",")[0].strip()
        job = next((j for j in ctx.seen if j.kind == "Job" and j.name == job_name and not j.rec.is_error), None)
        if job is not None and re.search(r"(?m)^Pods Statuses:\s+0 Active", job.rec.output[:50_000]):
            continue  # no pod runs: the run is not hung, it cannot start (another rule reads why)
        started = find_time(parse.field_value(job.rec.output, "Start Time")) if job is not None else None
        ran = f" for {span(now - started[0])}" if started and now and now > started[0] else ""
        period = cron_period_minutes(parse.field_value(s.rec.output[:50_000], "Schedule"))
        if started and now and period and (now - started[0]).total_seconds() < period * 60:
            continue  # still within its own period: not yet overdue
        bounded = job is not None and "Active Deadline Seconds" in job.rec.output[:50_000]
        off = _TIMEOUT_OFF.search(s.rec.output[:50_000])
        cause = (
            f"CronJob {s.name} runs no new job: its concurrencyPolicy is Forbid and job {job_name} is still active"
            f"{ran}, so every later run is skipped (JobAlreadyActive)"
        )
        if not bounded:
            cause += "; nothing ends the hung run (no activeDeadlineSeconds"
            cause += f", and {off.group(1)} is 0, no timeout)" if off else ")"
        evidence = [ev(s.rec, parse.line_matching(s.rec.output, r"Concurrency Policy:")),
                    ev(s.rec, parse.line_matching(s.rec.output, r"Active Jobs:"))]  # fmt: skip
        if off:
            evidence.append(ev(s.rec, off.group(0).strip()))
        out.append(
            Finding(
                rule="cronjob_hung_run",
                subject=s.name,
                cause=cause + ".",
                evidence=evidence,
                remediation=[
                    (
                        f"Delete the stuck job (`kubectl delete job {job_name} -n {s.namespace}`), then trigger a run "
                        f"(`kubectl create job --from=cronjob/{s.name} {s.name}-manual -n {s.namespace}`); bound "
                        "the next hang: set activeDeadlineSeconds on the job template"
                        + (f" and a non-zero {off.group(1)}" if off else "")
                        + "."
                    )
                ],
                confidence=0.85,
            )
        )
    return out
