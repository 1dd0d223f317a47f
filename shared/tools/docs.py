"""Generated README sections: the tool table from the registry and the container table from the catalogue."""

from __future__ import annotations

from pathlib import Path

from shared.storage.containers import CONTAINERS
from shared.tools.registry import ToolRegistry

README = Path(__file__).resolve().parents[2] / "README.md"
_MARKERS = {"tools": ("<!-- tools:begin -->", "<!-- tools:end -->"), "containers": ("<!-- containers:begin -->", "<!-- containers:end -->")}


def tools_table(registry: ToolRegistry) -> str:
    rows = ["| tool | capability | hints | what it does |", "|---|---|---|---|"]
    for t in registry:
        a = t.annotations
        hints = ", ".join(h for h, on in (("read-only", a.read_only), ("destructive", a.destructive), ("idempotent", a.idempotent), ("open-world", a.open_world)) if on) or "writes"
        rows.append(f"| `{t.name}` | {t.capability} | {hints} | {t.description.splitlines()[0]} |")
    return "\n".join(rows)


def containers_table() -> str:
    rows = ["| container | partition key | not indexed | holds |", "|---|---|---|---|"]
    for c in CONTAINERS:
        excluded = ", ".join(f"`{p}`" for p in c.excluded_paths) or "–"
        rows.append(f"| `{c.name}` | `{c.partition_key}` | {excluded} | {c.purpose} |")
    return "\n".join(rows)


def render_readme(text: str, registry: ToolRegistry) -> str:
    for key, body in (("tools", tools_table(registry)), ("containers", containers_table())):
        begin, end = _MARKERS[key]
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(end)
        text = f"{head}{begin}\n{body}\n{end}{tail}"
    return text
