"""The field's own vocabulary: what error codes, abbreviations and symptoms mean, so a paraphrase finds an incident.

Each group lists spellings of one concept (single words or phrases, lowercase). A text that contains any of
them gets the group's concept token `c_<name>` in addition to its words, on both sides (incidents when they
are indexed, queries when they are searched), so "exit 137", "SIGKILL" and "OOMKilled" meet on `c_oom`, and
"EACCES" meets "permission denied". Words are matched as whole tokens after identifier splitting
(text.split_identifiers), phrases as whole-word sequences in the lowercased text.

Built from public references, not from any incident of ours:
- errno(3) and the Node.js "Common system errors" page: EACCES, EADDRINUSE, ECONNREFUSED, ECONNRESET,
  EMFILE, ENOSPC, ETIMEDOUT, ENOTFOUND/EAI_AGAIN, EPIPE, ESTALE and their messages.
- signal(7) and bash(1) EXIT STATUS (128 + signal): 137 SIGKILL (the OOM killer's signal), 143 SIGTERM,
  139 SIGSEGV; container exit-code guides (Docker, Kubernetes) for the same table.
- RFC 9110 (HTTP semantics) and RFC 6585 (429): status codes and their reason phrases.
- Kubernetes documentation (pod lifecycle and container states, debugging pods, node-pressure eviction,
  scheduling events, probes, autoscaling, RBAC): CrashLoopBackOff, ImagePullBackOff, OOMKilled, Pending,
  FailedScheduling, DiskPressure, NotReady, readiness/liveness/startup probes, HPA.
- gRPC status codes (grpc/doc/statuscodes.md): DEADLINE_EXCEEDED, UNAVAILABLE, RESOURCE_EXHAUSTED, ...
- PostgreSQL Appendix A (SQLSTATE codes) and the MySQL server error reference: 53300 too_many_connections,
  40P01 deadlock_detected, 55P03 lock_not_available, 23505 unique_violation, 25006 read_only_sql_transaction;
  ER_CON_COUNT_ERROR 1040, ER_LOCK_WAIT_TIMEOUT 1205, ER_LOCK_DEADLOCK 1213, ER_DUP_ENTRY 1062.
- Cloud providers' service names and their documented error names (AWS, Azure, Google Cloud), and the
  common SRE runbook vocabulary (N+1 queries, thundering herd, retry storm, noisy neighbour, clock skew).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

# name -> spellings. A spelling with a space (or punctuation other than the identifier characters) is a phrase.
GROUPS: dict[str, tuple[str, ...]] = {
    # ---- processes, signals, exit codes (signal(7), bash(1), container exit-code tables) ----------------
    "oom": (
        "oom", "oomkilled", "oom killed", "oom killer", "out of memory", "outofmemoryerror", "outofmemory",
        "exit code 137", "exit 137", "status 137", "exitcode 137", "exited 137", "exited with code 137",
        "exit status 137", "code 137", "sigkill", "signal 9", "kill -9",
        "memory limit exceeded", "memory limit", "cannot allocate memory", "enomem", "allowed memory size",
        "memory exhausted", "heap space",
    ),
    "sigterm": ("sigterm", "signal 15", "exit code 143", "exit 143", "exited 143", "code 143", "graceful shutdown", "prestop"),
    "segfault": ("sigsegv", "segmentation fault", "segfault", "exit code 139", "exit 139", "exited 139", "code 139", "core dumped"),
    "memory": ("memory", "heap", "rss", "memory leak", "working set"),
    "crashloop": ("crashloopbackoff", "crash loop", "crashloop", "back-off restarting failed container", "restartcount"),
    # ---- Kubernetes (pod lifecycle, scheduling, eviction, probes, autoscaling, RBAC) -------------------------
    "imagepull": (
        "imagepullbackoff", "errimagepull", "failed to pull image", "image pull", "pull access denied",
        "manifest unknown", "imagepullsecret", "imagepullsecrets",
    ),
    "registry": ("registry", "container registry", "docker hub", "dockerhub", "ghcr", "ecr", "acr", "gcr", "quay"),
    "unschedulable": (
        "pending", "unschedulable", "failedscheduling", "insufficient cpu", "insufficient memory",
        "nodes are available", "untolerated taint", "taint", "taints", "toleration", "tolerations", "noschedule",
        "affinity", "anti-affinity", "topologyspreadconstraints",
    ),
    "probe": (
        "probe", "readiness probe", "liveness probe", "startup probe", "health check", "healthcheck", "healthz",
        "readyz", "livez", "health endpoint", "readiness", "liveness", "not ready",
    ),
    "eviction": (
        "evicted", "eviction", "evict", "diskpressure", "memorypressure", "pidpressure", "ephemeral-storage",
        "ephemeral storage", "low on resource", "node-pressure",
    ),
    "node_notready": ("notready", "node not ready", "pleg", "kubelet stopped posting node status", "nodelost"),
    "autoscaling": (
        "hpa", "horizontalpodautoscaler", "autoscaler", "autoscaling", "scale out", "scale up", "scale in",
        "scale down", "maxreplicas", "minreplicas", "cluster autoscaler", "metrics-server", "stabilization window",
    ),
    "admission": ("admission webhook", "admission", "validating webhook", "mutating webhook", "validatingwebhookconfiguration", "gatekeeper", "opa", "kyverno", "failurepolicy", "pod security"),
    "pid_limit": ("pidpressure", "fork", "zombie", "zombies", "pids limit", "pid limit", "tini", "init process", "unable to create native thread", "eagain", "resource temporarily unavailable"),
    # ---- authorisation and authentication (RFC 9110 401/403; cloud IAM error names) ------------------------
    "forbidden": (
        "403", "forbidden", "access denied", "accessdenied", "accessdeniedexception", "permission denied", "eacces",
        "eperm", "not authorized", "not authorised", "authorizationpermissionmismatch", "authorizationfailure",
        "is forbidden", "insufficient permissions", "rbac", "clusterrole", "rolebinding", "iam", "role", "policy",
    ),
    "unauthenticated": (
        "401", "unauthorized", "unauthenticated", "authentication required", "authentication failed",
        "password authentication failed", "invalid credentials", "login failed", "bad credentials", "login",
    ),
    "credentials": (
        "credentials", "credential", "password", "secret", "secrets", "token", "access key", "api key",
        "rotation", "secrets manager", "key vault", "keyvault", "vault", "expiredtoken", "expiredtokenexception",
    ),
    "web_identity": (
        "irsa", "web identity", "webidentity", "assumerolewithwebidentity", "workload identity", "oidc",
        "federated credential", "federated identity", "sts", "assume role", "assumerole", "trust policy",
        "managed identity", "serviceaccount", "service account",
    ),
    # ---- HTTP status codes (RFC 9110, RFC 6585) --------------------------------------------------------------
    "bad_gateway": ("502", "bad gateway", "upstream prematurely closed", "no healthy upstream", "upstream connect error"),
    "unavailable": ("503", "service unavailable", "unavailable", "no endpoints available"),
    "gateway_timeout": ("504", "gateway timeout", "upstream timed out", "endpoint request timed out"),
    "too_large": (
        "413", "request entity too large", "payload too large", "content too large", "body too large",
        "proxy-body-size", "client_max_body_size", "message too large", "larger than max", "recordtoolargeexception",
        "emsgsize", "max.request.size", "file size limit",
    ),
    "rate_limit": (
        "429", "too many requests", "toomanyrequests", "rate limit", "rate limited", "ratelimit", "rate-limited",
        "throttle", "throttled", "throttling", "throttlingexception", "rate exceeded", "request rate is large",
        "provisionedthroughputexceededexception", "slowdown", "quota exceeded", "retry-after", "request units", "ru/s",
    ),
    "not_found": ("404", "not found", "notfound", "no such"),
    "server_error": ("500", "internal server error"),
    # ---- network (errno(3), Node.js common system errors) ----------------------------------------------------
    "dns": (
        "dns", "name resolution", "resolve", "resolving", "resolution", "nxdomain", "eai_again", "enotfound",
        "getaddrinfo", "no such host", "name or service not known", "could not translate host name", "coredns",
        "kube-dns", "resolv.conf", "ndots", "search domain", "search domains", "nodelocal dnscache", "externalname",
    ),
    "timeout": (
        "timeout", "timed out", "etimedout", "deadline exceeded", "deadline_exceeded", "deadlineexceeded",
        "context deadline exceeded", "i/o timeout", "read timeout", "connect timeout",
    ),
    "conn_refused": ("connection refused", "econnrefused", "connect: connection refused", "ehostunreach", "enetunreach", "host is unreachable"),
    "conn_reset": ("connection reset", "econnreset", "reset by peer", "socket hang up", "broken pipe", "epipe", "econnaborted"),
    "address_in_use": ("eaddrinuse", "address already in use", "address in use", "port already in use", "bind failed"),
    "open_files": ("emfile", "enfile", "too many open files", "file descriptor", "file descriptors", "ulimit", "nofile"),
    "keepalive": ("keepalive", "keep-alive", "idle timeout", "tcp keepalive", "too_many_pings", "goaway"),
    "egress": ("nat", "nat gateway", "egress", "outbound", "internet gateway", "route table", "private subnet", "private subnets"),
    "firewall": ("security group", "securitygroup", "firewall", "nsg", "network policy", "networkpolicy", "cidr", "ingress rule", "inbound rule"),
    "mtu": ("mtu", "packet size", "fragmentation", "path mtu", "pmtud", "mss", "jumbo frames"),
    "tls": (
        "tls", "ssl", "x509", "certificate", "certificates", "handshake", "certificate_verify_failed",
        "certificate verify failed", "pkix", "ca bundle", "truststore", "self-signed", "issuer", "ca-certificates",
        "acme", "cert-manager", "sslhandshakeexception", "unable to get local issuer certificate",
    ),
    "clock": ("clock skew", "clock drift", "ntp", "chrony", "time sync", "clock", "leeway", "nbf", "iat"),
    # ---- storage and disks --------------------------------------------------------------------------------
    "disk_full": (
        "no space left on device", "enospc", "disk full", "disk is full", "out of disk", "filesystem full",
        "volume full", "disk space", "flood stage", "flood-stage", "watermark", "df -h",
    ),
    "inodes": ("inode", "inodes", "df -i"),
    "permissions_fs": ("fsgroup", "non-root", "runasnonroot", "runasuser", "securitycontext", "chown", "read-only file system", "erofs"),
    "burst_credits": ("burst balance", "burstbalance", "burst credits", "burstcreditbalance", "cpu credits", "burstable", "gp2", "iops", "throughput credits"),
    "nfs": ("nfs", "stale file handle", "estale", "network filesystem", "network file system", "efs", "azure files"),
    # ---- databases (PostgreSQL SQLSTATE, MySQL error reference) ------------------------------------------------
    "db_connections": (
        "too many connections", "too many clients", "max_connections", "connection slots", "remaining connection slots",
        "53300", "er_con_count_error", "error 1040", "connection limit",
    ),
    "pool": (
        "connection pool", "pool", "pooler", "pgbouncer", "hikari", "hikaripool", "connection is not available",
        "pool exhausted", "pool size", "jdbc", "c3p0", "sqlalchemy pool",
    ),
    "deadlock": ("deadlock", "deadlocks", "deadlock detected", "deadlock found", "40p01", "er_lock_deadlock", "error 1213", "lock ordering"),
    "lock_wait": (
        "lock wait timeout", "error 1205", "er_lock_wait_timeout", "lock timeout", "55p03", "lock_not_available",
        "could not obtain lock", "row lock", "row locks", "locks", "lock", "locked", "access exclusive", "gap lock",
    ),
    "unique_violation": ("duplicate key", "unique constraint", "23505", "duplicate entry", "er_dup_entry", "error 1062", "primary key", "unique violation"),
    "read_only": ("read-only", "read only", "readonly", "25006", "read_only_sql_transaction", "super_read_only", "error 1290"),
    "full_scan": (
        "seq scan", "sequential scan", "full table scan", "full scan", "missing index", "no index",
        "using filesort", "filesort", "using temporary", "explain", "index",
    ),
    "n_plus_one": ("n+1", "n plus one", "select_related", "prefetch_related", "eager loading", "lazy loading", "includes", "joinedload"),
    "planner": ("planner", "optimizer", "query plan", "bad plan", "analyze", "statistics", "cardinality estimate", "nested loop"),
    "replication": (
        "replication", "replica", "replication lag", "replica lag", "seconds_behind_master", "seconds_behind_source",
        "read replica", "follower", "secondary", "standby", "stale reads", "read-your-writes",
    ),
    "failover": ("failover", "failed over", "promoted", "promotion", "switchover", "demoted", "primary", "writer endpoint"),
    "wal": ("wal", "write-ahead log", "write-ahead logs", "write ahead log", "pg_wal", "xlog", "replication slot", "replication slots", "binlog", "max_slot_wal_keep_size"),
    "vacuum": ("vacuum", "autovacuum", "bloat", "dead tuples", "idle in transaction", "xmin horizon"),
    "migration": ("migration", "migrations", "migrate", "schema change", "alter table", "ddl", "flyway", "liquibase", "alembic", "db:migrate"),
    "sequence": ("sequence", "serial", "autoincrement", "auto_increment", "identity column", "setval", "nextval"),
    "encoding": ("encoding", "charset", "utf8", "utf-8", "utf8mb4", "unicode", "emoji", "locale", "ascii", "unicodeencodeerror", "unicodedecodeerror", "lang=c.utf-8"),
    "timezone": ("timezone", "time zone", "tz", "dst", "daylight saving", "daylight saving time", "utc", "local time", "timestamptz"),
    "money_precision": ("float", "floating point", "decimal", "numeric", "rounding", "precision"),
    # ---- components and their aliases ----------------------------------------------------------------------------
    "kubernetes": ("kubernetes", "k8s", "kube", "kubelet", "kubectl", "eks", "aks", "gke", "openshift", "pod", "pods", "k3s"),
    "postgres": ("postgres", "postgresql", "psql", "pg", "psycopg2", "psycopg", "pgbouncer", "aurora postgresql"),
    "mysql": ("mysql", "mariadb", "innodb", "aurora mysql"),
    "mongodb": ("mongodb", "mongo", "pymongo", "mongoose", "replica set", "documentdb"),
    "redis": ("redis", "elasticache", "valkey", "memorystore", "maxmemory", "noeviction", "redis cluster"),
    "elasticsearch": ("elasticsearch", "opensearch", "lucene", "shard", "shards"),
    "kafka": ("kafka", "consumer group", "rebalance", "rebalancing", "max.poll.interval.ms", "broker", "consumer lag", "producer", "partition"),
    "queue": ("queue", "rabbitmq", "amqp", "sqs", "unacked", "ack", "acknowledge", "prefetch", "visibility timeout", "dead letter", "redelivery"),
    "object_storage": ("s3", "gcs", "blob", "blob storage", "object storage", "bucket", "storage account", "cloud storage"),
    "serverless": ("lambda", "serverless", "faas", "azure functions", "function app", "cloud functions", "cloud run", "consumption plan", "cold start", "provisioned concurrency"),
    "load_balancer": ("load balancer", "loadbalancer", "alb", "elb", "nlb", "target group", "application gateway", "api gateway", "ingress", "nginx", "envoy", "haproxy"),
    "cdn": ("cdn", "cloudfront", "akamai", "fastly", "edge cache", "cache invalidation", "cache-control"),
    "iac": ("terraform", "iac", "infrastructure as code", "cloudformation", "bicep", "arm template", "pulumi", "state lock", "tfstate"),
    "helm": ("helm", "chart", "argocd", "argo cd", "kustomize", "gitops", "helm release"),
    "ci": ("pipeline", "github actions", "gha", "workflow", "runner", "jenkins", "gitlab ci", "azure pipelines", "circleci"),
    "docker_build": ("docker build", "dockerfile", "build context", "dockerignore", ".dockerignore", "layer cache", "layers", "buildkit", "buildx"),
    "lockfile": ("lockfile", "lock file", "package-lock", "package-lock.json", "yarn.lock", "go.sum", "poetry.lock", "npm ci"),
    "dependency_resolution": ("resolutionimpossible", "dependency conflict", "conflicting dependencies", "version conflict", "dependency hell"),
    "git": ("git", "submodule", "submodules", "shallow clone", "shallow", "fetch-depth", "git describe", "git lfs"),
    "arch": ("exec format error", "arm64", "aarch64", "amd64", "x86_64", "graviton", "architecture", "platform mismatch", "multi-arch"),
    "jvm": ("jvm", "java", "openjdk", "jdk", "spring", "spring boot", "kotlin", "scala", "tomcat"),
    "gc": ("gc", "garbage collection", "garbage collector", "stop-the-world", "full gc", "gc pause", "g1", "humongous", "zgc"),
    "metaspace": ("metaspace", "permgen", "classloader", "class loader"),
    "node_runtime": ("node", "nodejs", "node.js", "v8", "javascript", "express", "npm"),
    "event_loop": ("event loop", "eventloop", "event-loop", "event loop lag", "blocking", "synchronous"),
    "python": ("python", "cpython", "pip", "django", "flask", "fastapi", "celery", "gunicorn", "uvicorn"),
    "asyncio": ("asyncio", "async", "coroutine", "await"),
    "gil": ("gil", "global interpreter lock"),
    "golang": ("go", "golang", "goroutine", "goroutines", "gomaxprocs"),
    "promise": ("promise", "unhandled rejection", "unhandledpromiserejection", "unhandled promise rejection"),
    "thread_pool": ("thread pool", "threadpool", "thread pool starvation", "starvation", "starved", "threads"),
    "cpu_throttle": ("cfs", "cpu throttling", "cfs_throttled", "cpu limit", "cpu limits", "cgroup", "cpu quota", "gomaxprocs", "automaxprocs", "steal", "cpu steal", "noisy neighbor", "noisy neighbour"),
    "cronjob": ("cronjob", "cron", "crontab", "scheduled job", "scheduled task", "celery beat", "scheduler", "startingdeadlineseconds"),
    "grpc": ("grpc", "rpc", "protobuf", "http/2", "goaway", "too_many_pings", "deadline"),
    "websocket": ("websocket", "websockets", "ws", "1006"),
    "cors": ("cors", "cross-origin", "access-control-allow-origin", "preflight"),
    "csrf": ("csrf", "xsrf", "cross-site request forgery", "csrf_trusted_origins"),
    "session": ("session", "sessions", "sticky session", "sticky sessions", "session affinity", "session store"),
    "redirect": ("redirect", "redirects", "redirect loop", "too many redirects", "err_too_many_redirects", "x-forwarded-proto"),
    "jwt": ("jwt", "bearer token", "iat", "nbf", "exp claim", "immaturesignatureerror", "expiredsignatureerror"),
    "oauth": ("oauth", "oauth2", "redirect uri", "redirect_uri", "callback url", "reply url", "aadsts", "entra", "entra id", "azure ad", "app registration", "openid connect"),
    "email": ("email", "smtp", "spf", "dkim", "dmarc", "spam"),
    "push_notifications": ("apns", "push notification", "push notifications", "fcm", "firebase cloud messaging"),
    "lease": ("lease", "leases", "leasealreadypresent", "blob lease"),
    "feature_flags": ("feature flag", "feature flags", "launchdarkly", "unleash", "flagsmith"),
    "config": ("config", "configuration", "settings", "env var", "environment variable", "environment variables", "envvar", "configmap", "dotenv", ".env", "yaml"),
    "reload": ("sighup", "reload", "hot reload", "graceful reload"),
    "observability_metrics": ("prometheus", "metrics", "cardinality", "high cardinality", "time series", "label", "labels"),
    "tracing": ("tracing", "trace", "traces", "span", "spans", "traceparent", "opentelemetry", "otel", "w3c trace context", "context propagation"),
    "alerting": ("alert", "alerts", "pager", "pagerduty", "on-call", "oncall", "alertmanager"),
    "logging": ("logs", "log", "logging", "fluent-bit", "fluentbit", "fluentd", "logrotate", "log rotation", "stdout"),
    "cache_stampede": ("cache stampede", "stampede", "thundering herd", "dogpile", "hot key", "request coalescing"),
    "retry_storm": ("retry storm", "retries", "retry", "backoff", "exponential backoff", "jitter", "circuit breaker"),
    "pagination": ("pagination", "paging", "page size", "paginate", "cursor"),
    "deploy": ("deploy", "deployment", "rollout", "rolling update", "rolling deploy", "release", "canary", "blue-green", "bluegreen", "rollback", "redeploy"),
    "recursion": ("recursion", "recursionerror", "maximum recursion depth", "stack overflow", "stackoverflowerror", "circular reference"),
    "circular_import": ("circular import", "partially initialized module", "importerror", "import cycle"),
    "race": ("data race", "race condition", "race detector", "-race", "mutex", "concurrent map writes"),
    "cancelled": ("context canceled", "context cancelled", "canceled", "cancelled"),
    "php": ("php", "php-fpm", "fpm", "pm.max_children", "memory_limit", "laravel", "symfony"),
    "ruby": ("ruby", "rails", "puma", "unicorn", "rack", "sidekiq", "activerecord"),
    "dotnet": (".net", "dotnet", "asp.net", "c#", ".result", "sync-over-async", "kestrel"),
    "build_from_source": ("building wheel", "build from source", "gcc", "musl", "alpine", "manylinux", "wheels", "wheel", "sdist"),
}

# Spellings that mean exactly another word: folded before stemming so both sides index the same token.
ALIASES: dict[str, str] = {
    "k8s": "kubernetes", "kube": "kubernetes", "pg": "postgres", "postgresql": "postgres", "psql": "postgres",
    "mongo": "mongodb", "golang": "go", "aarch64": "arm64", "x86_64": "amd64", "db": "database",
    "conn": "connection", "env": "environment", "vars": "variable", "var": "variable", "cert": "certificate",
    "certs": "certificate", "tls": "ssl", "js": "javascript", "py": "python", "gh": "github", "secrets": "secret",
    "perms": "permission", "mem": "memory", "ram": "memory", "cfg": "config", "auth": "authentication",
    "creds": "credentials", "repo": "repository", "repos": "repository", "svc": "service", "ns": "namespace",
    "pvc": "persistentvolumeclaim", "cm": "configmap", "sa": "serviceaccount", "lb": "loadbalancer",
    "mariadb": "mysql", "oomkilled": "oom", "oomkill": "oom", "crashloopbackoff": "crashloop",
    "crashlooping": "crashloop", "timeouts": "timeout", "timed": "timeout", "ratelimited": "ratelimit",
    "throttled": "throttle", "throttling": "throttle", "deadlocked": "deadlock", "denied": "deny",
    "refused": "refuse", "slowness": "slow", "latency": "slow", "permissions": "permission",
    "connections": "connection", "429": "ratelimit", "ci": "pipeline",
}

_PUNCTUATION = re.compile(r"[^a-z0-9.+/_\-]+")


def phrase_text(lowered: str) -> str:
    """Lowercase text with punctuation (colons, brackets, quotes) and runs of spaces made single spaces, so
    "Exit Code: 137" and "exited (137)" read as "exit code 137" and "exited 137"."""
    return " ".join(_PUNCTUATION.sub(" ", lowered).split())


@lru_cache(maxsize=2)
def _index(stem: Callable[[str], str]) -> tuple[dict[str, tuple[str, ...]], list[tuple[re.Pattern[str], str]]]:
    """word -> concept names, and (phrase pattern, concept name) pairs, built once."""
    words: dict[str, list[str]] = {}
    phrases: list[tuple[re.Pattern[str], str]] = []
    for name, spellings in GROUPS.items():
        for spelling in spellings:
            if re.fullmatch(r"[a-z0-9_]+", spelling):
                words.setdefault(spelling, []).append(name)
                words.setdefault(stem(spelling), []).append(name)  # "throttles" meets "throttle"
            else:
                pattern = re.compile(rf"(?<![a-z0-9]){re.escape(phrase_text(spelling))}(?![a-z0-9])")
                phrases.append((pattern, name))
    return {w: tuple(dict.fromkeys(n)) for w, n in words.items()}, phrases


def concepts(lowered_text: str, words: list[str], stem: Callable[[str], str]) -> list[str]:
    """The concept tokens (`c_<group>`) a text names: by its words (identifier-split, lowercase; a word or its
    `stem` equal to a spelling's) and by the phrases in its lowercased text; each once, in the order first met."""
    by_word, phrases = _index(stem)
    found: dict[str, None] = {}
    for word in words:
        for name in by_word.get(word, ()) or by_word.get(stem(word), ()):
            found.setdefault(f"c_{name}", None)
    text = phrase_text(lowered_text)
    for pattern, name in phrases:
        if pattern.search(text):
            found.setdefault(f"c_{name}", None)
    return list(found)


@lru_cache(maxsize=1)
def _single_words() -> frozenset[str]:
    return frozenset(w for spellings in GROUPS.values() for w in spellings if re.fullmatch(r"[a-z0-9_]+", w))


def is_vocabulary_word(word: str) -> bool:
    """Whether a lowercase word is itself one of the vocabulary's spellings (such words are not split further)."""
    return word in _single_words()
