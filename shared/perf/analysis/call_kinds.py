"""What a PHP function spends its time on, as far as its name tells: waiting on something outside PHP, or not.

Two sources, with different certainty:
- `external_kind`: PHP's own functions that wait by nature (curl, sockets, streams and files, sleep,
  PDO/mysqli/pg, Redis/Memcached, processes, the session lock). SPX records these only with
  SPX_BUILTINS=1; without it their time is the calling user function's self time.
- `name_hint`: words in a user function's name (`Db`, `Query`, `Repository`, `Http`, `Redis`, ...). A hint,
  never proof: advice built on it says so, and a measured CPU time (SPX's `ct`) overrides it.
"""

from __future__ import annotations

import re

# kind -> what waiting on it means and where to look (used in advice texts).
KIND_WAITS_ON = {
    "sleep": "a deliberate sleep",
    "remote": "a remote service (HTTP, socket or DNS)",
    "database": "the database",
    "cache": "the cache server",
    "file": "the filesystem",
    "process": "an external process",
    "session": "the PHP session lock",
}

_EXACT = {
    **dict.fromkeys(("sleep", "usleep", "time_nanosleep", "time_sleep_until"), "sleep"),
    **dict.fromkeys(
        (
            "curl_exec",
            "curl_multi_exec",
            "curl_multi_select",
            "fsockopen",
            "pfsockopen",
            "stream_socket_client",
            "stream_select",
            "socket_connect",
            "socket_read",
            "socket_recv",
            "socket_recvfrom",
            "socket_write",
            "socket_send",
            "socket_select",
            "gethostbyname",
            "gethostbynamel",
            "dns_get_record",
            "checkdnsrr",
            "mail",
            "ldap_bind",
            "ldap_search",
        ),
        "remote",
    ),
    **dict.fromkeys(
        (
            "file_get_contents",
            "file_put_contents",
            "file",
            "fopen",
            "fread",
            "fwrite",
            "fputs",
            "fgets",
            "fgetcsv",
            "fputcsv",
            "fflush",
            "fsync",
            "flock",
            "readfile",
            "fpassthru",
            "stream_get_contents",
            "stream_copy_to_stream",
            "copy",
            "rename",
            "unlink",
            "glob",
            "scandir",
            "opendir",
            "readdir",
            "mkdir",
            "rmdir",
            "touch",
            "clearstatcache",
        ),
        "file",
    ),
    **dict.fromkeys(
        ("proc_open", "proc_close", "exec", "shell_exec", "system", "passthru", "popen", "pclose"), "process"
    ),
    "session_start": "session",
}
_PREFIXES = (("mysqli_", "database"), ("pg_", "database"), ("oci_", "database"), ("sqlsrv_", "database"))
_CLASSES = {
    **dict.fromkeys(
        ("PDO", "PDOStatement", "mysqli", "mysqli_stmt", "mysqli_result", "SQLite3", "SQLite3Stmt"), "database"
    ),
    **dict.fromkeys(("MongoDB\\Driver\\Manager", "MongoDB\\Driver\\Cursor"), "database"),
    **dict.fromkeys(("Redis", "RedisCluster", "Memcached", "Memcache"), "cache"),
    **dict.fromkeys(("SoapClient", "AMQPChannel", "AMQPExchange", "AMQPQueue", "AMQPConnection"), "remote"),
    "SplFileObject": "file",
}
_CONNECT = ("::__construct", "::connect", "::pconnect", "::real_connect")

_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+|\d+")
_HINTS = {
    "database": {"db", "dbal", "database", "pdo", "mysql", "mysqli", "sql", "query", "queries", "select"}
    | {"statement", "stmt", "repository", "dao", "orm", "doctrine", "eloquent"},
    "remote": {"http", "https", "curl", "guzzle", "soap", "rpc", "grpc", "remote", "webhook", "socket", "smtp"},
    "cache": {"redis", "memcache", "memcached", "cache"},
    "sleep": {"sleep", "usleep", "backoff"},
}


def external_kind(function: str) -> str | None:
    """The kind of outside resource one of PHP's own functions waits on (`remote`, `database`, ...), or None."""
    if function in _EXACT:
        return _EXACT[function]
    if "::" in function:
        cls = function.split("::", 1)[0]
        return _CLASSES.get(cls)
    for prefix, kind in _PREFIXES:
        if function.startswith(prefix):
            return kind
    return None


def is_connect(function: str) -> bool:
    """A database or cache connection being opened (PDO::__construct, mysqli::real_connect, mysqli_connect, ...)."""
    return function.endswith(_CONNECT) or function in ("mysqli_connect", "mysqli_real_connect", "pg_connect")


def name_hint(function: str) -> str | None:
    """What a user function's name suggests it waits on (`database`, `remote`, `cache`, `sleep`), or None."""
    words = {w.lower() for w in _WORDS.findall(function)}
    for kind, hints in _HINTS.items():
        if words & hints:
            return kind
    return None
