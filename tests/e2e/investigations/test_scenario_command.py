"""`python -m shared.investigations scenario ...` as a user runs it: a subprocess, from a directory outside the
repository, on scenario files it has never seen (new names, one written here). The command starts its own
emulator stack and host (the session's are not shared with a subprocess)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from devhost.stack import ROOT
from tests.support import scenarios
from tests.support.fake_llm import Reply, fake_llm, plan

# A scenario written for this test (the fixtures' schema, no id: the file name stands in).
HANDWRITTEN = {
    "alert": {
        "title": "KubePodCrashLooping",
        "description": "Pod billing/invoice-renderer-5d9f7 is crash looping.",
        "labels": {"alertname": "KubePodCrashLooping", "namespace": "billing", "pod": "invoice-renderer-5d9f7"},
        "annotations": {"summary": "Pod is crash looping.", "runbook_url": "https://runbooks.example.com/crash"},
        "severity": "warning",
        "source": "prometheus",
        "starts_at": "2026-11-20T08:00:00Z",
    },
    "runbook_markdown": "# Crash looping\n\nCheck the previous container's log for the error.",
    "tool_responses": [
        {
            "tool": "pods_log",
            "match": {"name": "invoice-renderer-5d9f7", "namespace": "billing", "previous": True},
            "output": "starting renderer\nFATAL: could not open /etc/renderer/fonts.conf: no such file or directory",
        },
        {
            "tool": "pods_get",
            "match": {"name": "invoice-renderer-5d9f7", "namespace": "billing"},
            "output": "Name: invoice-renderer-5d9f7\nNamespace: billing\nContainers:\n  renderer:\n    State: Waiting\n"
            "      Reason: CrashLoopBackOff\n    Last State: Terminated\n      Reason: Error\n      Exit Code: 1\n",
        },
    ],
    "expected_keywords": [["fonts.conf"], ["CrashLoopBackOff", "crash loop"]],
}


def command(cwd: Path, *args: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIREBREAK_", "OPENAI_", "AZURE_OPENAI"))}
    env.update(extra_env or {})
    env["PYTHONPATH"] = str(ROOT)  # how `shared` is found from outside the checkout (no installed package)
    return subprocess.run(
        [sys.executable, "-m", "shared.investigations", "scenario", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def unseen_files(tmp_path: Path) -> list[str]:
    shutil.copy(scenarios.HELDOUT / "02_image_pull_unauthorized.json", tmp_path / "pull-denied.json")
    (tmp_path / "renderer crash.json").write_text(json.dumps(HANDWRITTEN))
    return ["pull-denied.json", "renderer crash.json"]


def test_json_on_two_unseen_files_from_another_directory(tmp_path: Path) -> None:
    # A third file the app refuses (a start time that is no time): reported, the others still run, exit code 2.
    (tmp_path / "no-time.json").write_text(json.dumps({"alert": {"title": "Something", "starts_at": "yesterday"}}))
    done = command(tmp_path, *unseen_files(tmp_path), "no-time.json", "--format", "json")
    assert done.returncode == 2, done.stderr[-3000:]
    out = json.loads(done.stdout)
    print(json.dumps(out, indent=1)[:5000])
    ids = [s["id"] for s in out["scenarios"]]
    assert ids == ["02_image_pull_unauthorized", "renderer crash", "no-time"]
    refused = out["scenarios"].pop()
    assert refused["status"] == "rejected"
    assert refused["error"].startswith("the app refused the scenario's alert:")
    assert "starts_at" in refused["error"]
    assert (out["scored"], out["completed"]) == (2, 2)
    for s in out["scenarios"]:
        assert s["path"] == "rule"
        assert set(s) >= {"id", "path", "analysis", "score", "tool_calls", "iterations", "stopped_because"}
        assert 0 < len(s["analysis"]) <= 2000
        assert s["tool_calls"]
        assert all(set(c) == {"tool", "args"} for c in s["tool_calls"])
    handwritten = out["scenarios"][1]
    # The cause is only in the previous container's log: the investigation read it.
    wanted = {"name": "invoice-renderer-5d9f7", "namespace": "billing", "previous": True}
    assert any(c["tool"] == "pods_log" and wanted.items() <= c["args"].items() for c in handwritten["tool_calls"])
    assert out["mean_score"] == (out["scenarios"][0]["score"] + handwritten["score"]) / 2
    assert "[2/3] renderer crash: completed" in done.stderr
    assert "[3/3] no-time: rejected" in done.stderr


def test_markdown_on_the_llm_path_set_in_the_environment(tmp_path: Path) -> None:
    """The command hands the LLM settings of its environment to the host: the same command, the LLM path.

    The model is the scripted server: for each scenario a plan with no calls (done) and a report.
    """
    files = unseen_files(tmp_path)
    reports = [{"root_cause": f"scripted cause {i}", "analysis": f"Scripted analysis number {i}."} for i in (1, 2)]
    with fake_llm(*(r for rep in reports for r in (plan([], done=True), Reply(content=json.dumps(rep))))) as llm:
        environ = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_MODEL": "scripted-model", "OPENAI_API_KEY": "not-real"}
        done = command(tmp_path, *files, "--format", "md", "--quiet", extra_env=environ)
    assert done.returncode == 0, done.stderr[-3000:]
    print(done.stdout)
    assert len(llm.requests) == 4
    assert not llm.replies
    lines = done.stdout.splitlines()
    assert lines[0] == "| scenario | score | path | calls | analysis chars |"
    assert lines[2].startswith("| 02_image_pull_unauthorized | 0.00 | llm | 0 | ")
    assert lines[3].startswith("| renderer crash | 0.00 | llm | 0 | ")
    assert "Mean score: 0.000 over 2 scored scenario(s)." in lines
    assert lines.index("## renderer crash") > lines.index("## 02_image_pull_unauthorized") > 4
    assert "Scripted analysis number 1." in lines
    assert "Scripted analysis number 2." in lines
    assert done.stderr == ""


def test_a_bad_file_is_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"alert": {"title": "x"},')
    (tmp_path / "not-a-scenario.json").write_text('{"tools": []}')
    missing = command(tmp_path, "nowhere.json")
    broken = command(tmp_path, "broken.json")
    wrong = command(tmp_path, "not-a-scenario.json")
    assert (missing.returncode, broken.returncode, wrong.returncode) == (2, 2, 2)
    assert missing.stderr.strip() == "error: nowhere.json: no such file"
    assert broken.stderr.startswith("error: broken.json: not valid JSON (line 1, column")
    assert wrong.stderr.startswith("error: not-a-scenario.json: not a scenario file (no `alert` object;")
    for done in (missing, broken, wrong):
        assert "Traceback" not in done.stderr
        assert done.stdout == ""
    usage = command(tmp_path)
    assert usage.returncode == 2
    assert "usage:" in usage.stderr
    assert "Traceback" not in usage.stderr
