"""What the evidence rules share: the calls grouped by kind and the objects the investigation is about."""

from __future__ import annotations

from shared.investigations.rules import parse
from shared.investigations.rules.objects import alert_objects
from shared.investigations.rules.seen import Seen
from shared.investigations.rules.state import CallRecord, Evidence, InvestigationState, Target, target_of
from shared.investigations.rules.toolshape import Role, Toolbox, toolbox_of


def _canonical(rec: CallRecord, box: Toolbox) -> CallRecord:
    """The call with the planner's names for what it read (`name`, `namespace`, `container`, `previous`) added
    beside the tool's own arguments, so a rule reads `pod_logs(pod=..., ns=...)` or a kubectl command line the
    way it reads kubernetes-mcp-server's calls."""
    read = box.read(rec.tool, rec.args)
    if read.role is None:
        return rec
    more: dict[str, str | bool] = {
        "name": read.name,
        "namespace": read.namespace,
        "container": read.container,
        "kind": read.kind,
    }
    if read.previous:
        more["previous"] = True
    extra = {k: v for k, v in more.items() if v and k not in rec.args}
    return rec.model_copy(update={"args": {**rec.args, **extra}}) if extra else rec


def ev(rec: CallRecord, quote: str) -> Evidence:
    """A quote (at most 300 characters) from one call's output."""
    return Evidence(tool=rec.tool, args=rec.args, quote=quote[:300])


class Context:
    """The calls grouped by what they hold (by the role of the tool that made them, never its name), and the
    names of the objects this investigation is about."""

    def __init__(self, state: InvestigationState) -> None:
        self.state = state
        self.target: Target = target_of(state.alert)
        self.box = toolbox_of(state.tools)
        seen = [Seen(_canonical(c, self.box), self.box) for c in state.calls if not c.is_error]
        self.seen = seen
        self.pods = [s.rec for s in seen if s.role is Role.POD_GET or (s.role is Role.DESCRIBE and s.kind == "Pod")]
        self.logs = [s.rec for s in seen if s.role is Role.POD_LOG]
        self.events = [s.rec for s in seen if s.role is Role.EVENTS]
        self.gets = [s.rec for s in seen if s.role is Role.DESCRIBE]
        self.lists = [s.rec for s in seen if s.role in (Role.LIST, Role.POD_LIST, Role.POD_LIST_ALL)]
        self.tempo = [s.rec for s in seen if s.role in (Role.TRACES, Role.TRACE)]
        self.metrics = [s.rec for s in seen if s.role is Role.METRICS_QUERY]
        t = self.target
        self.names = {n for n in (t.pod, t.deployment, t.statefulset, t.daemonset, t.job, t.node, t.pvc) if n}
        self.names |= {o.name for o in alert_objects(state.alert).objects if o.kind != "Namespace"}
        self.prefixes = {n + "-" for n in (t.deployment, t.statefulset, t.daemonset, t.job) if n}
        for s in seen:
            if s.role in (Role.DESCRIBE, Role.POD_GET, Role.POD_LOG) and s.name:
                self.names.add(s.name)
            if s.role in (Role.LIST, Role.POD_LIST) and s.labels:
                self.names |= {r.get("NAME") for r in parse.table(s.rec.output)}

    def related(self, obj_name: str) -> bool:
        """Is this object one of the alerted objects (or a pod of the alerted workload)?"""
        return obj_name in self.names or any(obj_name.startswith(p) for p in self.prefixes)

    def related_events(self) -> list[tuple[CallRecord, parse.Event]]:
        """Events of the alerted objects, from event listings and from the descriptions' Events sections."""
        out = [(c, e) for c in self.events for e in parse.events(c.output) if self.related(e.obj_name)]
        for s in self.seen:
            if s.role in (Role.DESCRIBE, Role.POD_GET):
                out += [(s.rec, e) for e in parse.events(s.rec.output, f"{s.kind or 'Pod'}/{s.name}")]
        return out


def alert_lines(ctx: Context, pattern: str) -> list[Evidence]:
    """Lines of the alert's annotations (and runbook) that say something, quoted as evidence."""
    text = "\n".join(str(v) for v in (ctx.state.alert.get("annotations") or {}).values())
    lines = parse.lines_matching(text, pattern)[:1] + parse.lines_matching(ctx.state.runbook or "", pattern)[:1]
    return [Evidence(tool="alert" if i == 0 else "runbook", quote=q) for i, q in enumerate(lines)]
