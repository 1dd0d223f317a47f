"""read_object: one object's output, whatever its shape, as an ObjectView."""

from __future__ import annotations

from shared.investigations.rules import parse
from shared.investigations.rules.memo import remembered
from shared.investigations.rules.object_view import kube_yaml, read_describe, read_structured
from shared.investigations.rules.object_view.view import ObjectEvent, ObjectView

MAX_CHARS = kube_yaml.MAX_CHARS
_YAML_TOP_KEYS = ("apiVersion:", "kind:", "metadata:", "spec:", "status:", "items:", "- ")


@remembered
def read_object(text: str, kind: str = "") -> ObjectView:
    """What one object's output says: `kubectl describe` text, YAML or JSON (only the first MAX_CHARS are read).

    `kind` is the kind the caller asked for (e.g. a call's `kind` argument); the output's own kind wins. An events
    listing (a `kubectl events` table or kubernetes-mcp-server's YAML list) gives a view of kind "EventList" whose
    events each name their object. Never raises: what cannot be read is left empty. Remembered by text and kind
    (the walk, the rules and the report read each output several times): callers must not change the view.
    """
    truncated = len(text) > MAX_CHARS
    if truncated:
        cut = text.rfind("\n", 0, MAX_CHARS)
        text = text[: cut if cut > 0 else MAX_CHARS]
    view = _read(text, kind)
    view.truncated = truncated
    return view


def _read(text: str, kind: str) -> ObjectView:
    first = _first_line(text)
    if not first:
        return ObjectView()
    if first.startswith(("{", "[")) or first.startswith(_YAML_TOP_KEYS):
        doc = kube_yaml.load(text)
        shape = "json" if first.startswith(("{", "[")) else "yaml"
        if read_structured.is_event_list(doc):
            return read_structured.read_events(doc, text, "events")
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            items = read_structured.dicts(doc["items"])
            doc = items[0] if len(items) == 1 else doc
        if isinstance(doc, dict) and any(k in doc for k in ("kind", "metadata", "spec", "status")):
            return read_structured.read(doc, text, shape, kind)
    rows = parse.table(text)
    if rows and "REASON" in rows[0].cells:
        return _event_table(rows)
    return read_describe.read(text, kind)


def _first_line(text: str) -> str:
    """The first line that says something (not blank, a comment or `---`), found without splitting the whole text
    (a 256 KB output of blank lines was split into 256k lines on every read)."""
    pos = len(text) - len(text.lstrip())  # leading blanks skipped in C, not line by line
    pos = text.rfind("\n", 0, pos) + 1
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        s = text[pos:end].strip()
        if s and not s.startswith("#") and s != "---":
            return s
        pos = end + 1
    return ""


def _event_table(rows: list[parse.Row]) -> ObjectView:
    view = ObjectView(shape="events", kind="EventList")
    for r in rows:
        count = r.get("COUNT")
        view.events.append(
            ObjectEvent(
                r.get("TYPE"),
                r.get("REASON"),
                r.get("MESSAGE"),
                int(count) if count.isdigit() and len(count) < 10 else None,
                r.get("LAST SEEN"),
                r.get("OBJECT"),
                r.line.strip(),
            )
        )
    return view
