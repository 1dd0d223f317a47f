"""Evidence rules: what the tool outputs say (OOMKilled, exit codes, pull errors, scheduling, DNS, latency...)."""

from __future__ import annotations

import re
from collections.abc import Callable

from shared.investigations.rules.access_rules import binding_subjects, rbac_gaps
from shared.investigations.rules.alert_rules import heartbeat
from shared.investigations.rules.arch_rules import arch_mismatch
from shared.investigations.rules.auth_clients import auth_clients
from shared.investigations.rules.capacity_rules import requests_over_allocatable
from shared.investigations.rules.context import Context
from shared.investigations.rules.cronjob_rules import hung_runs
from shared.investigations.rules.daemonset_placement import daemonset_placement
from shared.investigations.rules.disruption_rules import drain_blocked
from shared.investigations.rules.environment_rules import environment_mismatch
from shared.investigations.rules.event_rules import event_findings
from shared.investigations.rules.eviction_rules import heavy_consumers
from shared.investigations.rules.gate_rules import gated_pods
from shared.investigations.rules.log_rules import http_errors, latency, log_lines, network, traces
from shared.investigations.rules.memo import evaluation
from shared.investigations.rules.memory_growth import memory_growth
from shared.investigations.rules.network_rules import policies_dropping
from shared.investigations.rules.node_disk import node_filesystem
from shared.investigations.rules.node_rules import lost_nodes
from shared.investigations.rules.placement_rules import volume_zone
from shared.investigations.rules.pod_rules import container_states, exit_codes, job_status, silent_exits, throttling
from shared.investigations.rules.port_rules import target_ports
from shared.investigations.rules.quota_rules import quota_consumers
from shared.investigations.rules.reference_rules import (
    configured_hosts,
    missing_references,
    near_miss_names,
    service_selectors,
)
from shared.investigations.rules.revisions import template_changes
from shared.investigations.rules.runtime_memory import heap_over_limit
from shared.investigations.rules.scrape_rules import scrape_failures
from shared.investigations.rules.state import Finding, InvestigationState
from shared.investigations.rules.state_rules import object_states, ranked_logs
from shared.investigations.rules.tls_rules import unverified_tls_secrets
from shared.investigations.rules.volume_rules import unprovisioned_claims, volume_space
from shared.investigations.rules.workload_rules import held_rollouts


@evaluation
def findings(state: InvestigationState) -> list[Finding]:
    """Every finding the evidence rules draw from the calls made, strongest first (deterministic order)."""
    ctx = Context(state)
    found: list[Finding] = []
    for rule in _RULES:
        found += rule(ctx)
    # One finding per quoted line: two rules reading the same line say the same thing, and the one surer of
    # its reading (a named category over "the application stops on an error") is kept; the first on a tie.
    best: dict[str, Finding] = {}
    for f in found:
        first = _quote_key(f.evidence[0].quote) if f.evidence else ""
        if first and (first not in best or f.confidence > best[first].confidence):
            best[first] = f
    seen: set[tuple[str, str]] = set()
    unique: list[Finding] = []
    # Of two findings of one rule on one object (two FailedMount events of a pod), the surer reading is kept.
    for f in sorted(found, key=lambda f: -f.confidence):
        first = _quote_key(f.evidence[0].quote) if f.evidence else ""
        if (f.rule, f.subject) in seen or (first and best[first] is not f):
            continue
        seen.add((f.rule, f.subject))
        unique.append(f)
    return sorted(unique, key=lambda f: (f.symptom, -f.confidence))


def _quote_key(quote: str) -> str:
    """A quoted line as a message: the YAML `Message: "..."` of an event and its table row's message match."""
    q = quote.strip()
    q = q.split("Message:", 1)[1] if q.startswith("Message:") else q
    return re.sub(r"\s+", " ", q.replace('\\"', '"').strip().strip("\"'")).lower()


_RULES: tuple[Callable[[Context], list[Finding]], ...] = (
    missing_references,
    service_selectors,
    target_ports,
    near_miss_names,
    heartbeat,
    heap_over_limit,
    arch_mismatch,
    memory_growth,
    container_states,
    event_findings,
    log_lines,
    network,
    ranked_logs,
    object_states,
    volume_space,
    unprovisioned_claims,
    volume_zone,
    gated_pods,
    rbac_gaps,
    binding_subjects,
    auth_clients,
    lost_nodes,
    node_filesystem,
    heavy_consumers,
    policies_dropping,
    configured_hosts,
    environment_mismatch,
    unverified_tls_secrets,
    scrape_failures,
    held_rollouts,
    daemonset_placement,
    drain_blocked,
    template_changes,
    quota_consumers,
    requests_over_allocatable,
    throttling,
    traces,
    latency,
    http_errors,
    job_status,
    hung_runs,
    exit_codes,
    silent_exits,
)
