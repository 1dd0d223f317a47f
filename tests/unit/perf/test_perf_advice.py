"""Advice follows from its evidence: self vs callee shares, N+1, waiting vs CPU, waiting vs reading rows.

Hand-made subjects pin each rule; the real fixtures (tests/fixtures/spx, tests/fixtures/slowlog) pin the
cases the issue names: FakeDb::select's 1,240 of 1,241.8 ms self time in 150 calls, and the MariaDB
UPDATE with 0.8 rows examined, 266 ms average and a 1,000 ms maximum.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from shared.perf.__main__ import _local_artifacts
from shared.perf.analysis.advice import AdviceContext
from shared.perf.analysis.query_advice import lock_time_note, query_advice
from shared.perf.analysis.ranking import analyze
from shared.perf.analysis.span_advice import span_advice
from shared.perf.analysis.sql_shape import index_columns, shape
from shared.perf.parsers.snapshot import build

FIXTURES = Path(__file__).parents[2] / "fixtures"
SID = "b" * 64


def span(
    fn: str,
    self_ms: float,
    total_ms: float,
    calls: int = 1,
    callees: Sequence[tuple[str, float]] = (),
    callers: Sequence[tuple[str, int]] = (),
    cpu: float | None = None,
    profile: str = "p1",
) -> dict[str, Any]:
    return {
        "span_id": f"{profile}:{fn}",
        "profile": profile,
        "function": fn,
        "calls": calls,
        "self_ms": self_ms,
        "total_ms": total_ms,
        "max_recursion": 0,
        "is_root": False,
        "share_of_wall": 0.5,
        "top_callees": [{"function": c, "total_ms": t} for c, t in callees],
        "top_callers": [{"function": c, "calls": n} for c, n in callers],
        "cpu_self_ms": cpu,
        "cpu_total_ms": None,
        "metrics": {},
    }


def query(
    fp: str, count: int, avg: float, top: float, examined: float, sent: float = 0, lock: float = 0, **signals: int
) -> dict[str, Any]:
    return {
        "query_id": fp[:16],
        "fingerprint": fp,
        "count": count,
        "total_time_ms": avg * count,
        "avg_ms": avg,
        "p95_ms": top,
        "max_ms": top,
        "lock_time_ms": lock,
        "rows_examined_avg": examined,
        "rows_sent_avg": sent,
        "share_of_time": 0.1,
        "databases": {},
        "users": {},
        "worst_sample": {"query": fp, "query_time_ms": top},
        "signals": signals,
    }


def context(spans: Sequence[dict[str, Any]] = (), servers: Sequence[dict[str, Any]] = ()) -> AdviceContext:
    profile = {"key": "p1", "endpoint": "GET /tag/blue", "command": None}
    return AdviceContext(
        {"profiles": [profile], "spans": list(spans), "endpoints": [], "slow_log_servers": list(servers)}
    )


def test_a_function_whose_time_is_its_own_is_never_sent_to_its_callees() -> None:
    s = span("App\\Repository\\FakeDb::select", 1240.0, 1241.8, 150, [("App\\Repository\\{closure}", 1.6)])
    for metric in ("span_self_ms", "span_total_ms"):
        advice = span_advice(s, metric, context([s]))
        assert "is in the functions it calls" not in advice.text
        assert advice.facts["self_share"] > 0.99


def test_a_wrapper_is_sent_to_its_largest_callee_with_shares() -> None:
    s = span("App\\Controller\\Shop::list", 100.0, 1000.0, 1, [("App\\View\\Grid::render", 850.0)])
    advice = span_advice(s, "span_total_ms", context([s]))
    assert advice.pattern == "in_callees"
    assert "90 %" in advice.text
    assert "App\\View\\Grid::render with 850 ms (85 %)" in advice.text


def test_many_calls_of_a_query_function_are_n_plus_one_not_slow_php() -> None:
    select = span("App\\Db\\Connection::select", 1240.0, 1241.8, 150, callers=[("App\\Repo::forCustomer", 150)])
    owner = span("App\\Repo::forCustomer", 2.0, 1250.0, 1, [("App\\Db\\Connection::select", 1241.8)])
    advice = span_advice(select, "span_self_ms", context([select, owner]))
    assert advice.pattern == "n_plus_one"
    assert "N+1" in advice.text
    assert "optimise its own code" not in advice.text
    assert advice.facts["loop_owner"] == "App\\Repo::forCustomer"


def test_many_calls_that_mostly_wait_are_n_plus_one_whatever_the_name() -> None:
    s = span("App\\Catalog\\Item::enrich", 600.0, 600.0, 60, cpu=12.0)
    assert span_advice(s, "span_self_ms", context([s])).pattern == "n_plus_one"


def test_cpu_time_tells_waiting_from_computing() -> None:
    waits = span("App\\Geo::lookup", 900.0, 900.0, 3, cpu=9.0)
    computes = span("App\\Pdf::layout", 700.0, 700.0, 1, cpu=680.0)
    assert span_advice(waits, "span_self_ms", context([waits])).pattern == "off_cpu_wait"
    assert span_advice(computes, "span_self_ms", context([computes])).pattern == "cpu_bound"


def test_without_cpu_time_own_code_says_waiting_is_not_ruled_out() -> None:
    s = span("App\\Image\\Resizer::resample", 480.0, 480.0, 4)
    advice = span_advice(s, "span_self_ms", context([s]))
    assert advice.pattern == "own_code"
    assert "SPX_METRICS=wt,ct" in advice.text


def test_php_waiting_functions_are_external_time_by_kind() -> None:
    kinds = {
        "curl_exec": ("remote", "timeouts"),
        "usleep": ("sleep", "sleeps on purpose"),
        "PDOStatement::execute": ("database", "slow log"),
        "fread": ("file", "Filesystem"),
        "session_start": ("session", "session_write_close"),
    }
    for fn, (kind, phrase) in kinds.items():
        s = span(fn, 500.0, 500.0, 2)
        advice = span_advice(s, "span_self_ms", context([s]))
        assert (advice.pattern, advice.facts["kind"]) == ("external_wait", kind)
        assert phrase in advice.text
        assert "optimise" not in advice.text.lower()


def test_a_wrapper_around_curl_is_graded_and_named_as_remote_waiting() -> None:
    spans = [
        span("App\\Pay::charge", 1.0, 1251.0, 1, [("curl_exec", 1250.0)]),
        span("curl_exec", 1250.0, 1250.0, 1),
    ]
    snap = {
        "endpoints": [],
        "queries": [],
        "spans": spans,
        "profiles": [{"key": "p1", "endpoint": "POST /pay", "command": None, "wall_ms": 1300.0}],
    }
    found = {(f["metric"], f["subject"]): f for f in analyze(snap, SID)["findings"]}
    charge = found[("span_total_ms", "App\\Pay::charge (POST /pay)")]
    assert charge["diagnosis"]["pattern"] == "in_callees"
    assert "waits on a remote service" in charge["suggestion"]


def test_few_rows_and_long_waits_are_waiting_not_reading_with_the_servers_lock_time_rule() -> None:
    q = query("update orders set status = ? where id = ?", 5, 266.0, 1000.4, 0.8)
    advice = query_advice(q, context(servers=[{"flavor": "mariadb", "version": "10.11.19-MariaDB"}]))
    assert advice.pattern == "waiting_not_reading"
    for phrase in (
        "row locks",
        "commit",
        "MariaDB",
        "not InnoDB row-lock waits",
        "innodb_lock_wait_timeout",
    ):
        assert phrase in advice.text
    assert "reduce the rows" not in advice.text
    assert "index" not in advice.text.lower()


def test_lock_time_rule_per_server() -> None:
    assert lock_time_note([{"flavor": "mysql", "version": "8.0.36"}])[1] is True
    assert lock_time_note([{"flavor": "mysql", "version": "8.0.27"}])[1] is False
    assert lock_time_note([{"flavor": "mysql", "version": "5.7.44-log"}])[1] is False
    assert lock_time_note([{"flavor": "mariadb", "version": "10.11.19"}])[1] is False
    assert lock_time_note([])[1] is None


def test_slow_commits_point_at_the_flush() -> None:
    advice = query_advice(query("commit", 8, 270.0, 313.0, 0), context())
    assert advice.pattern == "waiting_not_reading"
    assert "sync_binlog" in advice.text


def test_lock_time_share_is_lock_wait() -> None:
    advice = query_advice(query("update stock set n = n - ? where id = ?", 4, 900.0, 1400.0, 1, lock=3400.0), context())
    assert advice.pattern == "lock_wait"


def test_order_by_limit_gets_an_index_on_the_filter_then_the_order_column() -> None:
    fp = "select id, email, created_at from customers where last_name = ? order by created_at desc limit ?"
    advice = query_advice(query(fp, 4, 960.0, 1235.0, 100000, 10), context())
    assert advice.pattern == "filesort_limit"
    assert "(last_name, created_at)" in advice.text


def test_order_by_rand_gets_no_index_advice() -> None:
    fp = "select id, title from products where title like ? order by rand() limit ?"
    advice = query_advice(query(fp, 3, 388.0, 400.0, 48000, 5), context())
    assert advice.pattern == "order_by_rand"
    assert "no index helps" in advice.text


def test_full_scans_name_the_columns_and_the_servers_evidence() -> None:
    fp = "select id from invoices where status = ? and due_date < ?"
    advice = query_advice(query(fp, 8, 210.0, 240.0, 300000, 12, full_scan=8, plan_logged=8), context())
    assert advice.pattern == "full_scan"
    assert "(status, due_date)" in advice.text
    assert "Full_scan: Yes in 8 of 8" in advice.text


def test_whole_table_aggregates_and_sleeps_are_told_apart() -> None:
    agg = query_advice(
        query("select customer_id, sum(amount) from orders group by customer_id", 1, 5000, 5000, 2220001), context()
    )
    nap = query_advice(query("select sleep(?)", 3, 300.0, 300.0, 0), context())
    assert agg.pattern == "full_table_aggregate"
    assert nap.pattern == "sleep"


def test_sql_shapes() -> None:
    s = shape(
        "select * from t o join u on u.id = o.uid"
        " where o.a = ? and o.b in (?+) and o.c >= ? order by o.d desc, e limit ?"
    )
    assert (s.equality, s.ranges, s.order_by, s.limit, s.join) == (["a", "b"], ["c"], ["d", "e"], True, True)
    assert index_columns(s, for_order=True) == ["a", "b", "d", "e"]
    assert index_columns(s, for_order=False) == ["a", "b", "c"]
    assert shape("update t set x = ? where date(created) = ?").functions_on_columns == ["date(created)"]


@cache
def _fixture_findings(*names: str) -> tuple[dict[str, Any], ...]:
    built, _ = build(_local_artifacts([FIXTURES / n for n in names]))
    return tuple(analyze(built.content, built.snapshot_id, top_n=10)["findings"])


def _spx(stem: str) -> tuple[str, str]:
    return f"spx/{stem}.json", f"spx/{stem}.txt.gz"


def test_real_framework_profile_fakedb_select_is_n_plus_one_in_both_metrics() -> None:
    found = _fixture_findings(*_spx("spx-full-20261122_030646-vm-31168-1804289383"))
    select = [f for f in found if f["subject"].startswith("App\\Repository\\FakeDb::select")]
    assert {f["metric"] for f in select} == {"span_self_ms", "span_total_ms"}
    for f in select:
        assert f["diagnosis"]["pattern"] == "n_plus_one"
        assert "150" in f["suggestion"]
        assert "time is in its callee" not in f["suggestion"]
        assert "optimise its own code" not in f["suggestion"]


def test_real_metrics_profile_tells_the_sleepy_call_from_the_hashing() -> None:
    found = _fixture_findings(*_spx("spx-full-20261122_030648-vm-31174-1804289383"))
    patterns = {
        f["subject"].split(" (", 1)[0]: f["diagnosis"]["pattern"] for f in found if f["metric"] == "span_self_ms"
    }
    assert patterns["sleepy_remote_call"] == "off_cpu_wait"
    assert patterns["cpu_hashing"] == "cpu_bound"


def test_real_mariadb_lock_wait_class_is_waiting_not_reading() -> None:
    found = _fixture_findings("slowlog/small.log")
    [update] = [f for f in found if f["subject"] == "update orders set status = ? where id = ?"]
    assert update["diagnosis"]["pattern"] == "waiting_not_reading"
    assert "reduce the rows" not in update["suggestion"]
    assert "row lock" in update["suggestion"]


def test_a_full_scan_flag_on_a_tiny_table_is_not_index_advice() -> None:
    advice = query_advice(query("select v from settings where k = ?", 9000, 0.2, 1.0, 12, 1, full_scan=9000), context())
    assert advice.pattern == "many_fast"


def test_a_stored_procedure_is_not_given_an_index_for_its_call() -> None:
    advice = query_advice(query("call top_products", 2, 458.0, 459.0, 800761, 4), context())
    assert advice.pattern == "procedure"
    assert "statements inside" in advice.text


def test_a_join_full_scan_lists_index_candidates_per_table() -> None:
    fp = (
        "select p.category, sum(oi.qty) from orders o join order_items oi on oi.order_id = o.id "
        "join products p on p.id = oi.product_id where o.customer_id = ? group by p.category"
    )
    advice = query_advice(query(fp, 1, 425.0, 425.0, 800082, 1), context())
    assert advice.pattern == "full_scan"
    assert advice.facts["join_index_candidates"] == [
        "orders(customer_id)",
        "order_items(order_id)",
        "order_items(product_id)",
    ]


def test_thousands_of_microsecond_reads_are_not_filesystem_waits() -> None:
    s = span("fgetcsv", 30.4, 30.4, 6012)
    advice = span_advice(s, "span_self_ms", context([s]))
    assert advice.pattern == "many_calls"
    assert "not a wait" in advice.text


def test_a_callers_advice_follows_the_largest_callees_to_where_the_time_is_its_own() -> None:
    spans = [
        span("App\\Shop::list", 145.0, 1419.0, 1, [("App\\Repo::findByTag", 1248.0)]),
        span("App\\Repo::findByTag", 1.4, 1248.0, 150, [("App\\Db::select", 1241.8)], [("App\\Shop::list", 150)]),
        span("App\\Db::select", 1240.0, 1241.8, 150, callers=[("App\\Repo::findByTag", 150)]),
    ]
    advice = span_advice(spans[0], "span_total_ms", context(spans))
    assert advice.pattern == "in_callees"
    assert "whose time is mostly in App\\Db::select: N+1, 150 calls per request" in advice.text
    assert advice.facts["time_ends_in"] == "App\\Db::select"


def test_slow_log_signals_are_counted_per_class_from_mariadb_and_mysql_fields() -> None:
    from shared.perf.parsers.slowlog.aggregate import digest
    from shared.perf.parsers.slowlog.parser import open_log, parse

    with open_log(FIXTURES / "slowlog" / "small.log") as stream:
        classes = {c["fingerprint"]: c["signals"] for c in digest(parse(stream))["ranked"]}
    scan = classes["select product_id, qty, unit_price from order_items where order_id = ?"]
    assert scan["full_scan"] == scan["plan_logged"] > 0
    assert classes["update orders set status = ? where id = ?"]["rows_affected_logged"] == 5
    with open_log(FIXTURES / "slowlog" / "mysql80-sample.log") as stream:
        mysql = {c["fingerprint"]: c["signals"] for c in digest(parse(stream))["ranked"]}
    aggregate = mysql["select customer_id, sum(amount) from orders group by customer_id having sum(amount) > ?"]
    assert aggregate["read_rnd_next"] == 2220001
    assert aggregate["errno_3024"] == 1
