"""The fast parse loop yields the entries the line-by-line reference parser yields, field for field."""

from __future__ import annotations

import dataclasses
import gzip
import io
import random
from pathlib import Path
from typing import Any

import pytest

from shared.perf.parsers.slowlog import parser as parser_module
from tests.unit.perf import slowlog_parser_reference as reference

ROOT = Path(__file__).resolve().parents[3]
# The repo's copies of ../shared/fixtures/slowlog (CI clones the repo alone): the MySQL 8.0 sample, the
# MariaDB log and the medium log (23,929 entries).
LOGS = sorted((ROOT / "tests" / "fixtures" / "slowlog").glob("*.log"))
MEDIUM_GZ = ROOT / "tests" / "fixtures" / "slowlog" / "medium.log.gz"

# Lines of every kind the parser tells apart, and near misses of each.
VOCABULARY = [
    b"# Time: 261122  3:07:58\n",
    b"# Time: 261122 13:07:59\r\n",
    b"# Time: 2026-11-22T03:06:46.000123Z\n",
    b"# Time: 2026-11-22T03:06:46+02:00\n",
    b"# Time: yesterday\n",
    b"# User@Host: app[app] @ localhost []\n",
    b"# User@Host: report[report] @  [127.0.0.1]  Id:    42\n",
    b"# User@Host: broken\n",
    b"# Thread_id: 8  Schema: shop  QC_hit: No\n",
    b"# Thread_id: 9  Schema:   QC_hit: Yes\n",
    b"# Query_time: 0.100000  Lock_time: 0.000010  Rows_sent: 1  Rows_examined: 10\n",
    b"# Query_time: 1.5  Lock_time: 0.2 Rows_sent: 3  Rows_examined: 7 Errno: 0 Killed: 0\n",
    b"# Query_time: soon\n",
    b"# Rows_affected: 0  Bytes_sent: 11\n",
    b"# Full_scan: Yes  Full_join: No\n",
    b"# explain: id\tselect_type\n",
    b"# explained: not a plan line\n",
    b"SET timestamp=12; SELECT 1;\n",
    b"# Warning: something\n",
    b"#\n",
    b"#\r\n",
    b"#comment without a space\n",
    b"# administrator command: Quit;\n",
    b"# administrator command: Ping  \n",
    b"# administrative note\n",
    b"# \n",
    b"use `shop`;\n",
    b"USE crm;\n",
    b"use other\n",
    b"SET timestamp=1795316878;\n",
    b"SET timestamp=soon;\n",
    b"SELECT * FROM orders WHERE id = 1;\n",
    b"SELECT a\n",
    b"FROM t WHERE x = 'y';\r\n",
    b"\n",
    b"Time\t\t    Id Command\tArgument\n",
    b"Timeless words\n",
    b"Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n",
    b"/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (Debian). started with:\n",
    b"he said, Version: 2 of the plan\n",
    b"INSERT INTO t VALUES ('" + b"x" * 300 + b"');\n",
]


def entries(module: Any, data: bytes, max_statement_bytes: int) -> list[tuple[Any, ...]]:
    out = []
    for e in module.parse(io.BytesIO(data), max_statement_bytes=max_statement_bytes):
        fields = {f.name: getattr(e, f.name) for f in dataclasses.fields(e) if f.name != "_extra"}
        out.append((tuple(sorted(fields.items(), key=lambda kv: kv[0])), sorted(e.extra.items())))
    return out


def random_log(seed: int, lines: int) -> bytes:
    rng = random.Random(seed)
    out = [rng.choice(VOCABULARY) for _ in range(lines)]
    if rng.random() < 0.5:
        out.append(rng.choice(VOCABULARY).rstrip(b"\n"))  # no newline at the end
    return b"".join(out)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: f"{p.parent.parent.parent.name}-{p.name}")
def test_fixture_logs_parse_as_the_reference_parses(path: Path) -> None:
    data = path.read_bytes()
    assert entries(parser_module, data, 1 << 20) == entries(reference, data, 1 << 20)


def test_the_medium_log_parses_as_the_reference_parses() -> None:
    data = gzip.decompress(MEDIUM_GZ.read_bytes())
    got = entries(parser_module, data, 1 << 20)
    assert len(got) > 10_000
    assert got == entries(reference, data, 1 << 20)


@pytest.mark.parametrize("seed", range(40))
def test_random_logs_parse_as_the_reference_parses(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    if seed % 2:  # lines read in pieces, statements cut
        monkeypatch.setattr(parser_module, "MAX_LINE_BYTES", 37)
        monkeypatch.setattr(reference, "MAX_LINE_BYTES", 37)
    data = random_log(seed, 400)
    cap = 100 if seed % 3 == 0 else 1 << 20
    got = entries(parser_module, data, cap)
    assert got
    assert got == entries(reference, data, cap)


def test_the_line_memos_stay_bounded() -> None:
    lines = []
    for i in range(parser_module._USER_HOST_MEMO + 500):
        pad = b"x" * (300 if i % 2 else 10)
        lines.append(
            b"# User@Host: u%d%s[u] @ localhost []\n# Thread_id: %d%s  Schema: s  QC_hit: No\nSELECT 1;\n"
            % (i, pad, i, b"" if i % 2 else b"0" * 250)
        )
    parsed = list(parser_module.parse(io.BytesIO(b"".join(lines))))
    assert len(parsed) == parser_module._USER_HOST_MEMO + 500
    for memo in (parser_module._USER_HOST_SEEN, parser_module._THREAD_SEEN):
        assert 0 < len(memo) <= parser_module._USER_HOST_MEMO
        assert max(map(len, memo)) <= parser_module._MEMO_LINE_BYTES
