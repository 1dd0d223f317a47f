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
_TABLE = re.compile(r"\b(?:from|join)\s+([a-z_][a-z0-9_$.]*)(?:\s+(?:as\s+)?([a-z_][a-z0-9_$]*))?")
_JOIN_ON = re.compile(r"\bon\s+(" + _IDENT + r")\s*=\s*(" + _IDENT + r")")
_NOT_ALIAS = {"on", "where", "join", "left", "right", "inner", "outer", "cross", "natural", "straight_join", "using"}
_NOT_ALIAS |= {
    "group",
    "order",
    "limit",
    "set",
    "having",
    "union",
    "for",
    "lock",
    "force",
    "use",
    "ignore",
    "partition",
}


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
    filters_by_table: dict[str, list[str]] = field(default_factory=dict)  # table -> its WHERE columns
    join_columns: list[tuple[str, str]] = field(default_factory=list)  # (table, column) on either side of ON

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
    tables = _tables(fp)
    qualified = _unique(_EQUALITY.findall(where) + _IN_LIST.findall(where) + _RANGE.findall(where))
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
        filters_by_table=_by_table(qualified, tables),
        join_columns=[tc for pair in _JOIN_ON.findall(fp) for c in pair if (tc := _table_column(c, tables))],
    )


def _tables(fp: str) -> dict[str, str]:
    """alias (or table name) -> table name, from FROM and JOIN clauses."""
    out: dict[str, str] = {}
    for table, alias in _TABLE.findall(fp):
        name = table.rsplit(".", 1)[-1]
        out[name] = name
        if alias and alias not in _NOT_ALIAS:
            out[alias] = name
    return out


def _table_column(column: str, tables: dict[str, str]) -> tuple[str, str] | None:
    """(table, column) of a qualified `alias.column`, or of a bare column when the statement has one table."""
    if "." in column:
        alias, col = column.rsplit(".", 1)
        return (tables[alias], col) if alias in tables else None
    names = set(tables.values())
    return (names.pop(), column) if len(names) == 1 else None


def _by_table(columns: list[str], tables: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in columns:
        found = _table_column(c, tables)
        if found and found[1] not in out.get(found[0], []):
            out.setdefault(found[0], []).append(found[1])
    return out


def index_columns(s: Shape, for_order: bool) -> list[str]:
    """The columns of the index that would serve this statement, by the usual rule: equality columns first, then
    either the ORDER BY columns (for_order) or one range column."""
    cols = list(s.equality)
    if for_order:
        cols += [c for c in s.order_by if c not in cols]
    elif s.ranges:
        cols += [c for c in s.ranges[:1] if c not in cols]
    return cols
