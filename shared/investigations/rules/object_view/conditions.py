"""Conditions that say something is wrong: False/Unknown where True is healthy, True where True is bad."""

from __future__ import annotations

import re

from shared.investigations.rules.object_view.events import explained
from shared.investigations.rules.object_view.messages import About, Meaning, meaning
from shared.investigations.rules.object_view.signal import label, make, subject
from shared.investigations.rules.object_view.view import Condition, ObjectView
from shared.investigations.rules.state import CallRecord, Finding

GOOD_WHEN_TRUE = {
    "Ready", "Available", "Progressing", "PodScheduled", "ContainersReady", "Initialized", "AbleToScale",
    "ScalingActive", "Bound", "Complete", "PodReadyToStartContainers", "Established", "NamesAccepted", "Issuing",
}  # fmt: skip
BAD_WHEN_TRUE = {
    "DiskPressure", "MemoryPressure", "PIDPressure", "NetworkUnavailable", "ReplicaFailure", "Failed",
    "FailureTarget", "NamespaceContentRemaining", "NamespaceFinalizersRemaining", "OutOfDisk", "KernelDeadlock",
    "ReadonlyFilesystem", "DisruptionTarget", "FileSystemResizePending", "Stalled", "Degraded",
}  # fmt: skip
# Types whose name says trouble (node-problem-detector's, custom resources'): bad when True.
_NEGATIVE = re.compile(
    r"Pressure|Unavailable|Failure|Failed|Remaining|Deadlock|Problem|Corrupt|Readonly|Degraded|"
    r"Stalled|Unhealthy|Frequent|Error|Exceeded"
)
_FAILURE_WORDS = re.compile(
    r"(?i)fail|error|invalid|not ?found|denied|exceeded|unavailable|missing|does ?not ?exist|"
    r"unhealthy|backoff|timeout|timed out"
)
# Conditions that say what happens, not why (the why is in the pods, the containers, the events).
_SYMPTOMS = {"Ready", "ContainersReady", "Available", "Progressing", "Initialized", "Complete", "DisruptionTarget",
             "PodReadyToStartContainers"}  # fmt: skip
# A pod that has finished (Succeeded or Failed) is not ready and has no sandbox: that is not news.
_OVER = {"Ready", "ContainersReady", "PodReadyToStartContainers"}
# The events that say why a condition is what it is, when the condition itself carries no message.
_EVENT_REASONS = {
    "PodScheduled": {"FailedScheduling"}, "ReplicaFailure": {"FailedCreate"}, "AbleToScale": {"FailedGetScale"},
    "ScalingActive": {"FailedGetResourceMetric", "FailedComputeMetricsReplicas", "FailedGetExternalMetric"},
    "Issuing": {"Failed"}, "Ready": {"Failed"},
}  # fmt: skip
# Read by the signals of their own (the autoscaler's limits; a terminating namespace's leftovers).
_ELSEWHERE = {"ScalingLimited", "NamespaceContentRemaining", "NamespaceFinalizersRemaining"}


def is_bad(c: Condition) -> bool:
    """Does this condition say something is wrong?"""
    if c.type in _ELSEWHERE:
        return False
    if c.type in BAD_WHEN_TRUE or (c.type not in GOOD_WHEN_TRUE and _NEGATIVE.search(c.type)):
        return c.status == "True"
    if c.type == "Issuing":  # cert-manager: False is idle unless the last issuance failed
        return c.status == "False" and bool(_FAILURE_WORDS.search(c.reason))
    if c.type in GOOD_WHEN_TRUE:
        return c.status in ("False", "Unknown")
    return c.status in ("False", "Unknown") and bool(_FAILURE_WORDS.search(f"{c.reason} {c.message}"))


def findings(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """One finding per condition that says something is wrong."""
    about = About(view.kind, view.name, view.namespace)
    out: list[Finding] = []
    bad = [c for c in view.conditions if is_bad(c)]
    if view.kind == "Pod" and view.phase in ("Succeeded", "Failed"):
        bad = [c for c in bad if c.type not in _OVER]
    if view.kind == "Pod" and any(c.type == "Ready" for c in bad):
        bad = [c for c in bad if c.type != "ContainersReady"]  # the same fact twice
    for c in bad:
        said = meaning(c.message, about) if c.message else None
        quotes = [c.quote]
        reasons = _EVENT_REASONS.get(c.type, set()) | ({c.reason} if c.reason else set())
        # A pod's readiness is explained by its containers' states, a node's by its own conditions.
        own = view.kind == "Node" or (view.kind == "Pod" and c.type in _SYMPTOMS)
        found = explained(view, about, reasons) if said is None and not own else None
        if found:
            said = found[0]
            quotes.append(found[1].quote)
        detail = f" ({c.reason})" if c.reason else ""
        text = f"{label(view)}: condition {c.type} is {c.status}{detail}"
        if c.message:
            text += f": {c.message[:300]}"
        if said:
            text += f"; because {said.why}"
        symptom = (c.type in _SYMPTOMS and view.kind != "Node") or bool(said and not said.cause)
        confidence = 0.4 if symptom else said.confidence if said else 0.7
        fixes = said.fixes if said else [_fix(view, c)]
        out.append(make(rec, "object_condition", subject(view, c.type), text + ".", quotes, fixes, confidence, symptom))
    return out


def _fix(view: ObjectView, c: Condition) -> str:
    name, kind = view.name or "the object", view.kind or "object"
    why = f" ({c.reason})" if c.reason else ""
    by_type = {
        "MemoryPressure": f"Free memory on node {name}: find the pods using the most (`kubectl top pods -A "
        "--sort-by=memory`), give them memory limits and realistic requests, or add nodes; the kubelet evicts pods "
        "until the pressure ends.",
        "DiskPressure": f"Free disk on node {name} (unused images, container logs, emptyDir volumes) or grow its disk;"
        " the kubelet evicts pods and garbage-collects images until the pressure ends.",
        "PIDPressure": f"A pod on node {name} starts too many processes: find it, and set a pod PID limit.",
        "NetworkUnavailable": f"The network of node {name} is not set up: check its network plugin (CNI) pods and "
        "routes.",
        "Progressing": f"The rollout of {kind} {name} has stalled ({c.reason or 'not progressing'}): look at its new "
        f"ReplicaSet's pods (image, crash, scheduling, quota) and fix the template or roll back (`kubectl rollout undo "
        f"{kind.lower()}/{name}`).",
        "Available": f"Find why the pods of {kind} {name} are not available: their container states and events.",
        "PodScheduled": f"Read the scheduler's message for {name} and give it a node that fits (resources, "
        "affinity, taints, volumes).",
        "Initialized": f"An init container of {name} has not completed: read its state and its logs.",
        "AbleToScale": f"The autoscaler {name} cannot read or change its target's scale: check that the target exists"
        " and its scale subresource answers.",
        "ScalingActive": f"The autoscaler {name} cannot compute a replica count: check its metrics source and that "
        "the target's containers have requests.",
        "FileSystemResizePending": f"Restart the pod that uses {name} so that the filesystem resize completes.",
        "DisruptionTarget": f"{name} is being removed{why}: see what removes it (eviction, preemption, node "
        "shutdown) and whether a PodDisruptionBudget or more capacity is needed.",
    }
    if c.type in by_type:
        return by_type[c.type]
    if c.type in ("Ready", "ContainersReady"):
        if view.kind == "Node":
            return (
                f"Check node {name}: its kubelet, container runtime and network; drain and repair or replace it "
                "if it does not recover."
            )
        if view.kind == "Pod":
            return f"Find why the containers of {name} are not ready: their state, last exit, probe events and logs."
        return (
            f"Read why {kind} {name} is not ready ({c.reason or c.status}): the resources it depends on (issuer, "
            "request, secret) say the rest."
        )
    return f"Resolve what the {c.type} condition of {kind} {name} reports ({c.reason or c.status})."


def meaning_of(view: ObjectView, message: str) -> Meaning | None:
    """The meaning of a message about this object (for other signal modules)."""
    return meaning(message, About(view.kind, view.name, view.namespace))
