"""Caps of the slow-log parser, the SPX aggregator and the flame-graph exports, checked by sizes and counts."""

from __future__ import annotations

import io

import pytest

from shared.perf.analysis import svg
from shared.perf.parsers.detect import detect
from shared.perf.parsers.slowlog import parser as parser_module
from shared.perf.parsers.slowlog.aggregate import MAX_FINGERPRINT_CHARS, class_key, redact_literals
from shared.perf.parsers.slowlog.parser import parse
from shared.perf.parsers.spx import export
from shared.perf.parsers.spx.trace import TraceFormatError, _Aggregator, aggregate_trace

HEAD = (
    b"# Time: 2026-11-22T03:06:46.000000Z\n"
    b"# User@Host: app[app] @ localhost []  Id: 8\n"
    b"# Query_time: 0.5  Lock_time: 0.0 Rows_sent: 1  Rows_examined: 1\n"
)


def test_a_long_statement_is_truncated_and_marked() -> None:
    statement = b"SELECT '" + b"x" * 5000 + b"' FROM t"
    log = HEAD + statement + b";\n" + HEAD + b"SELECT 2;\n"
    long, short = parse(io.BytesIO(log), max_statement_bytes=1024)
    assert long.truncated
    assert len(long.query) == 1024
    assert long.query_bytes == len(statement) + 2
    assert not short.truncated
    assert short.query == "SELECT 2"
    assert redact_literals(long.query) == "SELECT ?"  # a literal the cap cut open is still redacted


def test_a_line_read_in_pieces_parses_like_a_whole_line(monkeypatch: pytest.MonkeyPatch) -> None:
    log = HEAD + b"SELECT " + b"a, " * 400 + b"b FROM t;\n" + HEAD + b"# administrator command: Quit;  \n"
    whole = [(e.query, e.admin_command) for e in parse(io.BytesIO(log))]
    monkeypatch.setattr(parser_module, "MAX_LINE_BYTES", 64)
    assert [(e.query, e.admin_command) for e in parse(io.BytesIO(log))] == whole
    assert whole[1] == ("administrator command: Quit", "Quit")


def test_crafted_metadata_lines_parse_without_backtracking() -> None:
    log = HEAD.replace(b"app[app]", b"[" * 50_000) + b"# Rows_affected" + b"a" * 50_000 + b"\n" + b"SELECT 1;\n"
    (entry,) = parse(io.BytesIO(log))
    assert entry.query == "SELECT 1"
    assert set(entry.extra) == {"Host", "Id"}


def test_long_fingerprints_are_capped_and_stay_distinct() -> None:
    a, b = "select " + "x" * 10_000 + " a", "select " + "x" * 10_000 + " b"
    assert class_key(a) != class_key(b)
    assert max(len(class_key(a)), len(class_key(b))) <= MAX_FINGERPRINT_CHARS + 40
    assert class_key("select 1") == "select 1"


def test_function_arrays_follow_the_functions_called_not_the_largest_index() -> None:
    agg = _Aggregator(["wt", "zm"], None)
    agg.feed(b"[events]\n150000 1 0 0\n3 1 1 1\n3 0 2 2\n150000 0 5 5\n")
    # The old aggregator sized these arrays by the largest index (4,000,000 -> 2 GB in the trace).
    assert len(agg.calls) <= 4096
    assert sorted(agg.raw_of_dense) == [3, 150000]


def test_an_index_outside_the_functions_table_is_an_error() -> None:
    with pytest.raises(TraceFormatError, match=r"outside the \[functions\] table"):
        aggregate_trace([b"[events]\n", b"7 1 0 0\n", b"7 0 5 5\n", b"[functions]\n", b"main\n"], ["wt", "zm"])
    with pytest.raises(TraceFormatError, match="called_function_count"):
        aggregate_trace([b"[events]\n", b"4000000 1 0 0\n", b"4000000 0 5 5\n"], ["wt", "zm"], 1)


@pytest.mark.parametrize("count", ["many", 1e8, 2**31 - 1, True, -1])
def test_spx_metadata_with_a_bad_function_count_fails_detection(count: object) -> None:
    import json

    doc = json.dumps(
        {
            "key": "k",
            "enabled_metrics": ["wt"],
            "wall_time_ms": 1,
            "recorded_call_count": 1,
            "called_function_count": count,
        }
    ).encode()
    d = detect("k.json", len(doc), lambda: io.BytesIO(doc))
    assert not d.ok
    assert d.detected_type == "spx"
    assert "called_function_count" in d.errors[0]


def _chain(depth: int) -> list[bytes]:
    return (
        [b"[events]\n"]
        + [b"0 1 %d\n" % i for i in range(depth)]
        + [b"0 0 %d\n" % (depth + i) for i in range(depth)]
        + [b"[functions]\n", b"f\n"]
    )


def test_collapsed_stacks_of_a_deep_chain_stay_within_the_output_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "MAX_STACK_DEPTH", 100)
    monkeypatch.setattr(export, "MAX_COLLAPSED_BYTES", 5_000)
    profile = aggregate_trace(_chain(3000), ["wt"])
    text = export.collapsed(profile)
    lines = text.splitlines()
    assert len(text) <= 5_000 + 64
    assert max(line.count(";") for line in lines) <= 100
    assert any(export.DEEPER in line for line in lines)
    assert any(line.startswith(export.MORE) for line in lines)
    assert sum(int(line.rsplit(" ", 1)[1]) for line in lines) == 3000 * 2 - 1  # every ns of the root is still drawn
    doc = export.speedscope(profile, "deep")
    assert max(len(s) for s in doc["profiles"][0]["samples"]) <= 101


def test_the_flame_graph_of_a_2000_deep_stack_is_drawn_without_recursion() -> None:
    stacks = "".join(";".join(["f"] * (k + 1)) + " 10\n" for k in range(2000))
    picture = svg.flame_graph(stacks, "deep")
    assert picture.count("<g>") == svg.MAX_ROWS
    assert "not drawn" in picture
