"""Log signals: lines ranked by error-likeness and rarity, their categories and specifics, and the findings they
support. The log lines are written the way Postgres, MySQL, nginx, the JVM, Go, Python, Node, the kubelet and
client-go print them."""

from __future__ import annotations

import pytest

from shared.investigations.rules.log_categories import CATEGORIES, SPECIFIC, classify
from shared.investigations.rules.log_signals import (
    MAX_CHARS,
    MAX_LINES,
    LogSignal,
    log_findings,
    log_summary,
    rank_log_lines,
)
from shared.investigations.rules.log_vocabulary import level_of, template_of
from shared.investigations.rules.log_window import HEAD_LINES, read_window
from shared.investigations.rules.state import CallRecord, Finding


def _top(text: str) -> LogSignal:
    signals = rank_log_lines(text)
    assert signals, text
    return signals[0]


def _findings(text: str, subject: str = "api-7c9f") -> list[Finding]:
    rec = CallRecord(tool="pods_log", args={"name": subject, "namespace": "shop"}, output=text)
    return log_findings(rec, subject)


def _one(text: str, category: str) -> Finding:
    found = _findings(text)
    assert found, text
    assert found[0].rule == f"log_{category}", [f.rule for f in found]
    return found[0]


# ---- categories of single lines ----------------------------------------------------------------------------

CASES = [
    (
        (
            'level=ERROR msg="Notify for alerts failed" err="team/slack[0]: notify retry canceled due to unrecoverable '
            'error after 1 attempts: channel \\"#oncall\\": unexpected status code 404: no_service"'
        ),
        "client_error",
    ),
    (
        (
            "ERROR: [1] bootstrap checks failed. max virtual memory areas vm.max_map_count [65530] is too low, "
            "increase to at least [262144]"
        ),
        "kernel_setting",
    ),
    # Consumers, databases and DNS
    (
        (
            "org.apache.kafka.common.errors.SerializationException: Error deserializing key/value for partition "
            "payments-3 at offset 88412"
        ),
        "undecodable_record",
    ),
    ("io.confluent.kafka.serializers: Unknown magic byte!", "undecodable_record"),
    ('2024-03-01 10:05:12.345 UTC [62] LOG:  archive command failed with exit code 1', "archive_failed"),
    (
        (
            '[FATAL] plugin/loop: Loop (127.0.0.1:45262 -> :53) detected for zone ".", see '
            "https://coredns.io/plugins/loop#troubleshooting"
        ),
        "dns_loop",
    ),
    # Postgres server and clients
    ('2024-03-01 10:05:12.345 UTC [87] FATAL:  password authentication failed for user "billing"', "auth_failed"),
    ("2024-03-01 10:05:12.345 UTC [90] FATAL:  sorry, too many clients already", "pool_exhausted"),
    ("FATAL:  remaining connection slots are reserved for non-replication superuser connections", "pool_exhausted"),
    ("2024-03-01 10:05:12.345 UTC [91] ERROR:  deadlock detected", "deadlock"),
    ('2024-03-01 10:05:12.345 UTC [92] ERROR:  relation "invoices" does not exist at character 15', "missing_schema"),
    ('FATAL:  database "ledger" does not exist', "missing_schema"),
    ('FATAL:  role "reporting" does not exist', "auth_failed"),
    ("2024-03-01 10:05:12.345 UTC [93] LOG:  duration: 5234.123 ms  statement: SELECT * FROM orders", "slow"),
    ('2024-03-01 10:05:12.345 UTC [94] PANIC:  could not write to file "pg_wal/xlogtemp.94": No space left on device',
     "disk_full"),
    # MySQL
    ("ERROR 1045 (28000): Access denied for user 'root'@'10.244.1.7' (using password: YES)", "auth_failed"),
    ("ERROR 2005 (HY000): Unknown MySQL server host 'mysql-0.mysql' (-2)", "dns"),
    ("ERROR 2003 (HY000): Can't connect to MySQL server on 'mysql-primary:3306' (111)", "connection_refused"),
    ("ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction", "deadlock"),
    ("ERROR 1040 (HY000): Too many connections", "pool_exhausted"),
    ("ERROR 1146 (42S02): Table 'shop.carts' doesn't exist", "missing_schema"),
    # nginx
    (('2024/03/01 10:00:00 [error] 29#29: *1 connect() failed (111: Connection refused) while connecting to upstream, '
     'client: 10.244.0.1, server: _, request: "GET /api HTTP/1.1", upstream: "http://10.96.0.20:8080/api"'),
     "connection_refused"),
    (("2024/03/01 10:00:00 [error] 29#29: *7 upstream timed out (110: Connection timed out) while reading response "
     "header from upstream"), "connection_timeout"),
    ('nginx: [emerg] unknown directive "proxy_pas" in /etc/nginx/conf.d/default.conf:12', "config_parse"),
    ("nginx: [emerg] host not found in upstream \"backend:8080\" in /etc/nginx/conf.d/default.conf:5", "dns"),
    # JVM
    ('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space', "oom"),
    ("Caused by: java.net.UnknownHostException: kafka-0.kafka-headless", "dns"),
    ("javax.net.ssl.SSLHandshakeException: PKIX path building failed: unable to find valid certification path",
     "tls"),
    (("com.zaxxer.hikari.pool.HikariPool$PoolInitializationException: HikariPool-1 - Connection is not available, "
     "request timed out after 30000ms."), "pool_exhausted"),
    ("Caused by: java.lang.ClassNotFoundException: org.postgresql.Driver", "missing_module"),
    (("com.datastax.driver.core.exceptions.BusyPoolException: [cassandra-0.cassandra/10.244.1.9:9042] Pool is busy "
     "(no available connection and timed out after 5000 MILLISECONDS)"), "pool_exhausted"),
    (("Caused by: java.lang.IllegalArgumentException: Could not resolve placeholder 'PAYMENTS_URL' in value "
     '"${PAYMENTS_URL}"'), "missing_config"),
    # Go
    ("dial tcp: lookup redis-master on 10.96.0.10:53: no such host", "dns"),
    ("dial tcp: lookup redis-master on 10.96.0.10:53: read udp 10.244.2.4:51234->10.96.0.10:53: i/o timeout", "dns"),
    ("Get \"https://vault.security:8200/v1/sys/health\": x509: certificate signed by unknown authority", "tls"),
    ("open /etc/config/app.yaml: no such file or directory", "file_not_found"),
    ("error loading config: yaml: line 7: mapping values are not allowed in this context", "config_parse"),
    ("write /var/lib/data/wal/000001.log: no space left on device", "disk_full"),
    ("dial tcp 10.96.44.12:6379: connect: no route to host", "no_route"),
    ("Failed to connect to broker kafka-0.kafka:9092, retrying", "connection_failed"),
    ("read tcp 10.244.1.5:43210->10.96.44.12:5432: read: connection reset by peer", "connection_reset"),
    ("exec /usr/local/bin/app: exec format error", "exec_format"),
    # Python
    ("ModuleNotFoundError: No module named 'requests'", "missing_module"),
    ("PermissionError: [Errno 13] Permission denied: '/data/cache.db'", "permission_denied"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/config/settings.yaml'", "file_not_found"),
    ("MemoryError", "oom"),
    ("KeyError: 'STRIPE_API_KEY'", "missing_config"),
    ("requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: https://api.example.com/v1/x",
     "rate_limited"),
    # Node
    ("Error: connect ECONNREFUSED 10.96.5.6:27017", "connection_refused"),
    ("Error: getaddrinfo ENOTFOUND payments-api", "dns"),
    ("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "oom"),
    ("Error: Cannot find module 'express'", "missing_module"),
    ("Error: ENOSPC: no space left on device, write", "disk_full"),
    # Kubernetes
    (('E0301 10:00:01.123456       1 reflector.go:147] failed to list *v1.Pod: pods is forbidden: User '
     '"system:serviceaccount:ci:builder" cannot list resource "pods" in API group "" in the namespace "staging"'),
     "rbac_forbidden"),
    ('Error from server (Forbidden): pods "web-0" is forbidden: exceeded quota: compute, requested: limits.memory=2Gi',
     "quota_exceeded"),
    ("Liveness probe failed: HTTP probe failed with statuscode: 500", "probe_failed"),
    (('Readiness probe failed: Get "http://10.244.1.5:8080/ready": dial tcp 10.244.1.5:8080: connect: connection '
     "refused"), "probe_failed"),
    ("/bin/sh: 1: curll: not found", "command_not_found"),
    ("error: environment variable ORDERS_QUEUE_URL is not set", "missing_config"),
    ("level=error msg=\"request failed\" status=503 path=/api/cart", "http_5xx"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "category"), CASES, ids=[c[1] + f"-{i}" for i, c in enumerate(CASES)])
def test_a_line_is_read_as_its_category(line: str, category: str) -> None:
    top = _top(line)
    assert top.category == category, (top.category, line)
    assert top.line == line.strip()[:300]


def test_every_category_in_the_cases_has_a_meaning_and_a_fix() -> None:
    for _, category in CASES:
        assert CATEGORIES[category].meaning
        assert CATEGORIES[category].fix
    assert {c for _, c in CASES} >= SPECIFIC - {"admission_denied"}


def test_ordinary_lines_name_no_category() -> None:
    for line in (
        "INFO Waiting for connections on port 8080",
        "2024-03-01T10:00:00Z INFO served GET /healthz in 3ms",
        "tls: enabled, min version 1.2",
        "Waited for 1.1s due to client-side throttling, not priority and fairness",
        "Processed 429 records in batch 12",
    ):
        assert classify(line) == ("", -1), line


# ---- levels and templates -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "level"),
    [
        ('{"severity":"ERROR","message":"payment declined upstream"}', "error"),
        ('{"level":50,"time":1709287200000,"msg":"unhandled rejection"}', "error"),
        ('{"level":"warn","msg":"slow consumer"}', "warning"),
        ('time="2024-03-01T10:00:00Z" level=error msg="sync failed"', "error"),
        ("W0301 10:00:00.000000       1 warnings.go:70] v1 Endpoints is deprecated", "warning"),
        ("2024/03/01 10:00:00 [crit] 12#12: *3 SSL_do_handshake() failed", "fatal"),
        (
            "2024-03-01T10:00:00.000000Z 0 [Warning] [MY-010068] [Server] CA certificate ca.pem is self signed.",
            "warning",
        ),
        ("2024-03-01 10:00:00,123 - ERROR - job failed", "error"),
        ("panic: assignment to entry in nil map", "fatal"),
        ("INFO: Processed 3 ERROR records", "info"),
        ("just some text", ""),
    ],
)
def test_levels_are_read_from_the_common_formats(line: str, level: str) -> None:
    assert level_of(line) == level


def test_lines_that_differ_in_times_ids_addresses_and_names_share_a_template() -> None:
    lines = [
        (
            "2024-03-01T10:00:01Z ERROR worker-7f9c8d request 3fa85f64-5717-4562-b3fc-2c963f66afa6 to 10.0.0.7:8080 "
            "failed after 1.5s for user 'alice'"
        ),
        (
            "2024-03-01T10:07:44Z ERROR worker-1a2b3c request 9b2e1c4d-1111-4562-b3fc-2c963f66afa6 to 10.0.0.9:8080 "
            "failed after 12ms for user 'bob'"
        ),
    ]
    assert template_of(lines[0]) == template_of(lines[1])
    top = _top("\n".join(lines))
    assert top.count == 2
    assert top.first_index == 0


# ---- ranking ------------------------------------------------------------------------------------------------


def test_the_first_error_after_the_last_start_ranks_first() -> None:
    old = [f"2024-03-01T09:00:{i:02d}Z ERROR cache warmup failed, retrying" for i in range(8)]
    text = "\n".join(
        [
            *old,
            "2024-03-01T09:10:00Z INFO Starting checkout v2.3.1",
            "2024-03-01T09:10:01Z INFO HTTP server listening on :8080",
            "2024-03-01T09:10:02Z ERROR loading price table: unexpected status from pricing",
            "2024-03-01T09:10:03Z ERROR cache warmup failed, retrying",
        ]
    )
    top = _top(text)
    assert top.after_start
    assert "loading price table" in top.line
    assert sum(s.after_start for s in rank_log_lines(text)) == 1
    assert log_summary(text).last_start_index == 9


def test_the_most_repeated_error_outranks_a_single_generic_one() -> None:
    lines = [f"2024-03-01T10:00:{i % 60:02d}Z INFO processed batch {i}" for i in range(100)]
    lines += [
        f"2024-03-01T10:02:{i:02d}Z ERROR publish to topic orders failed: broker not available" for i in range(30)
    ]
    lines.insert(50, "2024-03-01T10:00:50Z ERROR could not flush metrics")
    signals = rank_log_lines("\n".join(lines))
    assert "broker not available" in signals[0].line
    assert signals[0].count == 30
    assert any("flush metrics" in s.line and s.count == 1 for s in signals)


def test_a_line_rare_among_many_info_lines_is_reported_and_the_common_ones_are_not() -> None:
    lines = [f"2024-03-01T10:00:{i % 60:02d}Z INFO GET /healthz 200 in {i % 9}ms" for i in range(200)]
    lines.insert(120, "2024-03-01T10:01:00Z INFO leader election lost, stepping down")
    signals = rank_log_lines("\n".join(lines))
    assert [s.category for s in signals] == ["rare"]
    assert "leader election lost" in signals[0].line


def test_an_http_status_burst_is_counted_with_its_status_and_route() -> None:
    lines = []
    for i in range(90):
        status = 502 if i % 3 else 200
        lines.append(
            f'10.244.0.{i % 9} - - [01/Mar/2024:10:00:{i % 60:02d} +0000] "GET /api/orders/{1000 + i}?page=2 '
            f'HTTP/1.1" {status} 157 "-" "Mozilla/5.0"'
        )
    top = _top("\n".join(lines))
    assert top.category == "http_5xx"
    assert top.count == 60
    assert top.details == {"status": "502", "method": "GET", "path": "/api/orders/<*>", "count": "60",
                           "server_errors": "60"}  # fmt: skip
    finding = _one("\n".join(lines), "http_5xx")
    assert "HTTP 502 to 60 requests for GET /api/orders/<*>" in finding.cause
    assert finding.symptom
    assert "upstream" in finding.remediation[0]


def test_stack_frames_are_not_signals_and_the_exception_line_is() -> None:
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/app/worker.py", line 88, in <module>',
            "    main()",
            '  File "/app/worker.py", line 41, in main',
            '    conn = psycopg2.connect(os.environ["DSN"])',
            (
                'psycopg2.OperationalError: could not translate host name "ledger-db" to address: Name or service not '
                "known"
            ),
            "",
            "panic: runtime error: index out of range [3] with length 3",
            "",
            "goroutine 1 [running]:",
            "main.parse(...)",
            "\t/src/main.go:27 +0x1d",
            "main.main()",
            "\t/src/main.go:12 +0x25",
            "exit status 2",
        ]
    )
    signals = rank_log_lines(text)
    assert signals[0].category == "dns"
    assert signals[0].details["host"] == "ledger-db"
    assert not any(s.line.startswith(("File", "main.", "/src", "conn =")) for s in signals)
    assert {s.category for s in signals} >= {"dns", "crash"}


# ---- specifics and findings ---------------------------------------------------------------------------------


def test_a_refused_connection_names_the_service_and_port_to_check() -> None:
    text = (
        "psql: error: could not connect to server: Connection refused\n"
        '\tIs the server running on host "orders-db" (10.96.3.4) and accepting\n'
        "\tTCP/IP connections on port 5432?"
    )
    f = _one(text, "connection_refused")
    assert f.cause.startswith("api-7c9f fails because its connections to orders-db:5432 (PostgreSQL) are refused")
    assert f.cause.endswith("shown by the line: psql: error: could not connect to server: Connection refused")
    assert f.evidence[0].quote == "psql: error: could not connect to server: Connection refused"
    assert f.evidence[0].tool == "pods_log"
    fix = " ".join(f.remediation)
    assert "Service `orders-db`" in fix
    assert "kubectl get endpoints orders-db" in fix
    assert "port 5432" in fix


def test_localhost_means_a_missing_sidecar_or_an_unset_address() -> None:
    f = _one("Error: connect ECONNREFUSED 127.0.0.1:6379\n    at TCPConnectWrap.afterConnect (node:net:1555:16)",
             "connection_refused")  # fmt: skip
    assert "127.0.0.1:6379 (Redis)" in f.cause
    assert "inside its own pod" in f.remediation[0]


def test_a_python_connection_error_names_the_host_and_port() -> None:
    line = (
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='inventory', port=8080): Max retries exceeded "
        "with url: /items (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f3a>: "
        "Failed to establish a new connection: [Errno 111] Connection refused'))"
    )
    assert _top(line).details["target"] == "inventory:8080"


def test_rbac_forbidden_names_the_service_account_verb_and_resource() -> None:
    line = (
        "E0301 10:00:01.123456       1 reflector.go:147] deployments.apps is forbidden: User "
        '"system:serviceaccount:ci:deployer" cannot patch resource "deployments" in API group "apps" in the '
        'namespace "prod"'
    )
    f = _one(line, "rbac_forbidden")
    assert (
        "service account `deployer` (namespace `ci`) to patch deployments in API group `apps` in namespace `prod`"
        in (f.cause)
    )
    fix = f.remediation[0]
    assert "kubectl create role deployer-patch-deployments --verb=patch --resource=deployments.apps -n prod" in fix
    assert "--serviceaccount=ci:deployer -n prod" in fix
    assert f.confidence >= 0.9


def test_rbac_at_cluster_scope_asks_for_a_cluster_role() -> None:
    line = (
        'pods is forbidden: User "system:serviceaccount:monitoring:agent" cannot watch resource "pods" in API group '
        '"" at the cluster scope'
    )
    fix = _one(line, "rbac_forbidden").remediation[0]
    assert "kubectl create clusterrole agent-watch-pods --verb=watch --resource=pods`" in fix
    assert "clusterrolebinding" in fix


def test_a_missing_environment_variable_is_named() -> None:
    text = "\n".join(
        [
            "INFO:     Started server process [1]",
            "Traceback (most recent call last):",
            '  File "/app/settings.py", line 9, in <module>',
            '    API_KEY = os.environ["STRIPE_API_KEY"]',
            '  File "<frozen os>", line 679, in __getitem__',
            "KeyError: 'STRIPE_API_KEY'",
        ]
    )
    f = _one(text, "missing_config")
    assert "the environment variable `STRIPE_API_KEY` is not set" in f.cause
    assert "the first error after its last start" in f.cause
    assert "Set `STRIPE_API_KEY` in the container's env" in f.remediation[0]


def test_a_java_chain_is_read_at_its_root_with_the_host_from_the_line_above() -> None:
    text = "\n".join(
        [
            "2024-03-01 10:00:00.000  INFO 1 --- [main] c.e.shop.Application : Starting Application v1.4.2",
            (
                "org.springframework.beans.factory.BeanCreationException: Error creating bean with name "
                "'entityManagerFactory'"
            ),
            "\tat org.springframework.beans.factory.support.AbstractBeanFactory.getBean(AbstractBeanFactory.java:208)",
            (
                "Caused by: org.postgresql.util.PSQLException: Connection to orders-db:5432 refused. Check that the "
                "hostname and port are correct."
            ),
            "\tat org.postgresql.core.v3.ConnectionFactoryImpl.openConnectionImpl(ConnectionFactoryImpl.java:319)",
            "\t... 30 more",
            "Caused by: java.net.ConnectException: Connection refused",
            "\tat java.base/sun.nio.ch.Net.pollConnect(Native Method)",
            "\t... 45 more",
        ]
    )
    f = _one(text, "connection_refused")
    assert f.evidence[0].quote == "Caused by: java.net.ConnectException: Connection refused"
    assert "orders-db:5432" in f.cause
    assert len(f.evidence) == 2


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (("x509: certificate has expired or is not yet valid: current time 2024-03-01T10:00:00Z is after "
         "2024-02-28T23:59:59Z"), "has expired (valid until 2024-02-28T23:59:59Z)"),
        ("x509: certificate signed by unknown authority", "signed by an authority it does not trust"),
        ("x509: certificate is valid for ingress.local, not api.shop.example.com",
         "issued for ingress.local, not for `api.shop.example.com`"),
    ],
)  # fmt: skip
def test_tls_failures_say_what_is_wrong_with_the_certificate(line: str, expected: str) -> None:
    assert expected in _one(line, "tls").cause


def test_dns_failures_tell_a_missing_name_from_a_silent_server() -> None:
    missing = _one("dial tcp: lookup payments-api.billing on 10.96.0.10:53: no such host", "dns")
    assert "`payments-api.billing` does not resolve" in missing.cause
    assert "Service `payments-api` exist in namespace `billing`" in missing.remediation[0]
    silent = _one("dial tcp: lookup payments-api on 10.96.0.10:53: read udp 10.244.2.4:51234->10.96.0.10:53: "
                  "i/o timeout", "dns")  # fmt: skip
    assert "does not answer" in silent.cause
    assert "port 53" in silent.remediation[0]


def test_file_disk_and_permission_findings_name_the_path() -> None:
    assert (
        "`/config/settings.yaml`"
        in _one(
            "FileNotFoundError: [Errno 2] No such file or directory: '/config/settings.yaml'", "file_not_found"
        ).cause
    )
    disk = _one("write /var/lib/data/wal/000001.log: no space left on device", "disk_full")
    assert "`/var/lib/data/wal/000001.log`" in disk.cause
    assert "df -h /var/lib/data/wal" in disk.remediation[0]
    perm = _one("PermissionError: [Errno 13] Permission denied: '/data/cache.db'", "permission_denied")
    assert "`/data/cache.db`" in perm.cause
    assert "fsGroup" in perm.remediation[0]


def test_a_config_syntax_error_names_the_file_and_line() -> None:
    f = _one('nginx: [emerg] unknown directive "proxy_pas" in /etc/nginx/conf.d/default.conf:12', "config_parse")
    assert "`/etc/nginx/conf.d/default.conf` does not parse (syntax error at line 12)" in f.cause


def test_a_mistyped_command_is_named_with_its_likely_intent() -> None:
    f = _one("/bin/sh: 1: curll: not found", "command_not_found")
    assert "probably `curl`" in f.cause
    assert f.remediation == ["Replace `curll` with `curl` in the pod's command/args."]


def test_oom_fixes_follow_the_runtime() -> None:
    assert (
        "-Xmx" in _one('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space', "oom").remediation[0]
    )
    node = _one("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "oom")
    assert "--max-old-space-size" in node.remediation[0]


def test_a_server_side_connection_limit_is_told_from_a_client_pool() -> None:
    server = _one("2024-03-01 10:05:12.345 UTC [90] FATAL:  sorry, too many clients already", "pool_exhausted")
    assert "max_connections" in server.cause
    client = _one("HikariPool-1 - Connection is not available, request timed out after 30000ms.", "pool_exhausted")
    assert "connection pool" in client.cause


def test_findings_are_one_per_category_and_generic_errors_only_without_a_reason() -> None:
    text = "\n".join(
        [
            "ERROR job 7 failed",
            "Error: getaddrinfo ENOTFOUND payments-api",
            "Error: getaddrinfo ENOTFOUND ledger-api",
            "Error: connect ECONNREFUSED 10.96.5.6:27017",
        ]
    )
    rules = [f.rule for f in _findings(text)]
    assert sorted(rules) == ["log_connection_refused", "log_dns"]
    assert [f.rule for f in _findings("ERROR job 7 failed\nERROR job 8 failed")] == ["log_error"]


def test_a_failed_or_empty_log_read_gives_no_finding() -> None:
    failed = CallRecord(tool="pods_log", args={"name": "x"}, output="ERROR: connection refused", is_error=True)
    assert log_findings(failed, "x") == []
    assert _findings("The pod web-0 in namespace shop has not logged any message yet") == []
    assert _findings("") == []
    assert rank_log_lines("") == []


def test_findings_are_valid_for_the_report() -> None:
    text = "Error: connect ECONNREFUSED 10.96.5.6:27017\nKeyError: 'MONGO_URL'"
    for f in _findings(text):
        assert 0.1 <= f.confidence <= 0.95
        assert f.subject == "api-7c9f"
        assert all(e.quote in text for e in f.evidence)
        assert f.remediation


# ---- bounds -------------------------------------------------------------------------------------------------

HOSTILE_UNITS = [
    "a" * 5000 + "\n",
    '"' * 999 + "\n",
    "'a" * 499 + "\n",
    " " * 998 + "x\n",
    "a:" * 499 + "\n",
    "1." * 499 + "\n",
    "/a" * 499 + "\n",
    "\n",
    '{"level":"error","msg":"' + '\\"' * 400 + "\n",
    '"GET ' + "/x" * 490 + "\n",
    "Traceback (most recent call last)\n" + "  at x\n" * 5,
    "A" * 990 + " must be set\n",
    "a." * 499 + "\n",
    "a" * 500 + "Error\n",
    "lookup " + "a" * 300 + " on " + "1." * 200 + ":53 took " + "9" * 300 + "\n",
    'cannot list resource "' + "x" * 900 + "\n",
    "valid for " + "a, " * 300 + "\n",
    "ERROR connection refused dial tcp took 12345ms status 503 KeyError: 'A' User \"x\" " * 12 + "\n",
]


@pytest.mark.parametrize("unit", HOSTILE_UNITS, ids=range(len(HOSTILE_UNITS)))
def test_a_megabyte_of_hostile_lines_is_read_only_up_to_the_bounds(unit: str) -> None:
    text = unit * (1_048_576 // len(unit) + 1)
    summary = log_summary(text)
    assert summary.truncated
    assert summary.chars <= MAX_CHARS
    assert summary.lines <= MAX_LINES
    for s in rank_log_lines(text, limit=50):
        assert len(s.line) <= 300
        assert len(s.template) <= 200
        assert s.line in text
    rec = CallRecord(tool="pods_log", args={"name": "x"}, output=text)
    for f in log_findings(rec, "x"):
        assert len(f.evidence[0].quote) <= 300


def test_a_long_log_is_read_as_its_head_and_its_tail_without_overlap() -> None:
    numbered = "\n".join(f"line {i}" for i in range(5000))
    window = read_window(numbered)
    assert window.truncated
    assert window.head_lines == HEAD_LINES
    assert window.lines[:HEAD_LINES] == [f"line {i}" for i in range(HEAD_LINES)]
    assert window.lines[HEAD_LINES:] == [f"line {i}" for i in range(5000 - (MAX_LINES - HEAD_LINES), 5000)]
    wide = "\n".join(f"{i:06d} " + "x" * 1000 for i in range(520))  # over MAX_CHARS in fewer than MAX_LINES lines
    read = [line[:6] for line in read_window(wide).lines]
    assert len(read) == len(set(read))
    assert read[0] == "000000"
    assert read[-1] == "000519"
    assert read_window(wide).chars <= MAX_CHARS


def test_a_startup_error_at_the_head_of_a_long_log_is_still_found() -> None:
    lines = [
        "2024-03-01T10:00:00Z INFO starting catalogue",
        (
            'ts=2024-03-01T10:00:01Z caller=store.go:52 err="could not connect to the catalogue store" '
            "dsn=reader:secret@tcp(catalogue-db:3306)/socks"
        ),
    ]
    lines += [f"2024-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z INFO GET /health 200" for i in range(6000)]
    f = _one("\n".join(lines), "connection_failed")
    assert "catalogue-db:3306 (MySQL)" in f.cause
    assert "the first error after its last start" in f.cause


def test_a_healthy_log_says_so_and_a_signal_reads_in_one_line() -> None:
    healthy = "\n".join(f"2024-03-01T10:00:{i:02d}Z INFO GET /health 200" for i in range(40))
    summary = log_summary(healthy)
    assert summary.healthy
    assert summary.note("web-0") == "Log of web-0: 40 lines read, no error line."
    text = "INFO starting\nError: connect ECONNREFUSED 10.96.5.6:27017\nError: connect ECONNREFUSED 10.96.5.6:27017"
    assert log_summary(text).note("web-0") == "Log of web-0: 3 lines read, 2 error lines."
    assert _top(text).brief() == (
        "[connection_refused, error, x2, first error after start] Error: connect ECONNREFUSED 10.96.5.6:27017"
    )
