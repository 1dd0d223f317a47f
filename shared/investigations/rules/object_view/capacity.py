"""Current against target, maximum or hard limit: autoscalers, replicas, quotas, node pod slots, claims, jobs."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from shared.investigations.rules.object_view import values
from shared.investigations.rules.object_view.conditions import meaning_of
from shared.investigations.rules.object_view.signal import label, make, subject
from shared.investigations.rules.object_view.view import Metric, ObjectView
from shared.investigations.rules.state import CallRecord, Finding

_NEAR_FULL_PERCENT = 95


def _int(value: str) -> int | None:
    value = value.strip()
    return int(value) if value.isdigit() and len(value) < 10 else None


def metric_label(m: Metric) -> str:
    """A metric's short name: `cpu` for a resource metric, the quoted name of a custom one."""
    name = " ".join(m.name.split())
    quoted = re.search(r'"([^"]{1,200})"', name)
    if quoted:
        return quoted.group(1)
    words = name.split()
    if words[:1] == ["resource"] and len(words) > 1:
        return words[1].upper() if words[1] == "cpu" else words[1]
    return name


# `184% (92m) / 70%`: a utilisation with the usage it stands for (millicores).
_UTILISATION = re.compile(r"(\d{1,6})% \((\d{1,9})m\)")


def _small_request(quote: str, resource: str) -> str:
    """What a utilisation says about the request behind it: 184% for 92m of use means a 50m request. A request
    that small makes modest use look like overload (often a request lowered by a change), so it is said."""
    m = _UTILISATION.search(quote)
    if not m or int(m.group(1)) == 0:
        return ""
    used, pct = int(m.group(2)), int(m.group(1))
    request = round(used * 100 / pct)
    note = f" Each pod uses {used}m {resource} against a request of about {request}m"
    if request <= 100:
        note += (
            ": a request that small makes modest use read as overload. Check whether the CPU request was lowered "
            "(the pod template's resources.requests), and restore it before raising maxReplicas."
        )
        return note
    return note + "."


def autoscaler(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """An HPA pinned at its maximum with load above target, one that cannot reach its desired count, or one
    that cannot read its metrics."""
    if view.kind != "HorizontalPodAutoscaler":
        return []
    out: list[Finding] = []
    most, now = _int(view.fact("max_replicas")), _int(view.fact("current_replicas"))
    desired = _int(view.fact("desired_replicas"))
    target = next((f"{r.kind} {r.name}" for r in view.refs if r.relation == "scale target"), "its target")
    limited = next((c.quote for c in view.conditions if c.type == "ScalingLimited" and c.status == "True"), "")
    hot = [m for m in view.metrics if values.over(m.current, m.target)]
    quotes = [view.facts[k].quote for k in ("max_replicas", "current_replicas") if k in view.facts]
    if most is not None and now is not None and now >= most:
        if hot:
            m = hot[0]
            resource = metric_label(m)
            cause = (
                f"{label(view)} is pinned at its maximum of {most} replicas while {resource} is {m.current} against"
                f" a {m.target} target: it cannot add pods to {target}, so the load per pod stays above target."
            ) + _small_request(m.quote, resource)
            fixes = [
                (
                    f"Raise maxReplicas of {view.name} above {most} (and check the cluster has room for more pods of "
                    f"{target}), or reduce the per-pod load / raise the {resource} requests of {target} so that each "
                    "pod takes more."
                )
            ]
            out.append(make(rec, "hpa_maxed", subject(view), cause, [m.quote, *quotes, limited], fixes, 0.85))
        else:
            cause = f"{label(view)} runs at its maximum of {most} replicas ({target})."
            fixes = [
                (
                    f"If the load is expected, raise maxReplicas of {view.name} above {most}; otherwise find what "
                    f"drives {target}'s metric up."
                )
            ]
            out.append(make(rec, "hpa_at_max", subject(view), cause, [*quotes, limited], fixes, 0.5))
    elif desired is not None and now is not None and desired > now:
        cause = f"{label(view)} wants {desired} replicas of {target} but {now} run: the target does not scale up."
        fixes = [
            (
                f"Look at {target}'s ReplicaSet and pod events (FailedCreate: quota or LimitRange; FailedScheduling: "
                "capacity) for what stops the new pods."
            )
        ]
        out.append(make(rec, "hpa_short", subject(view), cause, quotes, fixes, 0.6, symptom=True))
    unknown = [m for m in view.metrics if "unknown" in m.current]
    inactive = any(c.type == "ScalingActive" and c.status != "True" for c in view.conditions)
    if unknown and not inactive:
        m = unknown[0]
        cause = (
            f"{label(view)} cannot read its {metric_label(m)} metric (current <unknown>): it cannot scale "
            f"{target} on it."
        )
        fixes = [
            (
                "Check the metrics source (metrics-server or the metrics adapter: `kubectl top pods` works) and that "
                f"every container of {target} sets a request for {metric_label(m)}."
            )
        ]
        out.append(make(rec, "hpa_metrics_unknown", subject(view), cause, [m.quote], fixes, 0.7))
    return out


def replicas(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """Fewer replicas available (or created) than desired; a Job whose pods failed."""
    out: list[Finding] = []
    desired = _int(view.fact("replicas_desired"))
    have_key = next((k for k in ("replicas_available", "replicas_ready", "replicas_current") if k in view.facts), "")
    have = _int(view.fact(have_key)) if have_key else None
    if desired and have is not None and have < desired and view.kind != "HorizontalPodAutoscaler":
        word = have_key.split("_", 1)[1]
        selector = view.fact("selector")
        cause = f"{label(view)} has {have} of {desired} desired replicas {word}"
        if view.fact("replicas_unavailable"):
            cause += f" ({view.fact('replicas_unavailable')} unavailable)"
        fixes = [
            f"Find why the pods of {label(view)}"
            + (f" (selector {selector})" if selector else "")
            + " are not available: their container states and events"
            + (", and the ReplicaSet's FailedCreate events (quota, LimitRange)" if word == "current" else "")
            + "."
        ]
        quotes = [view.facts[k].quote for k in ("replicas_desired", have_key) if k in view.facts]
        out.append(make(rec, "replicas_unavailable", subject(view), cause + ".", quotes, fixes, 0.5, symptom=True))
    else:
        out += _rollout(rec, view, desired)
    out += _job(rec, view)
    return out


def _rollout(rec: CallRecord, view: ObjectView, desired: int | None) -> list[Finding]:
    """Enough replicas available, but some unavailable or not updated: a rollout whose new pods do not come up."""
    unavailable, updated = _int(view.fact("replicas_unavailable")), _int(view.fact("replicas_updated"))
    if not desired or not unavailable:
        return []
    shown = f" ({updated} of {desired} updated)" if updated is not None and updated < desired else ""
    cause = (f"{label(view)} has {unavailable} unavailable replica{'s' if unavailable > 1 else ''}{shown}: its "
             "rollout is not complete, the new pods do not become available.")  # fmt: skip
    selector = view.fact("selector")
    fixes = [f"Look at the newest pods of {label(view)}" + (f" (selector {selector})" if selector else "")
             + ": their container states and events say why the new template does not come up; roll back if it "
             "cannot be fixed quickly."]  # fmt: skip
    quote = view.facts["replicas_unavailable"].quote
    return [make(rec, "rollout_incomplete", subject(view), cause, [quote], fixes, 0.45, symptom=True)]


def _job(rec: CallRecord, view: ObjectView) -> list[Finding]:
    failed, succeeded = _int(view.fact("pods_failed")), _int(view.fact("pods_succeeded"))
    if view.kind != "Job" or not failed or succeeded:
        return []
    if any(c.type == "Failed" and c.status == "True" for c in view.conditions):
        return []  # the Failed condition's finding says it, with the controller's reason
    limit = view.fact("backoff_limit")
    cause = f"{label(view)} has {failed} failed pods and none succeeded" + (
        f" (backoff limit {limit})" if limit else ""
    )
    quotes = [view.facts[k].quote for k in ("pods_failed", "backoff_limit") if k in view.facts]
    fixes = [f"Find why the pods of Job {view.name} fail (their exit codes and logs), fix that, then re-run the Job."]
    return [make(rec, "job_failed", subject(view), cause + ".", quotes, fixes, 0.6, symptom=True)]


def quotas(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """A ResourceQuota resource used up to its hard limit."""
    out: list[Finding] = []
    for item in view.quotas:
        hard = values.quantity(item.hard)
        if not hard or not values.at_or_over(item.used, item.hard):
            continue
        cause = (
            f"ResourceQuota {item.quota} is used up for {item.resource}: {item.used} used of {item.hard} hard; "
            f"new objects that need {item.resource} are rejected (exceeded quota)."
        )
        fixes = [
            (
                f"Raise {item.resource} in ResourceQuota {item.quota} above {item.hard}, or free some (delete unused "
                "objects, lower requests) in the namespace."
            )
        ]
        out.append(
            make(rec, "quota_exhausted", f"ResourceQuota/{item.quota} {item.resource}", cause, [item.quote], fixes, 0.8)
        )
    return out


def node(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """A node at its pod capacity, with nearly all its allocatable resources requested, or cordoned."""
    if view.kind != "Node":
        return []
    out: list[Finding] = []
    running, cap = _int(view.fact("non_terminated_pods")), _int(view.fact("allocatable_pods"))
    if running is not None and cap and running >= cap:
        cause = f"Node {view.name} runs {running}/{cap} pods: it is at its pod capacity (max pods {cap})."
        fixes = [
            (
                "Add nodes (or a larger instance type, whose max pods is higher) so that pods spread out, raise the "
                "kubelet's maxPods if the network plugin allows it, or remove unneeded pods."
            )
        ]
        quotes = [view.facts["non_terminated_pods"].quote, view.facts["allocatable_pods"].quote]
        out.append(make(rec, "node_pods_full", subject(view), cause, quotes, fixes, 0.85))
    for key, fact in view.facts.items():
        if key.startswith("requests_percent.") and (_int(fact.value) or 0) >= _NEAR_FULL_PERCENT:
            res = key.split(".", 1)[1]
            cause = (
                f"Node {view.name} has {fact.value}% of its allocatable {res} requested: pods that request "
                f"{res} no longer fit on it."
            )
            fixes = [f"Add nodes, or lower the {res} requests of the pods on {view.name} to what they use."]
            out.append(make(rec, "node_requests_full", subject(view, res), cause, [fact.quote], fixes, 0.55))
    if view.fact("unschedulable").lower() == "true":
        cause = f"Node {view.name} is cordoned (Unschedulable: true): no new pods are placed on it."
        fixes = [f"Uncordon {view.name} when its maintenance is done (`kubectl uncordon {view.name}`)."]
        out.append(make(rec, "node_cordoned", subject(view), cause, [view.facts["unschedulable"].quote], fixes, 0.6))
    return out


def storage(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """A claim not bound (or lost), a claim larger than its volume, a volume released or failed."""
    out: list[Finding] = []
    quote = _phase_quote(rec, view)
    if view.kind == "PersistentVolumeClaim" and view.phase in ("Pending", "Lost"):
        sc = view.fact("storage_class")
        if view.phase == "Lost":
            cause = f"{label(view)} is Lost: the PersistentVolume it was bound to no longer exists."
            fixes = [f"Restore the volume of {view.name} from a backup, or re-create the claim."]
        else:
            cause = (
                f"{label(view)} is Pending: it is not bound to a volume"
                + (f" (StorageClass {sc})" if sc else " and names no StorageClass")
                + "."
            )
            fixes = [
                f"Make StorageClass `{sc}` exist and its provisioner run, or create a PersistentVolume that "
                "matches the claim's size and access modes."
                if sc
                else "Set a storageClassName on the claim (or mark a StorageClass default), or create a matching "
                "PersistentVolume."
            ]
        out.append(make(rec, "pvc_unbound", subject(view), cause, [quote], fixes, 0.7))
    requested, capacity = view.fact("requested_storage"), view.fact("capacity")
    if view.kind == "PersistentVolumeClaim" and requested and capacity and values.over(requested, capacity):
        cause = f"{label(view)} asks for {requested} but has {capacity}: its resize has not completed."
        fixes = [
            (
                f"Check that the StorageClass allows expansion and the CSI driver resizes; restart the pod using "
                f"{view.name} if the filesystem resize waits for it."
            )
        ]
        out.append(make(rec, "pvc_resize", subject(view), cause, [view.facts["capacity"].quote], fixes, 0.55))
    if view.kind == "PersistentVolume" and view.phase in ("Failed", "Released"):
        cause = f"{label(view)} is {view.phase}" + (f": {view.message}" if view.message else "") + "."
        fixes = [f"Reclaim {view.name} (clear its claimRef once the data is safe) or delete and re-create it."]
        out.append(make(rec, "pv_unusable", subject(view), cause, [quote], fixes, 0.5))
    return out


def _phase_quote(rec: CallRecord, view: ObjectView) -> str:
    for line in rec.output.splitlines()[:200]:
        s = line.strip()
        if s.startswith(("Status:", "phase:", '"phase":')) and view.phase in s:
            return s
    return ""


def schedule(rec: CallRecord, view: ObjectView, alert_time: datetime | None) -> list[Finding]:
    """A CronJob suspended, or last scheduled much longer ago than its schedule allows."""
    if view.kind != "CronJob":
        return []
    out: list[Finding] = []
    if view.fact("suspend").lower() == "true":
        cause = f"{label(view)} is suspended: it starts no new jobs."
        fixes = [
            f'Resume it (`kubectl patch cronjob {view.name} -p \'{{"spec":{{"suspend":false}}}}\'`) if it should run.'
        ]
        out.append(make(rec, "cronjob_suspended", subject(view), cause, [view.facts["suspend"].quote], fixes, 0.7))
    last = values.find_time(view.fact("last_schedule_time"))
    period = values.cron_period_minutes(view.fact("schedule"))
    if not (alert_time and last and period) or out:  # a suspended CronJob is expected not to run
        return out
    gap = alert_time - last[0]
    if gap <= timedelta(minutes=max(2 * period, 60)):
        return out
    cause = (
        f"{label(view)} last ran at {last[1]}, {values.span(gap)} before the alert, though its schedule "
        f"`{view.fact('schedule')}` runs it at least every {values.span(timedelta(minutes=period))}: it has missed "
        "its runs."
    )
    active = view.fact("active_jobs")
    blocked = bool(active) and view.fact("concurrency_policy").lower() == "forbid"
    if blocked:
        cause += (
            f" Its concurrencyPolicy is Forbid and job {active} is still active, so every new run is skipped until "
            "that job ends."
        )
        fixes = [f"Find why job {active} does not finish (its pods' state and logs) and end it; new runs start then."]
    else:
        fixes = [
            (
                f"Check why {view.name} does not start jobs: suspended, a startingDeadlineSeconds too short, a "
                "concurrencyPolicy of Forbid with a job still running, or the controller's events (too many missed "
                "start times)."
            )
        ]
    quotes = [view.facts["last_schedule_time"].quote, view.facts["schedule"].quote]
    if blocked:
        quotes += [view.facts["active_jobs"].quote, view.facts["concurrency_policy"].quote]
    out.append(make(rec, "cronjob_stale", subject(view), cause, quotes, fixes, 0.6))
    return out


def routing(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """A Service without endpoints, Endpoints without ready addresses, an Ingress backend that does not exist."""
    out: list[Finding] = []
    if view.kind == "Service" and view.fact("endpoints") in ("", "<none>") and "endpoints" in view.facts:
        selector = view.fact("selector")
        cause = (
            f"{label(view)} has no endpoints: "
            + (
                f"no Ready pod matches its selector {selector}"
                if selector
                else "it has no selector and no Endpoints were created for it"
            )
            + ", so connections to it fail."
        )
        fixes = [
            f"Check that pods with the labels {selector} exist and are Ready, or fix the selector to match the "
            "pods' labels."
            if selector
            else f"Create the Endpoints (or EndpointSlice) for {view.name}."
        ]
        out.append(make(rec, "service_no_endpoints", subject(view), cause, [view.facts["endpoints"].quote], fixes, 0.7))
    if view.kind == "Endpoints" and view.fact("ready_addresses") in ("", "<none>") and "ready_addresses" in view.facts:
        not_ready = view.fact("not_ready_addresses")
        cause = f"{label(view)} has no ready address" + (f" (not ready: {not_ready})" if not_ready else "") + "."
        fixes = [
            f"Find why the pods behind {view.name} are not Ready (readiness probe, crash)."
            if not_ready
            else f"No pod backs {view.name}: check the Service's selector and its pods."
        ]
        out.append(
            make(
                rec,
                "endpoints_not_ready",
                subject(view),
                cause,
                [
                    view.facts["ready_addresses"].quote,
                    view.facts.get("not_ready_addresses", view.facts["ready_addresses"]).quote,
                ],
                fixes,
                0.65,
            )
        )
    for b in view.backends:
        if "<error" not in b.endpoints and b.endpoints != "<none>":
            continue
        said = meaning_of(view, b.endpoints)
        route = " ".join(p for p in (b.host, b.path) if p) or "its default backend"
        why = said.why if said else f"Service `{b.service}` has no endpoints"
        cause = f"{label(view)} routes {route} to Service `{b.service}`, but {why}."
        fixes = said.fixes if said else [f"Make pods behind Service `{b.service}` Ready (or fix its selector)."]
        out.append(make(rec, "ingress_backend", subject(view, b.service), cause, [b.quote], fixes, 0.75))
    return out


def namespace(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """A namespace stuck Terminating: the resources and finalizers it still holds."""
    if view.kind != "Namespace" or view.phase != "Terminating":
        return []
    remaining = [r.resource for r in view.refs if r.resource]
    quotes = [c.quote for c in view.conditions if c.type.endswith("Remaining") and c.status == "True"]
    if not (remaining or view.finalizers_remaining):
        cause = f"{label(view)} is Terminating."
        fixes = [
            (
                f"List what is left in {view.name} (`kubectl api-resources --verbs=list --namespaced -o name | "
                f"xargs -n1 kubectl get -n {view.name} --ignore-not-found`) and the finalizers that hold it."
            )
        ]
        return [
            make(
                rec, "namespace_terminating", subject(view), cause, [_phase_quote(rec, view)], fixes, 0.4, symptom=True
            )
        ]
    left = ", ".join(remaining) or "resources"
    held = ", ".join(view.finalizers_remaining)
    cause = (
        f"{label(view)} is stuck Terminating: {left} still exist in it"
        + (f", held by the finalizer {held}" if held else "")
        + "."
    )
    fixes = [
        f"Delete the remaining {left} in {view.name}"
        + (
            f"; they stay while the controller that handles the finalizer {held} is not running: start it, or "
            "remove the finalizer from those objects once their clean-up is known to be done."
            if held
            else "."
        )
    ]
    return [make(rec, "namespace_stuck", subject(view), cause, [_phase_quote(rec, view), *quotes], fixes, 0.85)]
