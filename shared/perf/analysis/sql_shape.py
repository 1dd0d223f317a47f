"""The shape of a statement from its fingerprint (pt-query-digest's: lower case, literals as `?`), for advice.

Regular expressions over one statement, each linear in its length; no SQL parser. What they find is a
starting point for EXPLAIN, never a plan: the advice texts say "check with EXPLAIN".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_IDENT = r"[a-z_][a-z0-9_$]*(?:\.[a-z_][a-z0-9_$]*)?"
_CLAUSE_END = (
    r"(?:\bgroup by\b|\border by\b|\blimit\b|\bhaving\b|\bunion\b"
    r"|\bfor update\b|\bfor share\b|\block in share mode\b|$)"
)
_WHERE = re.compile(r"\bwhere\b(.*?)" + _CLAUSE_END, re.DOTALL)
_EQUALITY = re.compile(r"(?<![\w.])(" + _IDENT + r")\s*(?:=|<=>)\s*\?")
_IN_LIST = re.compile(r"(?<![\w.])(" + _IDENT + r")\s+in\s*\(\s*\?")
_RANGE = re.compile(r"(?<![\w.])(" + _IDENT + r")\s*(?:<=|>=|<|>|\bbetween\b|\blike\b)\s*\?")
_FUNCTION_ON_COLUMN = re.compile(
    r"\b(date|lower|upper|year|month|substr|substring|trim|cast|concat)\s*\(\s*(" + _IDENT + r")"
)
_ORDER = re.compile(r"\border by\b(.*?)(?:\blimit\b|$)", re.DOTALL)
_LIMIT = re.compile(r"\blimit\b")
_AGGREGATE = re.compile(r"\b(count|sum|avg|min|max)\s*\(")
_DDL = ("alter ", "create ", "drop ", "optimize ", "analyze ", "truncate ", "rename ")
_LOCKING_READ = re.compile(r"\bfor update\b|\bfor share\b|\block in share mode\b")
_KEYWORDS = {"and", "or", "not", "null", "is", "select", "from", "where"}


@dataclass
class Shape:
    verb: str
    where: bool
    equality: list[str] = field(default_factory=list)
    ranges: list[str] = field(default_factory=list)
    order_by: list[str] = field(default_factory=list)
    limit: bool = False
    group_by: bool = False
    aggregate: bool = False
    join: bool = False
    order_by_rand: bool = False
    locking_read: bool = False
    functions_on_columns: list[str] = field(default_factory=list)

    @property
    def is_write(self) -> bool:
        return self.verb in ("update", "delete", "insert", "replace") or self.locking_read

    @property
    def is_ddl(self) -> bool:
        return any(f"{self.verb} ".startswith(d) for d in _DDL)


def _bare(column: str) -> str:
    """`o.placed_at` -> `placed_at`: an index is on one table's columns."""
    return column.rsplit(".", 1)[-1]


def _unique(items: list[str]) -> list[str]:
    return [c for i, c in enumerate(items) if c not in items[:i] and c not in _KEYWORDS]


def shape(fingerprint: str) -> Shape:
    fp = " ".join(fingerprint.lower().split())
    verb = fp.split(" ", 1)[0] if fp else ""
    where_m = _WHERE.search(fp)
    where = where_m.group(1) if where_m else ""
    order_m = _ORDER.search(fp)
    order: list[str] = []
    rand = False
    if order_m:
        for part in order_m.group(1).split(","):
            words = part.strip().split()
            if not words:
                continue
            if words[0].startswith("rand("):
                rand = True
            elif re.fullmatch(_IDENT, words[0]):
                order.append(_bare(words[0]))
    head = fp.split(" from ", 1)[0]
    return Shape(
        verb=verb,
        where=bool(where_m),
        equality=_unique([_bare(c) for c in _EQUALITY.findall(where) + _IN_LIST.findall(where)]),
        ranges=_unique([_bare(c) for c in _RANGE.findall(where)]),
        order_by=order,
        limit=bool(_LIMIT.search(fp)),
        group_by=" group by " in f" {fp} ",
        aggregate=bool(_AGGREGATE.search(head)),
        join=" join " in fp,
        order_by_rand=rand,
        locking_read=bool(_LOCKING_READ.search(fp)),
        functions_on_columns=_unique([f"{f}({_bare(c)})" for f, c in _FUNCTION_ON_COLUMN.findall(where)]),
    )


def index_columns(s: Shape, for_order: bool) -> list[str]:
    """The columns of the index that would serve this statement, by the usual rule: equality columns first, then
    either the ORDER BY columns (for_order) or one range column."""
    cols = list(s.equality)
    if for_order:
        cols += [c for c in s.order_by if c not in cols]
    elif s.ranges:
        cols += [c for c in s.ranges[:1] if c not in cols]
    return cols
