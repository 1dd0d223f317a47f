"""The investigation so far as a graph, the state every step of the planner's walk reads and extends: the objects
described or failed, which object led to which, the pods found; and the call that looks at one object."""

from __future__ import annotations

from typing import Any

from shared.investigations.rules.objects import ObjRef, alert_objects
from shared.investigations.rules.seen import Seen
from shared.investigations.rules.state import CallRecord, InvestigationState, ToolCall
from shared.investigations.rules.toolshape import Role, toolbox_of


class WalkGraph:
    """The investigation so far, as a graph: objects described, what they point at, pods found, logs read."""

    def __init__(self, state: InvestigationState) -> None:
        self.state = state
        self.box = toolbox_of(state.tools)
        self.target = alert_objects(state.alert)
        self.seen = [Seen(c, self.box) for c in state.calls]
        self.described: dict[ObjRef, CallRecord] = {}
        self.failed: set[ObjRef] = set()
        # Which object led to which (child -> parent), filled by `follow`: the report's chain of cause.
        self.parents: dict[ObjRef, ObjRef] = {}
        # Objects found on the way that count as the alert's own (the Ingress that serves a probed host).
        self.extra_seeds: list[ObjRef] = []
        self._candidates: list[ToolCall] | None = None
        # Pods the last object's listings showed (described by pods_from_rows), to walk on from.
        self.found_pods: list[ObjRef] = []
        for s in self.seen:
            o = s.obj()
            if o is not None:
                (self.failed.add(o) if s.rec.is_error else self.described.setdefault(o, s.rec))

    def look_at(self, obj: ObjRef, why: str) -> list[ToolCall]:
        """Describe one object with the generic describe tool, or a pod with the pod tool."""
        retry = obj in self.failed and obj in self.target.objects  # the alert's own pod: its tool may know it
        if obj.kind == "Pod" and (not self.box.has(Role.DESCRIBE) or retry):
            calls = self._call(Role.POD_GET, f"get {why}", name=obj.name, namespace=obj.namespace)
            if calls or obj in self.failed:
                return calls
        if obj.kind == "Secret":
            return []
        return self._call(
            Role.DESCRIBE, f"describe {why}", api_version=obj.api_version, kind=obj.kind, name=obj.name,
            namespace=obj.namespace,
        )  # fmt: skip

    def _call(self, role: Role, why: str, **values: Any) -> list[ToolCall]:
        call = self.box.call(role, why, **values)
        return [call] if call is not None else []
