"""What the evidence rules share: the calls grouped by kind and the objects the investigation is about."""

from __future__ import annotations

from shared.investigations.rules import parse
from shared.investigations.rules.state import CallRecord, Evidence, InvestigationState, Target, target_of

# Commands a container commonly runs; a "not found" command close to one of them is a typo.
KNOWN_COMMANDS = (
    "wget", "curl", "bash", "sh", "python", "python3", "node", "npm", "java", "nginx", "echo", "sleep", "cat",
    "ls", "cp", "mv", "tar", "gzip", "grep", "sed", "awk", "apt-get", "apk", "pip", "env", "printf",
    "mkdir", "chmod", "chown", "nc", "ping", "nslookup", "dig", "psql", "mysql", "redis-cli", "kubectl",
)  # fmt: skip


def ev(rec: CallRecord, quote: str) -> Evidence:
    """A quote (at most 300 characters) from one call's output."""
    return Evidence(tool=rec.tool, args=rec.args, quote=quote[:300])


def _is_pod_doc(rec: CallRecord) -> bool:
    return rec.tool == "pods_get" or (rec.tool == "resources_get" and rec.args.get("kind") == "Pod")


class Context:
    """The calls grouped by what they hold, and the names of the objects this investigation is about."""

    def __init__(self, state: InvestigationState) -> None:
        self.state = state
        self.target: Target = target_of(state.alert)
        ok = [c for c in state.calls if not c.is_error]
        self.pods = [c for c in ok if _is_pod_doc(c)]
        self.logs = [c for c in ok if c.tool == "pods_log"]
        self.events = [c for c in ok if c.tool == "events_list"]
        self.gets = [c for c in ok if c.tool == "resources_get"]
        self.lists = [c for c in ok if c.tool in ("resources_list", "pods_list_in_namespace", "pods_list")]
        self.tempo = [c for c in ok if c.tool.startswith("tempo_")]
        t = self.target
        self.names = {n for n in (t.pod, t.deployment, t.statefulset, t.daemonset, t.job, t.node, t.pvc) if n}
        self.prefixes = {n + "-" for n in (t.deployment, t.statefulset, t.daemonset, t.job) if n}
        for c in self.pods + self.logs:
            self.names.add(str(c.args.get("name")))
        for c in self.lists:
            if c.args.get("labelSelector"):
                self.names |= {r.get("NAME") for r in parse.table(c.output)}

    def related(self, obj_name: str) -> bool:
        """Is this object one of the alerted objects (or a pod of the alerted workload)?"""
        return obj_name in self.names or any(obj_name.startswith(p) for p in self.prefixes)

    def related_events(self) -> list[tuple[CallRecord, parse.Event]]:
        """Events of the alerted objects, from event listings and from the descriptions' Events sections."""
        out = [(c, e) for c in self.events for e in parse.events(c.output) if self.related(e.obj_name)]
        for c in self.pods + self.gets:
            out += [(c, e) for e in parse.events(c.output, f"{c.args.get('kind', 'Pod')}/{c.args.get('name')}")]
        return out


def alert_lines(ctx: Context, pattern: str) -> list[Evidence]:
    """Lines of the alert's annotations (and runbook) that say something, quoted as evidence."""
    text = "\n".join(str(v) for v in (ctx.state.alert.get("annotations") or {}).values())
    lines = parse.lines_matching(text, pattern)[:1] + parse.lines_matching(ctx.state.runbook or "", pattern)[:1]
    return [Evidence(tool="alert" if i == 0 else "runbook", quote=q) for i, q in enumerate(lines)]
