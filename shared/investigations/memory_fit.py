"""Does debug memory's fix belong to this investigation? Only when it shares what the evidence says.

Debug memory is asked with the alert's own words before anything is looked at, so a match on those words
(`CrashLoopBackOff`, the namespace) says little: two crash loops can have unrelated causes. A known fix is
attached to the report when its incident shares distinctive terms with what this investigation found (the
cause, the quoted lines) beyond the alert's own words (two words, or one identifier such as `DEPLOY_ENV` or
`x509`), or when debug memory matched the error signature exactly; otherwise it is kept in `debug_memory`
with the reason it was not attached.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NamedTuple

# Words every Kubernetes investigation says: they make any two incidents look alike.
_COMMON = frozenset(
    """
    the and for with from that this into than then when what which while were been being have has had not
    pod pods container containers namespace default kubernetes cluster node nodes deployment service error
    errors failed failing fails failure warning reason message status state restart restarts restarted running
    alert alerts firing check fix issue problem logs log line lines event events the its their your there
    because shown quoted output tool call calls apps resource resources kube true false none null unknown
    exit code back backoff crashloopbackoff crash crashing loop kubelet restarting terminated waiting started
    last container's pod's times count ready readiness liveness probe killing killed
    """.split()
)
_WORD = re.compile(r"[a-z][a-z0-9_]{3,39}")


class Fit(NamedTuple):
    """Whether to attach the fix, and the reason a reader sees."""

    attach: bool
    reason: str
    shared: list[str]


def terms(texts: Iterable[str]) -> set[str]:
    """Distinctive lower-case words of some texts (bounded: the first 20,000 characters of each)."""
    out: set[str] = set()
    for text in texts:
        out |= {w for w in _WORD.findall(str(text)[:20_000].lower()) if w not in _COMMON}
    return out


def _weight(term: str) -> int:
    """An identifier (`deploy_env`, `oomkilled`, `x509`) says more than a word: it counts twice."""
    return 2 if ("_" in term or any(c.isdigit() for c in term) or len(term) >= 10) else 1


def memory_fit(memory: dict[str, Any], report: dict[str, Any], alert_text: str) -> Fit:
    """Judge one recommended fix against one report (its root cause, evidence quotes and findings)."""
    if memory.get("exact_signature_match"):
        return Fit(True, "debug memory matched this alert's error signature exactly", [])
    evidence = [str(report.get("root_cause") or "")]
    evidence += [str(e.get("quote") or "") for e in report.get("evidence") or [] if isinstance(e, dict)]
    evidence += [str(f.get("cause") or "") for f in report.get("findings") or [] if isinstance(f, dict)]
    found = terms(evidence) - terms([alert_text])
    theirs = terms([memory.get("incident_title") or "", memory.get("solution_summary") or ""])
    theirs |= terms(memory.get("matched_terms") or [])
    shared = sorted(found & theirs)
    if not report.get("root_cause"):
        return Fit(False, "not attached: this investigation found no cause to compare the known fix with", [])
    if sum(_weight(t) for t in shared) >= 2:
        return Fit(True, "it shares what this investigation found: " + ", ".join(shared[:6]), shared)
    said = f" (only: {shared[0]})" if shared else ""
    return Fit(
        False,
        "not attached: the earlier incident matched the alert's wording, but shares nothing with this "
        f"investigation's evidence{said}",
        shared,
    )
