"""A streaming pull parser for MySQL 5.7/8.0 and MariaDB slow query logs: one entry at a time, with its byte offset.

Reads bytes line by line (memory stays flat whatever the file size) and recognises:
- server header blocks (`<path>mysqld|mariadbd, Version: ... started with:`, `Tcp port:`, `Time  Id Command  Argument`),
  at the top and again after a log reopen or restart;
- `# Time:` in MariaDB's `YYMMDD H:MM:SS` (written only when the second changes: later entries inherit it)
  and MySQL's ISO 8601 with `Z` or an offset;
- `# User@Host: user[priv] @ host [ip]` with an optional `Id:` (MySQL), `# Thread_id: N  Schema: db  QC_hit: X`
  (MariaDB; an empty schema is read as empty, not as the next key), `# Query_time ... Lock_time ... Rows_sent
  ... Rows_examined ...` with any spacing and MySQL's log_slow_extra fields, and every other `# Key: value`
  line (MariaDB's Rows_affected, Bytes_sent, Tmp_tables, Full_scan, ..., innodb pages);
- `use db;` (with or without backticks), the server's own `SET timestamp=N;`, `# administrator command: X;`,
  and query text over several lines, including lines that start with `#` inside the statement.
The query text ends at the next strict `# Time:`/`# User@Host:` line or a header line.

Bounded work: a statement keeps at most `max_statement_bytes` (MAX_STATEMENT_BYTES by default; the
entry is marked `truncated` and `query_bytes` tells its real size), lines are read in pieces of at most
MAX_LINE_BYTES (only a line's first piece can be a header or metadata line), and every regex is linear
in its line (no pattern can backtrack more than a constant per character).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import BinaryIO

_TIME_MARIADB = re.compile(rb"^# Time: (\d{2})(\d{2})(\d{2})\s+(\d{1,2}):(\d{2}):(\d{2})\s*$")
_TIME_MYSQL = re.compile(rb"^# Time: (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})\s*$")
# User and host stop at `[` (the lazy `\S*?` of the old pattern retried every `[` of a crafted line).
_USER_HOST = re.compile(rb"^# User@Host: ([^\s\[]*+)\[([^\]]*+)\] @ ?([^\s\[]*+) ?\[([^\]]*+)\](?:\s++Id:\s*+(\d++))?\s*+$")
_HEADER_VERSION = re.compile(rb"^\S*, Version: .* started with:\s*$")
_HEADER_PORT = re.compile(rb"^Tcp port: ")
_HEADER_COLUMNS = re.compile(rb"^Time\s+Id\s+Command\s+Argument\s*$")
_KEY_VALUE = re.compile(rb"(?<!\w)(\w++): (\S*+)")  # from a word's first character only: later starts fail alike
_USE = re.compile(rb"^use `?([^`;]*)`?;\s*$", re.I)
_SET_TIMESTAMP = re.compile(rb"^SET timestamp=(\d+);\s*$")
_ADMIN = b"# administrator command: "
MAX_STATEMENT_BYTES = 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024


@dataclass
class SlowEntry:
    offset: int
    time: datetime | None = None
    user: str = ""
    host: str = ""
    ip: str = ""
    thread_id: int | None = None
    schema: str = ""
    query_time: float = 0.0
    lock_time: float = 0.0
    rows_sent: int = 0
    rows_examined: int = 0
    timestamp: int | None = None
    admin_command: str | None = None
    query: str = ""
    qc_hit: str | None = None
    schema_from_thread_line: bool = False
    truncated: bool = False  # the statement was longer than the cap; `query` holds its first bytes
    query_bytes: int = 0  # the statement's real size in bytes
    # Other `# Key: value` lines, kept raw and parsed only when asked for (most callers never do).
    extra_lines: list[bytes] = field(default_factory=list)
    _extra: dict[str, str] | None = field(default=None, repr=False)

    @property
    def extra(self) -> dict[str, str]:
        """Every other metadata field: MariaDB's Rows_affected, Bytes_sent, Tmp_tables, Full_scan, ...,
        innodb pages, and MySQL's log_slow_extra fields (Errno, Killed, Start, End, ...)."""
        if self._extra is None:
            self._extra = {}
            for line in self.extra_lines:
                for key, value in _KEY_VALUE.findall(line):
                    self._extra[key.decode()] = value.decode(errors="replace")
            if self.qc_hit is not None:
                self._extra["QC_hit"] = self.qc_hit
        return self._extra

    @property
    def database(self) -> str:
        return self.schema


def _mariadb_time(m: re.Match[bytes]) -> datetime:
    yy, mo, dd, hh, mi, ss = (int(x) for x in m.groups())
    return datetime(2000 + yy, mo, dd, hh, mi, ss)


def _mysql_time(m: re.Match[bytes]) -> datetime:
    stamp, zone = m.group(1).decode(), m.group(2).decode()
    dt = datetime.fromisoformat(stamp)
    if zone == "Z":
        return dt.replace(tzinfo=timezone.utc)
    sign = 1 if zone[0] == "+" else -1
    return dt.replace(tzinfo=timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))))


def _is_header(line: bytes) -> bool:
    # Cheap prefilter first: this runs for every query line.
    if b", Version: " in line:
        return bool(_HEADER_VERSION.match(line))
    if line.startswith(b"Tcp port: "):
        return True
    return line.startswith(b"Time") and bool(_HEADER_COLUMNS.match(line))


def _admin_command(body: bytes) -> bytes | None:
    """`^# administrator command: (.*?);?\\s*$`'s group, without the lazy retries: trailing space, then one `;`."""
    if not body.startswith(_ADMIN):
        return None
    rest = body[len(_ADMIN):].rstrip(b" \t\n\r\f\v")
    return rest[:-1] if rest.endswith(b";") else rest


def parse(stream: BinaryIO, max_statement_bytes: int = MAX_STATEMENT_BYTES) -> Iterator[SlowEntry]:
    """Yield entries in file order. `stream` is a binary file (or gzip) opened by the caller."""
    entry: SlowEntry | None = None
    in_query = False
    query_lines: list[bytes] = []
    query_size = 0
    last_time: datetime | None = None
    schema = ""  # the last `use` written; MariaDB's Schema: field overrides it per entry
    offset = 0

    def finish() -> SlowEntry | None:
        nonlocal entry, query_lines, in_query, query_size
        done = entry
        if done is not None:
            text = b"".join(query_lines).decode("utf-8", "replace").rstrip("\r\n")
            if text.endswith(";"):
                text = text[:-1]
            done.query = text
            done.query_bytes = query_size
            done.truncated = query_size > max_statement_bytes
        entry, query_lines, in_query, query_size = None, [], False, 0
        return done

    def add_query(line: bytes) -> None:
        nonlocal query_size
        room = max_statement_bytes - min(query_size, max_statement_bytes)
        if room:
            query_lines.append(line[:room])
        query_size += len(line)

    # Lines are read at most MAX_LINE_BYTES at a time; the rest of a longer line comes as more pieces.
    # Inlined rather than a generator: this loop runs once per line of logs of hundreds of MB.
    readline = stream.readline
    open_line = False
    while line := readline(MAX_LINE_BYTES):
        continued, open_line = open_line, line[-1:] != b"\n"
        start = offset
        offset += len(line)
        if continued:  # the rest of a line longer than MAX_LINE_BYTES: only ever query text
            if entry is not None and in_query:
                add_query(line)
            continue
        body = line.rstrip(b"\r\n")
        if body.startswith(b"# Time: "):
            m = _TIME_MARIADB.match(body) or _TIME_MYSQL.match(body)
            if m:
                done = finish()
                if done:
                    yield done
                last_time = _mariadb_time(m) if m.re is _TIME_MARIADB else _mysql_time(m)
                entry = SlowEntry(offset=start, time=last_time, schema=schema)
                continue
        if body.startswith(b"# User@Host: "):
            m = _USER_HOST.match(body)
            if m:
                if entry is None or in_query or entry.user:
                    done = finish()
                    if done:
                        yield done
                    entry = SlowEntry(offset=start, time=last_time, schema=schema)
                user, _priv, host, ip, conn = m.groups()
                entry.user, entry.host, entry.ip = user.decode(errors="replace"), host.decode(errors="replace"), ip.decode(errors="replace")
                if conn:
                    entry.thread_id = int(conn)
                continue
        if body[:1] != b"#" and _is_header(body):
            done = finish()
            if done:
                yield done
            continue
        if entry is None:
            continue  # junk before the first entry
        if not in_query:
            if body.startswith(b"# "):
                admin = _admin_command(body)
                if admin is not None:
                    entry.admin_command = admin.decode(errors="replace")
                    add_query(b"administrator command: " + admin)
                    in_query = True
                    continue
                _metadata(entry, body)
                continue
            if body == b"#":
                continue  # frames MariaDB's explain block
            use = _USE.match(body) if entry.timestamp is None else None  # after SET timestamp, `USE x;` is the client's statement
            if use:
                schema = use.group(1).decode(errors="replace")
                if not entry.schema_from_thread_line:  # MariaDB's per-entry Schema: wins over the last `use`
                    entry.schema = schema
                continue
            ts = _SET_TIMESTAMP.match(body)
            if ts and entry.timestamp is None:
                entry.timestamp = int(ts.group(1))
                continue
            in_query = True
        if query_size + len(line) <= max_statement_bytes:  # the common case, without a call
            query_lines.append(line)
            query_size += len(line)
        else:
            add_query(line)
    done = finish()
    if done:
        yield done


_QUERY_TIME = re.compile(rb"^# Query_time: ([\d.]+)\s+Lock_time: ([\d.]+)\s+Rows_sent: (\d+)\s+Rows_examined: (\d+)")
# `Schema:` may be empty ("Schema:   QC_hit: No"): match the known keys, do not split on spaces.
_THREAD = re.compile(rb"^# Thread_id: (\d++)\s++Schema: (\S*?)\s*+(?:QC_hit: (\S++))?\s*+$")


def _metadata(entry: SlowEntry, body: bytes) -> None:
    if body.startswith(b"# Query_time:"):
        m = _QUERY_TIME.match(body)
        if m:
            entry.query_time, entry.lock_time = float(m.group(1)), float(m.group(2))
            entry.rows_sent, entry.rows_examined = int(m.group(3)), int(m.group(4))
            rest = body[m.end():]
            if rest.strip():
                entry.extra_lines.append(rest)  # MySQL's log_slow_extra fields
            return
    elif body.startswith(b"# Thread_id:"):
        m = _THREAD.match(body)
        if m:
            entry.thread_id = int(m.group(1))
            entry.schema = m.group(2).decode(errors="replace")
            entry.schema_from_thread_line = True
            entry.qc_hit = m.group(3).decode() if m.group(3) else None
            return
    elif body.startswith((b"# explain:", b"# Warning")):
        return
    entry.extra_lines.append(body)


def open_log(path: Path | str) -> BinaryIO:
    """A slow log for `parse`, plain or gzip (by its magic bytes, not its name)."""
    import gzip

    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")  # type: ignore[return-value]
