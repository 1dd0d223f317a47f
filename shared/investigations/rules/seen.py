"""A call made, read back in the planner's terms (role, kind, name, namespace), whatever the tool is called."""

from __future__ import annotations

from shared.investigations.rules.objects import ObjRef, kind_of
from shared.investigations.rules.state import CallRecord
from shared.investigations.rules.toolshape import Role, Slot, Toolbox


class Seen:
    """One call made, read back in the planner's terms: which role, which object, which arguments."""

    def __init__(self, rec: CallRecord, box: Toolbox) -> None:
        self.rec = rec
        shape = next((box.by_role[r] for r in box.roles_of(rec.tool)), None)
        slots = {s: rec.args.get(p) for s, p in shape.slots.items()} if shape is not None else {}
        self.role = box.role_of(rec.tool)
        self.kind = str(
            slots.get(Slot.KIND) or ("Pod" if self.role in (Role.POD_GET, Role.POD_LOG, Role.POD_LIST_ALL) else "")
        )
        k = kind_of(self.kind)
        self.kind = k.name if k else self.kind
        self.name = str(slots.get(Slot.NAME) or "")
        self.namespace = str(slots.get(Slot.NAMESPACE) or "") or None
        self.labels = str(slots.get(Slot.LABELS) or "")
        self.previous = bool(slots.get(Slot.PREVIOUS))
        self.container = str(slots.get(Slot.CONTAINER) or "")

    def obj(self) -> ObjRef | None:
        """The object a describe call read."""
        if self.role in (Role.DESCRIBE, Role.POD_GET) and self.name:
            return ObjRef(self.kind, self.name, self.namespace)
        return None
