"""The slow-log parser and fingerprints against pt-query-digest's classes on real fixtures.

Golden files hold pt-query-digest 3.2.1's classes (regenerate: pt-query-digest --output json --limit 100% FILE).
Where pt-query-digest is wrong we are right, and each difference is asserted here by name.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest

from shared.perf.parsers.slowlog.fingerprint import fingerprint
from shared.perf.parsers.slowlog.parser import parse

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slowlog"


def entries(name: str) -> list:
    with open(FIXTURES / name, "rb") as f:
        return list(parse(f))


def classes(name: str) -> Counter:
    return Counter(fingerprint(e.query) for e in entries(name))


def golden(name: str) -> dict[str, int]:
    return {
        k: v["count"] for k, v in json.loads((FIXTURES / f"{name}.pt-query-digest.json").read_text())["classes"].items()
    }


def test_mariadb_log_counts_match_the_fixture_notes() -> None:
    es = entries("small.log")
    assert len(es) == 611
    assert Counter(e.user for e in es) == {"sbuser": 299, "app": 226, "report": 47, "root": 39}
    assert Counter(e.schema for e in es) == {"sbtest": 303, "shop": 279, "": 29}
    assert Counter(e.ip or e.host for e in es) == {"127.0.0.1": 572, "localhost": 39}
    assert sum(1 for e in es if e.extra.get("QC_hit") == "Yes") == 2


def test_mysql80_sample_matches_pt_query_digest_exactly() -> None:
    assert classes("mysql80-sample.log") == golden("mysql80-sample")


def test_mariadb_log_matches_pt_query_digest_except_where_pt_is_wrong() -> None:
    ours, pt = classes("small.log"), golden("small")
    differing = {k for k in set(ours) | set(pt) if ours.get(k) != pt.get(k)}
    # 1. pt glues the entry after MariaDB's mid-file header ("mariadbd, Version: ...") onto the previous query.
    glued = next(k for k in pt if "mariadbd, version" in k)
    assert ours["show /*!? global */ status"] == 1
    assert ours["select count(*) from orders where status = ?"] == 1
    # 2. pt takes the client's `SET timestamp = 1700000000` for the server's line and loses the entry boundary.
    misread = "user@host: report[report] @ [?] set timestamp=?"
    assert pt[misread] == 2
    assert ours["set timestamp = ?"] == 1
    assert ours["set timestamp = default"] == 1
    assert ours["select now(), count(*) from products where category = ?"] == 1
    assert differing == {
        glued,
        misread,
        "show /*!? global */ status",
        "select count(*) from orders where status = ?",
        "set timestamp = ?",
        "set timestamp = default",
        "select now(), count(*) from products where category = ?",
    }
    assert sum(ours.values()) == 611
    assert sum(pt.values()) == 609


def test_mariadb_specifics() -> None:
    es = entries("small.log")
    pinned = [e for e in es if e.timestamp == 1700000000]
    assert len(pinned) == 3
    assert pinned[0].query == "SET timestamp = 1700000000"
    hash_comment = next(e for e in es if "a hash comment on its own line" in e.query)
    assert hash_comment.query.startswith("SELECT name FROM customers")
    assert hash_comment.query.rstrip().endswith("WHERE id = 100")
    no_schema = next(e for e in es if e.schema == "")
    assert "QC_hit" in no_schema.extra
    assert no_schema.extra.get("QC_hit") in ("Yes", "No")
    assert any(e.extra.get("Engine_time") == "36.2805" for e in es)  # innodb verbosity lines are kept (milliseconds)
    assert max(len(e.query) for e in es) > 4000  # the 1,000-id IN list


def test_mysql80_specifics() -> None:
    es = entries("mysql80-sample.log")
    assert len(es) == 30
    assert es[0].time.isoformat() == "2026-02-16T10:25:30.123456+00:00"
    assert es[0].thread_id == 42
    assert [e.admin_command for e in es if e.admin_command]
    assert all(fingerprint(e.query).startswith("administrator command: ") for e in es if e.admin_command)
    assert es[-1].time.utcoffset().total_seconds() != 0  # the offset form after the restart
    extra = [e for e in es if "Errno" in e.extra]
    assert len(extra) == 9
    assert {e.extra["Errno"] for e in extra} >= {"1064", "3024"}
    alice = next(e for e in es if e.user == "alice")
    assert (alice.host, alice.ip) == ("bastion-1.internal", "10.0.4.2")


# Expected values are what pt-query-digest 3.2.1 prints for the same query (pt-fingerprint agrees except on booleans).
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("SELECT * FROM t WHERE id = 42", "select * from t where id = ?"),
        ("select * from t where id=7", "select * from t where id=?"),
        ("SELECT * FROM t WHERE name = 'O\\'Brien' AND x = \"y\"", "select * from t where name = ? and x = ?"),
        ("SELECT * FROM t WHERE id IN (1, 2, 3)", "select * from t where id in(?+)"),
        ("INSERT INTO t (a,b) VALUES (1,'x'),(2,'y'),(3,'z')", "insert into t (a,b) values(?+)"),
        ("SELECT /* app:checkout */ a FROM t -- trailing", "select a from t "),  # pt keeps the space the comment leaves
        ("SELECT a FROM t ORDER BY a ASC, b ASC LIMIT 10, 20", "select a from t order by a, b limit ?"),
        ("CALL refresh_stats(3)", "call refresh_stats"),
        ("use `shop`", "use ?"),
        (
            "SELECT x FROM t WHERE flag = TRUE AND v IS NULL",
            "select x from t where flag = ? and v is ?",
        ),  # as pt-query-digest (pt-fingerprint keeps true)
        ("SELECT\n  a,\n  b\nFROM   t", "select a, b from t"),
    ],
)
def test_fingerprints(query: str, expected: str) -> None:
    assert fingerprint(query) == expected


@pytest.mark.parametrize(
    "data", [b"", b"\x00\xff\xfe garbage\n", b"# Time: not a header\nSELECT 1;\n", b"# Query_time: x\n"]
)
def test_junk_yields_no_entries_and_no_crash(data: bytes) -> None:
    assert list(parse(io.BytesIO(data))) == []


def _pt_sums(name: str) -> dict[str, float]:
    return {
        k: v["query_time_sum"]
        for k, v in json.loads((FIXTURES / f"{name}.pt-query-digest.json").read_text())["classes"].items()
    }


@pytest.mark.parametrize("name", ["mysql80-sample", "small"])
def test_class_counts_and_query_time_sums_match_pt_query_digest(name: str) -> None:
    from shared.perf.parsers.slowlog.aggregate import aggregate

    ours = aggregate(entries(f"{name}.log"))
    pt = json.loads((FIXTURES / f"{name}.pt-query-digest.json").read_text())["classes"]
    for fp, expected in pt.items():
        if fp in ours:  # the classes pt gets wrong are asserted in the test above
            assert ours[fp].count == expected["count"], fp
            assert ours[fp].query_time.total == pytest.approx(float(expected["query_time_sum"]), abs=1e-6), fp


def test_percentiles_from_the_histogram_are_within_one_bucket() -> None:
    import random

    from shared.perf.parsers.slowlog.aggregate import Metric

    rng = random.Random(7)
    values = [rng.lognormvariate(-6, 2) for _ in range(5000)]
    m = Metric()
    for v in values:
        m.add(v)
    exact = sorted(values)
    for q in (0.5, 0.95):
        truth = exact[int(q * len(exact)) - 1]
        assert abs(m.percentile(q) - truth) / truth < 0.06
    assert m.summary()["max"] == round(max(values), 6)
    assert m.count == 5000


def test_digest_ranks_by_total_time_and_redacts_samples() -> None:
    from shared.perf.parsers.slowlog.aggregate import digest, redact_literals

    report = digest(entries("small.log"))
    assert report["entries"] == 611
    assert report["classes"] == 142
    totals = [c["query_time"]["sum"] for c in report["ranked"]]
    assert totals == sorted(totals, reverse=True)
    assert sum(c["count"] for c in report["ranked"]) == 611
    for c in report["ranked"]:
        assert (
            "'" not in c["worst_sample"]["query"]
            or "''" in c["worst_sample"]["query"]
            or c["worst_sample"]["query"].count("'") % 2 == 0
        )
    assert (
        redact_literals("SELECT * FROM t WHERE email = 'a@b.c' AND id IN (1, 2) AND x = X'CAFE' AND y = -3.5e2")
        == "SELECT * FROM t WHERE email = ? AND id IN (?, ?) AND x = ? AND y = ?"
    )


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM sbtest3 WHERE id = 42 AND c = '12-34' LIMIT 5, 10",
        "INSERT INTO t VALUES (1, 0x1F, 3e2, -7), (8, 0x2A, 4e5, +9)",
        "SELECT 1.5, x'0A', b'1010' FROM t1",
        "use db2",
    ],
)
def test_fingerprint_is_invariant_under_digit_substitution(query: str) -> None:
    # The aggregate's fingerprint cache relies on this.
    assert fingerprint(query) == fingerprint(query.translate(str.maketrans("0123456789", "7302581946")))


def test_a_qc_hit_value_that_is_not_utf8_is_read_not_a_crash() -> None:
    import io

    from shared.perf.parsers.slowlog.parser import parse

    log = (
        b"# Time: 261122  3:07:23\n"
        b"# User@Host: app[app] @ localhost []\n"
        b"# Thread_id: 7  Schema: shop  QC_hit: \xff\xfe\n"
        b"# Query_time: 0.5  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 10\n"
        b"SELECT 1;\n"
    )
    [entry] = list(parse(io.BytesIO(log)))
    assert entry.qc_hit == "\ufffd\ufffd"
    assert entry.schema == "shop"
    assert entry.query_time == 0.5
