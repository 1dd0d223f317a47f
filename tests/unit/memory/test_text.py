"""Tokens, signatures and steps normalisation."""

from __future__ import annotations

from shared.memory.text import legacy_tokens, normalize_signature, normalize_steps, steps_hash, tokens


def test_tokens_fold_aliases_and_drop_noise() -> None:
    assert set(tokens("Pods keep restarting: OOMKilled in k8s")) == {
        "pod",
        "restart",
        "oom",
        "kubernet",
        "c_oom",
        "c_kubernetes",
    }
    assert tokens("the 0xdeadbeef 12345 of a") == []
    assert tokens("PostgreSQL") == tokens("postgres") == tokens("pg")


def test_identifiers_are_split_and_endings_meet() -> None:
    assert {"server", "select", "timeout", "error"} <= set(tokens("ServerSelectionTimeoutError"))
    assert "serverselectiontimeouterror" in tokens("ServerSelectionTimeoutError")  # the whole identifier too
    assert tokens("eviction")[0] == tokens("evicted")[0] == "evict"
    assert tokens("throttles")[0] == tokens("throttle")[0]


def test_codes_and_their_meanings_share_a_concept() -> None:
    def concepts(text: str) -> set[str]:
        return {t for t in tokens(text) if t.startswith("c_")}

    assert "c_oom" in concepts("container exited with code 137") & concepts("OOMKilled") & concepts("SIGKILL")
    assert "c_forbidden" in concepts("EACCES: open /data") & concepts("Permission denied")
    assert "c_address_in_use" in concepts("EADDRINUSE") & concepts("address already in use")
    assert "c_rate_limit" in concepts("HTTP 429") & concepts("requests are throttled")
    assert "c_deadlock" in concepts("SQLSTATE 40P01") & concepts("Deadlock found when trying to get lock")
    assert "c_oom" not in concepts("connection refused on port 5432")


def test_legacy_tokens_are_index_version_one() -> None:
    assert legacy_tokens("Pods keep restarting: OOMKilled in k8s") == ["pod", "restart", "oom", "kubernet"]


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


def test_stemming_leaves_words_that_only_look_inflected() -> None:
    # -s after -us/-is is not a plural; -ing/-ed with no vowel before them is not an ending (Porter, step 1).
    assert tokens("status analysis string") == ["status", "analysis", "string"]
    assert tokens("statuses strings spinning") == ["status", "string", "spinn"]


def test_common_words_name_no_concept() -> None:
    # "go", "node", "express", "runner", "rotation", "includes" are ordinary words in a report: no concept alone.
    found = tokens("reads go to a node that includes an express runner out of rotation")
    assert [t for t in found if t.startswith("c_")] == []
    assert "c_golang" in tokens("goroutine leak in the go runtime")
    assert "c_node_runtime" in tokens("Node.js heap")
    assert "c_credentials" in tokens("after the token rotation")
    assert "c_ci" in tokens("the GitLab runner ran out of disk")
