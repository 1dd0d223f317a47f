"""The parallel digest (ranges cut at `# Time:` lines, parsed in a worker, merged) answers what one pass answers."""

from __future__ import annotations

import dataclasses
import gzip
import json
import multiprocessing
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.perf.parsers.slowlog import aggregate as aggregate_module
from shared.perf.parsers.slowlog import merge, parallel, ranges
from shared.perf.parsers.slowlog.aggregate import OVERFLOW_CLASS, QueryClass, digest
from shared.perf.parsers.slowlog.parser import SlowEntry, open_log, parse

ROOT = Path(__file__).resolve().parents[3]
# The repo's copies of ../shared/fixtures/slowlog (CI clones the repo alone): the MySQL 8.0 sample, the
# MariaDB log and the medium log (23,929 entries).
LOGS = sorted((ROOT / "tests" / "fixtures" / "slowlog").glob("*.log"))
MEDIUM_GZ = ROOT / "tests" / "fixtures" / "slowlog" / "medium.log.gz"


def sequential(*paths: Path) -> str:
    def entries() -> Iterator[SlowEntry]:
        for path in paths:
            with open_log(path) as stream:
                yield from parse(stream)

    return json.dumps(digest(entries()), sort_keys=False)


def parallel_digest(*paths: Path, max_range_bytes: int) -> str:
    report = parallel.digest_files(list(paths), split_bytes=1, max_range_bytes=max_range_bytes)
    return json.dumps(report, sort_keys=False)


def test_the_fixtures_exist() -> None:
    assert len(LOGS) >= 2
    assert MEDIUM_GZ.is_file()


@pytest.mark.parametrize("path", LOGS, ids=lambda p: f"{p.parent.parent.parent.name}-{p.name}")
@pytest.mark.parametrize("max_range_bytes", [1_000_000_000, 4096])
def test_fixture_logs_cut_in_ranges_digest_as_one_pass(path: Path, max_range_bytes: int) -> None:
    assert len(ranges.plan(str(path), split_bytes=1, max_range_bytes=max_range_bytes)) > 1
    assert parallel_digest(path, max_range_bytes=max_range_bytes) == sequential(path)


@pytest.mark.parametrize("max_range_bytes", [256 * 1024, 1_000_000_000])
def test_a_gzip_log_is_spooled_and_cut_like_its_plain_text(max_range_bytes: int) -> None:
    assert parallel_digest(MEDIUM_GZ, max_range_bytes=max_range_bytes) == sequential(MEDIUM_GZ)


def test_several_logs_merge_in_order_each_parsed_afresh(tmp_path: Path) -> None:
    packed = tmp_path / "small.log.gz"
    packed.write_bytes(gzip.compress(LOGS[1].read_bytes()))
    paths = [LOGS[0], packed, LOGS[1]]
    assert parallel_digest(*paths, max_range_bytes=8192) == sequential(*paths)


def test_a_gzip_larger_than_the_spool_cap_is_streamed(tmp_path: Path) -> None:
    report = parallel.digest_files([MEDIUM_GZ], split_bytes=1, max_spool_bytes=1024)
    assert json.dumps(report) == sequential(MEDIUM_GZ)


# Cut points at every `# Time:` line: the `use` in force, the time MariaDB leaves out, and statements
# whose lines start with `#` all cross a cut.
TRICKY = b"""/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (Debian). started with:
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
Time		    Id Command	Argument
# Time: 261122  3:07:58
# User@Host: app[app] @ localhost []
# Thread_id: 8  Schema:   QC_hit: No
# Query_time: 0.100000  Lock_time: 0.000010  Rows_sent: 1  Rows_examined: 10
use `shop`;
SET timestamp=1795316878;
SELECT * FROM orders WHERE id = 1;
# User@Host: app[app] @ localhost []
# Query_time: 0.300000  Lock_time: 0.000010  Rows_sent: 1  Rows_examined: 10
SET timestamp=1795316878;
SELECT * FROM orders WHERE id = 2;
# Time: 261122  3:07:59
# User@Host: app[app] @ localhost []
# Query_time: 0.300000  Lock_time: 0.000020  Rows_sent: 2  Rows_examined: 20
SET timestamp=1795316879;
SELECT a
# a comment line inside the statement
# Time: not a time line
FROM t WHERE id = 3;
# User@Host: report[report] @  [127.0.0.1]
# Thread_id: 9  Schema: crm  QC_hit: No
# Query_time: 0.200000  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0
SET timestamp=1795316879;
SELECT * FROM orders WHERE id = 4;
# Time: 261122  3:08:01
# User@Host: app[app] @ localhost []
# Query_time: 0.300000  Lock_time: 0.000020  Rows_sent: 2  Rows_examined: 20
SET timestamp=1795316881;
INSERT INTO t VALUES (1)
# Time: 261122  3:08:02
;
# User@Host: app[app] @ localhost []
# Query_time: 0.300000  Lock_time: 0.000020  Rows_sent: 2  Rows_examined: 20
use other;
SET timestamp=1795316882;
SELECT * FROM orders WHERE id = 5;
/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (Debian). started with:
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
Time		    Id Command	Argument
# Time: 261122  3:08:03
# User@Host: app[app] @ localhost []
# Query_time: 0.300000  Lock_time: 0.000020  Rows_sent: 2  Rows_examined: 20
SET timestamp=1795316883;
SELECT * FROM orders WHERE id = 6;
# Time: 261122  3:08:04
# Query_time: 0.050000  Lock_time: 0.000020  Rows_sent: 2  Rows_examined: 20
# User@Host: app[app] @ localhost []
SELECT * FROM orders WHERE id = 7;
"""


def test_every_time_line_as_a_cut_point_keeps_the_inherited_state(tmp_path: Path) -> None:
    log = tmp_path / "tricky.log"
    log.write_bytes(TRICKY)
    cut = ranges.plan(str(log), split_bytes=1, max_range_bytes=1)
    assert len(cut) == TRICKY.count(b"\n# Time: 26") + 1  # every strict `# Time:` line but the first
    got = parallel_digest(log, max_range_bytes=1)
    assert got == sequential(log)
    databases = {db for c in json.loads(got)["ranked"] for db in c["databases"]}
    assert {"shop", "crm", "other"} <= databases  # `use shop` crossed cuts
    assert merge.INHERITED_SCHEMA not in databases


def test_the_class_cap_falls_back_to_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aggregate_module, "MAX_CLASSES", 3)
    got = parallel_digest(LOGS[1], max_range_bytes=8192)
    assert got == sequential(LOGS[1])
    assert OVERFLOW_CLASS in {c["fingerprint"] for c in json.loads(got)["ranked"]}


def test_the_merge_knows_every_field_of_a_class() -> None:
    # A new QueryClass field makes digest_files fall back to one pass until _merge_class learns it.
    assert {f.name for f in dataclasses.fields(QueryClass)} == merge.MERGED_FIELDS


@pytest.mark.parametrize("max_range_bytes", [256 * 1024, 1_000_000_000])
@pytest.mark.parametrize("keep", [200_000, 600_000])
def test_a_truncated_gzip_raises_what_one_pass_raises(tmp_path: Path, max_range_bytes: int, keep: int) -> None:
    cut = tmp_path / "cut.log.gz"
    data = MEDIUM_GZ.read_bytes()
    cut.write_bytes(data[:keep] + data[-8:])  # the trailer kept: the stated size still asks for a cut
    with pytest.raises(EOFError) as one_pass:
        sequential(cut)
    with pytest.raises(EOFError) as parallel_pass:
        parallel.digest_files([cut], split_bytes=1, max_range_bytes=max_range_bytes)
    assert str(parallel_pass.value) == str(one_pass.value)


def test_without_worker_processes_the_ranges_are_parsed_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_processes(method: str) -> None:
        raise OSError("no semaphores here")

    monkeypatch.setattr(multiprocessing, "get_context", no_processes)
    assert parallel_digest(LOGS[1], max_range_bytes=8192) == sequential(LOGS[1])


def test_a_gzip_rest_parsed_as_it_is_decompressed_stays_in_order_whatever_its_place(tmp_path: Path) -> None:
    # No `# Time:` line: one range, so the gzip's rest (a LiveRange) comes first in a pair and stays here.
    uncut = tmp_path / "uncut.log"
    uncut.write_bytes(b"".join(line for line in TRICKY.splitlines(keepends=True) if not line.startswith(b"# Time:")))
    assert len(ranges.plan(str(uncut), split_bytes=1, max_range_bytes=1)) == 1
    for paths in ([uncut, MEDIUM_GZ], [MEDIUM_GZ, uncut], [LOGS[0], MEDIUM_GZ, LOGS[0]]):
        assert parallel_digest(*paths, max_range_bytes=1_000_000_000) == sequential(*paths)
