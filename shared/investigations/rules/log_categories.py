"""Error categories of log lines: the words that show each one, what it means and the general fix it calls for."""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.investigations.rules.log_vocabulary import LINE_CHARS


@dataclass(frozen=True)
class Category:
    """What a kind of log line says about a cause, and how much it says."""

    name: str
    weight: float  # error-likeness it adds to a line's level
    confidence: float  # of a finding it supports on its own
    meaning: str  # completes "<subject> fails because ..."
    fix: str  # the general fix; the specifics of a line refine it (log_specifics)
    symptom: bool = False  # says what happens, not why


_C = Category
CATEGORIES: dict[str, Category] = {c.name: c for c in (
    _C("rbac_forbidden", 4.0, 0.9, "the Kubernetes API refuses its identity a permission (RBAC forbidden)",
       "Grant the service account a Role (or ClusterRole) with the verb on the resource, bound to it with a "
       "RoleBinding (or ClusterRoleBinding)."),
    _C("dns", 3.5, 0.8, "a host name it needs does not resolve (DNS lookup fails)",
       "Check the name (a Service's short name resolves only in its own namespace), that the Service exists, "
       "and that CoreDNS runs and NetworkPolicies allow egress to it on port 53."),
    _C("tls", 3.5, 0.85, "a TLS handshake fails (certificate expired, untrusted, or for another name)",
       "Renew or reissue the certificate, or give the client the CA that signed it; then restart the pods "
       "that load it at start."),
    _C("pool_exhausted", 3.5, 0.8, "its connection pool is exhausted (every connection is in use or the "
       "server's connection limit is reached)",
       "Find what holds connections (leaks, long transactions, slow queries); keep replicas x pool size under "
       "the server's connection limit, or put a pooler in front of the server."),
    _C("connection_refused", 3.5, 0.8, "a dependency refuses its connections (nothing listens there: the "
       "service is down, has no ready endpoints, or the port is wrong)",
       "Check that the target service exists, has ready endpoints and exposes that port."),
    _C("no_route", 3.5, 0.75, "there is no network route to a dependency (a stale address, a node or network "
       "fault, or a policy that blocks it)",
       "Reach the dependency by its Service name rather than a pod IP, and check node networking and "
       "NetworkPolicies."),
    _C("connection_reset", 3.0, 0.7, "a dependency closes connections mid-request (it restarts or crashes, or "
       "a proxy or idle timeout cuts them)",
       "Check the dependency's restarts and logs, and align idle/keep-alive timeouts between client, proxy and "
       "server; retry idempotent calls."),
    _C("connection_timeout", 3.0, 0.7, "a dependency does not answer in time (unreachable, overloaded, or a "
       "NetworkPolicy or firewall drops the traffic)",
       "Check that the target's pods are ready and not saturated, and that NetworkPolicies allow this pod's "
       "egress and the target's ingress on that port."),
    _C("connection_failed", 3.0, 0.7, "it cannot connect to a dependency",
       "Check that the target service is up, reachable and correctly named (Service, port, NetworkPolicy)."),
    _C("quota_exceeded", 3.5, 0.85, "a ResourceQuota or LimitRange of the namespace rejects the pods it creates",
       "Raise the namespace's ResourceQuota, or lower the pods' requests/limits and set the ones the LimitRange "
       "requires."),
    _C("admission_denied", 3.5, 0.8, "an admission policy rejects the objects it creates",
       "Change the spec to meet the policy the message names (securityContext, image source, labels), or "
       "have that policy amended."),
    _C("auth_failed", 3.5, 0.8, "a server rejects the credentials it presents (authentication fails)",
       "Check the user/password or token in the Secret the pod reads (key names, a trailing newline, rotation), "
       "then restart the pod: environment values are read at start."),
    _C("permission_denied", 3.0, 0.7, "it is denied access to something it needs (permission denied)",
       "Give the identity the pod runs as the access it needs (file owner/mode and securityContext for files; "
       "the role or policy for an API)."),
    _C("oom", 3.5, 0.85, "it runs out of memory",
       "Raise the container's memory limit (and the runtime's heap setting with it) or reduce the memory the "
       "application holds; a heap that only grows is a leak."),
    _C("disk_full", 3.5, 0.85, "the disk it writes to is full (no space left on device)",
       "Free or grow the volume: expand the PersistentVolumeClaim, remove old data or logs, or raise the "
       "emptyDir sizeLimit / the node's ephemeral storage."),
    _C("rate_limited", 3.0, 0.65, "a service it calls rate-limits it (too many requests or quota exceeded)",
       "Lower the request rate (backoff with jitter, caching, batching) or raise the quota; look for a retry "
       "storm."),
    _C("missing_config", 3.5, 0.85, "a setting it requires is missing from its configuration",
       "Set the missing value in the container's env or the ConfigMap/Secret it reads (the key names must "
       "match exactly), then restart the pod."),
    _C("missing_module", 3.5, 0.85, "a module or library it loads is missing from the image",
       "Add the dependency to the image build (requirements, package.json, pom, OS package) and redeploy, or "
       "check that the image tag is the intended build."),
    _C("missing_schema", 3.0, 0.75, "the database objects it expects do not exist (schema not migrated, or the "
       "wrong database)",
       "Run the database migrations (or the init job) for this version before the app starts, and check it "
       "points at the intended database."),
    _C("command_not_found", 3.5, 0.8, "a command it runs does not exist in the image",
       "Fix the command name in the pod's command/args, or install it in the image."),
    _C("exec_format", 3.5, 0.8, "its executable cannot run on this node (built for another CPU architecture, "
       "or a script without a shebang line)",
       "Use an image built for the node's architecture (a multi-arch image) or start the script with "
       "`#!/bin/sh`."),
    _C("file_not_found", 3.0, 0.7, "a file it needs does not exist",
       "Mount the file (a ConfigMap/Secret key or a volume, checking subPath and key names), add it to the "
       "image, or fix the path in the configuration."),
    _C("config_parse", 3.0, 0.75, "its configuration or script does not parse (a syntax error)",
       "Fix the syntax where the line points, validate the file before deploying (e.g. `sh -n`, `nginx -t`, a "
       "YAML/JSON linter), then update the ConfigMap it comes from and restart."),
    _C("deadlock", 3.0, 0.7, "database transactions deadlock or wait too long for locks",
       "Find the conflicting transactions (pg_locks, SHOW ENGINE INNODB STATUS), take locks in a consistent "
       "order, keep transactions short and retry on deadlock."),
    _C("undecodable_record", 3.5, 0.8, "a message it consumes cannot be decoded (a record in another format or "
       "schema than it expects); a consumer that retries it never gets past it",
       "Move past the record (send it to a dead-letter topic, or reset the group's offset beyond it once "
       "stopped), make the consumer skip or dead-letter what it cannot decode, and fix the producer or schema "
       "that wrote it."),
    _C("archive_failed", 3.5, 0.8, "the database cannot archive its write-ahead log, so WAL files pile up on "
       "its volume until archiving succeeds",
       "Fix what the archive command's error names (credentials, bucket permissions, the destination), then "
       "watch the WAL directory shrink; do not delete WAL files by hand."),
    _C("dns_loop", 4.0, 0.9, "the DNS server forwards queries back to itself (a forwarding loop), so it stops",
       "Point CoreDNS's `forward` at real upstream resolvers instead of /etc/resolv.conf when the node's "
       "resolv.conf names a local stub (127.0.0.53 systemd-resolved, dnsmasq): set the kubelet's --resolv-conf "
       "to /run/systemd/resolve/resolv.conf, or list upstream IPs in the Corefile."),
    _C("kernel_setting", 3.5, 0.85, "a kernel setting of the node is below what it needs (a sysctl such as "
       "vm.max_map_count; one set by hand is lost when the node reboots or is replaced)",
       "Set the value on every node that runs it, persistently: a privileged init container or a DaemonSet that "
       "runs `sysctl -w` before the app starts, or the node image's /etc/sysctl.d; then restart the pod."),
    _C("client_error", 3.0, 0.7, "a service it calls rejects its requests with a client error (HTTP 4xx: a URL, "
       "webhook or token that is wrong, revoked or no longer exists; 401/403 are credentials, 404 an endpoint "
       "that is gone)",
       "Check the URL and credentials it calls with (a revoked or rotated webhook, token or key answers 404, 401 "
       "or 403): create a new one and put it in the Secret or configuration it reads, then reload it."),
    _C("http_5xx", 2.0, 0.6, "requests fail with server errors", "Find the error behind the failing path.",
       symptom=True),
    _C("slow", 1.5, 0.55, "an operation it waits on is slow",
       "Find what the slow operation waits on (EXPLAIN the query, a missing index, a lock, an external call) and "
       "fix or cache it."),
    _C("probe_failed", 1.5, 0.5, "its health check fails",
       "Check that the probe's path and port match what the app serves, and that timeoutSeconds and "
       "initialDelaySeconds (or a startupProbe) leave it time to start.", symptom=True),
    _C("crash", 0.5, 0.55, "it stops on an error",
       "Fix what the error names (configuration, a dependency or the code); the first application frame of "
       "the trace shows where."),
    _C("error", 0.0, 0.4, "it logs an error", "Act on what the error line names (a dependency, configuration or "
       "the code)."),
)}  # fmt: skip

# Categories that say why something fails; `crash` and `error` only say that it does.
SPECIFIC = frozenset(CATEGORIES) - {"crash", "error"}


@dataclass(frozen=True)
class Trigger:
    """Lower-case phrases, any of which puts a line in the category, when one of the confirmations (if any) also
    matches: `confirm` over the lower-cased line, `confirm_cased` over the line as written."""

    category: str
    keywords: tuple[str, ...]
    confirm: tuple[re.Pattern[str], ...] = ()
    confirm_cased: tuple[re.Pattern[str], ...] = ()

    def confirmed(self, text: str, lower: str) -> bool:
        """No confirmation asked, or one of them matches."""
        if not (self.confirm or self.confirm_cased):
            return True
        return any(p.search(lower) for p in self.confirm) or any(p.search(text) for p in self.confirm_cased)


# The confirmations are led by a literal, so the regex engine skips to where they can start (those led by
# `\b` or a case-insensitive group try every position: 5-10x slower over long lines of prose).


def _status(codes: str) -> tuple[re.Pattern[str], ...]:
    """An HTTP status said in prose or keyed (`status 503`, `"statuscode":503`, `http/1.1 503`, `503 service`)."""
    keyed = re.compile(
        rf"(?:status(?:[ _]?code)?|http(?:/[\d.]{{1,3}})?|code|response|returned|got|error)[\"']?\s?[:=]?\s?[\"']?"
        rf"(?:{codes})\b"
    )
    named = re.compile(
        rf"(?:{codes}) (?:internal server error|bad gateway|service unavailable|gateway time-?out|too many requests|"
        rf"unauthorized|forbidden)"
    )
    return keyed, named


_RBAC = (re.compile(r"cannot [a-z]{1,20} resource \""),)
_DNS_LOOKUP = (
    re.compile(
        r"lookup [\w.-]{1,253}+ on (?:\d{1,3}\.){3}\d{1,3}:53\b|lookup [\w.-]{1,253}+ on \[[\da-f:]{2,45}+\]:53\b"
    ),
)
_ROLE_MISSING = (re.compile(r"role \"[^\"]{1,100}\" does not exist"),)
_REFUSED_111 = (re.compile(r"connect[^\n]{0,120}?\(111\b"),)
_REFUSED_TO = (re.compile(r"connection to \S{1,253}+ refused"),)
_MISSING_OBJECT = (
    re.compile(
        r"(?:relation|table|column|database|schema|index|sequence|function|type|keyspace|collection) "
        r"[\"'`]?[\w.$-]{1,200}+[\"'`]? does(?: not|n't) exist"
    ),
)
# The name of what is missing must be readable for the weaker phrases ("is not set", "is required"); log_specifics
# reads the name with the same shapes.
_NAMED_SETTING = (
    re.compile(
        r"(?:env(?:ironment)? var(?:iable)?|variable|setting|config(?:uration)? (?:key|option|value))s? "
        r"[\"'`]?[a-z_][\w.]{1,100}+[\"'`]? (?:is )?(?:not set|missing|undefined|unset|not defined|required|empty)"
    ),
    re.compile(
        r"(?:missing|required) (?:required )?(?:env(?:ironment)? var(?:iable)?|setting|config(?:uration)?"
        r"(?: key| option| value)?|parameter|property)s?:? [\"'`]?[a-z_][\w.]{1,100}"
    ),
    re.compile(r": [a-z_]\w{0,100}+: unbound variable"),
)
_NAMED_SETTING_CASED = (
    # An upper-case name at a word start (the lookbehind after the first letter keeps the letter class leading).
    re.compile(
        r"[A-Z](?<![A-Za-z0-9_][A-Z])[A-Z0-9_]{2,100}+ (?:must be set|is not set|not set|is required|is missing|"
        r"is undefined|is empty)"
    ),
    re.compile(r"KeyError: [\"'][A-Z][A-Z0-9_]{1,100}+[\"']"),
)
# A shell's `sh: 1: curll: not found` (not an HTTP "Error: Not Found").
_SHELL_NOT_FOUND = (re.compile(r"^[\w./-]{1,200}+: not found"), re.compile(r": [\w./-]{1,200}+: not found"))
_FILE_MISSING = (re.compile(r"(?:file|directory|path)\b[^\n]{0,80}?\b(?:does not exist|not found)"),)
_DURATION_SLOW = (
    re.compile(
        r"(?:took|duration|latency|query_time|completed in|finished in|response time|time taken|slow)\D{0,20}?"
        r"(?:[1-9]\d{3,}+(?:\.\d++)?+\s?ms|\d++(?:\.\d++)?+\s?(?:s|sec|secs|seconds|m|min|minutes)\b)"
    ),
)

# In priority order: the first trigger that fires names the line's category, so specific readings (a DNS
# failure inside a connection error, a pool timeout that mentions a timeout) come before general ones.
TRIGGERS: tuple[Trigger, ...] = (
    Trigger("rbac_forbidden", ("resource \"",), _RBAC),
    Trigger("missing_config", ("could not resolve placeholder", "missing required config",
                               "missing required setting", "missing required environment",
                               "required environment variable", "missing environment variable",
                               "missing configuration", "configuration property", "no configuration found")),
    Trigger("probe_failed", ("probe failed", "liveness probe", "readiness probe", "startup probe",
                             "health check failed", "healthcheck failed")),
    Trigger("dns", ("no such host", "nxdomain", "name resolution", "could not resolve", "couldn't resolve",
                    "failed to resolve", "unable to resolve", "cannot resolve", "name or service not known",
                    "nodename nor servname", "getaddrinfo enotfound", "eai_again", "unknownhostexception",
                    "unknown host",
                    "server misbehaving", "name does not resolve", "could not translate host name",
                    "unknown mysql server host", "dns lookup", "dns resolution", "host not found")),
    Trigger("dns", ("lookup ",), _DNS_LOOKUP),
    Trigger("tls", ("x509:", "certificate has expired", "certificate expired", "certificate is not yet valid",
                    "unknown authority", "unable to verify the first certificate", "self signed certificate",
                    "self-signed certificate", "certificate verify failed", "handshake failure", "handshake_failure",
                    "tls handshake", "sslhandshakeexception", "pkix path building failed", "cert_has_expired",
                    "unable to get local issuer certificate", "bad certificate", "certificate is valid for",
                    "sslerror", "ssl routines", "certificateexpiredexception", "certificate_expired",
                    "wrong version number", "tls: failed", "tls: bad", "remote error: tls")),
    Trigger("pool_exhausted", ("pool exhausted", "pool is exhausted", "pool exhaust",
                               "timeout waiting for connection", "timed out waiting for connection",
                               "timeout waiting for a connection", "timed out waiting for a connection",
                               "waiting for connection from pool", "waiting for an available connection",
                               "timeout waiting for idle object",
                               "connection is not available", "too many connections", "too many clients",
                               "max_connections", "remaining connection slots", "queuepool limit",
                               "connection pool full", "pool is full", "cannot get a connection",
                               "unable to acquire jdbc connection", "could not get jdbc connection",
                               "unable to acquire connection", "acquire connection timeout",
                               "connection limit exceeded", "pool is busy", "busypoolexception",
                               "nohostavailableexception")),
    Trigger("connection_refused", ("connection refused", "econnrefused", "actively refused", "connectexception",
                                   "connectionrefusederror", "connection was refused", "errno 111")),
    Trigger("connection_refused", ("(111",), _REFUSED_111),
    Trigger("connection_refused", (" refused",), _REFUSED_TO),
    Trigger("no_route", ("no route to host", "ehostunreach", "network is unreachable", "enetunreach",
                         "host is unreachable", "noroutetohostexception")),
    Trigger("connection_reset", ("connection reset", "econnreset", "broken pipe", "epipe",
                                 "connection closed by peer", "closed the connection unexpectedly",
                                 "connection aborted", "prematurely closed", "socket hang up",
                                 "remote end closed connection", "connectionreseterror")),
    Trigger("connection_timeout", ("i/o timeout", "connection timed out", "connect timed out", "connecttimeout",
                                   "etimedout", "timed out connecting", "context deadline exceeded",
                                   "deadline exceeded", "read timed out", "sockettimeoutexception",
                                   "request timed out", "operation timed out", "upstream timed out",
                                   "connection timeout", "timed out while", "timeouterror", "timeoutexception",
                                   "readtimeout", "connecttimeouterror", "connecttimeoutexception",
                                   "readtimeouterror", "readtimeoutexception")),
    Trigger("auth_failed", ("password authentication failed", "authentication failed", "access denied for user",
                            "unauthorized", "unauthenticated", "invalid credentials", "invalid password",
                            "invalid username", "bad credentials", "login failed", "noauth", "wrongpass",
                            "invalid token", "token is expired", "token has expired", "expired token",
                            "invalid api key", "invalid_grant", "invalid_client", "authentication required",
                            "not authenticated", "auth failed", "authenticationexception",
                            "sasl authentication", "invalid_token", "signature is invalid")),
    Trigger("auth_failed", ("role \"",), _ROLE_MISSING),
    Trigger("auth_failed", ("401",), _status("401")),
    Trigger("connection_failed", ("failed to connect", "could not connect", "unable to connect", "can't connect",
                                  "cannot connect", "connection error", "connectionerror", "error connecting",
                                  "failed to establish a new connection", "max retries exceeded",
                                  "connection failed", "dial tcp", "dial udp")),
    Trigger("oom", ("outofmemoryerror", "out of memory", "memoryerror", "cannot allocate memory", "enomem",
                    "oomkilled", "oom-kill", "oom command not allowed", "gc overhead limit exceeded",
                    "unable to create native thread", "unable to create new native thread", "memory limit exceeded",
                    "std::bad_alloc", "java heap space", "heap limit", "allocation failed", "exceeded memory limit")),
    Trigger("disk_full", ("no space left on device", "enospc", "disk full", "disk is full", "disk quota exceeded",
                          "edquot", "could not extend file", "not enough space", "insufficient disk space",
                          "filesystem is full", "file system is full", "errno 28", "error number 28",
                          "diskfull", "disk usage exceeded")),
    Trigger("quota_exceeded", ("exceeded quota", "must specify limits", "must specify requests",
                               "maximum cpu usage per", "maximum memory usage per", "minimum cpu usage per",
                               "minimum memory usage per")),
    Trigger("admission_denied", ("violates podsecurity", "admission webhook", "denied the request",
                                 "denied by policy", "admission denied")),
    Trigger("permission_denied", ("permission denied", "eacces", "operation not permitted", "eperm",
                                  "accessdenied", "accessdeniedexception", "access denied", "access is denied",
                                  "not authorized to", "insufficient permission", "authorizationfailed",
                                  "does not have permission", "permissiondenied", "is forbidden",
                                  "read-only file system", "erofs")),
    Trigger("permission_denied", ("403", "forbidden"), _status("403")),
    Trigger("rate_limited", ("rate limit", "ratelimit", "ratelimited", "ratelimitexceeded", "rate-limit",
                             "too many requests", "quota exceeded", "quotaexceeded", "throttlingexception",
                             "request was throttled", "resource_exhausted", "slowdown",
                             "exceeded your current quota", "requestlimitexceeded")),
    Trigger("rate_limited", ("429",), _status("429")),
    Trigger("missing_module", ("modulenotfounderror", "no module named", "importerror", "cannot find module",
                               "classnotfoundexception", "noclassdeffounderror", "error while loading shared librar",
                               "cannot open shared object file", "module not found", "cannot find package",
                               "undefined symbol", "unsatisfiedlinkerror", "err_module_not_found")),
    Trigger("missing_config", ("keyerror", "not set", "must be set", "missing", "required", "undefined",
                               "unset", "not defined", "unbound variable", "empty"), _NAMED_SETTING,
            _NAMED_SETTING_CASED),
    Trigger("command_not_found", ("command not found", "executable file not found")),
    Trigger("command_not_found", (": not found",), _SHELL_NOT_FOUND),
    Trigger("exec_format", ("exec format error",)),
    Trigger("missing_schema", ("no such table", "unknown column", "unknown table", "undefinedtable",
                               "undefinedcolumn", "unknown database", "doesn't exist")),
    Trigger("missing_schema", ("does not exist",), _MISSING_OBJECT),
    Trigger("file_not_found", ("no such file or directory", "filenotfounderror", "filenotfoundexception", "enoent",
                               "file not found", "cannot find the file", "not a directory", "cannot open",
                               "can't open", "could not open", "failed to open", "unable to open")),
    Trigger("file_not_found", ("does not exist", "not found"), _FILE_MISSING),
    Trigger("config_parse", ("syntax error", "parse error", "parseerror", "failed to parse", "error parsing",
                             "unable to parse", "could not parse", "cannot parse", "invalid syntax",
                             "jsondecodeerror", "cannot unmarshal", "unexpected token", "yaml: line",
                             "yaml: unmarshal", "yamlexception", "scannererror", "parsererror",
                             "mapping values are not allowed", "did not find expected",
                             "unknown directive", "invalid configuration", "configuration error", "config error",
                             "invalid config", "unexpected end of json", "malformed", "toml: line", "unknown field",
                             "bad substitution", "unexpected eof while looking for", "unexpected end of file")),
    Trigger("deadlock", ("deadlock", "deadlocked", "lock wait timeout", "could not obtain lock", "locktimeout",
                         "lock timeout", "lock request time out", "lockacquisitionexception",
                         "cannotacquirelockexception",
                         "could not serialize access", "serialization failure")),
    # An outgoing call's answer (`unexpected status code 404`), not an access log's line for a request it served.
    Trigger("client_error", ("unexpected status", "status code", "responded with", "returned status",
                             "returned http", "non-2xx", "non-200"), _status(r"4(?:0[0-9]|1[0-9]|2[0-8])")),
    Trigger("http_5xx", ("internal server error", "bad gateway", "service unavailable", "gateway timeout",
                         "gateway time-out", "status", "statuscode", "http", "code", "returned", "response", "got",
                         "error"),
            _status(r"5\d\d")),
    Trigger("slow", ("slow query", "slow request", "slow log", "slow operation")),
    Trigger("slow", ("took", "duration", "latency", "query_time", "completed in", "finished in",
                     "response time", "time taken", "slow"), _DURATION_SLOW),
    Trigger("probe_failed", ("unhealthy",)),
)  # fmt: skip
# Read before the general triggers: a decode error names no connection, a loop is not a DNS lookup failure.
TRIGGERS = (
    Trigger("dns_loop", ("plugin/loop", "loop detected", "forwarding loop")),
    Trigger("kernel_setting", ("max_map_count", "vm.max_map_count", "max file descriptors", "fs.file-max")),
    Trigger(
        "archive_failed",
        (
            "archive command failed",
            "archiving write-ahead log",
            "archive_command",
            "failed to archive",
            "wal archive",
            "archiving failed",
        ),
    ),
    Trigger(
        "undecodable_record",
        (
            "serializationexception",
            "deserializationerror",
            "valuedeserializationerror",
            "keydeserializationerror",
            "deserialization",
            "deserializing",
            "unknown magic byte",
            "error deserializing",
            "failed to decode",
            "could not decode",
            "poison",
        ),
    ),
    *TRIGGERS,
)


_TOKEN = re.compile(r"[a-z0-9]+")


def _index(triggers: tuple[Trigger, ...]) -> dict[str, tuple[tuple[int, str], ...]]:
    """Keywords by their first word: a line is looked up by the words it has, not searched for every keyword."""
    index: dict[str, list[tuple[int, str]]] = {}
    for rank, trigger in enumerate(triggers):
        for keyword in trigger.keywords:
            index.setdefault(_TOKEN.findall(keyword)[0], []).append((rank, keyword))
    return {word: tuple(entries) for word, entries in index.items()}


_BY_FIRST_WORD = _index(TRIGGERS)
_COPES = re.compile(r"disabled|skipping|using (?:the )?default|defaulting to|falling back|fallback|optional|ignored")


def classify(line: str) -> tuple[str, int]:
    """The line's category and where its telling phrase starts; ("", -1) when it names no known error.

    A keyword's first word must be a whole word of the line (`enotfound` is not read inside
    `ModuleNotFoundError`); the first trigger, in TRIGGERS' order, whose keyword and confirmation match wins.
    """
    text = line[:LINE_CHARS]
    lower = text.lower()
    candidates = sorted(c for word in set(_TOKEN.findall(lower)) for c in _BY_FIRST_WORD.get(word, ()))
    for rank, keyword in candidates:
        pos = lower.find(keyword)
        if pos >= 0 and TRIGGERS[rank].confirmed(text, lower):
            if TRIGGERS[rank].category == "missing_config" and _COPES.search(lower):
                continue  # "X not set, tracing disabled": the app does without an optional setting
            return TRIGGERS[rank].category, pos
    return "", -1
