"""Alert intake: the scenario alerts, Alertmanager groups, Azure Monitor's common schema, severities, bad input."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.core.errors import ValidationFailed
from shared.investigations import alerts
from shared.investigations.alerts import Alert, normalise, severity_of
from tests.support import scenarios

FILES = scenarios.scenario_files()


def _fields(exc: pytest.ExceptionInfo[ValidationFailed]) -> list[str]:
    return [e["field"] for e in exc.value.details["errors"]]


# ---- (a) generic: the scenario files' alerts -----------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_every_scenario_alert_parses(path) -> None:
    raw = scenarios.load(path)["alert"]
    [alert] = normalise(raw)
    assert alert.format == "generic"
    assert alert.title == raw["title"]
    assert alert.name == raw["labels"].get("alertname", raw["title"])
    assert alert.severity == raw["severity"]
    assert alert.source == raw["source"]
    assert alert.labels == raw["labels"]
    assert alert.starts_at.tzinfo is UTC
    assert alert.starts_at.isoformat().startswith(raw["starts_at"][:19])
    assert alert.runbook_url == raw["annotations"].get("runbook_url")
    assert alert.namespace == raw["labels"].get("namespace")
    # The orchestrator passes alerts through Durable as JSON: the round trip gives the same alert.
    assert Alert.model_validate(alert.model_dump(mode="json")) == alert


def test_the_seventeen_scenarios_are_all_there() -> None:
    if len(FILES) != 17:
        pytest.fail(f"expected 17 scenario files under {scenarios.FIXTURES}, found {len(FILES)}")


def test_generic_accepts_the_spec_example_and_fills_gaps_from_labels() -> None:
    received = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    # The spec's own example names the title `alert` and says "high".
    [alert] = normalise(
        {
            "alert": "Namespace is stuck in Terminating",
            "cluster": "production-k8s",
            "namespace": "test-app",
            "severity": "high",
        },
        received_at=received,
    )
    assert (alert.title, alert.name, alert.severity) == ("Namespace is stuck in Terminating",) * 2 + ("critical",)
    assert (alert.cluster, alert.namespace, alert.starts_at, alert.source) == (
        "production-k8s",
        "test-app",
        received,
        "generic",
    )
    [alert] = normalise(
        {
            "title": "Disk full",
            "labels": {"alertname": "NodeDiskFull", "cluster": "c1", "namespace": "ns"},
            "runbook_url": "https://runbooks.example/disk.md",
            "starts_at": "2025-05-01T10:00:00+02:00",
        }
    )
    assert (alert.name, alert.cluster, alert.namespace) == ("NodeDiskFull", "c1", "ns")
    assert alert.runbook_url == "https://runbooks.example/disk.md"
    assert alert.starts_at == datetime(2025, 5, 1, 8, 0, tzinfo=UTC)
    assert alert.severity == "warning"  # none given


# ---- (b) Alertmanager ----------------------------------------------------------------------------


def _am_alert(pod: str, status: str = "firing", **labels: str) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {"alertname": "KubePodCrashLooping", "pod": pod, **labels},
        "annotations": {"description": f"Pod default/{pod} is crash looping."},
        "startsAt": "2025-02-27T08:31:00.123456789+02:00",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": f"http://prometheus.example:9090/graph?g0.expr=up%7Bpod%3D%22{pod}%22%7D",
        "fingerprint": f"fp-{pod}",
    }


def _am_group(*items: dict[str, Any]) -> dict[str, Any]:
    return {
        "version": "4",
        "groupKey": '{}:{alertname="KubePodCrashLooping"}',
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": "firebreak",
        "groupLabels": {"alertname": "KubePodCrashLooping"},
        "commonLabels": {
            "alertname": "KubePodCrashLooping",
            "namespace": "default",
            "severity": "critical",
            "cluster": "prod-1",
        },
        "commonAnnotations": {
            "summary": "Pod is crash looping.",
            "runbook_url": "https://runbooks.example/crashloop.md",
        },
        "externalURL": "http://alertmanager.example:9093",
        "alerts": list(items),
    }


def test_an_alertmanager_group_of_three_firing_and_one_resolved_gives_three_alerts() -> None:
    payload = _am_group(
        _am_alert("a"), _am_alert("b", severity="warning"), _am_alert("c", status="resolved"), _am_alert("d")
    )
    got = normalise(payload)
    assert [a.labels["pod"] for a in got] == ["a", "b", "d"]
    first = got[0]
    assert first.labels == {
        "alertname": "KubePodCrashLooping",
        "namespace": "default",
        "severity": "critical",
        "cluster": "prod-1",
        "pod": "a",
    }
    assert first.annotations == {
        "summary": "Pod is crash looping.",
        "runbook_url": "https://runbooks.example/crashloop.md",
        "description": "Pod default/a is crash looping.",
    }
    assert (first.name, first.title, first.severity, first.format, first.source) == (
        "KubePodCrashLooping",
        "KubePodCrashLooping",
        "critical",
        "alertmanager",
        "alertmanager",
    )
    assert got[1].severity == "warning"  # the alert's own label wins over the common one
    assert first.description == "Pod default/a is crash looping."
    assert (first.cluster, first.namespace, first.fingerprint) == ("prod-1", "default", "fp-a")
    assert first.source_url is not None
    assert first.source_url.startswith("http://prometheus.example:9090/graph")
    assert first.runbook_url == "https://runbooks.example/crashloop.md"
    assert first.starts_at == datetime(2025, 2, 27, 6, 31, 0, 123456, tzinfo=UTC)


def test_an_alertmanager_group_that_resolved_gives_none() -> None:
    assert normalise(_am_group(_am_alert("a", status="resolved"), _am_alert("b", status="resolved"))) == []


def test_an_alertmanager_severity_nobody_planned_for_is_investigated_as_a_warning() -> None:
    payload = _am_group(_am_alert("a"))
    payload["commonLabels"]["severity"] = "purple"
    assert normalise(payload)[0].severity == "warning"
    payload["commonLabels"]["severity"] = "none"
    assert normalise(payload)[0].severity == "none"


# ---- (c) Azure Monitor ---------------------------------------------------------------------------

_AKS = "/subscriptions/0000/resourcegroups/rg-prod/providers/Microsoft.ContainerService/managedClusters/aks-prod"


def _azure(condition: str = "Fired", **context: Any) -> dict[str, Any]:
    return {
        "schemaId": "azureMonitorCommonAlertSchema",
        "data": {
            "essentials": {
                "alertId": "/subscriptions/0000/providers/Microsoft.AlertsManagement/alerts/1111",
                "alertRule": "PodRestartsHigh",
                "severity": "Sev1",
                "signalType": "Metric",
                "monitorCondition": condition,
                "monitoringService": "Platform",
                "alertTargetIDs": [_AKS],
                "configurationItems": ["aks-prod"],
                "originAlertId": "origin-1",
                "firedDateTime": "2025-03-22T13:58:24.3713213Z",
                "description": "Restarts above 3 in 5 minutes",
                "essentialsVersion": "1.0",
                "alertContextVersion": "1.0",
            },
            "alertContext": context
            or {
                "properties": None,
                "conditionType": "SingleResourceMultipleMetricCriteria",
                "condition": {
                    "windowSize": "PT5M",
                    "allOf": [
                        {
                            "metricName": "restartingContainerCount",
                            "metricNamespace": "Insights.Container/pods",
                            "operator": "GreaterThan",
                            "threshold": "3",
                            "timeAggregation": "Average",
                            "dimensions": [
                                {"name": "namespace", "value": "payments"},
                                {"name": "controllerName", "value": "api"},
                            ],
                            "metricValue": 7,
                        }
                    ],
                },
            },
            "customProperties": {"runbook_url": "https://runbooks.example/restarts.md", "team": "payments"},
        },
    }


def test_a_fired_azure_monitor_alert_maps_to_one_alert() -> None:
    [alert] = normalise(_azure())
    assert (alert.name, alert.title, alert.severity, alert.format, alert.source) == (
        "PodRestartsHigh",
        "PodRestartsHigh",
        "critical",
        "azure_monitor",
        "azure_monitor",
    )
    assert alert.starts_at == datetime(2025, 3, 22, 13, 58, 24, 371321, tzinfo=UTC)
    assert (alert.cluster, alert.namespace) == ("aks-prod", "payments")
    assert alert.external_id == "/subscriptions/0000/providers/Microsoft.AlertsManagement/alerts/1111"
    assert alert.runbook_url == "https://runbooks.example/restarts.md"
    assert alert.description == "Restarts above 3 in 5 minutes"
    assert alert.labels["alertname"] == "PodRestartsHigh"
    assert alert.labels["severity"] == "Sev1"
    assert alert.labels["resource_group"] == "rg-prod"
    assert alert.labels["resource_name"] == "aks-prod"
    assert alert.labels["controllerName"] == "api"
    assert alert.annotations["team"] == "payments"
    assert alert.annotations["condition"] == "restartingContainerCount Average GreaterThan 3 (value 7)"


def test_a_resolved_azure_monitor_alert_gives_none() -> None:
    assert normalise(_azure("Resolved")) == []


def test_an_azure_log_alert_carries_its_query() -> None:
    [alert] = normalise(_azure(SearchQuery="KubePodInventory | where PodStatus == 'Failed'", ResultCount=4))
    assert alert.annotations["condition"] == "KubePodInventory | where PodStatus == 'Failed' (results 4)"
    assert alert.namespace is None


@pytest.mark.parametrize(
    ("sev", "expected"),
    [("Sev0", "critical"), ("Sev1", "critical"), ("Sev2", "warning"), ("Sev3", "info"), ("Sev4", "info")],
)
def test_azure_severities(sev, expected) -> None:
    payload = _azure()
    payload["data"]["essentials"]["severity"] = sev
    assert normalise(payload)[0].severity == expected


# ---- severities ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("critical", "critical"),
        ("CRITICAL", "critical"),
        ("high", "critical"),
        ("error", "critical"),
        ("page", "critical"),
        ("warning", "warning"),
        ("warn", "warning"),
        ("medium", "warning"),
        ("info", "info"),
        ("Informational", "info"),
        ("low", "info"),
        ("none", "none"),
        (" none ", "none"),
        (None, "warning"),
        ("", "warning"),
    ],
)
def test_severity_words(word, expected) -> None:
    assert severity_of(word, strict=True) == expected


def test_a_generic_alert_with_an_unknown_severity_is_refused() -> None:
    with pytest.raises(ValidationFailed) as exc:
        normalise({"title": "x", "severity": "purple", "starts_at": "2025-01-01T00:00:00Z"})
    assert _fields(exc) == ["severity"]
    assert severity_of("purple", strict=False) == "warning"


# ---- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [[], "KubePodCrashLooping", None, 3, [{"title": "x"}]])
def test_a_payload_that_is_not_an_object_is_refused(payload) -> None:
    with pytest.raises(ValidationFailed) as exc:
        normalise(payload)
    assert _fields(exc) == ["(root)"]


def test_an_unknown_format_is_refused_with_the_three_formats() -> None:
    with pytest.raises(ValidationFailed) as exc:
        normalise({"event": "something happened", "level": 3})
    assert exc.value.details["errors"][0]["type"] == "unknown_format"
    suggestions = " ".join(exc.value.recovery_suggestions)
    for name in ("generic", "Alertmanager", "azureMonitorCommonAlertSchema"):
        assert name in suggestions


def test_only_the_azure_common_schema_is_accepted() -> None:
    with pytest.raises(ValidationFailed) as exc:
        normalise({"schemaId": "AzureMonitorMetricAlert", "data": {}})
    assert _fields(exc) == ["schemaId"]


def test_ten_thousand_alerts_are_refused_before_they_are_read() -> None:
    payload = _am_group(*([_am_alert("a")] * 10_000))
    with pytest.raises(ValidationFailed) as exc:
        normalise(payload)
    assert _fields(exc) == ["alerts"]


def test_a_megabyte_description_is_refused_naming_it() -> None:
    with pytest.raises(ValidationFailed) as exc:
        normalise({"title": "x", "description": "x" * 1_000_000, "starts_at": "2025-01-01T00:00:00Z"})
    assert _fields(exc) == ["description"]
    inner = _am_group(_am_alert("a"))
    inner["alerts"][0]["annotations"]["description"] = "y" * 1_000_000
    with pytest.raises(ValidationFailed) as exc:
        normalise(inner)
    assert _fields(exc) == ["alerts[0].annotations.description"]


def test_sizes_below_the_payload_limit_are_still_bounded_per_field() -> None:
    base = {"title": "x", "starts_at": "2025-01-01T00:00:00Z"}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"description": "d" * (alerts.MAX_DESCRIPTION_CHARS + 1)}, "description"),
        ({"labels": {f"k{i}": "v" for i in range(alerts.MAX_LABELS + 1)}}, "labels"),
        ({"labels": {"k": "v" * (alerts.MAX_LABEL_VALUE_CHARS + 1)}}, "labels"),
        ({"annotations": {"k" * (alerts.MAX_KEY_CHARS + 1): "v"}}, "annotations"),
        ({"title": "t" * (alerts.MAX_TITLE_CHARS + 1)}, "title"),
    ]
    for extra, field in cases:
        with pytest.raises(ValidationFailed) as exc:
            normalise(base | extra)
        assert _fields(exc) == [field], extra.keys()


def test_a_payload_too_large_in_total_or_too_deep_is_refused() -> None:
    many = {f"k{i}": "v" * 60_000 for i in range(20)}  # each string allowed, 1.2 M characters together
    with pytest.raises(ValidationFailed) as exc:
        normalise({"title": "x", "annotations": many})
    assert exc.value.details["errors"][0]["type"] == "payload_too_large"
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(alerts.MAX_PAYLOAD_DEPTH + 2):
        node["n"] = {}
        node = node["n"]
    with pytest.raises(ValidationFailed) as exc:
        normalise({"title": "x", "labels": deep})
    assert exc.value.details["errors"][0]["type"] == "too_deep"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"title": "x", "starts_at": "2025-01-01T00:00:00Z", "labels": {"pod": 3}}, "labels.pod"),
        ({"title": "x", "starts_at": "2025-01-01T00:00:00Z", "labels": ["pod"]}, "labels"),
        ({"title": "x", "starts_at": []}, "starts_at"),
        ({"title": "x", "starts_at": "yesterday"}, "starts_at"),
        ({"title": 5, "starts_at": "2025-01-01T00:00:00Z"}, "title"),
        ({"title": "x", "starts_at": "2025-01-01T00:00:00Z", "summary": "s"}, "summary"),
        ({"title": "x"}, "starts_at"),
        ({"alert": {"title": "x"}}, "alert"),
    ],
)
def test_generic_wrong_types_name_the_field(payload, field) -> None:
    with pytest.raises(ValidationFailed) as exc:
        normalise(payload)
    assert field in _fields(exc)


def test_alertmanager_wrong_types_name_the_alert_and_field() -> None:
    bad_labels = _am_group(_am_alert("a"), _am_alert("b"))
    bad_labels["alerts"][1]["labels"] = "pod=b"
    no_name = _am_group(_am_alert("a"))
    del no_name["alerts"][0]["labels"]["alertname"]
    del no_name["commonLabels"]["alertname"]
    del no_name["groupLabels"]["alertname"]
    bad_status = _am_group(_am_alert("a", status="pending"))
    bad_time = _am_group(_am_alert("a"))
    bad_time["alerts"][0]["startsAt"] = "not a time"
    cases = [
        (bad_labels, "alerts[1].labels"),
        (no_name, "alerts[0].labels.alertname"),
        (bad_status, "alerts[0].status"),
        (bad_time, "alerts[0].startsAt"),
        (_am_group(_am_alert("a")) | {"version": "3"}, "version"),
        (_am_group(_am_alert("a")) | {"alerts": {"a": 1}}, "alerts"),
        (_am_group(_am_alert("a")) | {"commonLabels": ["x"]}, "commonLabels"),
    ]
    for payload, field in cases:
        with pytest.raises(ValidationFailed) as exc:
            normalise(payload)
        assert _fields(exc) == [field]


def test_azure_wrong_types_name_the_field() -> None:
    no_rule = _azure()
    del no_rule["data"]["essentials"]["alertRule"]
    odd_condition = _azure("Flapping")
    bad_targets = _azure()
    bad_targets["data"]["essentials"]["alertTargetIDs"] = "one"
    bad_custom = _azure()
    bad_custom["data"]["customProperties"] = {"count": 3}
    cases = [
        (no_rule, "data.essentials.alertRule"),
        (odd_condition, "data.essentials.monitorCondition"),
        (bad_targets, "data.essentials.alertTargetIDs"),
        (bad_custom, "data.customProperties.count"),
        ({"schemaId": "azureMonitorCommonAlertSchema", "data": []}, "data"),
    ]
    for payload, field in cases:
        with pytest.raises(ValidationFailed) as exc:
            normalise(payload)
        assert _fields(exc) == [field]


# ---- secrets -------------------------------------------------------------------------------------

_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGVydCJ9.c2lnbmF0dXJl"
_KEY = "fbk_S3cr3tW0rkspaceKey0123456789"


def test_a_token_in_a_label_is_dropped_at_intake_and_never_logged(caplog) -> None:
    payload = _am_group(_am_alert("a", leaked=f"Bearer {_JWT}", api_token=_KEY))
    payload["alerts"][0]["annotations"]["note"] = f"curl -H 'x-api-key: {_KEY}'"
    payload["alerts"][0]["annotations"]["runbook_url"] = "https://ops:hunter2@wiki.example/rb.md?token=abc123"
    with caplog.at_level(logging.DEBUG, logger="firebreak.investigations"):
        [alert] = normalise(payload)
    # The alert is stored, shown to the workspace and sent to the model and tools: no secret is kept.
    assert alert.labels["leaked"] == "Bearer [REDACTED]"
    assert alert.labels["api_token"] == "[REDACTED]"
    assert alert.runbook_url == "https://REDACTED@wiki.example/rb.md?token=[REDACTED]"
    assert caplog.records, "normalise logs one summary line"
    for text in (caplog.text, repr(alert), str(alert), alert.model_dump_json()):
        assert _JWT not in text
        assert _KEY not in text
        assert "hunter2" not in text
        assert "abc123" not in text
    # Read back (as the record is), the alert is unchanged: the scrub ran once, at the door.
    assert Alert.model_validate(alert.model_dump(mode="json")) == alert


def test_errors_never_repeat_a_value_from_the_payload() -> None:
    cases = [
        {"title": "x", "severity": _KEY, "starts_at": "2025-01-01T00:00:00Z"},
        {"title": "x", "starts_at": _JWT},
        {"title": "x", "starts_at": "2025-01-01T00:00:00Z", "labels": {"token": ["Bearer", _JWT]}},
    ]
    for payload in cases:
        with pytest.raises(ValidationFailed) as exc:
            normalise(payload)
        text = repr((exc.value.message, exc.value.details, exc.value.recovery_suggestions))
        assert _KEY not in text
        assert _JWT not in text


def test_the_mapping_doc_covers_every_field_and_format() -> None:
    for field in Alert.model_fields:
        if field != "format":
            assert f"`{field}`" in alerts.MAPPING_DOC, field
    for fmt in ("generic", "Alertmanager", "Azure Monitor"):
        assert fmt in alerts.MAPPING_DOC


def test_a_huge_unknown_key_is_not_echoed_whole() -> None:
    with pytest.raises(ValidationFailed) as exc:
        normalise({"title": "x", "starts_at": "2025-01-01T00:00:00Z", "k" * 50_000: "v"})
    assert len(_fields(exc)[0]) <= 200
    assert len(exc.value.message) < 2_000


def test_a_severity_that_is_not_a_word_is_refused_naming_the_field() -> None:
    am = _am_group(_am_alert("a"))
    am["alerts"][0]["labels"]["severity"] = 5
    azure = {
        "schemaId": "azureMonitorCommonAlertSchema",
        "data": {"essentials": {"monitorCondition": "Fired", "alertRule": "r", "severity": ["Sev1"]}},
    }
    for payload, field in ((am, "alerts[0].labels.severity"), (azure, "data.essentials.severity")):
        with pytest.raises(ValidationFailed) as exc:
            normalise(payload, received_at=datetime(2026, 1, 1, tzinfo=UTC))
        assert _fields(exc) == [field]


def test_a_start_time_past_the_representable_range_is_refused() -> None:
    for when in ("9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00"):
        with pytest.raises(ValidationFailed) as exc:
            normalise({"title": "x", "starts_at": when})
        assert _fields(exc) == ["starts_at"]
