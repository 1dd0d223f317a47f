"""memory_fit: debug memory's fix is attached to a report only when it fits what the investigation found.

Debug memory is asked with the alert's words before anything is looked at, so two CrashLoopBackOff alerts match
the same incident whatever their causes. The reports here are the rule path's own, run on the shared scenarios:
02 (an init container's command is the typo `wge`) and 01 (a container OOMKilled over its memory limit).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from devhost import rule_scores
from shared.investigations.memory_fit import memory_fit
from tests.support import scenarios

# An earlier incident: a crash loop caused by running out of memory, and the fix that worked for it. The matched
# terms are what debug memory's search shared with a CrashLoopBackOff alert's words.
OOM_FIX: dict[str, Any] = {
    "incident_title": "KubePodCrashLooping: api-gateway in CrashLoopBackOff after OOMKilled",
    "solution_summary": "Raise the container's memory limit from 256Mi to 512Mi in the deployment; Roll out and "
    "watch memory usage",
    "matched_terms": ["crashloopbackoff", "crashing", "pod", "default"],
    "exact_signature_match": False,
    "solution_id": "sol_oom",
}


@cache
def _investigated(stem: str) -> tuple[dict[str, Any], str]:
    scenario = scenarios.load(scenarios.FIXTURES / f"{stem}.json")
    report, _ = rule_scores.investigate(scenario)
    a = scenario["alert"]
    # The alert's words as the activity builds them (title, description, labels).
    alert_text = " ".join(
        [a["title"], a.get("description") or "", " ".join(f"{k} {v}" for k, v in a["labels"].items())]
    )
    return report, alert_text


def typo() -> tuple[dict[str, Any], str]:
    return _investigated("02_crashloop_backoff")


def oom() -> tuple[dict[str, Any], str]:
    return _investigated("01_oom_kill")


def test_both_reports_are_crash_loops_with_different_causes() -> None:
    typo_report, typo_alert = typo()
    oom_report, _ = oom()
    assert "CrashLoopBackoff" in typo_alert
    assert "wge" in typo_report["root_cause"]
    assert "OOMKilled" in oom_report["root_cause"]
    assert any("CrashLoopBackOff" in e["quote"] for e in typo_report["evidence"])


def test_an_oom_fix_is_not_attached_to_a_command_typo_though_both_crash_loop() -> None:
    report, alert_text = typo()
    fit = memory_fit(OOM_FIX, report, alert_text)
    assert not fit.attach
    assert fit.reason.startswith("not attached")
    assert "alert's wording" in fit.reason
    assert "evidence" in fit.reason
    assert len(fit.shared) < 2


def test_the_same_oom_fix_is_attached_to_an_oom_killed_report() -> None:
    report, alert_text = oom()
    fit = memory_fit(OOM_FIX, report, alert_text)
    assert fit.attach
    assert len(fit.shared) >= 2
    assert {"oomkilled", "limit"} <= set(fit.shared)
    # The reason names what the two share.
    assert fit.reason.startswith("it shares what this investigation found: ")
    assert "oomkilled" in fit.reason


def test_a_fix_for_the_same_typo_is_attached_to_the_typo_report() -> None:
    report, alert_text = typo()
    typo_fix = {
        "incident_title": 'Init container downloader crash loops: exec "wge" executable file not found',
        "solution_summary": "Fix the typo in the init container's command: wget, not wge; Roll out",
        "matched_terms": ["crashing", "pod", "default"],
        "solution_id": "sol_typo",
    }
    fit = memory_fit(typo_fix, report, alert_text)
    assert fit.attach
    assert {"executable", "wget"} <= set(fit.shared)


def test_an_exact_signature_match_attaches_and_says_so() -> None:
    report, alert_text = typo()
    fit = memory_fit({**OOM_FIX, "exact_signature_match": True}, report, alert_text)
    assert fit.attach
    assert "error signature exactly" in fit.reason
    # Even with no cause found: the signature is the alert's own error, matched word for word.
    assert memory_fit({**OOM_FIX, "exact_signature_match": True}, {"root_cause": None}, alert_text).attach


def test_a_report_without_a_root_cause_attaches_nothing_and_says_why() -> None:
    _, alert_text = oom()
    # Even evidence that shares the fix's words: without a cause there is nothing to compare the fix with.
    report = {
        "root_cause": None,
        "evidence": [{"tool": "pods_get", "quote": "Reason: OOMKilled"}, {"tool": "pods_get", "quote": "memory limit"}],
        "findings": [],
    }
    fit = memory_fit(OOM_FIX, report, alert_text)
    assert not fit.attach
    assert fit.reason == "not attached: this investigation found no cause to compare the known fix with"
    assert not memory_fit(OOM_FIX, {"root_cause": ""}, alert_text).attach


def test_only_the_alerts_own_words_do_not_count_as_shared() -> None:
    """A fix whose words are all the alert's (what the search matched on) fits no evidence."""
    report, alert_text = typo()
    echo = {
        "incident_title": "Crashing pod logging-agent in namespace default",
        "solution_summary": "Restart logging-agent on grafana-cloud-control-plane",
        "matched_terms": ["crashing", "logging", "agent"],
    }
    fit = memory_fit(echo, report, alert_text)
    assert not fit.attach


def test_one_shared_word_is_named_in_the_reason_but_is_not_enough() -> None:
    report, alert_text = typo()
    fit = memory_fit(
        {**OOM_FIX, "solution_summary": "Raise the memory limit; check the init container"}, report, alert_text
    )
    assert not fit.attach
    assert fit.shared == ["init"]
    assert "(only: init)" in fit.reason


@pytest.mark.parametrize(
    "oom_steps",
    [
        "The container was OOMKilled (exit code 137): raise its memory limit to 512Mi; roll out",
        "Stop the kubelet back-off restarting the container: raise its memory limit to 512Mi",
    ],
    ids=["exit-code", "back-off-restarting"],
)
def test_words_every_crash_report_says_do_not_make_an_oom_fix_fit_a_typo(oom_steps: str) -> None:
    """An OOM fix written the usual way mentions the exit code or the kubelet's back-off; so does every crash
    report (the typo's exit code is 128, its back-off is the crash loop itself). Words that every crash loop
    shares are not evidence that this one has the same cause."""
    report, alert_text = typo()
    fit = memory_fit({**OOM_FIX, "solution_summary": oom_steps}, report, alert_text)
    assert not fit.attach, fit
