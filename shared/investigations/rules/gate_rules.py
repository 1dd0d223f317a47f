"""Pods held by a scheduling gate (`spec.schedulingGates`, status SchedulingGated): the scheduler ignores them
until whatever set the gate removes it, so there are no FailedScheduling events and capacity is not the question.
The gate's name says whose it is (`<controller>.<domain>/<gate>`)."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import Finding

_GATES_YAML = re.compile(r"^([ \t]*)schedulingGates:[ \t]*$")
_GATE_ITEM = re.compile(r"^[ \t]*- name:[ \t]*['\"]?([\w./-]{1,253})")
_GATES_DESCRIBE = re.compile(r"^Scheduling Gates:[ \t]+([\w./-]{1,253})")


def gates(output: str) -> list[str]:
    """The scheduling gates a pod's YAML or description lists."""
    lines = output[:200_000].splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        if m := _GATES_DESCRIBE.match(line):
            found.append(m.group(1))
        elif _GATES_YAML.match(line):
            for item in lines[i + 1 : i + 20]:
                g = _GATE_ITEM.match(item)
                if not g:
                    break
                found.append(g.group(1))
    return list(dict.fromkeys(found))


def owner_of_gate(gate: str) -> str:
    """Who sets a gate, by its name: `gpu-quota.example.com/ready` -> gpu-quota."""
    return gate.split("/", 1)[0].split(".", 1)[0]


def gated_pods(ctx: Context) -> list[Finding]:
    """Pods that wait for a scheduling gate to be removed."""
    out: list[Finding] = []
    for rec in ctx.pods:
        held = gates(rec.output)
        if not held or "SchedulingGated" not in rec.output[:200_000]:
            continue
        pod, gate = str(rec.args.get("name")), held[0]
        owner = owner_of_gate(gate)
        line = parse.line_matching(rec.output[:200_000], re.escape(gate))
        out.append(
            Finding(
                rule="scheduling_gate",
                subject=pod,
                cause=f"Pod {pod} is SchedulingGated: its spec.schedulingGates still holds `{gate}`, so the "
                "scheduler ignores it (no FailedScheduling events; capacity is not the question) until that gate "
                f"is removed by whatever set it, by its name the {owner} controller, which is likely not running.",
                evidence=[ev(rec, line or gate), ev(rec, parse.line_matching(rec.output, r"SchedulingGated"))],
                remediation=[_fix(owner, pod, str(rec.args.get("namespace") or ""))],
                confidence=0.85,
            )
        )
    return out


_REMOVE_GATES = """'[{"op":"remove","path":"/spec/schedulingGates"}]'"""


def _fix(owner: str, pod: str, namespace: str) -> str:
    patch = f"kubectl patch pod {pod}" + (f" -n {namespace}" if namespace else "") + f" --type=json -p={_REMOVE_GATES}"
    return (
        f"Check that the {owner} controller runs (its Deployment's replicas, its logs) and scale it back up so it "
        f"removes the gates; as a stopgap, remove the scheduling gate from the pods (`{patch}`)."
    )
