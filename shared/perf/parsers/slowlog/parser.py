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

Speed (about 7.5 µs per entry of ten lines): `read_entries` handles the common lines (metadata, statement
text of an open entry) inline, with one slice to tell the metadata keys apart, and leaves the rest to
EntryReader.read_line; the fields of repeated `# User@Host:`/`# Thread_id:` lines are memoised (bounded:
_USER_HOST_MEMO lines of at most _MEMO_LINE_BYTES each). tests/unit/perf/slowlog_parser_reference.py keeps
the line-by-line version as the oracle. `read_entries` also reads a byte range with an inherited state,
for the parallel digest (parallel.py), which cuts large logs at `# Time:` lines and parses the halves on
two cores.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, BinaryIO, cast

_TIME_MARIADB = re.compile(rb"^# Time: (\d{2})(\d{2})(\d{2})\s+(\d{1,2}):(\d{2}):(\d{2})\s*$")
_TIME_MYSQL = re.compile(rb"^# Time: (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})\s*$")
# User and host stop at `[` (the lazy `\S*?` of the old pattern retried every `[` of a crafted line).
_USER_HOST = re.compile(
    rb"^# User@Host: ([^\s\[]*+)\[([^\]]*+)\] @ ?([^\s\[]*+) ?\[([^\]]*+)\](?:\s++Id:\s*+(\d++))?\s*+$"
)
_HEADER_VERSION = re.compile(rb"^\S*, Version: .* started with:\s*$")
_HEADER_PORT = re.compile(rb"^Tcp port: ")
_HEADER_COLUMNS = re.compile(rb"^Time\s+Id\s+Command\s+Argument\s*$")
_KEY_VALUE = re.compile(rb"(?<!\w)(\w++): (\S*+)")  # from a word's first character only: later starts fail alike
_USE = re.compile(rb"^use `?([^`;]*)`?;\s*$", re.IGNORECASE)
_SET_TIMESTAMP = re.compile(rb"^SET timestamp=(\d+);\s*$")
_ADMIN = b"# administrator command: "
# Lines that may start an entry or be a server header: the fast loop hands them to EntryReader.read_line.
_FOR_READER = (b"# Time: ", b"# User@Host: ", b"Tcp port: ", b"Time")
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
    # MariaDB writes the server's local time without a zone: naive on purpose, and aggregate._naive
    # compares it as such; inventing a tzinfo here would change first_seen/last_seen in every report.
    return datetime(2000 + yy, mo, dd, hh, mi, ss)  # noqa: DTZ001  MariaDB's `# Time:` has no zone


def _mysql_time(m: re.Match[bytes]) -> datetime:
    stamp, zone = m.group(1).decode(), m.group(2).decode()
    dt = datetime.fromisoformat(stamp)
    if zone == "Z":
        return dt.replace(tzinfo=UTC)
    sign = 1 if zone[0] == "+" else -1
    return dt.replace(tzinfo=timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))))


def _is_header(line: bytes) -> bool:
    # Cheap prefilter first: this runs for every query line.
    if b", Version: " in line:
        return bool(_HEADER_VERSION.match(line))
    if line.startswith(b"Tcp port: "):
        return True
    return line.startswith(b"Time") and bool(_HEADER_COLUMNS.match(line))


# User@Host lines repeat (a few accounts and hosts): their parsed fields, for at most _USER_HOST_MEMO lines
# of at most _MEMO_LINE_BYTES (about 1 MB in all).
_MEMO_LINE_BYTES = 256
_USER_HOST_MEMO = 4096
_USER_HOST_SEEN: dict[bytes, tuple[str, str, str, int | None]] = {}


def _user_host(body: bytes) -> tuple[str, str, str, int | None] | None:
    """(user, host, ip, connection id) of a `# User@Host:` line, None if it is not one."""
    m = _USER_HOST.match(body)
    if not m:
        return None
    user, _priv, host, ip, conn = m.groups()
    who = (
        user.decode(errors="replace"),
        host.decode(errors="replace"),
        ip.decode(errors="replace"),
        int(conn) if conn else None,
    )
    _remember(_USER_HOST_SEEN, _USER_HOST_MEMO, body, who)
    return who


def _remember(memo: dict[bytes, Any], cap: int, body: bytes, parsed: Any) -> None:
    """Keep a short line's parsed fields; a full memo starts over (bounded whatever the log)."""
    if len(body) <= _MEMO_LINE_BYTES:
        if len(memo) >= cap:
            memo.clear()
        memo[body] = parsed


def _admin_command(body: bytes) -> bytes | None:
    """`^# administrator command: (.*?);?\\s*$`'s group, without the lazy retries: trailing space, then one `;`."""
    if not body.startswith(_ADMIN):
        return None
    rest = body[len(_ADMIN) :].rstrip(b" \t\n\r\f\v")
    return rest[:-1] if rest.endswith(b";") else rest


class EntryReader:
    """One parse's state: the entry being read, its statement so far, and what later entries inherit (time, `use`)."""

    __slots__ = ("entry", "in_query", "last_time", "max_statement_bytes", "query_lines", "query_size", "schema")

    def __init__(self, max_statement_bytes: int) -> None:
        self.max_statement_bytes = max_statement_bytes
        self.entry: SlowEntry | None = None
        self.in_query = False
        self.query_lines: list[bytes] = []
        self.query_size = 0
        self.last_time: datetime | None = None
        self.schema = ""  # the last `use` written; MariaDB's Schema: field overrides it per entry

    def read_line(self, line: bytes, start: int) -> SlowEntry | None:
        """Take one whole line (or a long line's first piece) starting at byte `start`.

        Answers the entry it completes, if any.
        """
        body = line.rstrip(b"\r\n")
        if body[:1] == b"#":
            if body.startswith(b"# Time: "):
                m = time_line(body)
                if m:
                    return self._time_line(m, start)
            elif body.startswith(b"# User@Host: "):
                who = _USER_HOST_SEEN.get(body) or _user_host(body)
                if who is not None:
                    return self._user_host_line(who, start)
        elif _is_header(body):
            return self.finish()
        if self.entry is None:
            return None  # junk before the first entry
        if self.in_query:
            self.add_query(line)
        else:
            self.before_query(self.entry, line, body)
        return None

    def read_rest(self, piece: bytes) -> None:
        """The rest of a line longer than MAX_LINE_BYTES: only ever query text."""
        if self.entry is not None and self.in_query:
            self.add_query(piece)

    def finish(self) -> SlowEntry | None:
        """Close the entry being read (its statement joined, capped and measured) and answer it."""
        done = self.entry
        if done is not None:
            text = b"".join(self.query_lines).decode("utf-8", "replace").rstrip("\r\n")
            text = text.removesuffix(";")
            done.query = text
            done.query_bytes = self.query_size
            done.truncated = self.query_size > self.max_statement_bytes
        self.entry, self.query_lines, self.in_query, self.query_size = None, [], False, 0
        return done

    def add_query(self, line: bytes) -> None:
        """Append statement text, keeping at most max_statement_bytes of it but counting all of it."""
        if self.query_size + len(line) <= self.max_statement_bytes:  # the common case
            self.query_lines.append(line)
        else:
            room = self.max_statement_bytes - min(self.query_size, self.max_statement_bytes)
            if room:
                self.query_lines.append(line[:room])
        self.query_size += len(line)

    def _time_line(self, m: re.Match[bytes], start: int) -> SlowEntry | None:
        """`# Time:` starts an entry, and later entries without one inherit its time."""
        done = self.finish()
        self.last_time = _mariadb_time(m) if m.re is _TIME_MARIADB else _mysql_time(m)
        self.entry = SlowEntry(offset=start, time=self.last_time, schema=self.schema)
        return done

    def _user_host_line(self, who: tuple[str, str, str, int | None], start: int) -> SlowEntry | None:
        """`# User@Host:` belongs to the entry a `# Time:` just opened, or starts one of its own."""
        done = None
        entry = self.entry
        if entry is None or self.in_query or entry.user:
            done = self.finish()
            entry = self.entry = SlowEntry(offset=start, time=self.last_time, schema=self.schema)
        entry.user, entry.host, entry.ip, thread_id = who
        if thread_id is not None:
            entry.thread_id = thread_id
        return done

    def before_query(self, entry: SlowEntry, line: bytes, body: bytes) -> None:
        """A line between an entry's header and its statement.

        Metadata, `use`, `SET timestamp`, or the statement's first line.
        """
        if body.startswith(b"# "):
            admin = _admin_command(body)
            if admin is None:
                _metadata(entry, body)
                return
            entry.admin_command = admin.decode(errors="replace")
            line = b"administrator command: " + admin
        elif body == b"#":
            return  # frames MariaDB's explain block
        elif entry.timestamp is None and self._use_or_timestamp(entry, body):
            return
        self.in_query = True
        self.add_query(line)

    def _use_or_timestamp(self, entry: SlowEntry, body: bytes) -> bool:
        """`use db;` or the server's `SET timestamp=N;` before the statement.

        After SET timestamp, `USE x;` is the client's statement.
        """
        if body.startswith(b"SET timestamp="):  # every entry has one; it cannot be a `use`
            ts = _SET_TIMESTAMP.match(body)
            if ts:
                entry.timestamp = int(ts.group(1))
                return True
            return False
        use = _USE.match(body)
        if use:
            self.schema = use.group(1).decode(errors="replace")
            if not entry.schema_from_thread_line:  # MariaDB's per-entry Schema: wins over the last `use`
                entry.schema = self.schema
            return True
        return False


def parse(stream: BinaryIO, max_statement_bytes: int = MAX_STATEMENT_BYTES) -> Iterator[SlowEntry]:
    """Yield entries in file order. `stream` is a binary file (or gzip) opened by the caller."""
    yield from read_entries(stream, EntryReader(max_statement_bytes))


def read_entries(stream: BinaryIO, reader: EntryReader, start: int = 0, end: int | None = None) -> Iterator[SlowEntry]:
    """Entries of `stream` read from its current position, which is byte `start` of the log, up to byte `end`.

    `end` must be a line start (the parallel digest cuts at `# Time:` lines); `reader` carries the state
    that the entries inherit (its `schema`), and holds the state at `end` afterwards.
    """
    # Lines are read at most MAX_LINE_BYTES at a time; the rest of a longer line comes as more pieces.
    # The common lines (metadata and statement text of an open entry) are handled here inline, the rest
    # by reader.read_line: this loop runs once per line of logs of hundreds of MB.
    readline = stream.readline
    limit = MAX_LINE_BYTES
    offset = start
    stop = end if end is not None else float("inf")
    open_line = False
    while offset < stop and (line := readline(limit)):
        begin = offset
        offset += len(line)
        if open_line:
            open_line = line[-1] != 10  # not b"\n"
            reader.read_rest(line)
            continue
        open_line = line[-1] != 10
        entry = reader.entry
        if entry is None or line.startswith(_FOR_READER) or (line[0] != 35 and b", Version: " in line):
            done = reader.read_line(line, begin)  # entry starts, server headers, junk before the first entry
            if done is not None:
                yield done
        elif reader.in_query:
            reader.add_query(line)
        elif line[0] != 35:  # not b"#"
            reader.before_query(entry, line, line.rstrip(b"\r\n"))
        elif line[1:2] == b" ":
            body = line.rstrip(b"\r\n")
            head = body[2:6]  # one slice instead of a startswith per known key
            if head not in _KNOWN_HEADS:
                entry.extra_lines.append(body)
            elif head == b"admi" and body.startswith(_ADMIN):
                reader.before_query(entry, line, body)
            else:
                _metadata(entry, body)
        elif line.rstrip(b"\r\n") != b"#":  # a lone `#` frames MariaDB's explain block
            reader.before_query(entry, line, line.rstrip(b"\r\n"))
    done = reader.finish()
    if done is not None:
        yield done


_QUERY_TIME = re.compile(rb"^# Query_time: ([\d.]+)\s+Lock_time: ([\d.]+)\s+Rows_sent: (\d+)\s+Rows_examined: (\d+)")
# `Schema:` may be empty ("Schema:   QC_hit: No"): match the known keys, do not split on spaces.
_THREAD = re.compile(rb"^# Thread_id: (\d++)\s++Schema: (\S*?)\s*+(?:QC_hit: (\S++))?\s*+$")


_KNOWN_HEADS = frozenset((b"Quer", b"Thre", b"expl", b"Warn", b"admi"))


# Thread_id lines repeat (a connection's statements): their parsed fields, as for User@Host lines.
_THREAD_MEMO = 4096
_THREAD_SEEN: dict[bytes, tuple[int, str, str | None]] = {}


def _metadata(entry: SlowEntry, body: bytes) -> None:
    """A `# Key: value` line before the statement (`body` starts with `# `)."""
    head = body[2:6]
    if head == b"expl":  # MariaDB's query plan, the most common line: not kept
        if body.startswith(b"# explain:"):
            return
    elif head == b"Quer":
        m = _QUERY_TIME.match(body)
        if m:
            query_time, lock_time, rows_sent, rows_examined = m.groups()
            entry.query_time, entry.lock_time = float(query_time), float(lock_time)
            entry.rows_sent, entry.rows_examined = int(rows_sent), int(rows_examined)
            end = m.end()
            if end < len(body) and body[end:].strip():
                entry.extra_lines.append(body[end:])  # MySQL's log_slow_extra fields
            return
    elif head == b"Thre":
        seen = _THREAD_SEEN.get(body) or _thread_line(body)
        if seen is not None:
            entry.thread_id, entry.schema, entry.qc_hit = seen
            entry.schema_from_thread_line = True
            return
    elif body.startswith(b"# Warning"):
        return
    entry.extra_lines.append(body)


def _thread_line(body: bytes) -> tuple[int, str, str | None] | None:
    m = _THREAD.match(body)
    if not m:
        return None
    thread_id, schema, qc_hit = m.groups()
    seen = (int(thread_id), schema.decode(errors="replace"), qc_hit.decode(errors="replace") if qc_hit else None)
    _remember(_THREAD_SEEN, _THREAD_MEMO, body, seen)
    return seen


def time_line(body: bytes) -> re.Match[bytes] | None:
    """A strict `# Time:` line (MariaDB's or MySQL's format): where an entry always starts."""
    return _TIME_MARIADB.match(body) or _TIME_MYSQL.match(body)


def is_gzip(path: Path | str) -> bool:
    """By the magic bytes, not the name."""
    with open(path, "rb") as probe:
        return probe.read(2) == b"\x1f\x8b"


def open_log(path: Path | str) -> BinaryIO:
    """A slow log for `parse`, plain or gzip (by its magic bytes, not its name)."""
    return cast(BinaryIO, gzip.open(path, "rb")) if is_gzip(path) else open(path, "rb")
