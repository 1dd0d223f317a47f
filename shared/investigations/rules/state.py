"""What the rule engine reads and returns: the investigation state, tool calls, findings (JSON-serialisable)."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ToolSpec(BaseModel):
    """One MCP tool as `tools/list` describes it."""

    model_config = ConfigDict(populate_by_name=True)

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=dict, alias="inputSchema")


class ToolCall(BaseModel):
    """A call the engine wants made: tool name, arguments valid for its inputSchema, and why."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""

    def key(self) -> str:
        """Identity of the call (tool + canonical arguments): identical calls are never repeated."""
        return call_key(self.tool, self.args)


class CallRecord(BaseModel):
    """A call that was made, with what the tool answered (text) or the error it gave."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    output: str = ""
    is_error: bool = False
    iteration: int = 0
    reason: str = ""


class Budget(BaseModel):
    """Limits of one investigation (the issue's defaults: 15 calls in total, 5 iterations)."""

    max_calls: int = 15
    max_iterations: int = 5
    max_calls_per_iteration: int = 6


class InvestigationState(BaseModel):
    """Everything the rules may look at: the alert, the runbook, the tools on offer and the calls made."""

    alert: dict[str, Any]
    runbook: str | None = None
    tools: list[ToolSpec] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    budget: Budget = Field(default_factory=Budget)

    def tool_names(self) -> set[str]:
        """Names of the tools on offer."""
        return {t.name for t in self.tools}

    def iterations_done(self) -> int:
        """How many iterations have run (distinct iteration numbers among the calls made)."""
        return len({c.iteration for c in self.calls})


class Evidence(BaseModel):
    """A line quoted verbatim from one tool output, with the call that produced it."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    quote: str


class Finding(BaseModel):
    """One conclusion an evidence rule drew from the tool outputs."""

    rule: str
    cause: str
    evidence: list[Evidence] = Field(default_factory=list)
    remediation: list[str] = Field(default_factory=list)
    confidence: float = 0.5
    # Symptoms (CrashLoopBackOff, a Job over its backoff limit) say what happens, not why; a report
    # leads with a cause when there is one.
    symptom: bool = False
    subject: str = ""


def call_key(tool: str, args: dict[str, Any]) -> str:
    """Canonical identity of a call."""
    return tool + json.dumps(args, sort_keys=True, separators=(",", ":"))


_JOB_LABELS = ("job_name", "job-name", "batch.kubernetes.io/job-name")


class Target(BaseModel):
    """The objects an alert is about, read from its labels and text."""

    alertname: str = ""
    namespace: str | None = None
    pod: str | None = None
    container: str | None = None
    deployment: str | None = None
    statefulset: str | None = None
    daemonset: str | None = None
    job: str | None = None
    node: str | None = None
    pvc: str | None = None


def target_of(alert: dict[str, Any]) -> Target:
    """The alerted objects. Labels that name the metrics exporter (kube-state-metrics' own pod) are dropped."""
    labels: dict[str, str] = {str(k): str(v) for k, v in (alert.get("labels") or {}).items()}
    alertname = labels.get("alertname") or str(alert.get("title") or "")
    scrape_job = labels.get("job", "")
    pod = labels.get("pod")
    container = labels.get("container")
    # kube-state-metrics alerts carry the exporter's pod/container as scrape labels unless the series
    # has its own; an exporter pod named after the scrape job is not the alerted one.
    if pod and scrape_job and scrape_job in pod:
        pod = None
        container = None
    if container and scrape_job and container == scrape_job:
        container = None
    job = next((labels[k] for k in _JOB_LABELS if labels.get(k)), None)
    if job is None and scrape_job and "job" in alertname.lower() and "kube-state-metrics" not in scrape_job:
        job = scrape_job
    namespace = labels.get("namespace") or alert.get("namespace") or None
    if pod is None:
        pod = _pod_from_text(alert)
    return Target(
        alertname=alertname,
        namespace=str(namespace) if namespace else None,
        pod=pod,
        container=container,
        deployment=labels.get("deployment"),
        statefulset=labels.get("statefulset"),
        daemonset=labels.get("daemonset"),
        job=job,
        node=labels.get("node") or labels.get("kubernetes_node"),
        pvc=labels.get("persistentvolumeclaim"),
    )


_POD_IN_TEXT = re.compile(r"\bPod ([a-z0-9][-a-z0-9]*)/([a-z0-9][-a-z0-9.]*)")


def _pod_from_text(alert: dict[str, Any]) -> str | None:
    """`Pod ns/name` in the description (kube-prometheus wording) when no usable pod label is set."""
    text = " ".join(str(alert.get(k) or "") for k in ("title", "description"))
    m = _POD_IN_TEXT.search(text)
    return m.group(2) if m else None
