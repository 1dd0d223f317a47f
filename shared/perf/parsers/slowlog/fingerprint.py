"""Query fingerprints that group statements as pt-query-digest 3.2.1 does (QueryRewriter::fingerprint, step by step).

Checked against pt-query-digest's classes and `pt-fingerprint` on the fixtures (tests/unit/perf), and
against the original regex version (tests/unit/perf/fingerprint_reference.py) on random statements.
Every step is linear in the statement's length: the patterns whose backtracking was quadratic on
crafted input (a comment or quote that never closes, `"#" * n + "'"`, many VALUES or SELECTs) are
hand-written scanners that give the same result, and the remaining regexes cannot backtrack more than
a constant per character (possessive quantifiers, a start anchored on a run's first character).
Only the UNION folding needs pairs of positions; it gives up (leaves the rest unfolded) after
UNION_PAIR_BUDGET pairs or UNION_COMPARE_BUDGET characters compared, which no real statement comes near.
"""

from __future__ import annotations

import re

UNION_PAIR_BUDGET = 20_000
UNION_COMPARE_BUDGET = 32 * 1024 * 1024

_MYSQLDUMP = re.compile(r"\ASELECT /\*!40001 SQL_NO_CACHE \*/ \* FROM `")
_TOOLKIT = re.compile(r"/\*\w++\.\w++:[0-9]/[0-9]\*/")
_CALL = re.compile(r"\A\s*+(call\s++)(\S++)", re.IGNORECASE)
_INSERT_HEAD = re.compile(r"\A(?:INSERT|REPLACE)(?: IGNORE)?\s++INTO", re.IGNORECASE)
_VALUES_OPEN = re.compile(r"VALUES\s*+\(", re.IGNORECASE)
_NEXT_ROW = re.compile(r"\)\s*+,\s*+\(")
_COMMENT_START = re.compile(r"--|#")
_COMMENT_STOP = re.compile(r"['\"\r\n]")
_USE = re.compile(r"\Ause \S+\Z", re.IGNORECASE)
_ESCAPED_QUOTE = re.compile(r"\\[\"']")
_DOUBLE_QUOTED = re.compile(r'".*?"', re.DOTALL)  # linear: a failed start is only the last, unmatched quote
_SINGLE_QUOTED = re.compile(r"'.*?'", re.DOTALL)
# pt-query-digest folds booleans; the standalone pt-fingerprint 3.2.1 does not. The digest is the reference.
_BOOLEAN = re.compile(r"\bfalse\b|\btrue\b", re.IGNORECASE)
_NUMBER = re.compile(r"[0-9+-][0-9a-f.xb+-]*+")
_LEFTOVER = re.compile(r"[xb.+-]\?")
_WHITESPACE = re.compile(r"[ \n\t\r\f]+")
_NULL = re.compile(r"\bnull\b")
_IN_VALUES = re.compile(r"\b(in|values?)(?:[\s,]*+\([\s?,]*+\))+")
_SELECT = re.compile(r"\bselect\s")
_UNION = re.compile(r"\sunion")
_LIMIT = re.compile(r"\blimit \?(?:, ?\?| offset \?)?")
_ORDER_BY = re.compile(r"\border by ", re.IGNORECASE)
_ASC = re.compile(r"(?<!\s)\s++asc\b", re.IGNORECASE)  # only from a run's first space: a later start fails the same way


def _call(query: str) -> str | None:
    """`\\A\\s*(call\\s+\\S+)\\(`'s group: the name runs to the LAST `(` of the word after `call`."""
    m = _CALL.match(query)
    if not m:
        return None
    cut = m.group(2).rfind("(")
    return m.group(1) + m.group(2)[:cut] if cut > 0 else None


def _multi_insert(query: str) -> str | None:
    """The first row of a multi-row INSERT/REPLACE.

    As `\\A(... INTO.+?VALUES\\s*\\(.*?\\))\\s*,\\s*\\(` (re.S) keeps it.
    """
    head = _INSERT_HEAD.match(query)
    if not head:
        return None
    values = _VALUES_OPEN.search(query, head.end() + 1)  # `.+?` needs one character after INTO
    if not values:
        return None
    # The row ends at the first `)` that a `, (` follows. A later VALUES cannot do better: it searches a suffix.
    row_end = _NEXT_ROW.search(query, values.end())
    return query[: row_end.start() + 1] if row_end else None


def _strip_block_comments(query: str) -> str:
    """`/\\*[^!].*?\\*/` (re.S) removed: a comment that never closes stops the scan, as it stops every later match."""
    out, pos, n = [], 0, len(query)
    while True:
        start = query.find("/*", pos)
        if start < 0 or start + 2 >= n:
            break
        if query[start + 2] == "!":
            out.append(query[pos : start + 2])
            pos = start + 2
            continue
        end = query.find("*/", start + 3)
        if end < 0:
            break
        out.append(query[pos:start])
        pos = end + 2
    out.append(query[pos:])
    return "".join(out)


def _strip_line_comments(query: str) -> str:
    """`(?:--|#)[^'"\\r\\n]*(?=[\\r\\n]|\\Z)` removed. Every start inside one run ends at the same character,
    so a run that ends at a quote is skipped whole instead of being retried from each of its characters."""
    out, pos, scan, n = [], 0, 0, len(query)
    while True:
        m = _COMMENT_START.search(query, scan)
        if not m:
            break
        stop = _COMMENT_STOP.search(query, m.end())
        end = stop.start() if stop else n
        if end == n or query[end] in "\r\n":
            out.append(query[pos : m.start()])
            pos = end
        scan = end if end > m.start() else m.start() + 1
    out.append(query[pos:])
    return "".join(out)


def _union_separator(query: str, u: int) -> tuple[int, int]:
    """(separator length incl. the trailing space, group 2 length) of the ` union` or ` union all` at u."""
    if query[u + 6 : u + 7].isspace() and query.startswith("all", u + 7) and query[u + 10 : u + 11].isspace():
        return 11, 10
    return 7, 6


def _select_unions(query: str) -> list[tuple[int, int, int]]:
    """(start, separator length incl. the trailing space, group 2 length) of each union followed by `select `."""
    unions: list[tuple[int, int, int]] = []
    for m in _UNION.finditer(query):
        u = m.start()
        sep, g2 = _union_separator(query, u)
        if query[u + sep - 1 : u + sep].isspace() and query.startswith("select", u + sep):
            unions.append((u, sep, g2))
    return unions


def _more_repeats(query: str, x: str, end: int, last_sep: str) -> tuple[int, str]:
    """Extend a fold over the further repeats `\\sunion(\\sall)?\\s` + X from end: (new end, last group 2)."""
    while query[end : end + 1].isspace() and query.startswith("union", end + 1):
        sep, g2 = _union_separator(query, end)
        if not (query[end + sep - 1 : end + sep].isspace() and query.startswith(x, end + sep)):
            break
        last_sep = query[end : end + g2]
        end += sep + len(x)
    return end, last_sep


def _fold_unions(query: str) -> str:
    """`\\b(select\\s.*?)(?:(\\sunion(?:\\sall)?)\\s\\1)+` replaced by `\\1 /*repeat\\2*/`.

    For each `select` (left to right), the shortest X = select...  that ` union [all] X` repeats right
    after; then as many more repeats as follow. Only unions followed by the same `select<space>` can
    repeat X, so only those are paired with each select.
    """
    n = len(query)
    unions = _select_unions(query)
    if not unions:
        return query
    out, pos, first, pairs, compared, limit = [], 0, 0, 0, 0, -1
    for s_match in _SELECT.finditer(query):
        s = s_match.start()
        if s < pos:
            continue
        if limit < s + 7:  # `.` stops at a newline; one search serves every select before it
            limit = query.find("\n", s + 7)
            limit = n if limit < 0 else limit
        while first < len(unions) and unions[first][0] < s + 7:
            first += 1
        found = None
        for i in range(first, len(unions)):  # by index: a slice would copy the rest of the list for every select
            u, sep, g2 = unions[i]
            length = u - s
            if u > limit or u + sep + length > n:
                break
            pairs += 1
            compared += length
            if pairs > UNION_PAIR_BUDGET or compared > UNION_COMPARE_BUDGET:
                out.append(query[pos:])
                return "".join(out)
            if query[u + sep + 6] == query[s + 6] and query.startswith(query[s:u], u + sep):
                found = (u, sep, g2)
                break
        if found is None:
            continue
        x = query[s : found[0]]
        end, last_sep = _more_repeats(query, x, found[0] + found[1] + len(x), query[found[0] : found[0] + found[2]])
        out.append(query[pos:s])
        out.append(f"{x} /*repeat{last_sep}*/")
        pos = end
    out.append(query[pos:])
    return "".join(out)


def fingerprint(query: str) -> str:
    """The class a statement belongs to: literals, IN lists, multi-row VALUES, comments, whitespace and case folded."""
    if _MYSQLDUMP.match(query):
        return "mysqldump"
    if _TOOLKIT.search(query):
        return "percona-toolkit"
    if query.startswith("administrator command: "):
        return query
    call = _call(query)
    if call:
        return call.lower()
    multi = _multi_insert(query)
    if multi:
        query = multi  # shorten multi-row INSERTs before the expensive steps
    query = _strip_block_comments(query)
    query = _strip_line_comments(query)
    if _USE.match(query):
        return _USE.sub("use ?", query)
    query = _ESCAPED_QUOTE.sub("", query)
    query = _DOUBLE_QUOTED.sub("?", query)
    query = _SINGLE_QUOTED.sub("?", query)
    query = _BOOLEAN.sub("?", query)
    query = _NUMBER.sub("?", query)
    query = _LEFTOVER.sub("?", query)
    query = query.lstrip().rstrip("\n")
    query = _WHITESPACE.sub(" ", query).lower()
    query = _NULL.sub("?", query)
    query = _IN_VALUES.sub(lambda m: f"{m.group(1)}(?+)", query)
    query = _fold_unions(query)
    query = _LIMIT.sub("limit ?", query, count=1)
    if _ORDER_BY.search(query):
        head, sep, tail = query.partition("order by ")
        query = head + sep + _ASC.sub("", tail)
    return query
