"""Alerts that name no Kubernetes object (`KafkaConsumergroupLagHigh{consumergroup="billing-events"}`,
`NGINXTooMany500s`): the words they do carry, matched against the names of the pods a listing shows.

A pod is named after its workload, and its workload usually after what the alert measures (a consumer group,
a queue, a database, a job); so the listed pods whose names share the alert's distinctive words are the ones to
read first."""

from __future__ import annotations

import re
from typing import Any

from shared.investigations.rules import parse

# Words every alert and every cluster uses: they pick out nothing.
_COMMON = frozenset(
    "alert alerts high low too many rate ratio error errors failed failing failure down up is are has have the "
    "for of in on to and or not no than more less over under above below last minutes minute hour hours seconds "
    "warning critical info severity page pager team cluster prometheus monitoring kube kubernetes k8s job "
    "instance namespace pod pods service services app application server api http https total count value "
    "percent latency slow lag time p99 p95 sum avg max min state status ready running since firing".split()
)
_SKIP_LABELS = frozenset({"alertname", "severity", "prometheus", "job", "instance", "endpoint", "cluster", "team"})
_TOKEN = re.compile(r"[a-z][a-z0-9]{2,}")


def alert_words(alert: dict[str, Any]) -> set[str]:
    """The distinctive words of an alert: its name, label values and annotations, without the common ones."""
    labels = {str(k): str(v) for k, v in (alert.get("labels") or {}).items()}
    text = " ".join([labels.get("alertname", ""), str(alert.get("title") or ""), str(alert.get("description") or "")])
    text += " " + " ".join(v for k, v in labels.items() if k not in _SKIP_LABELS)
    text += " " + " ".join(str(v) for k, v in (alert.get("annotations") or {}).items() if k != "runbook_url")
    found = set(parse.words(text[:20_000])) | set(_TOKEN.findall(text[:20_000].lower()))
    return {w for w in found if len(w) >= 3 and w not in _COMMON and not w.isdigit()}


def name_words(name: str) -> set[str]:
    """A pod's name as words, without its generated suffixes."""
    return {w for w in re.split(r"[-_.]", name.lower()) if _TOKEN.fullmatch(w) and not re.search(r"\d", w)}


def matching_rows(rows: list[parse.Row], words: set[str], limit: int = 2) -> list[parse.Row]:
    """The listed pods whose names share the most alert words (at least one), best first."""
    scored = [(len(name_words(r.get("NAME")) & words), i, r) for i, r in enumerate(rows) if r.get("NAME")]
    return [r for score, _, r in sorted(scored, key=lambda t: (-t[0], t[1])) if score > 0][:limit]


# Labels that say where a series came from or how bad it is, not what it measures.
_NOT_SUBJECTS = frozenset(
    "alertname severity prometheus job instance endpoint service namespace pod container cluster team uid node "
    "exported_namespace reason priority region zone env environment le quantile code method".split()
)
_SUBJECT = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")


def subject_names(alert: dict[str, Any]) -> list[str]:
    """Label values that name what an alert measures and look like a workload's name (`fraud-scorer`): a consumer
    group, a queue's worker, a database, named after the workload that owns it."""
    labels = alert.get("labels") or {}
    found = [
        str(v) for k, v in labels.items()
        if k not in _NOT_SUBJECTS and isinstance(v, str) and _SUBJECT.fullmatch(v) and len(v) <= 63
    ]  # fmt: skip
    # The scrape job is the subject when the alert is about it (`NodeExporterTargetsMissing`, job=node-exporter).
    job = str(labels.get("job") or "")
    name_words = set(parse.words(str(labels.get("alertname") or alert.get("title") or "")))
    if _SUBJECT.fullmatch(job) and set(job.split("-")) <= name_words:
        found.insert(0, job)
    return found[:3]
