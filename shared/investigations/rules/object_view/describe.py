"""`kubectl describe` text as a tree of `Key: value` lines by indentation, with the table rows under each key.

One pass over the lines, no regex over them: a key ends at the first colon followed by a blank, and a "key" that
holds a run of two blanks is a table row (events, conditions), not a key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_MAX_KEY = 100
_CELL_GAP = re.compile(r"\t+| {2,}")  # cells of a tabwriter row: two blanks or more (one blank is inside a cell)


@dataclass
class DNode:
    """One `Key: value` line, the key lines indented under it, and the other lines (table rows) directly under it."""

    key: str
    value: str
    line: str  # the line, stripped, to quote
    indent: int
    children: list[DNode] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)  # raw lines (indentation kept, for column positions)
    lines: list[str] = field(default_factory=list)  # every line directly under it, stripped, in order
    _index: dict[str, DNode] | None = field(default=None, repr=False, compare=False)
    _index_of: list[DNode] = field(default_factory=list, repr=False, compare=False)

    def child(self, key: str) -> DNode | None:
        """The first child with this key (case-insensitive)."""
        if self._index is None or len(self._index_of) != len(self.children):
            self._index_of = list(self.children)
            self._index = {}
            for c in self.children:
                self._index.setdefault(c.key.lower(), c)
        return self._index.get(key.lower())

    def value_of(self, key: str) -> str:
        """The value of a child key, or ""."""
        node = self.child(key)
        return node.value if node else ""

    def walk(self) -> Iterator[DNode]:
        """This node and every node under it, in order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


def split_key(content: str) -> tuple[str, str] | None:
    """(key, value) of a describe line `Key:   value`, or None for a table row or a continuation."""
    j = content.find(":")
    while j >= 0 and j + 1 < len(content) and content[j + 1] not in " \t":
        j = content.find(":", j + 1)
    if j <= 0 or j > _MAX_KEY:
        return None
    key = content[:j]
    if "  " in key or "\t" in key or not (key[0].isalnum() or key[0] in "_-"):
        return None
    return key.strip(), content[j + 1 :].strip()


def parse(text: str) -> DNode:
    """The tree of a describe text: the root's children are the top-level keys."""
    root = DNode("", "", "", -1)
    stack = [root]
    for raw in text.splitlines():
        line = raw.rstrip()
        content = line.lstrip()
        if not content:
            continue
        indent = len(line) - len(content)
        while len(stack) > 1 and stack[-1].indent >= indent:
            stack.pop()
        stack[-1].lines.append(content)
        kv = split_key(content)
        if kv is None:
            stack[-1].rows.append(line)
            continue
        node = DNode(kv[0], kv[1], content, indent)
        stack[-1].children.append(node)
        stack.append(node)
    return root


@dataclass
class TableRow:
    """A row of a table under a describe key: cells by header name (as printed) and the stripped line to quote."""

    cells: dict[str, str]
    line: str

    def get(self, column: str) -> str:
        """A cell by header name (case-insensitive), or ""."""
        low = column.lower()
        return next((v for k, v in self.cells.items() if k.lower() == low), "")


def is_rule(line: str) -> bool:
    s = line.strip()
    return bool(s) and s.startswith("-") and set(s) <= {"-", " ", "\t"}


def table(rows: list[str], first_column: str) -> list[TableRow]:
    """The rows of the table whose header starts with `first_column` (e.g. "Type", "Resource"), [] if none.

    Cells are cut at the header's column positions when the row is aligned with them (tabwriter output), else split
    on runs of two blanks (hand-aligned text), the last cell taking the rest of the line.
    """
    lines = [r.expandtabs(8) for r in rows]
    start = next((i for i, r in enumerate(lines) if r.split(None, 1)[:1] == [first_column]), -1)
    if start < 0:
        return []
    header = lines[start]
    spans = _spans(header)
    names = [header[s:e].strip() for s, e in spans]
    out: list[TableRow] = []
    for raw in lines[start + 1 :]:
        if is_rule(raw):
            continue
        if raw.split(None, 1)[:1] == [first_column]:
            break  # a second table
        out.append(TableRow(dict(zip(names, _cells(raw, spans), strict=False)), raw.strip()))
    return out


def _spans(header: str) -> list[tuple[int, int | None]]:
    starts: list[int] = []
    i = len(header) - len(header.lstrip())
    while i < len(header):
        starts.append(i)
        gap = _CELL_GAP.search(header, i)
        if gap is None:
            break
        i = gap.end()
    return [(s, e) for s, e in zip(starts, [*starts[1:], None], strict=True)]


def _cells(row: str, spans: list[tuple[int, int | None]]) -> list[str]:
    aligned = all(s == spans[0][0] or s >= len(row) or row[s - 1] == " " for s, _ in spans)
    if aligned and (len(row) <= spans[0][0] or row[spans[0][0]] != " "):
        return [row[s:e].strip() for s, e in spans]
    return [c.strip() for c in _CELL_GAP.split(row.strip(), maxsplit=len(spans) - 1)]


def cells(row: str, count: int) -> list[str]:
    """A row split on runs of two blanks into at most `count` cells (the last takes the rest)."""
    return [c.strip() for c in _CELL_GAP.split(row.strip(), maxsplit=max(count - 1, 0))]
