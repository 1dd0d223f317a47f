"""The regex fingerprint as it was before the linear rewrite: the oracle that the scanners must agree with.

Quadratic on crafted input (tests/fixtures/hostile): only call it on short statements.
"""

from __future__ import annotations

import re

_MYSQLDUMP = re.compile(r"\ASELECT /\*!40001 SQL_NO_CACHE \*/ \* FROM `")
_TOOLKIT = re.compile(r"/\*\w+\.\w+:[0-9]/[0-9]\*/")
_CALL = re.compile(r"\A\s*(call\s+\S+)\(", re.IGNORECASE)
_MULTI_INSERT = re.compile(
    r"\A((?:INSERT|REPLACE)(?: IGNORE)?\s+INTO.+?VALUES\s*\(.*?\))\s*,\s*\(", re.IGNORECASE | re.DOTALL
)
_MULTILINE_COMMENT = re.compile(r"/\*[^!].*?\*/", re.DOTALL | re.MULTILINE)
_ONELINE_COMMENT = re.compile(r"(?:--|#)[^'\"\r\n]*(?=[\r\n]|\Z)")
_USE = re.compile(r"\Ause \S+\Z", re.IGNORECASE)
_ESCAPED_QUOTE = re.compile(r"\\[\"']")
_DOUBLE_QUOTED = re.compile(r'".*?"', re.DOTALL)
_SINGLE_QUOTED = re.compile(r"'.*?'", re.DOTALL)
# pt-query-digest folds booleans; the standalone pt-fingerprint 3.2.1 does not. The digest is the reference.
_BOOLEAN = re.compile(r"\bfalse\b|\btrue\b", re.IGNORECASE)
_NUMBER = re.compile(r"[0-9+-][0-9a-f.xb+-]*")
_LEFTOVER = re.compile(r"[xb.+-]\?")
_WHITESPACE = re.compile(r"[ \n\t\r\f]+")
_NULL = re.compile(r"\bnull\b")
_IN_VALUES = re.compile(r"\b(in|values?)(?:[\s,]*\([\s?,]*\))+")
_UNION = re.compile(r"\b(select\s.*?)(?:(\sunion(?:\sall)?)\s\1)+")
_LIMIT = re.compile(r"\blimit \?(?:, ?\?| offset \?)?")
_ORDER_BY = re.compile(r"\border by ", re.IGNORECASE)
_ASC = re.compile(r"\s+asc\b", re.IGNORECASE)


def fingerprint(query: str) -> str:
    """The class a statement belongs to: literals, IN lists, multi-row VALUES, comments, whitespace and case folded."""
    if _MYSQLDUMP.match(query):
        return "mysqldump"
    if _TOOLKIT.search(query):
        return "percona-toolkit"
    if query.startswith("administrator command: "):
        return query
    call = _CALL.match(query)
    if call:
        return call.group(1).lower()
    multi = _MULTI_INSERT.match(query)
    if multi:
        query = multi.group(1)  # shorten multi-row INSERTs before the expensive steps
    query = _MULTILINE_COMMENT.sub("", query)
    query = _ONELINE_COMMENT.sub("", query)
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
    query = _UNION.sub(lambda m: f"{m.group(1)} /*repeat{m.group(2)}*/", query)
    query = _LIMIT.sub("limit ?", query, count=1)
    if _ORDER_BY.search(query):
        head, sep, tail = query.partition("order by ")
        query = head + sep + _ASC.sub("", tail)
    return query
