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
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import BinaryIO

_TIME_MARIADB = re.compile(rb"^# Time: (\d{2})(\d{2})(\d{2})\s+(\d{1,2}):(\d{2}):(\d{2})\s*$")
_TIME_MYSQL = re.compile(rb"^# Time: (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})\s*$")
_USER_HOST = re.compile(rb"^# User@Host: (\S*?)\[([^\]]*)\] @ ?(\S*) ?\[([^\]]*)\](?:\s+Id:\s*(\d+))?\s*$")
_HEADER_VERSION = re.compile(rb"^\S*, Version: .* started with:\s*$")
_HEADER_PORT = re.compile(rb"^Tcp port: ")
_HEADER_COLUMNS = re.compile(rb"^Time\s+Id\s+Command\s+Argument\s*$")
_KEY_VALUE = re.compile(rb"(\w+): (\S*)")
_USE = re.compile(rb"^use `?([^`;]*)`?;\s*$", re.I)
_SET_TIMESTAMP = re.compile(rb"^SET timestamp=(\d+);\s*$")
_ADMIN = re.compile(rb"^# administrator command: (.*?);?\s*$")


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
    extra: dict[str, str] = field(default_factory=dict)

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
    return bool(_HEADER_VERSION.match(line) or _HEADER_PORT.match(line) or _HEADER_COLUMNS.match(line))


def parse(stream: BinaryIO) -> Iterator[SlowEntry]:
    """Yield entries in file order. `stream` is a binary file (or gzip) opened by the caller."""
    entry: SlowEntry | None = None
    in_query = False
    query_lines: list[bytes] = []
    last_time: datetime | None = None
    schema = ""  # the last `use` written; MariaDB's Schema: field overrides it per entry
    offset = 0

    def finish() -> SlowEntry | None:
        nonlocal entry, query_lines, in_query
        done = entry
        if done is not None:
            text = b"".join(query_lines).decode("utf-8", "replace").rstrip("\r\n")
            if text.endswith(";"):
                text = text[:-1]
            done.query = text
        entry, query_lines, in_query = None, [], False
        return done

    for line in stream:
        start = offset
        offset += len(line)
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
        if _is_header(body):
            done = finish()
            if done:
                yield done
            continue
        if entry is None:
            continue  # junk before the first entry
        if not in_query:
            if body.startswith(b"# "):
                admin = _ADMIN.match(body)
                if admin:
                    entry.admin_command = admin.group(1).decode(errors="replace")
                    query_lines.append(b"administrator command: " + admin.group(1))
                    in_query = True
                    continue
                _metadata(entry, body)
                continue
            if body == b"#":
                continue  # frames MariaDB's explain block
            use = _USE.match(body) if entry.timestamp is None else None  # after SET timestamp, `USE x;` is the client's statement
            if use:
                schema = use.group(1).decode(errors="replace")
                entry.schema = entry.schema if entry.extra.get("Schema_line") else schema
                continue
            ts = _SET_TIMESTAMP.match(body)
            if ts and entry.timestamp is None:
                entry.timestamp = int(ts.group(1))
                continue
            in_query = True
        query_lines.append(line)
    done = finish()
    if done:
        yield done


def _metadata(entry: SlowEntry, body: bytes) -> None:
    if body.startswith(b"# Thread_id:"):
        # `Schema:` may be empty ("Schema:   QC_hit: No"): split on the known keys, not on spaces.
        m = re.match(rb"^# Thread_id: (\d+)\s+Schema: (\S*?)\s*(?:QC_hit: (\S+))?\s*$", body)
        if m:
            entry.thread_id = int(m.group(1))
            entry.schema = m.group(2).decode(errors="replace")
            entry.extra["Schema_line"] = "1"
            if m.group(3):
                entry.extra["QC_hit"] = m.group(3).decode()
            return
    if body.startswith(b"# explain:") or body.startswith(b"# Warning"):
        return
    for key, value in _KEY_VALUE.findall(body):
        k, v = key.decode(), value.decode(errors="replace")
        if k == "Query_time":
            entry.query_time = float(v)
        elif k == "Lock_time":
            entry.lock_time = float(v)
        elif k == "Rows_sent":
            entry.rows_sent = int(v)
        elif k == "Rows_examined":
            entry.rows_examined = int(v)
        elif k == "Thread_id" and v.isdigit():
            entry.thread_id = int(v)
        else:
            entry.extra[k] = v
