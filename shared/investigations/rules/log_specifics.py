"""The specifics an error line names (host:port, status, path, file, variable, RBAC verb and resource...)."""

from __future__ import annotations

import re

from shared.investigations.rules.log_vocabulary import LINE_CHARS, access_of, exception_name

# Every pattern is led by a literal or starts at a word start, with bounded, possessive runs (linear).

# --- where a connection goes ----------------------------------------------------------------------------------

_URL = re.compile(
    r"\b(https?|tcp|grpcs?|wss?|postgres(?:ql)?|mysql|redis|rediss|mongodb(?:\+srv)?|amqps?|nats|kafka)://"
    r"(?:[^@/\s\"']{1,200}+@)?([A-Za-z0-9][\w.-]{0,252}+)(?::(\d{1,5}))?"
)
_HOST_PORT_KEYS = re.compile(r"host=[\"']?([\w.-]{1,253}+)[\"']?,? port=[\"']?(\d{1,5})")
_SERVER_AT = re.compile(r"(?:server at|on host|server on|to server) [\"']([\w.-]{1,253}+)(?::(\d{1,5}))?[\"']"
                        r"(?: \([^)]{0,60}\))?(?:,? (?:port|on port) (\d{1,5}))?")  # fmt: skip
_NAME_SLASH_IP = re.compile(r"(?<![\w.-])([A-Za-z][\w.-]{0,252}+)/[\d.]{7,15}:(\d{1,5})\b")
_HOST_COLON_PORT = re.compile(r"(?<![\w.:/@-])([A-Za-z0-9][\w.-]{0,252}+):(\d{1,5})\b(?!\d|[:.]\d)")
# `main.go:42]` (klog's source location) is a file and line, not a host and port.
_SOURCE_FILE = re.compile(r".+\.(?:go|py|java|js|ts|rb|c|cc|cpp|rs|kt|scala|cs|php|ex|exs)")
_ACCEPTING_ON_PORT = re.compile(r"\bon port (\d{1,5})\b")
# curl: `Failed to connect to localhost port 3003`
_HOST_WORD_PORT = re.compile(r"\bto ([A-Za-z0-9][\w.-]{0,252}+) port (\d{1,5})\b")
_SCHEME_PORTS = {"http": "80", "https": "443", "postgres": "5432", "postgresql": "5432", "mysql": "3306",
                 "redis": "6379", "rediss": "6379", "mongodb": "27017", "amqp": "5672", "amqps": "5671",
                 "nats": "4222", "kafka": "9092", "grpc": "443", "grpcs": "443", "ws": "80", "wss": "443"}  # fmt: skip
# Well-known ports say what the dependency is, so the fix can name it.
PORT_SERVICES = {"5432": "PostgreSQL", "3306": "MySQL", "6379": "Redis", "27017": "MongoDB", "9092": "Kafka",
                 "5672": "RabbitMQ", "9200": "Elasticsearch", "11211": "Memcached", "2181": "ZooKeeper",
                 "8500": "Consul", "2379": "etcd", "9042": "Cassandra", "1433": "SQL Server", "1521": "Oracle",
                 "53": "DNS", "443": "HTTPS", "80": "HTTP", "4222": "NATS", "9000": "MinIO/ClickHouse"}  # fmt: skip
_TLDS = {"com", "net", "org", "io", "dev", "internal", "local", "cloud", "app", "co", "ai", "us", "uk", "de",
         "example", "corp", "lan", "amazonaws", "azure", "gov", "edu", "info", "biz"}  # fmt: skip
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_TIMEISH = re.compile(r"\d{1,2}")


def endpoint_of(text: str) -> dict[str, str]:
    """The host (and port) a connection error names, with the Service and namespace a cluster name implies."""
    host, port = "", ""
    m = _URL.search(text)
    if m:
        host, port = m.group(2), m.group(3) or _SCHEME_PORTS.get(m.group(1).lower(), "")
    for pattern in (_HOST_PORT_KEYS, _SERVER_AT, _NAME_SLASH_IP, _HOST_WORD_PORT):
        if host:
            break
        m = pattern.search(text)
        if m:
            host, port = m.group(1), next((g for g in m.groups()[1:] if g), "")
    if not host:
        for m in _HOST_COLON_PORT.finditer(text):
            name = m.group(1)
            if not _TIMEISH.fullmatch(name) and not _SOURCE_FILE.fullmatch(name) and m.group(2) != "53":
                host, port = m.group(1), m.group(2)
                break
    if host and not port:
        m = _ACCEPTING_ON_PORT.search(text)
        port = m.group(1) if m else ""
    return _with_service(host.rstrip("."), port) if host else {}


def _with_service(host: str, port: str) -> dict[str, str]:
    out = {"host": host, "target": f"{host}:{port}" if port else host}
    if port:
        out["port"] = port
        if port in PORT_SERVICES:
            out["port_service"] = PORT_SERVICES[port]
    if host in ("localhost", "127.0.0.1", "::1", "0.0.0.0"):
        out["local"] = "yes"
    elif _IPV4.fullmatch(host):
        out["ip"] = host
    else:
        out |= _cluster_name(host)
    return out


_CLUSTER_SUFFIXES = (".svc.cluster.local", ".svc")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_ORDINAL = re.compile(r".{1,60}-\d{1,5}")


def _cluster_name(host: str) -> dict[str, str]:
    """What a cluster DNS name points at: `svc`, `svc.ns`, `svc.ns.svc[.cluster.local]`, or a StatefulSet pod
    behind a headless Service (`db-0.db`, `db-0.db.ns.svc.cluster.local`)."""
    name = host.lower()
    suffix = next((s for s in _CLUSTER_SUFFIXES if name.endswith(s)), "")
    labels = name[: len(name) - len(suffix)].split(".")
    if not all(_LABEL.fullmatch(label) for label in labels):
        return {}
    if len(labels) == 1:
        return {"service": labels[0]}
    if len(labels) == 2 and (suffix or labels[1] not in _TLDS):
        if not suffix and _ORDINAL.fullmatch(labels[0]):
            return {"pod": labels[0], "service": labels[1]}
        return {"service": labels[0], "namespace": labels[1]}
    if len(labels) == 3 and suffix:
        return {"pod": labels[0], "service": labels[1], "namespace": labels[2]}
    return {}


# --- DNS ------------------------------------------------------------------------------------------------------

_DNS_NAME = re.compile(
    r"\blookup ([\w.-]{1,253}+)(?: on |: |$)|(?i:resolve)(?: host)?:? [\"'`]?([\w.-]{1,253}+)"
    r"|(?:ENOTFOUND|EAI_AGAIN) ([\w.-]{1,253}+)|UnknownHostException: ([\w.-]{1,253}+)"
    r"|host name \"([\w.-]{1,253}+)\"|server host '([\w.-]{1,253}+)'|host='([\w.-]{1,253}+)'"
    r"|([\w.-]{1,253}+): (?:Name or service not known|Temporary failure in name resolution|nodename nor)"
)
_DNS_SERVER_DOWN = ("temporary failure", "eai_again", "i/o timeout", "server misbehaving", "try again",
                    "timed out", "no servers could be reached", "connection refused")  # fmt: skip


def dns_of(text: str) -> dict[str, str]:
    """The name that does not resolve, and whether the name is unknown or the DNS server did not answer."""
    m = _DNS_NAME.search(text)
    host = next((g for g in m.groups() if g), "") if m else ""
    if not host:
        host = endpoint_of(text).get("host", "")
    lower = text.lower()
    out = _with_service(host.rstrip("."), "") if host else {}
    out.pop("target", None)
    out["dns"] = "server_unreachable" if any(w in lower for w in _DNS_SERVER_DOWN) else "name_unknown"
    return out


# --- Kubernetes RBAC ------------------------------------------------------------------------------------------

_RBAC = re.compile(
    r"User \"([^\"]{1,200})\" cannot ([a-z]{1,20}) resource \"([^\"]{1,100})\" in API group \"([^\"]{0,100})\""
    r"(?: in the namespace \"([^\"]{1,100})\"| (at the cluster scope))?"
)
_SA = re.compile(r"system:serviceaccount:([^:\s]{1,100}):([^:\s]{1,100})")


def rbac_of(text: str) -> dict[str, str]:
    """Who is refused which verb on which resource, where (a service account split into namespace and name)."""
    m = _RBAC.search(text)
    if not m:
        return {}
    user, verb, resource, group, namespace, cluster = m.groups()
    out = {"user": user, "verb": verb, "resource": resource, "api_group": group}
    if namespace:
        out["namespace"] = namespace
    if cluster:
        out["scope"] = "cluster"
    sa = _SA.fullmatch(user)
    if sa:
        out["sa_namespace"], out["service_account"] = sa.group(1), sa.group(2)
    return out


# --- files, settings, modules, commands -----------------------------------------------------------------------

_ABS_PATH = re.compile(r"(?<![\w.:/~-])(/(?:[\w.@+~-]{1,100}+/){0,30}+[\w.@+~-]{0,100}+)")
_SHELLS = {"/bin/sh", "/bin/bash", "/usr/bin/env", "/bin/ash", "/bin/dash", "/usr/bin/bash", "/bin/zsh"}
_LINE_NO = re.compile(r"(?i)(?:\bline |:)(\d{1,7})\b")


def file_of(text: str) -> dict[str, str]:
    """The first absolute path the line names (a shell's own path skipped), and a line number after it."""
    for m in _ABS_PATH.finditer(text):
        path = m.group(1).rstrip(".")
        if path not in _SHELLS and len(path) > 1:
            out = {"file": path}
            line = _LINE_NO.search(text, m.end(), m.end() + 40)
            if line:
                out["line_no"] = line.group(1)
            return out
    return {}


_SETTING = re.compile(
    r"KeyError: [\"']([A-Z][A-Z0-9_]{1,100}+)[\"']"
    r"|(?i:env(?:ironment)? var(?:iable)?|variable|setting|config(?:uration)? (?:key|option|value))s? "
    r"[\"'`]?([A-Za-z_][\w.]{1,100}+)[\"'`]? "
    r"(?i:(?:is )?(?:not set|missing|undefined|unset|not defined|required|empty))"
    r"|(?<![A-Za-z0-9_])([A-Z][A-Z0-9_]{2,100}+) (?:must be set|is not set|not set|is required|is missing|"
    r"is undefined|is empty)"
    r"|\b(?i:missing|required) (?i:required )?(?i:env(?:ironment)? var(?:iable)?|setting|config(?:uration)?"
    r"(?: key| option| value)?|parameter|property)s?:? [\"'`]?([A-Za-z_][\w.]{1,100}+)"
    r"|: ([A-Za-z_]\w{0,100}+): unbound variable"
    r"|(?i:resolve placeholder) '([^'\s]{1,200}+)'"
)


def setting_of(text: str) -> dict[str, str]:
    """The missing setting's name; `env` says whether it reads like an environment variable."""
    m = _SETTING.search(text)
    if not m:
        return {}
    name = next(g for g in m.groups() if g)
    return {"setting": name, "env": "yes" if re.fullmatch(r"[A-Z][A-Z0-9_]*", name) else "no"}


_MODULE = re.compile(
    r"(?i:no module named) [\"']?([\w.]{1,200}+)|(?i:cannot find module) [\"']([^\"'\s]{1,200}+)"
    r"|(?:ClassNotFoundException|NoClassDefFoundError):? ([\w.$/]{1,200}+)"
    r"|loading shared libraries: ([^:\s]{1,200}+)|cannot import name [\"']([\w.]{1,200}+)"
)


def module_of(text: str) -> dict[str, str]:
    """The module, class or shared library that cannot be loaded."""
    m = _MODULE.search(text)
    return {"module": next(g for g in m.groups() if g)} if m else {}


_COMMAND = re.compile(
    r"exec: \"([^\"]{1,200}+)\"|exec ([\w./-]{1,200}+): exec format"
    r"|(?:^|: )([\w./-]{1,200}+): (?:command )?not found|command not found: ([\w./-]{1,200}+)"
)


def command_of(text: str) -> dict[str, str]:
    """The command that is missing (or cannot be executed)."""
    m = _COMMAND.search(text)
    return {"command": next(g for g in m.groups() if g)} if m else {}


_DB_OBJECT = re.compile(
    r"(?i:(relation|table|column|database|schema|index|sequence|function|keyspace|collection)) "
    r"[\"'`]?([\w.$-]{1,200}+)[\"'`]?"
)
_DB_USER = re.compile(r"(?i:for user|role|user=|username=) ?[\"']?([\w.@-]{1,100}+)")


def db_object_of(text: str) -> dict[str, str]:
    """The database object that does not exist (relation "orders", database "app")."""
    m = _DB_OBJECT.search(text)
    return {"object_kind": m.group(1).lower(), "object": m.group(2)} if m else {}


def user_of(text: str) -> dict[str, str]:
    """The account an authentication error names (`for user "app"`, `Access denied for user 'root'@...`)."""
    m = _DB_USER.search(text)
    return {"user": m.group(1)} if m else {}


# --- memory, TLS, HTTP, durations -----------------------------------------------------------------------------

_OOM_KINDS = (("java heap space", "java_heap"), ("metaspace", "metaspace"), ("native thread", "threads"),
              ("javascript heap", "node_heap"), ("heap limit", "node_heap"), ("gc overhead", "java_heap"),
              ("maxmemory", "redis"), ("memoryerror", "python"))  # fmt: skip


def oom_of(text: str) -> dict[str, str]:
    """Which memory ran out: a Java heap, metaspace, threads, Node's heap, Redis' maxmemory, or just memory."""
    lower = text.lower()
    return {"memory": next((kind for word, kind in _OOM_KINDS if word in lower), "process")}


_VALID_FOR = re.compile(r"valid for ([^\n]{1,200}?), not ([\w.*-]{1,253}+)")
_AFTER = re.compile(r"(?:is after|expired on|notAfter=?|expired at) ?([\w:.+-]{4,40}+)")


def tls_of(text: str) -> dict[str, str]:
    """What is wrong with the certificate: expired (and when), untrusted, or issued for other names."""
    lower = text.lower()
    out = endpoint_of(text)
    if "expired" in lower or "is after" in lower or "not yet valid" in lower:
        out["tls"] = "expired"
        m = _AFTER.search(text)
        if m:
            out["expiry"] = m.group(1)
    elif any(w in lower for w in ("unknown authority", "self signed", "self-signed", "local issuer",
                                   "first certificate", "pkix", "verify failed", "untrusted")):  # fmt: skip
        out["tls"] = "untrusted"
    elif "valid for" in lower:
        m = _VALID_FOR.search(text)
        out["tls"] = "hostname"
        if m:
            out["valid_for"], out["host"] = m.group(1), m.group(2)
    else:
        out["tls"] = "handshake"
    return out


_HTTP_STATUS = re.compile(r"(?<!\d)([45]\d\d)(?!\d)")


def http_of(text: str) -> dict[str, str]:
    """Status, method and path of an access-log line, or the status a line reports."""
    access = access_of(text)
    if access:
        return {"status": str(access.status), "method": access.method, "path": access.path}
    m = _HTTP_STATUS.search(text)
    return {"status": m.group(1)} if m else {}


_DURATION = re.compile(r"(?<![\w.])(\d{1,12}+(?:\.\d{1,9}+)?+)\s?(ms|milliseconds|s|sec|secs|seconds|m|min|minutes)\b")
_UNIT_SECONDS = {"ms": 0.001, "milliseconds": 0.001, "m": 60.0, "min": 60.0, "minutes": 60.0}


def duration_of(text: str) -> dict[str, str]:
    """The longest duration the line states, in seconds."""
    best = max((float(v) * _UNIT_SECONDS.get(u, 1.0) for v, u in _DURATION.findall(text)), default=0.0)
    return {"seconds": f"{best:.3g}"} if best else {}


_PROBES = ("liveness", "readiness", "startup")


def probe_of(text: str) -> dict[str, str]:
    """Which probe fails, and why: refused, timed out, or an HTTP status."""
    lower = text.lower()
    out = {"probe": next((p for p in _PROBES if p in lower), "health")}
    if "refused" in lower:
        out["probe_error"] = "refused"
    elif any(w in lower for w in ("timeout", "timed out", "deadline exceeded")):
        out["probe_error"] = "timeout"
    else:
        m = re.search(r"status ?code:? ?(\d{3})\b", lower)
        if m:
            out["status"] = m.group(1)
    return out


# --- by category ----------------------------------------------------------------------------------------------

_READERS = {
    "rbac_forbidden": (rbac_of,),
    "dns": (dns_of,),
    "tls": (tls_of,),
    "pool_exhausted": (endpoint_of,),
    "connection_refused": (endpoint_of,),
    "no_route": (endpoint_of,),
    "connection_reset": (endpoint_of,),
    "connection_timeout": (endpoint_of, duration_of),
    "connection_failed": (endpoint_of,),
    "auth_failed": (endpoint_of, user_of),
    "permission_denied": (file_of,),
    "oom": (oom_of,),
    "disk_full": (file_of,),
    "rate_limited": (endpoint_of, http_of),
    "missing_config": (setting_of,),
    "missing_module": (module_of,),
    "missing_schema": (db_object_of,),
    "command_not_found": (command_of,),
    "exec_format": (command_of,),
    "file_not_found": (file_of,),
    "config_parse": (file_of,),
    "http_5xx": (http_of,),
    "slow": (duration_of,),
    "probe_failed": (probe_of, endpoint_of),
}


def details_of(category: str, text: str) -> dict[str, str]:
    """The specifics of one error line (plus its continuation lines) that the cause and fix can name."""
    text = text[: LINE_CHARS * 2]
    out: dict[str, str] = {}
    for reader in _READERS.get(category, ()):
        out = {**reader(text), **out}
    name = exception_name(text)
    if name:
        out["exception"] = name
    return out
