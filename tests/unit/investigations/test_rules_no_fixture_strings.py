"""The rules read what the data says, never which fixture runs: no string in a rule file may be one that occurs in
exactly one scenario (a pod, image, namespace or service name, a literal log line). General vocabulary (a reason
such as `CrashLoopBackOff`, an exporter's name) occurs in many scenarios or in none."""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from tests.support import scenarios

RULES = Path(__file__).resolve().parents[3] / "shared" / "investigations" / "rules"
CORPUS = scenarios.FIXTURES.parent / "investigations_corpus"

# Kubernetes-style names (lower-case words joined by `-`) and literal phrases long enough to be a line.
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
_SPLIT = re.compile(r"[\\|()\[\]{}?*+^$]+")


# Platform messages a rule may match although only one scenario happens to print them: each is the wording of a
# component every cluster runs, not a scenario's data.
PLATFORM = {
    "executable file not found in": 'runc / containerd: exec: "x": executable file not found in $PATH',
    "name or service not known": "glibc getaddrinfo EAI_NONAME, printed by every resolver client",
    "anti-affinity": "the scheduler's FailedScheduling wording (pod anti-affinity rules)",
    "executable file not found": "runc / containerd (the same message, matched without its tail)",
    "context deadline exceeded": "Go's context.DeadlineExceeded error text, printed by every Go client and the kubelet",
    "password authentication failed": "PostgreSQL's error for a wrong password (FATAL:  password authentication ...)",
    "timed out waiting for connection": "connection pools' wording (HikariCP, database/sql, pgx) when none is free",
    "persistent volumes to bind": "the scheduler's VolumeBinding plugin (ErrReasonBindConflict)",
    "no-provisioner": "kubernetes.io/no-provisioner, the documented provisioner of local-volume StorageClasses",
    "rate-limit": "registries' and APIs' wording for 429 answers (rate-limit headers, Docker Hub's pull limit)",
    "max-old-space-size": "Node.js's heap size flag (--max-old-space-size)",
    "volume node affinity conflict": "the scheduler's VolumeBinding plugin (ErrReasonNodeConflict)",
    "violate the pod's disruption budget": "the eviction API's refusal (Cannot evict pod as it would violate ...)",
    "self-signed": "x509 / TLS libraries' wording for a certificate signed by its own key",
    "connection is not available": "HikariCP: Connection is not available, request timed out after N ms",
    "write-ahead": "PostgreSQL's name for its WAL (write-ahead log), in its archiver's messages",
    "archiving write-ahead log": "PostgreSQL: archiving write-ahead log file ... failed too many times",
    "read-write": "mount and filesystem vocabulary (a read-write volume; `ro`/`rw` mount options)",
    "x509: certificate has expired": "Go crypto/x509's error for an expired certificate, printed by every Go client",
    "multi-attach": "the attach/detach controller's `Multi-Attach error` for a ReadWriteOnce volume",
    "keep-alive": "HTTP's Connection: keep-alive (and idle/keep-alive timeouts), in every proxy's and client's wording",
    "maxmemory-policy": "Redis's configuration directive for what happens at maxmemory",
    "ready to accept connections": "the start-up line of Redis and PostgreSQL",
    "kube-public": "a namespace every cluster creates",
    "kube-node-lease": "a namespace every cluster creates",
}


def _strings(path: Path) -> list[str]:
    """The string literals of a module, docstrings left out (prose, not matching rules)."""
    tree = ast.parse(path.read_text())
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def candidates(text: str) -> set[str]:
    """The parts of a string literal that could be fixture data: names, and phrases of 25+ characters."""
    text = re.sub(r"\[[^\]]*\]", " ", text)  # a regex's character classes ([a-z0-9]) are not names
    found = set(_NAME.findall(text))
    for part in _SPLIT.split(text):
        part = part.strip()
        if len(part) >= 25 and " " in part:
            found.add(part)
    return found


@cache
def fixture_texts() -> dict[str, str]:
    files = [
        *scenarios.scenario_files(),
        *scenarios.scenario_files(scenarios.HELDOUT),
        *sorted(CORPUS.glob("*/*.json")),
        *sorted((CORPUS.parent / "investigations_blind").glob("*.json")),
        *sorted((CORPUS.parent / "investigations_blind2").glob("*.json")),
        *sorted((CORPUS.parent / "investigations_blind3").glob("*.json")),
    ]
    return {f.stem: _data(json.loads(f.read_text())).lower() for f in files}


def _data(scenario: dict[str, Any]) -> str:
    """What a scenario serves: its alert, runbook and tool outputs (not its notes or expected answers)."""
    outputs = [str(r.get("output", "")) for r in scenario.get("tool_responses", [])]
    return "\n".join([json.dumps(scenario.get("alert")), str(scenario.get("runbook_markdown") or ""), *outputs])


def test_the_corpus_is_there() -> None:
    assert len(fixture_texts()) >= 21 + 40


def test_no_rule_file_holds_a_string_that_only_one_fixture_has() -> None:
    texts = fixture_texts()
    offenders = []
    for path in sorted(RULES.glob("*.py")):
        for literal in _strings(path):
            for cand in candidates(literal):
                holders = [name for name, text in texts.items() if cand.lower() in text]
                if len(holders) == 1 and cand.lower() not in PLATFORM:
                    offenders.append(f"{path.name}: {cand!r} occurs only in {holders[0]}")
    assert not offenders, "\n".join(offenders)


def test_the_check_catches_a_fixture_name() -> None:
    """The check itself: a pod name and a log line taken from one scenario are caught."""
    texts = fixture_texts()
    name = "payment-processing-worker-747ccfb9db-pd6wz"
    assert [n for n, t in texts.items() if name in t] == ["11_kube_pod_crash_looping"]
    assert name in candidates(f"(?i)^{name}$")
