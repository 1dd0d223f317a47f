"""The cause and the fix an error line supports, written from its category and the specifics it names."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from shared.investigations.rules.log_categories import CATEGORIES
from shared.investigations.rules.vocabulary import KNOWN_COMMANDS

Details = dict[str, str]


def explain(category: str, d: Details, line: str) -> tuple[str, list[str]]:
    """("<what fails, with its specifics>", [fixes]) for one error line; the general text when it names none.

    The first part completes "<subject> fails because ...".
    """
    writer = _WRITERS.get(category)
    general = CATEGORIES[category]
    because, fixes = writer(d, line.lower()) if writer else ("", [])
    return because or general.meaning, fixes or [general.fix]


def _what(d: Details) -> str:
    """`db:5432 (PostgreSQL)`, or "" when the line names no endpoint."""
    target = d.get("target", "")
    return f"{target} ({d['port_service']})" if target and d.get("port_service") else target


def _where(d: Details) -> tuple[str, str]:
    """("namespace `x`", "-n x"), or the pod's own namespace when the name carries none."""
    ns = d.get("namespace")
    return (f"namespace `{ns}`", f" -n {ns}") if ns else ("the pod's namespace", "")


def _reach(d: Details) -> list[str]:
    """How to check the endpoint a connection error names: a Service, a pod IP, localhost or an outside host."""
    port = d.get("port", "")
    on_port = f" on port {port}" if port else ""
    if d.get("local"):
        fix = (
            f"It connects to {d['target']} inside its own pod: check that the process or sidecar expected{on_port} "
            "runs in the pod, or set the dependency's real address (an unset host setting often falls back to "
            "localhost)."
        )
        return [fix]
    where, ns = _where(d)
    if d.get("pod") and d.get("service"):
        pod, svc = d["pod"], d["service"]
        fix = (
            f"`{d['host']}` is pod `{pod}` behind headless Service `{svc}` in {where}: check that the pod runs and "
            f"is ready (`kubectl get pod {pod}{ns}`) and listens{on_port}, and that `{svc}` selects it "
            f"(`kubectl get endpoints {svc}{ns}`)."
        )
        return [fix]
    if d.get("service"):
        svc = d["service"]
        exposes = f" and that it exposes port {port}" if port else ""
        fix = (
            f"Check that Service `{svc}` exists in {where} (`kubectl get svc {svc}{ns}`), that it has ready "
            f"endpoints (`kubectl get endpoints {svc}{ns}`; none means its pods are not ready or its selector "
            f"matches no pod){exposes}."
        )
        return [fix]
    if d.get("ip"):
        ip = d["ip"]
        fix = (
            f"Find what owns {ip} (`kubectl get pods,svc -A -o wide | grep {ip}`) and check that it runs, is "
            f"ready and listens{on_port}; pod IPs change, so call it by its Service name."
        )
        return [fix]
    if d.get("host"):
        fix = (
            f"Check that {d['host']} is up and reachable from the cluster{on_port} (egress NetworkPolicy, "
            "firewall, proxy settings)."
        )
        return [fix]
    return []


def _policies(d: Details) -> str:
    port = f" on port {d['port']}" if d.get("port") else ""
    return f"Check NetworkPolicies on both sides: this pod's egress and the target's ingress{port}."


def _connection(kind: str) -> Callable[[Details, str], tuple[str, list[str]]]:
    def write(d: Details, _lower: str) -> tuple[str, list[str]]:
        what = _what(d)
        if not what:
            return "", []
        because = {
            "connection_refused": f"its connections to {what} are refused: nothing accepts connections there (the "
            "service is down, has no ready endpoints, or the port is wrong)",
            "connection_timeout": f"{what} does not answer in time (unreachable, overloaded, or a NetworkPolicy "
            "drops the traffic)",
            "connection_reset": f"{what} closes its connections mid-request (it restarts or crashes, or a proxy or "
            "idle timeout cuts them)",
            "no_route": f"there is no network route to {what} (a stale address, a node or network fault, or a "
            "policy that blocks it)",
            "connection_failed": f"it cannot connect to {what}",
        }[kind]
        fixes = _reach(d)
        if kind in ("connection_timeout", "no_route", "connection_failed"):
            fixes.append(_policies(d))
        if kind == "connection_reset":
            fixes.append(CATEGORIES[kind].fix)
        return because, fixes

    return write


_SERVER_LIMIT = ("too many connections", "too many clients", "max_connections", "remaining connection slots",
                 "connection limit exceeded")  # fmt: skip


def _pool(d: Details, lower: str) -> tuple[str, list[str]]:
    what = _what(d)
    at = f" at {what}" if what else ""
    if any(w in lower for w in _SERVER_LIMIT):
        server = d.get("port_service") or "database"
        return (
            f"the {server} server{at} refuses new connections: its connection limit (max_connections) is reached",
            [
                (
                    "Count the connections per client (pg_stat_activity, SHOW PROCESSLIST) and lower each replica's "
                    "pool size so that replicas x pool size stays under the server's limit; or raise max_connections "
                    "or put a pooler (PgBouncer, ProxySQL) in front of it."
                )
            ],
        )
    to = f" to {what}" if what else ""
    fixes = [
        (
            "Find what holds the connections (connections not returned to the pool, long transactions, slow queries) "
            "before resizing the pool; keep replicas x pool size under the server's connection limit."
        )
    ]
    if what:
        fixes.append(f"Check that {what} still answers: a pool also drains when its server stops responding.")
    return f"its connection pool{to} is exhausted: every connection is busy and requests wait for one", fixes


def _rbac(d: Details, _lower: str) -> tuple[str, list[str]]:
    if not d.get("verb"):
        return "", []
    verb, resource, group = d["verb"], d["resource"], d.get("api_group", "")
    res = f"{resource}.{group}" if group else resource
    in_group = f" in API group `{group}`" if group else " (core API group)"
    cluster = d.get("scope") == "cluster" or not d.get("namespace")
    where = " at cluster scope" if cluster else f" in namespace `{d['namespace']}`"
    sa = d.get("service_account")
    who = f"service account `{sa}` (namespace `{d['sa_namespace']}`)" if sa else f"user `{d['user']}`"
    because = f"the Kubernetes API forbids {who} to {verb} {resource}{in_group}{where}: it lacks an RBAC role"
    name = re.sub(r"[^a-z0-9-]", "-", f"{sa or 'user'}-{verb}-{resource}".lower())[:63]
    role, binding = ("clusterrole", "clusterrolebinding") if cluster else ("role", "rolebinding")
    ns = "" if cluster else f" -n {d['namespace']}"
    subject = f"--serviceaccount={d['sa_namespace']}:{sa}" if sa else f"--user={d['user']}"
    fixes = [
        (
            f"Grant {who} {verb} on {res}: `kubectl create {role} {name} --verb={verb} --resource={res}{ns}` and "
            f"`kubectl create {binding} {name} --{role}={name} {subject}{ns}` (or add the rule to the Role it "
            "already has)."
        ),
        (
            f"Check that the pod runs as the intended service account (spec.serviceAccountName) and that "
            f"`kubectl auth can-i {verb} {res} --as={d['user']}{ns}` then answers yes."
        ),
    ]
    return because, fixes


def _dns(d: Details, _lower: str) -> tuple[str, list[str]]:
    host = d.get("host")
    name = f"`{host}`" if host else "a name it needs"
    if d.get("dns") == "server_unreachable":
        return (
            f"DNS lookups of {name} fail: the cluster's DNS server does not answer",
            [
                (
                    "Check that the CoreDNS pods run and are ready (`kubectl -n kube-system get pods -l "
                    "k8s-app=kube-dns`) and that no NetworkPolicy blocks this pod's egress to kube-dns on port 53 "
                    "(UDP and TCP)."
                )
            ],
        )
    because = f"the name {name} does not resolve (DNS says it does not exist)"
    if d.get("pod"):
        return because, _reach(d)
    if d.get("service"):
        svc = d["service"]
        where, ns = _where(d)
        return because, [
            (
                f"Check the name: does Service `{svc}` exist in {where} (`kubectl get svc {svc}{ns}`)? A short name "
                f"resolves only in the pod's own namespace; from another namespace use `{svc}.<namespace>.svc.cluster."
                "local`."
            )
        ]
    if host:
        return because, [(f"Check that `{host}` is spelled right and exists in DNS, and that the cluster's DNS can "
                         "resolve that domain (CoreDNS forwarding, stub domains).")]  # fmt: skip
    return because, []


def _tls(d: Details, _lower: str) -> tuple[str, list[str]]:
    of = f" of {_what(d)}" if d.get("target") else ""
    kind = d.get("tls")
    if kind == "expired":
        when = f" (valid until {d['expiry']})" if d.get("expiry") else ""
        return f"the TLS certificate{of} has expired{when}", [
            (
                "Renew the certificate (with cert-manager: check the Certificate, its Issuer and their events) and "
                "update the Secret that holds it; restart the pods that read it only at start."
            )
        ]
    if kind == "untrusted":
        return f"the TLS certificate{of} is signed by an authority it does not trust", [
            (
                "Give the client the CA that issued the certificate (mount it and point the client's CA bundle at it, "
                "or add it to the image's trust store), or use a certificate from a trusted CA; do not disable "
                "verification."
            )
        ]
    if kind == "hostname" and d.get("valid_for"):
        host = d.get("host", "the name it calls")
        return f"the TLS certificate is issued for {d['valid_for']}, not for `{host}`", [
            (
                f"Call the service by a name the certificate lists, or reissue the certificate with `{host}` among "
                "its subject alternative names."
            )
        ]
    return f"the TLS handshake{' with ' + _what(d) if of else ''} fails", [
        (
            "Check that the port speaks TLS (https vs http), that client and server share a TLS version and cipher, "
            "and that a client certificate is presented when the server asks for one."
        )
    ]


def _auth(d: Details, _lower: str) -> tuple[str, list[str]]:
    what = _what(d)
    user = f" for user `{d['user']}`" if d.get("user") else ""
    because = f"{what} rejects the credentials it presents{user}" if what else f"its credentials{user} are rejected"
    return because + " (authentication fails)", [
        (
            "Compare the credentials the pod reads (its Secret and env: key names, a trailing newline, a rotated "
            f"password or token) with the account{user} on {what or 'the server'}; restart the pod after fixing the "
            "Secret, since environment values are read at start."
        )
    ]


def _permission(d: Details, lower: str) -> tuple[str, list[str]]:
    if d.get("file") and ("permission denied" in lower or "eacces" in lower or "read-only" in lower):
        f = d["file"]
        return f"it may not access `{f}` (permission denied)", [
            (
                f"Make `{f}` usable by the user the container runs as: set the pod's securityContext (runAsUser, "
                "runAsGroup, fsGroup for volumes), fix the owner or mode in the image, or mount the volume read-write "
                "if it must write there."
            )
        ]
    if any(w in lower for w in ("forbidden", "403", "access denied", "not authorized", "accessdenied")):
        return "the API or service it calls denies its identity the action (forbidden)", [
            (
                "Grant the identity the pod uses (its service account, workload identity or API key) the role or "
                "policy for that action."
            )
        ]
    return "", []


_OOM = {
    "java_heap": ("the Java heap is exhausted", ("Raise the heap (-Xmx, or -XX:MaxRAMPercentage) together with the "
                  "container's memory limit, and take a heap dump (-XX:+HeapDumpOnOutOfMemoryError) to find what "
                  "fills it.")),
    "metaspace": ("the JVM's metaspace is exhausted", ("Raise -XX:MaxMetaspaceSize and the memory limit; classes "
                  "loaded again and again point to a class-loader leak.")),
    "threads": ("it cannot create more threads (memory or the PID limit is reached)", ("Bound the thread pools, "
                "and check the container's memory limit and the node's PID limit.")),
    "node_heap": ("the Node.js heap is exhausted", ("Raise --max-old-space-size to about 75% of the container's "
                  "memory limit (raising the limit if needed) and look for a leak with a heap snapshot.")),
    "redis": ("Redis reached its maxmemory and refuses writes", ("Raise maxmemory (and the pod's memory limit) or "
              "choose an eviction policy (maxmemory-policy) that fits the data.")),
}  # fmt: skip


def _oom(d: Details, _lower: str) -> tuple[str, list[str]]:
    kind = _OOM.get(d.get("memory", ""))
    return (kind[0], [kind[1]]) if kind else ("", [])


def _disk(d: Details, _lower: str) -> tuple[str, list[str]]:
    if not d.get("file"):
        return "", []
    f = d["file"]
    folder = f.rsplit("/", 1)[0] or "/"
    return f"the disk that holds `{f}` is full (no space left on device)", [
        (
            f"See which volume holds `{folder}` (`df -h {folder}` in the container) and grow it (expand the "
            "PersistentVolumeClaim if its StorageClass allows volume expansion) or free space; for the container's "
            "own layer or an emptyDir, raise the ephemeral-storage limit or sizeLimit."
        )
    ]


def _rate(d: Details, _lower: str) -> tuple[str, list[str]]:
    what = _what(d)
    return (f"{what} rate-limits it (too many requests or quota exceeded)", []) if what else ("", [])


def _setting(d: Details, _lower: str) -> tuple[str, list[str]]:
    name = d.get("setting")
    if not name:
        return "", []
    if d.get("env") == "yes":
        return f"the environment variable `{name}` is not set", [
            (
                f"Set `{name}` in the container's env (a value, or valueFrom a ConfigMap/Secret key; with envFrom the "
                f"key must be named `{name}` exactly), then restart the pod."
            )
        ]
    return f"the setting `{name}` is missing from its configuration", [
        (
            f"Add `{name}` to the configuration it loads (the ConfigMap or file mounted into the pod, or its "
            "environment), then restart the pod."
        )
    ]


def _module(d: Details, _lower: str) -> tuple[str, list[str]]:
    m = d.get("module")
    if not m:
        return "", []
    return f"`{m}` cannot be loaded: it is missing from the image", [
        (
            f"Add `{m}` to the image's dependencies and rebuild (for a shared library, install its OS package), and "
            "check that the image tag is the intended build."
        )
    ]


def _schema(d: Details, _lower: str) -> tuple[str, list[str]]:
    kind, obj = d.get("object_kind"), d.get("object")
    if not obj:
        return "", []
    because = f"the database {kind} `{obj}` does not exist"
    if kind == "database":
        return because, [(f"Create database `{obj}` or point the app at the right one (the database name in its "
                         "connection settings).")]  # fmt: skip
    return because, [(f"Run the migrations that create {kind} `{obj}` (the migration job or init container) before "
                     "this version starts, and check that it connects to the intended database.")]  # fmt: skip


def _command(d: Details, lower: str) -> tuple[str, list[str]]:
    cmd = d.get("command")
    if not cmd:
        return "", []
    if "exec format" in lower:
        return f"`{cmd}` cannot be executed on this node (exec format error)", []
    word = cmd.rsplit("/", 1)[-1]
    close = difflib.get_close_matches(word, KNOWN_COMMANDS, n=1, cutoff=0.6)
    if close and close[0] != word:
        return f"the command `{word}` does not exist in the image (a typo: probably `{close[0]}`)", [
            f"Replace `{word}` with `{close[0]}` in the pod's command/args."
        ]
    return f"the command `{cmd}` does not exist in the image", [
        f"Fix `{cmd}` in the pod's command/args, or install it in the image."
    ]


def _file(d: Details, _lower: str) -> tuple[str, list[str]]:
    f = d.get("file")
    if not f:
        return "", []
    return f"the file `{f}` does not exist", [
        (
            f"Provide `{f}`: mount it (a ConfigMap/Secret volume whose key matches the file name; check mountPath and "
            "subPath) or add it to the image, or fix the path in the configuration."
        )
    ]


def _parse(d: Details, _lower: str) -> tuple[str, list[str]]:
    f = d.get("file")
    if not f:
        return "", []
    at = f" line {d['line_no']}" if d.get("line_no") else ""
    return f"its configuration `{f}` does not parse (syntax error{' at' + at if at else ''})", [
        (
            f"Fix the syntax of `{f}`{' at' + at if at else ''}, validate it before deploying (e.g. `nginx -t`, "
            "`sh -n`, a YAML/JSON linter), then update the ConfigMap it comes from and restart."
        )
    ]


_HTTP_FIX = {
    "500": "Find the exception logged for those requests (the application's error lines) and fix it.",
    "502": "The server behind it breaks connections: check the upstream's pods (restarts, readiness) and that the "
    "proxy's upstream address and port are right.",
    "503": "It has no healthy upstream or is overloaded: check the upstream Service's endpoints and readiness, and "
    "its capacity (replicas, HPA).",
    "504": "The upstream is too slow: find what it waits on; raise the proxy's timeout only if the work is "
    "legitimately long.",
}


def _http(d: Details, _lower: str) -> tuple[str, list[str]]:
    status = d.get("status")
    if not status:
        return "", []
    count = d.get("count", "")
    requests = f"{count} request{'s' if count != '1' else ''}" if count else "requests"
    path = f" for {d.get('method', '')} {d['path']}".replace("  ", " ") if d.get("path") else ""
    total = d.get("server_errors")
    of = f" ({total} server errors in all)" if total and total != count else ""
    fix = _HTTP_FIX.get(status, "Find the error behind the failing requests and fix it.")
    return f"it answers HTTP {status} to {requests}{path}{of}", [fix]


def _slow(d: Details, _lower: str) -> tuple[str, list[str]]:
    s = d.get("seconds")
    return (f"an operation it waits on takes {s} s", []) if s else ("", [])


def _probe(d: Details, _lower: str) -> tuple[str, list[str]]:
    probe, port = d.get("probe", "health"), d.get("port", "")
    on = f" on {d['target']}" if d.get("target") else ""
    if d.get("probe_error") == "refused":
        return f"its {probe} probe{on} is refused: nothing listens on that port (not started yet, or another port)", [
            (
                f"Check that the probe's port{' (' + port + ')' if port else ''} is the port the app listens on, and "
                "give a slow start time (initialDelaySeconds or a startupProbe)."
            )
        ]
    if d.get("probe_error") == "timeout":
        return f"its {probe} probe{on} gets no answer within timeoutSeconds", [
            (
                "Find what blocks the health endpoint (startup work, a dependency it checks, CPU throttling), or "
                "raise the probe's timeoutSeconds/failureThreshold, or add a startupProbe for slow starts."
            )
        ]
    if d.get("status"):
        return f"its {probe} probe{on} gets HTTP {d['status']} from the app", [
            (
                "See what the app logs when its health endpoint fails (a dependency it checks, an error), and fix "
                "that; a health check should not fail on a dependency it cannot fix by restarting."
            )
        ]
    return "", []


def _crash(d: Details, lower: str) -> tuple[str, list[str]]:
    e = d.get("exception")
    if e:
        return f"it stops on {e}", []
    if lower.lstrip().startswith("panic:"):
        return "it stops on a Go panic", [
            (
                "Fix the code at the first application frame of the goroutine trace; a nil pointer often comes from a "
                "failed call whose error was ignored or from a setting that was never set."
            )
        ]
    return "", []


_WRITERS: dict[str, Callable[[Details, str], tuple[str, list[str]]]] = {
    "connection_refused": _connection("connection_refused"),
    "connection_timeout": _connection("connection_timeout"),
    "connection_reset": _connection("connection_reset"),
    "no_route": _connection("no_route"),
    "connection_failed": _connection("connection_failed"),
    "pool_exhausted": _pool,
    "rbac_forbidden": _rbac,
    "dns": _dns,
    "tls": _tls,
    "auth_failed": _auth,
    "permission_denied": _permission,
    "oom": _oom,
    "disk_full": _disk,
    "rate_limited": _rate,
    "missing_config": _setting,
    "missing_module": _module,
    "missing_schema": _schema,
    "command_not_found": _command,
    "exec_format": _command,
    "file_not_found": _file,
    "config_parse": _parse,
    "http_5xx": _http,
    "slow": _slow,
    "probe_failed": _probe,
    "crash": _crash,
}
