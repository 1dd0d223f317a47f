"""Advice for one slow-log class: is its time reading rows, sorting, waiting, or sheer repetition?

Decided from the numbers the slow log gives (count, avg/max time, Lock_time, rows examined vs sent), the
optional fields counted in `signals` (MariaDB's Full_scan/Filesort, MySQL's log_slow_extra Read_*/Sort_*,
Percona's InnoDB waits), the statement's shape (sql_shape.py) and which server wrote the log, in order:
`ddl`, `sleep`, `lock_wait` (Lock_time or InnoDB_rec_lock_wait at least half the time), `waiting_not_reading`
(at least 20 ms per execution and at least 1 ms per row examined: a row costs microseconds to read, so the
time went to row locks, commit/flush or I/O), `order_by_rand`, `filesort_limit` (ORDER BY ... LIMIT
reading many rows to keep a few), `full_table_aggregate` (aggregating a whole table without WHERE),
`full_scan` (rows examined >> sent, or the server said so), `many_fast` (>= 100 runs under 20 ms) and
`unclear` (EXPLAIN ANALYZE, nothing in the numbers points at one cause).

What Lock_time counts depends on the server: InnoDB row-lock waits are in it from MySQL 8.0.28 on, not
before and not in MariaDB (there only table and metadata locks); `lock_time_note` says which applies.
"""

from __future__ import annotations

import re
from typing import Any

from shared.perf.analysis.advice import Advice, AdviceContext, ms, pct
from shared.perf.analysis.sql_shape import Shape, index_columns, shape

SCAN_ROWS = 1000
SCAN_RATIO = 100
WAIT_MS = 20.0
WAIT_MS_PER_ROW = 1.0
LOCK_SHARE = 0.5
MANY_RUNS = 100
FAST_MS = 20.0
_ROW_LOCK_VERSION = (8, 0, 28)


def _version(text: str | None) -> tuple[int, ...] | None:
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", text or "")
    return tuple(int(x) for x in m.groups()) if m else None


def lock_time_note(servers: list[dict[str, Any]]) -> tuple[str, bool | None]:
    """(what Lock_time counts on these servers, whether it includes InnoDB row-lock waits: None if unknown)."""
    flavors = {s.get("flavor") for s in servers}
    versions = [_version(s.get("version")) for s in servers if s.get("flavor") == "mysql"]
    if servers and flavors == {"mariadb"}:
        return (
            (
                "this log is from MariaDB, whose Lock_time counts table-level locks (LOCK TABLES) but not InnoDB "
                "row-lock waits"
            ),
            False,
        )
    known = [v for v in versions if v is not None]
    if servers and flavors == {"mysql"} and known and len(known) == len(versions):
        shown = ".".join(map(str, max(known)))
        if min(known) >= _ROW_LOCK_VERSION:
            return f"on MySQL {shown} Lock_time includes InnoDB row-lock waits (it does from 8.0.28 on)", True
        if max(known) < _ROW_LOCK_VERSION:
            return (
                (
                    f"on MySQL {shown} Lock_time counts table and metadata locks but not InnoDB row-lock waits (those "
                    "only from 8.0.28 on)"
                ),
                False,
            )
    return (
        "Lock_time includes InnoDB row-lock waits only from MySQL 8.0.28 on, not on older MySQL and not in MariaDB",
        None,
    )


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _timeout_note(q: dict[str, Any], signals: dict[str, int]) -> str:
    """A word on executions that probably ended in a timeout (a maximum on a whole second, or the error code)."""
    notes = []
    if signals.get("errno_1205"):
        notes.append(f"{signals['errno_1205']} execution(s) failed with ER_LOCK_WAIT_TIMEOUT (1205)")
    if signals.get("errno_3024") or signals.get("errno_1969"):
        notes.append("some executions hit the statement time limit (MAX_EXECUTION_TIME / max_statement_time)")
    top = float(q["max_ms"])
    if not notes and top >= 1000 and abs(top - round(top / 1000) * 1000) <= 5:
        notes.append(
            f"Its longest run, {ms(top)}, sits on a whole second: probably a timeout (innodb_lock_wait_timeout "
            "for row locks, or a statement time limit), so those executions likely failed"
        )
    return (" " + "; ".join(notes) + ".") if notes else ""


def _facts(q: dict[str, Any]) -> dict[str, Any]:
    total = float(q["total_time_ms"])
    examined = float(q["rows_examined_avg"])
    facts: dict[str, Any] = {
        "count": int(q["count"]),
        "avg_ms": float(q["avg_ms"]),
        "max_ms": float(q["max_ms"]),
        "total_time_ms": total,
        "lock_time_ms": float(q["lock_time_ms"]),
        "lock_share": round(float(q["lock_time_ms"]) / total, 4) if total > 0 else 0.0,
        "rows_examined_avg": examined,
        "rows_sent_avg": float(q["rows_sent_avg"]),
        "ms_per_row_examined": round(float(q["avg_ms"]) / max(examined, 1.0), 4),
    }
    signals = q.get("signals") or {}
    if signals:
        facts["signals"] = signals
    return facts


def _waiting(q: dict[str, Any], s: Shape, facts: dict[str, Any], ctx: AdviceContext) -> Advice:
    note, row_locks_in_lock_time = lock_time_note(ctx.servers)
    facts["lock_time_includes_row_locks"] = row_locks_in_lock_time
    head = (
        f"The time is not spent reading rows: each execution examined {facts['rows_examined_avg']:,.1f} rows on "
        f"average yet took {ms(facts['avg_ms'])} (up to {ms(facts['max_ms'])}), with Lock_time "
        f"{ms(facts['lock_time_ms'])} in all; {note}"
        f"{'' if row_locks_in_lock_time else ', so a small Lock_time does not rule them out'}. It waited."
    )
    if s.verb == "commit":
        causes = (
            " A COMMIT waits for the redo log and binary log to be flushed to disk: check the disk's fsync "
            "latency and innodb_flush_log_at_trx_commit / sync_binlog (1 is durable and costs an fsync per "
            "commit), group small transactions, and look for a replica or semi-sync acknowledgement in the path."
        )
    elif s.is_write:
        likely = "unlikely" if row_locks_in_lock_time else "the usual cause"
        causes = (
            f" For {_article(s.verb)} {s.verb.upper()} of a few rows, row locks held by another transaction are "
            f"{likely}; then "
            "commit/flush (innodb_flush_log_at_trx_commit, sync_binlog, disk fsync latency) and I/O. Catch the "
            "blocker while it happens (sys.innodb_lock_waits or performance_schema.data_lock_waits on MySQL 8, "
            "information_schema.INNODB_LOCK_WAITS and INNODB_TRX on MariaDB), keep the transactions that touch "
            "these rows short, commit sooner, and update hot rows in a consistent order."
        )
    else:
        causes = (
            " A plain SELECT takes no row locks (consistent read), so it waited for I/O (pages not in the buffer "
            "pool), a metadata lock behind DDL or LOCK TABLES, or a busy server: compare its slow runs with "
            "disk reads and concurrent DDL at those times, and check the buffer pool hit rate."
        )
    return Advice("waiting_not_reading", head + causes + _timeout_note(q, facts.get("signals") or {}), facts)


def _lock_wait(q: dict[str, Any], facts: dict[str, Any], ctx: AdviceContext) -> Advice:
    note, row_locks_counted = lock_time_note(ctx.servers)
    signals = facts.get("signals") or {}
    innodb = signals.get("innodb_rec_lock_wait_us", 0) / 1000
    measured = (
        f"Lock_time is {ms(facts['lock_time_ms'])} of its {ms(facts['total_time_ms'])} ({pct(facts['lock_share'])})"
        if facts["lock_share"] >= LOCK_SHARE
        else f"InnoDB_rec_lock_wait is {ms(innodb)} of its {ms(facts['total_time_ms'])}"
    )
    table_locks = (
        "table-level locks: a LOCK TABLES held by another session, or a metadata lock queued behind DDL or a "
        "long transaction on the table (SHOW PROCESSLIST shows 'Waiting for table level lock' or 'Waiting for "
        "table metadata lock'; performance_schema.metadata_locks names the holder). Avoid LOCK TABLES, keep "
        "transactions on this table short, and run DDL online and off-peak"
    )
    row_locks = (
        "row locks held by another transaction (sys.innodb_lock_waits / performance_schema.data_lock_waits, "
        "or SHOW ENGINE INNODB STATUS, while it happens). Shorten that transaction: commit sooner, take no user "
        "input or remote calls inside it, and touch hot rows last and in one order"
    )
    if facts["lock_share"] < LOCK_SHARE:  # Percona's InnoDB_rec_lock_wait: row locks, measured
        causes = row_locks
    elif row_locks_counted is False:
        causes = table_locks
    elif row_locks_counted:
        causes = f"{row_locks}; or {table_locks}"
    else:
        causes = f"{table_locks}; on MySQL 8.0.28 or later also {row_locks}"
    return Advice(
        "lock_wait",
        f"{measured}: the statement waits for locks, not for work; {note}. The wait is on {causes}."
        + _timeout_note(q, signals),
        facts,
    )


def _index_text(cols: list[str]) -> str:
    return f"an index on ({', '.join(cols)})" if cols else "an index on the columns it filters on"


def _filesort_limit(s: Shape, facts: dict[str, Any]) -> Advice:
    cols = index_columns(s, for_order=True)
    facts["index_columns"] = cols
    signals = facts.get("signals") or {}
    seen = []
    if signals.get("filesort"):
        seen.append(f"the server logged Filesort: Yes for {signals['filesort']} execution(s)")
    if signals.get("sort_rows") or signals.get("sort_scan_count") or signals.get("sort_range_count"):
        sorts = signals.get("sort_scan_count", 0) + signals.get("sort_range_count", 0)
        seen.append(f"log_slow_extra counts {sorts:,} sort(s) over {facts['count']:,} execution(s)")
    evidence = f" ({'; '.join(seen)})" if seen else ""
    text = (
        f"It reads {facts['rows_examined_avg']:,.0f} rows per execution to return {facts['rows_sent_avg']:,.0f}: "
        f"ORDER BY ... LIMIT sorts every matching row (a filesort) before keeping the first few{evidence}. "
        f"With {_index_text(cols)}, MySQL reads rows already in ORDER BY order and stops after LIMIT rows. "
        "Check with EXPLAIN that 'Using filesort' disappears and rows drops to about the LIMIT."
    )
    if s.ranges and s.order_by:
        text += (
            f" The range condition on {s.ranges[0]} means one index serves either the range or the order, not "
            "both: try both orders of columns with EXPLAIN ANALYZE."
        )
    return Advice("filesort_limit", text, facts)


def _full_scan(q: dict[str, Any], s: Shape, facts: dict[str, Any]) -> Advice:
    cols = index_columns(s, for_order=False)
    facts["index_columns"] = cols
    signals = facts.get("signals") or {}
    seen = []
    if signals.get("full_scan"):
        seen.append(f"Full_scan: Yes in {signals['full_scan']} of {signals.get('plan_logged', 0)} logged plans")
    if signals.get("read_rnd_next"):
        seen.append(
            f"Read_rnd_next {signals['read_rnd_next'] / max(facts['count'], 1):,.0f} per execution (table scan)"
        )
    evidence = f" ({'; '.join(seen)})" if seen else ""
    text = (
        f"Each execution examines {facts['rows_examined_avg']:,.0f} rows on average to return "
        f"{facts['rows_sent_avg']:,.0f}{evidence}: it reads far more than it needs, a full scan or an index that "
        "does not match. Run EXPLAIN on the worst sample"
    )
    if not s.join:
        text += f" and add {_index_text(cols)}"
        text += " (equality columns first, then one range column)." if len(cols) > 1 else "."
    else:
        text += "."
    if s.functions_on_columns:
        text += (
            f" A function on a column ({', '.join(s.functions_on_columns)}) keeps MySQL from using an index on "
            "it: compare the bare column with a range instead."
        )
    if s.is_write:
        text += f" As {_article(s.verb)} {s.verb.upper()}, it also locks the rows it scans in InnoDB, blocking writers."
    if s.join:
        text += _join_candidates(s, facts)
    return Advice("full_scan", text, facts)


def _join_candidates(s: Shape, facts: dict[str, Any]) -> str:
    """Per table, the index candidates of a join: its WHERE columns, and the join columns that are not `id`."""
    filters = [f"{t}({', '.join(cols)})" for t, cols in s.filters_by_table.items()]
    joins = _unique_list(f"{t}({c})" for t, c in s.join_columns if c != "id")
    facts["join_index_candidates"] = filters + [j for j in joins if j not in filters]
    if not facts["join_index_candidates"]:
        return " It joins: index the join columns of the table EXPLAIN shows with type ALL."
    parts = []
    if filters:
        parts.append(f"{', '.join(filters)} for the WHERE")
    if joins:
        parts.append(f"{', '.join(joins)} for the joins (an `id` is usually the primary key already)")
    return (
        " It joins, so the scan is on whichever table EXPLAIN shows with type ALL; the candidates, per table, are "
        + " and ".join(parts)
        + ": add the ones EXPLAIN shows missing."
    )


def _unique_list(items: Any) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def query_advice(q: dict[str, Any], ctx: AdviceContext) -> Advice:
    """The advice for a slow-log class graded on query_total_time_ms."""
    fp = str(q["fingerprint"])
    s = shape(fp)
    facts = _facts(q)
    signals = facts.get("signals") or {}
    examined, sent = facts["rows_examined_avg"], max(facts["rows_sent_avg"], 1.0)
    if s.is_ddl:
        return Advice(
            "ddl",
            "A schema change (DDL), not application traffic: run it off-peak or as an online schema change "
            "(ALGORITHM=INPLACE/INSTANT, pt-online-schema-change, gh-ost); while it runs it can hold a metadata "
            "lock that queues every query on the table.",
            facts,
        )
    if s.verb == "call":
        return Advice(
            "procedure",
            f"CALL runs a stored procedure ({ms(facts['avg_ms'])} per call, {examined:,.0f} rows examined for "
            f"{facts['rows_sent_avg']:,.0f} sent, summed over its statements). The slow log shows the CALL, not "
            "the statements inside (MariaDB's log_slow_disabled_statements=sp, MySQL logs the CALL only): run "
            "EXPLAIN on each statement of the procedure, or log them (performance_schema "
            "events_statements_history with nesting) to find the one that reads the rows.",
            facts,
        )
    if re.search(r"\bsleep\s*\(", fp):
        return Advice(
            "sleep",
            f"The statement calls SLEEP(): {ms(facts['total_time_ms'])} of deliberate waiting, not database work. "
            "Find who sends it (a health check, a test, a throttling hack) and stop it or take it out of the "
            "request path.",
            facts,
        )
    innodb_wait = signals.get("innodb_rec_lock_wait_us", 0) / 1000
    if facts["lock_share"] >= LOCK_SHARE or (
        facts["total_time_ms"] > 0 and innodb_wait >= LOCK_SHARE * facts["total_time_ms"]
    ):
        return _lock_wait(q, facts, ctx)
    if facts["avg_ms"] >= WAIT_MS and facts["ms_per_row_examined"] >= WAIT_MS_PER_ROW:
        return _waiting(q, s, facts, ctx)
    reads_many = examined >= SCAN_ROWS and examined / sent >= SCAN_RATIO
    if s.order_by_rand and examined >= SCAN_ROWS:
        return Advice(
            "order_by_rand",
            f"ORDER BY RAND() reads and sorts every matching row ({examined:,.0f} per execution) to return "
            f"{facts['rows_sent_avg']:,.0f}; no index helps it. Pick random ids in the application (a random "
            "offset into a known id range, or a precomputed random column with an index) instead.",
            facts,
        )
    # The server's own flags count only where a scan or sort of a real size happened (not a 10-row table).
    sizeable = examined >= SCAN_ROWS / 10
    if s.order_by and s.limit and (reads_many or (signals.get("filesort") and sizeable)):
        return _filesort_limit(s, facts)
    if not s.where and (s.group_by or s.aggregate) and examined >= SCAN_ROWS:
        return Advice(
            "full_table_aggregate",
            f"It aggregates the whole table ({examined:,.0f} rows per execution) without a WHERE: an index only "
            "helps as a covering index (the GROUP BY columns, then the aggregated ones), and it still reads every "
            "entry. Precompute the result (a summary table kept up to date on write, or a scheduled job), cache "
            "it, or run it on a replica.",
            facts,
        )
    if reads_many or (signals.get("full_scan") and sizeable):
        return _full_scan(q, s, facts)
    if facts["count"] >= MANY_RUNS and facts["avg_ms"] < FAST_MS:
        return Advice(
            "many_fast",
            f"It is fast per call ({ms(facts['avg_ms'])}) but ran {facts['count']:,} times. The slow log cannot "
            "tell one request looping over it (N+1) from many requests each running it once: an SPX profile of "
            "the endpoints that issue it shows the calls per request. Batch it (IN list / JOIN) or cache the "
            "result.",
            facts,
        )
    return Advice(
        "unclear",
        f"The slow log's numbers do not single out a cause ({ms(facts['avg_ms'])} per execution, "
        f"{examined:,.0f} rows examined for {facts['rows_sent_avg']:,.0f} sent, Lock_time "
        f"{pct(facts['lock_share'])} of its time): run EXPLAIN ANALYZE on the worst sample and compare the "
        "slow runs with the server's load at the time.",
        facts,
    )
