"""Every hostile outside-content case (tests/fixtures/hostile/outside_content.py) gets a bounded result: a runbook
whose text is at most about its size, a redaction, a rules report, a clear "not a JSON object"; no crash, in a
process whose peak RSS stays under the case's budget. Outcomes and sizes only: times are in
benchmarks/hostile_outside_content.py.

Each case runs in a process of its own (its peak RSS is its own; a runaway regex cannot be interrupted in-process).
The timeout is a hang guard for the old code's behaviour (minutes to hours on these inputs), not a measurement.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.hostile.outside_content import CASES

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_SECONDS = 120
NOT_JSON = "the answer is not a JSON object"


def _run(name: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.fixtures.hostile.outside_content", name],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_outside_content_gets_a_bounded_result(name: str) -> None:
    case = CASES[name]
    result = _run(name)
    assert result["outcome"] == "ok", result
    assert result["peak_rss_mb"] < case.budget_mb, result
    if case.kind == "runbook":
        assert result["status"] == "ok", result
        # Markdown is at most a few characters per tag more than its page (`<h6>` becomes "###### ").
        assert result["text_chars"] <= 2 * result["input_bytes"], result
    elif case.kind == "redaction":
        assert result["text_chars"] == result["input_bytes"]  # nothing secret-shaped in it
    elif case.kind == "model_answer":
        assert result["answer"] == NOT_JSON, result


@pytest.mark.parametrize(
    "name", ["runbook-charset-punycode", "runbook-charset-utf-7", "runbook-charset-zlib"], ids=lambda n: n[16:]
)
def test_a_charset_off_the_allow_list_is_read_as_utf8(name: str) -> None:
    result = _run(name)
    assert result["status"] == "ok", result
    assert result["text_head"] == result["utf8_head"]


@pytest.mark.parametrize(
    "name",
    [
        "runbook-html-unclosed-tags",
        "runbook-html-unclosed-quotes",
        "runbook-html-unclosed-comments",
        "runbook-html-unclosed-end-tags",
        "runbook-html-unclosed-scripts",
        "runbook-html-dense-blocks",
    ],
)
def test_markup_left_open_shows_nothing_past_the_heading(name: str) -> None:
    # As in a browser: an unclosed tag, quote, comment or script swallows the rest of the page.
    result = _run(name)
    assert result["text_head"] == "# Runbook\n", result
