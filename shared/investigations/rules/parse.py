"""Readers for what Kubernetes tools print: `kubectl describe` text, pod YAML, aligned tables, event lists."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, TypeVar

from shared.investigations.rules.memo import remembered

T = TypeVar("T")


def memo_by_text(fn: Callable[..., list[T]]) -> Callable[..., list[T]]:
    """Remember a reader's answer for the same output text (and arguments, positional only): every iteration of
    an investigation re-reads the outputs of the calls before it, and a report reads each several times. The
    cache holds the answer as a tuple and hands out a fresh list, so a caller that changes its list changes
    nothing cached. Strings cache their hash, so a 256 KB output is hashed once."""

    @remembered
    def cached(*args: Hashable) -> tuple[T, ...]:
        return tuple(fn(*args))

    @wraps(fn)
    def wrapper(*args: Hashable) -> list[T]:
        return list(cached(*args))

    return wrapper


class Row:
    """One row of a table, by upper-case column name, plus the raw line to quote.

    A cell is cut from the line when it is asked for: the rules read each output's table many times, mostly
    one column, and an output of many tiny lines made a table of as many rows.
    """

    __slots__ = ("_spans", "line")

    def __init__(self, line: str, spans: dict[str, tuple[int, int | None]]) -> None:
        self.line, self._spans = line, spans

    @property
    def cells(self) -> dict[str, str]:
        """Every cell, by column name."""
        return {name: self.get(name) for name in self._spans}

    def get(self, column: str) -> str:
        """A cell, or "" when the table has no such column."""
        span = self._spans.get(column)
        return self.line[span[0] : span[1]].strip() if span is not None else ""


# kubernetes-mcp-server lists cluster-scoped kinds with an `APIVERSION   KIND   NAME` header.
# A header cell: one word, or two joined by one space where kubectl prints two-word headers.
_HEADER_CELL = re.compile(r"(?<!\S)\S+(?: (?=SEEN|GATES|NODE\b|IP\b|AVAILABLE\b|UNAVAILABLE\b|DISRUPTIONS\b)\S+)?")
_TABLE_HEADER = re.compile(r"(NAME|NAMESPACE|LAST SEEN|APIVERSION)\b")
_CONTAINER_NAME = re.compile(r"([a-z0-9][-a-z0-9.]*):")


def _table(text: str) -> list[Row]:
    """Rows of a `kubectl get`-style table (columns aligned under an upper-case header), or of a JSON listing
    (`kubectl get -o json`'s items, or a list of objects) written as one; [] if none."""
    if text.lstrip()[:1] in ("[", "{"):
        text = _json_as_table(text) or text
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for i, header in enumerate(lines):
        if _TABLE_HEADER.match(header) and header.upper() == header:
            starts = [m.start() for m in _HEADER_CELL.finditer(header)]
            ends: list[int | None] = [*starts[1:], None]
            spans = {header[s:e].strip(): (s, e) for s, e in zip(starts, ends, strict=True)}
            return [Row(line, spans if _aligned(line, starts) else _own_spans(line, spans)) for line in lines[i + 1 :]]
    return []


_JSON_COLUMNS = ("NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "NODE", "LABELS")
_MAX_JSON = 2_000_000


def _json_as_table(text: str) -> str:
    """A JSON listing as a kubectl-style table with the columns the rules read ("" when it is not one)."""
    if len(text) > _MAX_JSON:
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        return ""
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items[:5]):
        return ""
    rows = [_json_row(i) for i in items[:5_000] if isinstance(i, dict)]
    rows = [r for r in rows if r["NAME"]]
    if not rows:
        return ""
    columns = list(dict.fromkeys([*_JSON_COLUMNS, *(c for r in rows[:50] for c in r)]))[:16]
    widths = {c: max(len(c), *(len(r.get(c, "")) for r in rows)) + 3 for c in columns}
    lines = ["".join(c.ljust(widths[c]) for c in columns)]
    lines += ["".join((r.get(c) or "").ljust(widths[c]) for c in columns).rstrip() for r in rows]
    return "\n".join(lines)


def _json_row(item: dict[str, Any]) -> dict[str, str]:
    def part(obj: dict[str, Any], key: str) -> dict[str, Any]:
        value = obj.get(key)
        return value if isinstance(value, dict) else {}

    meta = part(item, "metadata") or item
    status, spec, labels = part(item, "status"), part(item, "spec"), part(meta, "labels")

    def text(value: Any) -> str:
        return re.sub(r"\s+", "_", str(value))[:200] if value not in (None, "") else ""

    # The listing's own short fields (`role`, `subjects`, `image`) as columns of their upper-case names.
    more = {
        k.upper().replace("_", "-"): text(",".join(map(str, v)) if isinstance(v, list) else v)
        for k, v in list(item.items())[:20]
        if k not in ("metadata", "status", "spec", "name", "namespace", "labels")
        and (isinstance(v, str | int | float) or (isinstance(v, list) and all(isinstance(x, str) for x in v[:20])))
    }
    return more | {
        "NAMESPACE": text(meta.get("namespace")),
        "NAME": text(meta.get("name")),
        "READY": text(item.get("ready")),
        "STATUS": text(item.get("status") if isinstance(item.get("status"), str) else status.get("phase")),
        "RESTARTS": text(item.get("restarts")),
        "NODE": text(item.get("node") or spec.get("nodeName")),
        "LABELS": ",".join(f"{k}={v}" for k, v in list(labels.items())[:30]),
    }


def _aligned(line: str, starts: list[int]) -> bool:
    """Every column starts where a cell of the row starts (no header column cuts a word of the row)."""
    return all(s >= len(line) or line[s - 1] == " " or line[s] == " " for s in starts[1:])


_CELL = re.compile(r"\S+(?: \S+)*")


def _own_spans(line: str, spans: dict[str, tuple[int, int | None]]) -> dict[str, tuple[int, int | None]]:
    """A row written out of line with its header (hand-aligned output): its cells are the runs separated by two
    or more spaces, in the header's order; the last column takes the rest of the line."""
    cells = [m.start() for m in _CELL.finditer(line)]
    names = list(spans)
    if len(cells) < len(names):
        return spans
    starts = cells[: len(names)]
    ends: list[int | None] = [*starts[1:], None]
    return dict(zip(names, zip(starts, ends, strict=True), strict=True))


def carries(row: Row, wanted: dict[str, str]) -> bool:
    """A listed object carries a selector's labels (a listing without a LABELS column: taken at its word)."""
    labels = row.get("LABELS")
    if not labels:
        return bool(row.get("NAME"))
    have = dict(p.split("=", 1) for p in labels.split(",") if "=" in p)
    return all(have.get(k) == v for k, v in wanted.items())


@dataclass
class Event:
    """One Kubernetes event: type, reason, the object (Kind/name) and message, and the line to quote."""

    type: str
    reason: str
    obj: str
    message: str
    line: str

    @property
    def obj_name(self) -> str:
        """The object's name without its kind."""
        return self.obj.split("/", 1)[-1]


_DESCRIBE_EVENT = re.compile(r"^\s+(Normal|Warning)\s+(\S+)\s+\S.*?\s{2,}(\S+)\s{2,}(.*)$")
_YAML_ITEM = re.compile(r"^- ", re.MULTILINE)


def _events(text: str, default_obj: str = "") -> list[Event]:
    """Events from a `kubectl events` table, the real server's YAML list, or a describe's Events section."""
    found: list[Event] = []
    rows = table(text)
    if rows and "REASON" in rows[0].cells:
        return [Event(r.get("TYPE"), r.get("REASON"), r.get("OBJECT"), r.get("MESSAGE"), r.line.strip()) for r in rows]
    if "InvolvedObject" in text:
        for block in _YAML_ITEM.split(text)[1:]:

            def val(key: str, block: str = block) -> str:
                m = re.search(rf"^[ \t]*{key}:\s*(.*)$", block, re.MULTILINE)  # `^\s*` rescanned blank runs
                return m.group(1).strip().strip("'\"") if m else ""

            msg = val("Message")
            found.append(Event(val("Type"), val("Reason"), f"{val('Kind')}/{val('Name')}", msg, msg))
        return found
    in_events = False
    for line in text.splitlines():
        if line.startswith("Events:"):
            in_events = True
            continue
        if in_events:
            m = _DESCRIBE_EVENT.match(line)
            if m:
                found.append(Event(m.group(1), m.group(2), default_obj, m.group(4).strip(), line.strip()))
    return found


@dataclass
class Container:
    """A container block of a pod (or pod template) description."""

    name: str
    init: bool
    lines: list[str] = field(default_factory=list)

    def value(self, key: str, after: str | None = None) -> str:
        """The value of `Key:` inside the block (after the line starting with `after`, when given)."""
        started = after is None
        for line in self.lines:
            s = line.strip()
            if not started:
                started = s.startswith(after or "")
                if started and s.startswith(f"{key}:"):
                    return s.split(":", 1)[1].strip()
                continue
            if s.startswith(f"{key}:"):
                return s.split(":", 1)[1].strip()
        return ""

    def state_reason(self) -> str:
        """Reason of the current state (Waiting/Terminated)."""
        return self._reason_in("State:")

    def last_reason(self) -> str:
        """Reason of the last terminated state."""
        return self._reason_in("Last State:")

    def _reason_in(self, head: str) -> str:
        inside = False
        for line in self.lines:
            s = line.strip()
            if s.startswith(head):
                inside = True
                continue
            if inside:
                if s.startswith("Reason:"):
                    return s.split(":", 1)[1].strip()
                if re.match(r"^(State|Last State|Ready|Restart Count):", s):
                    return ""
        return ""

    def quantity(self, section: str, resource: str) -> str:
        """A limit or request (`section` is Limits or Requests) of one resource, e.g. cpu -> 10m."""
        inside = False
        for line in self.lines:
            s = line.strip()
            if s.startswith(f"{section}:"):
                inside = True
                continue
            if inside:
                m = re.match(r"^([a-zA-Z0-9./-]+):\s+(\S+)$", s)
                if not m:
                    return ""
                if m.group(1) == resource:
                    return m.group(2)
        return ""

    def line_with(self, pattern: str) -> str:
        """The first line of the block matching a regex, stripped (for quoting)."""
        rx = re.compile(pattern)
        return next((ln.strip() for ln in self.lines if rx.search(ln)), "")

    def command(self) -> list[str]:
        """Command and Args lines, as printed."""
        out: list[str] = []
        grab = False
        indent = 0
        for line in self.lines:
            s = line.strip()
            if s in ("Command:", "Args:"):
                grab, indent = True, len(line) - len(line.lstrip())
                continue
            if grab:
                if line.strip() and len(line) - len(line.lstrip()) > indent:
                    out.append(s)
                else:
                    grab = False
        return out


def _containers(describe: str) -> list[Container]:
    """Container blocks of a `kubectl describe pod|deployment|job` text."""
    found: list[Container] = []
    section: bool | None = None  # True: init containers, False: containers, None: outside
    current: Container | None = None
    base = 0
    for line in describe.splitlines():
        s = line.strip()
        indent = len(line) - len(line.lstrip())
        if s in ("Init Containers:", "Containers:"):
            section, base, current = s.startswith("Init"), indent, None
            continue
        if section is None:
            continue
        if line.strip() and indent <= base:
            section, current = None, None
            continue
        m = _CONTAINER_NAME.fullmatch(s)
        if m and indent <= base + 3:
            current = Container(m.group(1), bool(section))
            found.append(current)
        elif current is not None:
            current.lines.append(line)
    return found


def field_value(text: str, key: str) -> str:
    """A top-level `Key: value` of a describe text."""
    m = re.search(rf"^{re.escape(key)}:[ \t]*(.*)$", text, re.MULTILINE)
    return m.group(1).strip() if m else ""


@remembered
def line_matching(text: str, pattern: str, flags: int = 0) -> str:
    """The first line matching a regex, stripped, or ""."""
    rx = re.compile(pattern, flags)
    return next((ln.strip() for ln in text.splitlines() if rx.search(ln)), "")


def lines_matching(text: str, pattern: str, flags: int = 0) -> list[str]:
    """Every line matching a regex, stripped."""
    rx = re.compile(pattern, flags)
    return [ln.strip() for ln in text.splitlines() if rx.search(ln)]


_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def words(text: str) -> list[str]:
    """Lower-case words of a text, CamelCase split (`MinishopHighLatency` -> minishop, high, latency)."""
    return [w.lower() for w in _CAMEL.findall(text)]


# Indentation and trailing blanks are spaces and tabs: `\s*` also crossed line breaks, and from every line start
# of a run of blank lines rescanned the rest of the run (32 KiB of newlines took 17 s).
_STATUS_SECTION = re.compile(r"^([ \t]*)(initContainerStatuses|containerStatuses):[ \t\r]*$", re.MULTILINE)


def _yaml_containers(text: str) -> list[Container]:
    """Container statuses of a pod in YAML (what kubernetes-mcp-server's pods_get returns), read into the
    same shape as a description's container blocks so that one set of rules reads both."""
    found: list[Container] = []
    for m in _STATUS_SECTION.finditer(text):
        indent = len(m.group(1))
        body: list[str] = []
        for line in text[m.end() + 1 :].splitlines():
            if line.strip() and len(line) - len(line.lstrip()) <= indent and not line.lstrip().startswith("- "):
                break
            body.append(line)
        items = re.split(r"\n[ \t]*- ", "\n" + "\n".join(body))[1:]
        found += [_status_item(item, m.group(2).startswith("init"), text) for item in items]
    return found


def _spec_resources(whole: str, name: str) -> str:
    """The lines under `resources:` of the spec's container `name`: after the first `- `, the first line that is
    `name: <name>`, then the first `resources:` line, then the indented (or blank) lines that follow it.

    One pass over the lines: the regex this replaces (lazy runs of lines around `\\s*`) backtracked in cubic
    time, and 32 KiB of `- ` lines without the name took minutes.
    """
    start = whole.find("- ")
    if start < 0:
        return ""
    wanted, named = f"name: {name}", False
    block: list[str] | None = None
    for line in whole[start + 2 :].split("\n")[:-1]:  # every line read ends with a line break
        if block is not None:
            if line and not line[0].isspace():
                break
            block.append(line)
        elif not named:
            named = line.lstrip() == wanted
        elif line.lstrip() == "resources:":
            block = []
    return "".join(f"{line}\n" for line in block or [])


def _status_item(item: str, init: bool, whole: str) -> Container:
    def key(name: str, block: str) -> str:
        m = re.search(rf"^[ \t]*{name}:\s*(.+)$", block, re.MULTILINE)  # `^\s*` rescanned blank runs
        return m.group(1).strip().strip("'\"") if m else ""

    name = key("name", item)
    last = item.split("lastState:", 1)[1].split("\n    name:", 1)[0] if "lastState:" in item else ""
    current = item.split("\n    state:", 1)[1] if "\n    state:" in item else ""
    lines = []
    if current:
        lines += [f"State: {key('(waiting|running|terminated)', current)}", f"  Reason: {key('reason', current)}"]
    if key("reason", last):
        lines += ["Last State: Terminated", f"  Reason: {key('reason', last)}", f"  Exit Code: {key('exitCode', last)}"]
        if key("message", last):
            lines.append(f"  Message: {key('message', last)}")
    lines.append(f"Restart Count: {key('restartCount', item)}")
    resources = _spec_resources(whole, name)
    if resources:
        limits = re.search(r"limits:\n((?:\s{8,}\S+: \S+\n)+)", resources)
        if limits:
            lines.append("Limits:")
            lines += ["  " + ln.strip().replace('"', "") for ln in limits.group(1).splitlines()]
    return Container(name, init, lines)


# The readers every rule and the planner call on the same outputs, remembered by text (see memo_by_text).
table = memo_by_text(_table)
events = memo_by_text(_events)
containers = memo_by_text(_containers)
yaml_containers = memo_by_text(_yaml_containers)
