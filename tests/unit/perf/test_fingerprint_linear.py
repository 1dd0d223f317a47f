"""The linear fingerprint equals the original regex version (the oracle) on every fixture statement and on
random statements built from the tokens each rule looks at; crafted statements stay linear (sizes only)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from shared.perf.parsers.slowlog import fingerprint as fingerprint_module
from shared.perf.parsers.slowlog.fingerprint import fingerprint
from shared.perf.parsers.slowlog.parser import open_log, parse
from tests.unit.perf import fingerprint_reference

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slowlog"
TOKENS = [
    "select",
    "SELECT",
    "union",
    "UNION",
    "all",
    "ALL",
    "in",
    "IN",
    "values",
    "VALUES",
    "value",
    "insert",
    "INSERT",
    "replace",
    "ignore",
    "into",
    "INTO",
    "call",
    "CALL",
    "order by",
    "ORDER BY",
    "asc",
    "ASC",
    "limit",
    "offset",
    "null",
    "NULL",
    "true",
    "false",
    "use",
    "from",
    "t",
    "x",
    "(",
    ")",
    "(",
    ")",
    ",",
    ", ",
    "'",
    "'",
    '"',
    "\\'",
    '\\"',
    "#",
    "--",
    "-",
    "/*",
    "*/",
    "/*!",
    "*",
    "/",
    "?",
    "1",
    "42",
    "0x1f",
    "-3",
    "1.5e3",
    "b'01'",
    "x'ff'",
    " ",
    " ",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "\v",
    "\f",
    "\xa0",
    "\u2003",
    "é",
    "_",
    ".",
    ":",
    "/*a.b:1/2*/",
    "`db`",
]


def _statement(rng: random.Random) -> str:
    prefix = rng.choice(
        [
            "",
            "",
            "select ",
            "SELECT ",
            "insert into t values (",
            "INSERT IGNORE INTO t (a) VALUES(",
            "REPLACE INTO t VALUES ",
            "call ",
            " CALL p(",
            "use ",
            "administrator command: ",
            "select a union select a union all select a",
        ]
    )
    return prefix + "".join(rng.choice(TOKENS) + rng.choice(["", " "]) for _ in range(rng.randrange(0, 40)))


@pytest.mark.parametrize("seed", range(40))
def test_equals_the_regex_oracle_on_random_statements(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(500):
        q = _statement(rng)
        assert fingerprint(q) == fingerprint_reference.fingerprint(q), q


@pytest.mark.parametrize(
    "q",
    [
        "select a union select a",
        "select a union all select a union select a",
        "select a  union select a",
        "select\ta union\tselect\ta",
        "select 1 union select 1 union select 2",
        "x select a union select a union select a y",
        "select select a union select a",
        "select a union select b union select b",
        "select a\nunion select a",
        "select a union\nselect a",
        "select (a) union all select (a) union all select (a)",
        "insert into t values (1),(2),(3)",
        "insert into t values (1) on duplicate key update a=values(a)",
        "INSERT INTO t VALUES(1, ')'), (2)",
        "call p(1)",
        "call p((1)",
        "call  p(1) (2)",
        "call (1)",
        "/**/ select 1",
        "/*!40101 x */ select 1",
        "select 1 -- c\n",
        "select '#' # c",
        "select 1 # a 'b",
        "select 1 order by a asc, b  asc",
        "select 1 order by a \vasc",
    ],
)
def test_equals_the_regex_oracle_on_edge_cases(q: str) -> None:
    assert fingerprint(q) == fingerprint_reference.fingerprint(q)


@pytest.mark.parametrize("name", ["small.log", "mysql80-sample.log"])
def test_equals_the_regex_oracle_on_every_fixture_statement(name: str) -> None:
    with open_log(FIXTURES / name) as f:
        queries = [e.query for e in parse(f)]
    assert queries
    assert all(fingerprint(q) == fingerprint_reference.fingerprint(q) for q in queries)


def test_union_folding_gives_up_after_its_pair_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # 50 selects, each paired with the 50 unions after it before the repeated `select b` folds.
    q = "select a " * 50 + "union select b " * 50
    assert (
        fingerprint(q)
        == fingerprint_reference.fingerprint(q)
        == "select a " * 49 + "select a union select b /*repeat union*/ "
    )
    monkeypatch.setattr(fingerprint_module, "UNION_PAIR_BUDGET", 10)
    assert fingerprint(q) == q  # left unfolded: still the statement's class, never a stall
