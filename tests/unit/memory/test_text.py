"""Tokens, signatures and steps normalisation."""

from __future__ import annotations

from shared.memory.text import normalize_signature, normalize_steps, steps_hash, tokens


def test_tokens_fold_aliases_and_drop_noise() -> None:
    assert tokens("Pods keep restarting: OOMKilled in k8s") == ["pod", "restart", "oom", "kubernet"]
    assert tokens("the 0xdeadbeef 12345 of a") == []
    assert tokens("PostgreSQL") == tokens("postgres") == tokens("pg")


def test_signature_strips_variable_parts() -> None:
    a = normalize_signature(
        "Error: connect ECONNREFUSED 10.0.3.7:5432 at /app/src/db/pool.js:42"
        ' (2026-11-22T04:10:00Z) id=0xdeadbeef user "alice"'
    )
    b = normalize_signature(
        "error: connect ECONNREFUSED 10.9.9.9:6543 at /srv/other/db/pool.js:7"
        " (2025-01-01T00:00:00Z) id=0xfeedface user 'bob'"
    )
    assert a == b == "error connect econnrefused at id user"
    assert (
        normalize_signature("java.lang.OutOfMemoryError: Java heap space")
        == "java.lang.outofmemoryerror java heap space"
    )
    uuid_a = normalize_signature("job 3f2b1c4e-1111-2222-3333-444455556666 failed")
    assert uuid_a == normalize_signature("job 00000000-aaaa-bbbb-cccc-dddddddddddd failed") == "job failed"


def test_steps_normalisation() -> None:
    assert normalize_steps(["1. Increase memory limit", "- Restart  the POD.", "   "]) == [
        "increase memory limit",
        "restart the pod",
    ]
    assert steps_hash(["Restart the pod"]) == steps_hash(["* restart the pod."]) != steps_hash(["restart the node"])
