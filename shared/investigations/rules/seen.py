"""A call made, read back in the planner's terms (role, kind, name, namespace), whatever the tool is called."""

from __future__ import annotations

from shared.investigations.rules.objects import ObjRef, kind_of
from shared.investigations.rules.state import CallRecord
from shared.investigations.rules.toolshape import Role, Toolbox


class Seen:
    """One call made, read back in the planner's terms: which role, which object, which arguments."""

    def __init__(self, rec: CallRecord, box: Toolbox) -> None:
        self.rec = rec
        read = box.read(rec.tool, rec.args)
        self.role = read.role
        self.kind = read.kind or ("Pod" if self.role in (Role.POD_GET, Role.POD_LOG, Role.POD_LIST_ALL) else "")
        k = kind_of(self.kind.lower())
        self.kind = k.name if k else self.kind
        self.name = read.name
        self.namespace = read.namespace or None
        self.labels = read.labels
        self.fields = read.fields
        self.previous = read.previous
        self.container = read.container

    def obj(self) -> ObjRef | None:
        """The object a describe call read."""
        if self.role in (Role.DESCRIBE, Role.POD_GET) and self.name:
            return ObjRef(self.kind, self.name, self.namespace)
        return None
