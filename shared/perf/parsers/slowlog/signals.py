"""What a slow log says about *why* a statement was slow, beyond its times and row counts, counted per class.

Servers add optional fields that tell a scan from a sort from a wait; where a log has them, each class
counts them (whole numbers only, so classes aggregated over ranges of a log merge by adding):
- MariaDB `log_slow_verbosity=query_plan`: `Full_scan`, `Full_join`, `Tmp_table_on_disk`, `Filesort`,
  `Filesort_on_disk`, `Priority_queue` (entries with `Yes`), and `plan_logged` (entries that had the lines);
- MySQL 8.0 `log_slow_extra`: `Read_rnd_next` (rows read by table scans), `Read_key`, `Read_next`,
  `Read_first`, `Sort_rows`, `Sort_scan_count`, `Sort_range_count`, `Sort_merge_passes`,
  `Created_tmp_disk_tables` (sums), `Killed` and each non-zero `Errno` (entries), `extra_logged`;
- MariaDB and Percona `Rows_affected` (sum, `rows_affected_logged`);
- Percona Server `InnoDB_rec_lock_wait`, `InnoDB_IO_r_wait`, `InnoDB_queue_wait` (sums in µs, `innodb_logged`),
  and MariaDB's `Pages_read_time` (milliseconds in the log, µs here).
Per line the work is a few byte comparisons; only lines that carry these fields are split into keys.
"""

from __future__ import annotations

import re

from shared.perf.parsers.slowlog.parser import SlowEntry

# `<key>: Yes` as MariaDB writes it, each preceded by a space so `Filesort: Yes` is not `Filesort_on_disk`'s tail.
_FLAGS = (
    (b" Full_scan: Yes", "full_scan"),
    (b" Full_join: Yes", "full_join"),
    (b" Tmp_table_on_disk: Yes", "tmp_table_on_disk"),
    (b" Filesort: Yes", "filesort"),
    (b" Filesort_on_disk: Yes", "filesort_on_disk"),
    (b" Priority_queue: Yes", "priority_queue"),
)
_EXTRA_SUMS = {
    b"Read_rnd_next": "read_rnd_next",
    b"Read_key": "read_key",
    b"Read_next": "read_next",
    b"Read_first": "read_first",
    b"Sort_rows": "sort_rows",
    b"Sort_scan_count": "sort_scan_count",
    b"Sort_range_count": "sort_range_count",
    b"Sort_merge_passes": "sort_merge_passes",
    b"Created_tmp_disk_tables": "created_tmp_disk_tables",
}
_WAITS_US = {
    b"InnoDB_rec_lock_wait": "innodb_rec_lock_wait_us",
    b"InnoDB_IO_r_wait": "innodb_io_r_wait_us",
    b"InnoDB_queue_wait": "innodb_queue_wait_us",
}
_PAIR = re.compile(rb"(?<!\w)(\w++): (\S++)")


def _int(value: bytes) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


def _seconds_us(value: bytes, scale: float = 1e6) -> int:
    try:
        return round(float(value) * scale)
    except ValueError:
        return 0


def _add(into: dict[str, int], key: str, n: int) -> None:
    into[key] = into.get(key, 0) + n


def _plan(into: dict[str, int], line: bytes) -> None:
    if b"Full_scan:" in line:
        _add(into, "plan_logged", 1)
    if b"Yes" not in line:
        return
    for flag, name in _FLAGS:
        if flag in line:
            _add(into, name, 1)


def _slow_extra(into: dict[str, int], line: bytes) -> None:
    _add(into, "extra_logged", 1)
    for key, value in _PAIR.findall(line):
        name = _EXTRA_SUMS.get(key)
        if name:
            _add(into, name, _int(value))
        elif key == b"Errno" and value != b"0":
            _add(into, f"errno_{_int(value)}", 1)
        elif key == b"Killed" and value != b"0":
            _add(into, "killed", 1)


def _rows_affected(into: dict[str, int], line: bytes) -> None:
    # `# Rows_affected: N  Bytes_sent: M` on every MariaDB entry: sliced, not matched.
    _add(into, "rows_affected_logged", 1)
    value = line[17:].split(None, 1)[0] if len(line) > 17 else b""
    if value != b"0":
        _add(into, "rows_affected", _int(value))


def _innodb_waits(into: dict[str, int], line: bytes) -> None:
    if b"InnoDB_rec_lock_wait:" in line:
        _add(into, "innodb_logged", 1)
    for key, value in _PAIR.findall(line):
        name = _WAITS_US.get(key)
        if name:
            _add(into, name, _seconds_us(value))


def _pages_read_time(into: dict[str, int], line: bytes) -> None:
    for key, value in _PAIR.findall(line):
        if key == b"Pages_read_time":
            _add(into, "pages_read_time_us", _seconds_us(value, 1e3))


def add_signals(into: dict[str, int], entry: SlowEntry) -> None:
    """Count `entry`'s optional fields into a class's `signals`."""
    for line in entry.extra_lines:
        if b"Full_scan:" in line or b"Filesort:" in line:
            _plan(into, line)
        elif b"Read_rnd_next:" in line or b"Errno:" in line:
            _slow_extra(into, line)
        elif line.startswith(b"# Rows_affected:"):
            _rows_affected(into, line)
        elif b"InnoDB_" in line and b"wait:" in line:
            _innodb_waits(into, line)
        elif b"Pages_read_time:" in line:
            _pages_read_time(into, line)
