"""Alert intake: one `Alert` model, and `normalise` for generic JSON, Alertmanager webhooks and Azure Monitor alerts."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shared.core.errors import ValidationFailed
from shared.core.redaction import REDACTED, is_secret_name, redact, redact_text

log = logging.getLogger("firebreak.investigations")

Severity = Literal["critical", "warning", "info", "none"]
AlertFormat = Literal["generic", "alertmanager", "azure_monitor"]

# Bounds. One payload is checked whole (cheaply, before any model is built), then each alert field by field.
MAX_ALERTS = 100  # per payload: an Alertmanager group larger than this is a storm, not N investigations
MAX_PAYLOAD_CHARS = 1_000_000  # characters of every key and string together (Azure caps one alert at 256 KB)
MAX_PAYLOAD_NODES = 50_000  # JSON values of any kind
MAX_PAYLOAD_DEPTH = 32
MAX_STRING_CHARS = 65_536  # any one string anywhere in the payload
MAX_LABELS = 64
MAX_ANNOTATIONS = 32
MAX_KEY_CHARS = 128
MAX_LABEL_VALUE_CHARS = 1_024
MAX_ANNOTATION_VALUE_CHARS = 8_192
MAX_DESCRIPTION_CHARS = 8_192
MAX_TITLE_CHARS = 512
MAX_NAME_CHARS = 256
MAX_ERRORS_LISTED = 20  # errors listed in one answer

ACCEPTED_FORMATS = (
    "Send one of three formats: (a) a generic alert object {title, description, severity"
    " (critical|warning|info|none), labels, annotations (runbook_url), source, starts_at (RFC 3339), cluster,"
    ' namespace}; (b) a Prometheus Alertmanager webhook payload (version "4" with alerts[]); (c) an Azure'
    ' Monitor alert in the common alert schema (schemaId "azureMonitorCommonAlertSchema"; enable the common'
    " schema on the action group)."
)

# Severity words seen in the wild, lower-cased. Azure Monitor: Sev0 Critical, Sev1 Error, Sev2 Warning,
# Sev3 Informational, Sev4 Verbose (the AlertSeverity enum of the Azure SDKs); Error pages like Critical.
# Bare numbers are left out on purpose: 0 is the worst in Azure and syslog but the mildest elsewhere.
_SEVERITY_WORDS: dict[str, Severity] = {
    **dict.fromkeys(
        (
            *("critical", "crit", "high", "error", "err", "fatal", "emergency", "emerg", "alert", "page", "major"),
            *("disaster", "p1", "p2", "sev0", "sev1"),
        ),
        "critical",
    ),
    **dict.fromkeys(("warning", "warn", "medium", "moderate", "average", "minor", "ticket", "p3", "sev2"), "warning"),
    **dict.fromkeys(
        (
            *("info", "informational", "information", "low", "notice", "debug", "verbose", "p4", "p5", "sev3"),
            "sev4",
        ),
        "info",
    ),
    **dict.fromkeys(("none", "ok"), "none"),
}
# A source that fired an alert without a severity still fired it: investigate at normal priority, never drop
# it as "none" (kube-prometheus keeps "none" for its heartbeat, Watchdog).
DEFAULT_SEVERITY: Severity = "warning"


def severity_of(value: object, *, strict: bool) -> Severity:
    """Map a severity word to critical|warning|info|none; an unknown word raises when strict, else DEFAULT_SEVERITY."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULT_SEVERITY
    if not isinstance(value, str):
        raise ValueError("severity must be a string")
    found = _SEVERITY_WORDS.get(value.strip().lower())
    if found is not None:
        return found
    if strict:
        raise ValueError(
            "severity must be one of critical, warning, info, none (or a common synonym: high, error, low)"
        )
    return DEFAULT_SEVERITY


# `scheme://user:password@host` and `scheme://token@host`: the credentials part of a URL anywhere in a text.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,31}://)[^/\s@?#]{1,1024}@")


def scrub_text(text: str) -> str:
    """`text` without secret-looking values (tokens, `password=...`, credentials in URLs)."""
    if not text:
        return text
    return redact_text(_URL_USERINFO.sub(r"\1" + REDACTED.strip("[]") + "@", text))


def _scrub_map(value: dict[str, str], value_chars: int) -> dict[str, str]:
    # A label or annotation named like a secret (db_password, api_token) keeps its name, never its value.
    # Clipped again: "[REDACTED]" is longer than a short secret, and the record is validated on every read.
    return {k: (REDACTED if v and is_secret_name(k) else _clip(scrub_text(v), value_chars)) for k, v in value.items()}


def _check_map(value: dict[str, str], what: str, most: int, value_chars: int) -> dict[str, str]:
    if len(value) > most:
        raise ValueError(f"at most {most} {what}")
    for key, item in value.items():
        if not key.strip() or len(key) > MAX_KEY_CHARS:
            raise ValueError(f"{what} names must be 1-{MAX_KEY_CHARS} characters")
        if len(item) > value_chars:
            raise ValueError(f"each of the {what} is at most {value_chars} characters")
    return value


class Alert(BaseModel):
    """One firing alert, whatever sent it: what the investigation reads (name, labels, runbook_url) and records."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(
        min_length=1, max_length=MAX_NAME_CHARS, description="The alert name (alertname): runbooks match on it."
    )
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS, description="One line a person reads first.")
    description: str = Field("", max_length=MAX_DESCRIPTION_CHARS)
    severity: Severity = Field(DEFAULT_SEVERITY, description="critical|warning|info|none, normalised from the source.")
    labels: dict[str, str] = Field(default_factory=dict, description="Identifying key/values: namespace, pod, ...")
    annotations: dict[str, str] = Field(default_factory=dict, description="Free text: summary, runbook_url, ...")
    source: str = Field(min_length=1, max_length=64, description="What raised it: prometheus, azure_monitor, ...")
    starts_at: datetime = Field(description="When it started firing, UTC.")
    cluster: str | None = Field(None, max_length=253)
    namespace: str | None = Field(None, max_length=253)
    fingerprint: str | None = Field(None, max_length=256, description="The source's dedup key (Alertmanager).")
    external_id: str | None = Field(
        None, max_length=1_024, description="The source's id of this alert (Azure alertId)."
    )
    source_url: str | None = Field(None, max_length=2_048, description="Where the source shows it (generatorURL).")
    format: AlertFormat = Field("generic", description="Which intake format it arrived in.")

    @field_validator("severity", mode="before")
    @classmethod
    def _severity(cls, value: object) -> Severity:
        return severity_of(value, strict=True)

    @field_validator("labels")
    @classmethod
    def _labels(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_map(value, "labels", MAX_LABELS, MAX_LABEL_VALUE_CHARS)

    @field_validator("annotations")
    @classmethod
    def _annotations(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_map(value, "annotations", MAX_ANNOTATIONS, MAX_ANNOTATION_VALUE_CHARS)

    @field_validator("starts_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        # RFC 3339 always carries an offset; a naive time from a lax sender is taken as UTC, not local time.
        try:
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        except OverflowError:  # 9999-12-31T23:59-05:00 is past the last representable UTC time
            raise ValueError("a time that cannot be expressed in UTC") from None

    @property
    def runbook_url(self) -> str | None:
        """The runbook the alert names (annotation `runbook_url`), if any; fetch it through the outbound guard."""
        url = self.annotations.get("runbook_url", "").strip()
        return url or None

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # Labels and annotations are the caller's data and are kept verbatim; a repr or str() of the alert
        # that reaches a log line must not carry a token someone put in a label.
        for key, value in super().__repr_args__():
            yield (
                key,
                redact(value) if key in {"title", "description", "labels", "annotations", "source_url"} else value,
            )


# ---- errors --------------------------------------------------------------------------------------


class _Bad(Exception):
    """One problem at one place in the payload; never carries the offending value (it may be a secret)."""

    def __init__(self, field: str, problem: str, kind: str = "value_error") -> None:
        super().__init__(problem)
        self.entry = {"field": field, "problem": problem, "type": kind}


def _rejected(entries: list[dict[str, str]]) -> ValidationFailed:
    # name and title both come from alertname in two formats: one problem, said once.
    entries = list({(e["field"], e["problem"]): e for e in entries}.values())
    # Field paths hold the caller's key names; a hostile 60,000-character key is not echoed whole.
    entries = [e | {"field": _clip(e["field"], 200)} for e in entries]
    fields = ", ".join(e["field"] for e in entries[:5])
    return ValidationFailed(
        f"Invalid alert payload: {fields}",
        details={"errors": entries[:MAX_ERRORS_LISTED]},
        recovery_suggestions=["Fix the named fields and send the alert again.", ACCEPTED_FORMATS],
    )


def _path(parts: tuple[str | int, ...]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def _pydantic_entries(exc: ValidationError, prefix: str, field_names: Mapping[str, str]) -> list[dict[str, str]]:
    entries = []
    for err in exc.errors(include_url=False, include_context=False, include_input=False):
        loc = [str(p) for p in err.get("loc", ())]
        head = field_names.get(loc[0], loc[0]) if loc else ""
        field = ".".join(p for p in (prefix, head, *loc[1:]) if p) or "(root)"
        entries.append({"field": field, "problem": err.get("msg", "invalid"), "type": err.get("type", "")})
    return entries


def _build(fields: dict[str, Any], prefix: str, field_names: Mapping[str, str]) -> Alert:
    try:
        alert = Alert.model_validate(fields)
    except ValidationError as exc:
        raise _Rejected(_pydantic_entries(exc, prefix, field_names)) from None
    return scrubbed(alert)


def scrubbed(alert: Alert) -> Alert:
    """The alert without secret-looking values: done once, at intake (redact_text is not idempotent).

    The alert is kept (the record, the run's plan, the orchestration history), shown to every member of
    the workspace and sent to the model and the MCP tools: a token someone put in a label, an annotation,
    the text or a URL's credentials is dropped at the door instead of being carried along. Values are
    clipped again, since "[REDACTED]" is longer than a short secret and the record is validated on read.
    """
    return alert.model_copy(
        update={
            "name": _clip(scrub_text(alert.name), MAX_NAME_CHARS),
            "title": _clip(scrub_text(alert.title), MAX_TITLE_CHARS),
            "description": _clip(scrub_text(alert.description), MAX_DESCRIPTION_CHARS),
            "labels": _scrub_map(alert.labels, MAX_LABEL_VALUE_CHARS),
            "annotations": _scrub_map(alert.annotations, MAX_ANNOTATION_VALUE_CHARS),
            "source_url": _clip(scrub_text(alert.source_url), 2_048) if alert.source_url else None,
            "cluster": _clip(scrub_text(alert.cluster), 253) if alert.cluster else None,
            "namespace": _clip(scrub_text(alert.namespace), 253) if alert.namespace else None,
        }
    )


class _Rejected(Exception):
    def __init__(self, entries: list[dict[str, str]]) -> None:
        super().__init__("rejected")
        self.entries = entries


# ---- cheap size check ----------------------------------------------------------------------------


def _check_size(payload: object) -> None:
    """Refuse an oversized payload in one bounded walk, before anything is copied or validated."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [(payload, ())]
    nodes = chars = 0
    while stack:
        value, at = stack.pop()
        nodes += 1
        if isinstance(value, str):
            chars += len(value)
            if len(value) > MAX_STRING_CHARS:
                raise _Bad(_path(at), f"longer than {MAX_STRING_CHARS} characters", "string_too_long")
        elif isinstance(value, dict | list):
            if len(at) >= MAX_PAYLOAD_DEPTH:
                raise _Bad(_path(at), f"nested deeper than {MAX_PAYLOAD_DEPTH} levels", "too_deep")
            if nodes + len(stack) + len(value) > MAX_PAYLOAD_NODES:
                raise _Bad("(root)", f"more than {MAX_PAYLOAD_NODES} JSON values", "payload_too_large")
            if isinstance(value, dict):
                chars += sum(len(str(k)) for k in value)
                stack.extend((v, (*at, str(k))) for k, v in value.items())
            else:
                stack.extend((v, (*at, i)) for i, v in enumerate(value))
        if chars > MAX_PAYLOAD_CHARS:
            raise _Bad("(root)", f"more than {MAX_PAYLOAD_CHARS} characters of text", "payload_too_large")


def _object(value: object, field: str, *, required: bool = True) -> dict[str, Any]:
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise _Bad(field, "must be a JSON object", "dict_type")
    return value


# ---- format detection ----------------------------------------------------------------------------

AZURE_SCHEMA_ID = "azureMonitorCommonAlertSchema"


def detect_format(payload: object) -> AlertFormat:
    """Say which intake format a payload is in; raises ValidationFailed (field and the accepted formats) if none."""
    try:
        return _detect(payload)
    except _Bad as bad:
        raise _rejected([bad.entry]) from None


def _detect(payload: object) -> AlertFormat:
    if not isinstance(payload, dict):
        raise _Bad("(root)", "the alert payload must be a JSON object", "dict_type")
    if "schemaId" in payload:
        if payload["schemaId"] != AZURE_SCHEMA_ID:
            # The legacy metric/log/activity-log webhook schemas differ per signal type; one mapping is kept.
            raise _Bad("schemaId", f'only the common alert schema ("{AZURE_SCHEMA_ID}") is accepted', "unknown_format")
        return "azure_monitor"
    if "alerts" in payload and ({"version", "groupKey", "commonLabels", "receiver"} & payload.keys()):
        return "alertmanager"
    if "title" in payload or "alert" in payload:
        return "generic"
    raise _Bad("(root)", "unknown alert format", "unknown_format")


# ---- (a) generic ---------------------------------------------------------------------------------

_GENERIC_KEYS = frozenset(Alert.model_fields) - {"format"} | {"alert", "runbook_url"}


def _from_generic(payload: dict[str, Any], received_at: datetime | None) -> list[Alert]:
    unknown = sorted(str(k) for k in payload if k not in _GENERIC_KEYS)
    if unknown:
        accepted = ", ".join(sorted(_GENERIC_KEYS))
        raise _Rejected(
            [
                {"field": k, "problem": f"unknown field (accepted: {accepted})", "type": "extra_forbidden"}
                for k in unknown
            ]
        )
    fields = dict(payload)
    alias = fields.pop("alert", None)
    if alias is not None and not isinstance(alias, str):
        raise _Bad(
            "alert", "the alert's title as a string; send the alert's own fields at the top level", "string_type"
        )
    fields.setdefault("title", alias)
    labels = fields.get("labels")
    labels = labels if isinstance(labels, dict) else {}
    runbook_url = fields.pop("runbook_url", None)
    if runbook_url is not None and isinstance(fields.get("annotations", {}), dict):
        fields["annotations"] = {**fields.get("annotations", {}), "runbook_url": runbook_url}
    title = fields.get("title")
    # A name taken from a long title is cut to fit: the title itself is checked (and named) on its own.
    fields.setdefault(
        "name", labels.get("alertname") or (_clip(title, MAX_NAME_CHARS) if isinstance(title, str) else title)
    )
    fields.setdefault("source", "generic")
    fields.setdefault("cluster", labels.get("cluster"))
    fields.setdefault("namespace", labels.get("namespace"))
    if fields.get("starts_at") is None:
        fields["starts_at"] = _required_time(received_at, "starts_at")
    fields["format"] = "generic"
    return [_build(fields, "", {"name": "name"})]


def _lenient_severity(value: object, field: str) -> Severity:
    """An unknown severity word is investigated at DEFAULT_SEVERITY; a value that is no word at all is refused."""
    try:
        return severity_of(value, strict=False)
    except ValueError:
        raise _Bad(field, "must be a string", "string_type") from None


def _required_time(received_at: datetime | None, field: str) -> datetime:
    if received_at is None:
        raise _Bad(field, "required: when the alert started, RFC 3339 (e.g. 2025-02-27T06:31:00Z)", "missing")
    return received_at


# ---- (b) Prometheus Alertmanager webhook ---------------------------------------------------------
# Payload (prometheus.io/docs/alerting/latest/configuration/#webhook_config): {version "4", groupKey,
# truncatedAlerts, status, receiver, groupLabels, commonLabels, commonAnnotations, externalURL,
# alerts[{status firing|resolved, labels, annotations, startsAt, endsAt, generatorURL, fingerprint}]}.

_AM_FIELDS = {
    "name": "labels.alertname",
    "title": "labels.alertname",
    "description": "annotations.description",
    "severity": "labels.severity",
    "starts_at": "startsAt",
    "cluster": "labels.cluster",
    "namespace": "labels.namespace",
    "source_url": "generatorURL",
}


def _from_alertmanager(payload: dict[str, Any], received_at: datetime | None) -> tuple[list[Alert], int]:
    version = payload.get("version")
    if version is not None and version != "4":
        raise _Bad("version", 'Alertmanager webhook version "4" is the one accepted', "unknown_format")
    items = payload.get("alerts")
    if not isinstance(items, list):
        raise _Bad("alerts", "must be a list of alerts", "list_type")
    # groupLabels are a subset of commonLabels; both sit under each alert's own (the alert's value wins).
    common_labels = {**_object(payload.get("groupLabels"), "groupLabels", required=False)}
    common_labels |= _object(payload.get("commonLabels"), "commonLabels", required=False)
    common_annotations = _object(payload.get("commonAnnotations"), "commonAnnotations", required=False)
    alerts: list[Alert] = []
    entries: list[dict[str, str]] = []
    resolved = 0
    for i, item in enumerate(items):
        try:
            alert = _alertmanager_alert(item, f"alerts[{i}]", common_labels, common_annotations, received_at)
        except _Bad as bad:
            entries.append(bad.entry)
            continue
        except _Rejected as rejected:
            entries.extend(rejected.entries)
            continue
        if alert is None:
            resolved += 1
        else:
            alerts.append(alert)
    if entries:
        raise _Rejected(entries)
    return alerts, resolved


def _alertmanager_alert(
    item: object,
    at: str,
    common_labels: dict[str, Any],
    common_annotations: dict[str, Any],
    received_at: datetime | None,
) -> Alert | None:
    item = _object(item, at)
    status = item.get("status")
    if status == "resolved":
        return None
    if status != "firing":
        raise _Bad(f"{at}.status", 'must be "firing" or "resolved"', "literal_error")
    labels = common_labels | _object(item.get("labels"), f"{at}.labels", required=False)
    annotations = common_annotations | _object(item.get("annotations"), f"{at}.annotations", required=False)
    name = labels.get("alertname")
    if not isinstance(name, str) or not name.strip():
        raise _Bad(f"{at}.labels.alertname", "required: every Alertmanager alert has an alertname label", "missing")
    # kube-prometheus rules put the long text in `description`, older mixins in `message`.
    description = annotations.get("description") or annotations.get("message") or annotations.get("summary") or ""
    fields = {
        "name": name,
        "title": name,
        "description": description,
        "severity": _lenient_severity(labels.get("severity"), f"{at}.labels.severity"),
        "labels": labels,
        "annotations": annotations,
        "source": "alertmanager",
        "starts_at": item.get("startsAt") or _required_time(received_at, f"{at}.startsAt"),
        "cluster": labels.get("cluster"),
        "namespace": labels.get("namespace"),
        "fingerprint": item.get("fingerprint") or None,
        "source_url": item.get("generatorURL") or None,
        "format": "alertmanager",
    }
    return _build(fields, at, _AM_FIELDS)


# ---- (c) Azure Monitor common alert schema -------------------------------------------------------
# learn.microsoft.com/azure/azure-monitor/alerts/alerts-common-schema: {schemaId, data: {essentials:
# {alertId, alertRule, severity Sev0-Sev4, signalType, monitorCondition Fired|Resolved, monitoringService,
# alertTargetIDs, configurationItems, originAlertId, firedDateTime, resolvedDateTime, description, ...},
# alertContext (per signal type), customProperties (key/value strings set on the action group)}}.

_AZ = "data.essentials"
_AZ_FIELDS = {
    "name": f"{_AZ}.alertRule",
    "title": f"{_AZ}.alertRule",
    "description": f"{_AZ}.description",
    "starts_at": f"{_AZ}.firedDateTime",
    "external_id": f"{_AZ}.alertId",
    "annotations": "data.customProperties",
}
# /subscriptions/<id>/resourceGroups/<rg>/providers/<namespace>/<type>/<name>; the samples lower-case it.
_ARM_ID = re.compile(
    r"^/subscriptions/[^/]+/resourcegroups/(?P<rg>[^/]+)/providers/(?P<type>[^/]+/[^/]+)/(?P<name>[^/]+)", re.IGNORECASE
)


_AKS_ID = re.compile(r"/providers/microsoft\.containerservice/managedclusters/(?P<name>[^/]+)", re.IGNORECASE)


def _from_azure(payload: dict[str, Any], received_at: datetime | None) -> tuple[list[Alert], int]:
    data = _object(payload.get("data"), "data")
    essentials = _object(data.get("essentials"), _AZ)
    condition = essentials.get("monitorCondition")
    if condition == "Resolved":
        return [], 1
    if condition != "Fired":
        raise _Bad(f"{_AZ}.monitorCondition", 'must be "Fired" or "Resolved"', "literal_error")
    rule = essentials.get("alertRule")
    if not isinstance(rule, str) or not rule.strip():
        raise _Bad(f"{_AZ}.alertRule", "required: the alert rule's name", "missing")
    context = _object(data.get("alertContext"), "data.alertContext", required=False)
    custom = _object(data.get("customProperties"), "data.customProperties", required=False)
    # The field table spells it alertTargetIds, the JSON samples alertTargetIDs.
    targets = _strings(essentials.get("alertTargetIDs", essentials.get("alertTargetIds")), f"{_AZ}.alertTargetIDs")
    items = _strings(essentials.get("configurationItems"), f"{_AZ}.configurationItems")
    labels = _azure_labels(essentials, rule, targets, items, context)
    annotations = {str(k): v for k, v in custom.items()}
    if isinstance(essentials.get("description"), str) and essentials["description"].strip():
        annotations.setdefault("description", essentials["description"])
    if targets:
        annotations.setdefault("alert_target_ids", _clip("\n".join(targets), MAX_ANNOTATION_VALUE_CHARS))
    summary = _condition_summary(context)
    if summary:
        annotations.setdefault("condition", summary)
    lowered = {k.lower(): v for k, v in (labels | custom).items() if isinstance(v, str)}
    fields = {
        "name": rule,
        "title": rule,
        "description": essentials.get("description") or summary,
        "severity": _lenient_severity(essentials.get("severity"), f"{_AZ}.severity"),
        "labels": labels,
        "annotations": annotations,
        "source": "azure_monitor",
        "starts_at": essentials.get("firedDateTime") or _required_time(received_at, f"{_AZ}.firedDateTime"),
        "cluster": _aks_cluster(targets) or lowered.get("cluster") or lowered.get("clustername"),
        "namespace": lowered.get("namespace") or lowered.get("kubernetes namespace"),
        "external_id": essentials.get("alertId") or None,
        "format": "azure_monitor",
    }
    return [_build(fields, "", _AZ_FIELDS)], 0


def _aks_cluster(targets: list[str]) -> str | None:
    for target in targets:
        match = _AKS_ID.search(target)
        if match:
            return match["name"]
    return None


def _strings(value: object, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(field, "must be a list of strings", "list_type")
    return value


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _azure_labels(
    essentials: dict[str, Any], rule: str, targets: list[str], items: list[str], context: dict[str, Any]
) -> dict[str, str]:
    labels: dict[str, str] = {"alertname": rule}
    for key, source in (
        ("severity", "severity"),
        ("signal_type", "signalType"),
        ("monitoring_service", "monitoringService"),
    ):
        if isinstance(essentials.get(source), str) and essentials[source]:
            labels[key] = essentials[source]
    match = _ARM_ID.match(targets[0]) if targets else None
    if match:
        labels |= {"resource_group": match["rg"], "resource_type": match["type"], "resource_name": match["name"]}
    if items:
        labels["resource"] = _clip(", ".join(items), MAX_LABEL_VALUE_CHARS)
    # Metric dimensions (and a log alert's Dimensions) name what fired: pod, namespace, node, ...
    for name, value in _dimensions(context):
        if len(labels) < MAX_LABELS and 0 < len(name) <= MAX_KEY_CHARS:
            labels.setdefault(name, _clip(value, MAX_LABEL_VALUE_CHARS))
    return labels


def _criteria(context: dict[str, Any]) -> list[dict[str, Any]]:
    condition = context.get("condition")
    all_of = condition.get("allOf") if isinstance(condition, dict) else None
    return [c for c in all_of if isinstance(c, dict)] if isinstance(all_of, list) else []


def _dimensions(context: dict[str, Any]) -> Iterator[tuple[str, str]]:
    lists = [c.get("dimensions") for c in _criteria(context)] + [context.get("Dimensions")]
    for dims in lists:
        for dim in dims if isinstance(dims, list) else []:
            if isinstance(dim, dict) and isinstance(dim.get("name"), str) and isinstance(dim.get("value"), str):
                yield dim["name"], dim["value"]


def _condition_summary(context: dict[str, Any]) -> str:
    """One line per criterion: metric alerts' metric/operator/threshold/value, log alerts' query and result count."""
    lines = []
    for c in _criteria(context):
        what = c.get("metricName") or c.get("webTestName") or c.get("searchQuery")
        parts = [what, c.get("timeAggregation"), c.get("operator"), c.get("threshold")]
        line = " ".join(str(p) for p in parts if p not in (None, ""))
        if c.get("metricValue") is not None:
            line += f" (value {c['metricValue']})"
        lines.append(line)
    if isinstance(context.get("SearchQuery"), str):
        lines.append(f"{context['SearchQuery']} (results {context.get('ResultCount', '?')})")
    if isinstance(context.get("operationName"), str):  # activity log alerts
        lines.append(" ".join(str(context[k]) for k in ("operationName", "status") if context.get(k)))
    return _clip("\n".join(line for line in lines if line), MAX_ANNOTATION_VALUE_CHARS)


# ---- entry point ---------------------------------------------------------------------------------


def normalise(payload: object, *, received_at: datetime | None = None) -> list[Alert]:
    """Turn an alert payload into the firing alerts it carries (resolved ones give none), whatever its format.

    Formats: (a) the generic alert JSON, (b) a Prometheus Alertmanager webhook payload (one Alert per firing
    alert of the group, the group's common labels and annotations under each alert's own), (c) an Azure
    Monitor alert in the common alert schema. `received_at` stands in for a missing start time (pass the
    request's arrival time; without it a missing start time is an error). Pure: no I/O, no clock.
    Raises ValidationFailed with `details.errors[{field, problem, type}]`; no error or log line repeats a
    value from the payload.
    """
    try:
        return _normalise(payload, received_at)
    except _Bad as bad:
        raise _rejected([bad.entry]) from None
    except _Rejected as rejected:
        raise _rejected(rejected.entries) from None


def _normalise(payload: object, received_at: datetime | None) -> list[Alert]:
    kind = _detect(payload)
    assert isinstance(payload, dict)  # _detect refuses anything else
    items = payload.get("alerts")
    if isinstance(items, list) and len(items) > MAX_ALERTS:
        # Checked before the walk so that a storm of alerts costs one len().
        raise _Bad("alerts", f"at most {MAX_ALERTS} alerts in one payload; split the group", "too_long")
    _check_size(payload)
    resolved = 0
    if kind == "generic":
        alerts = _from_generic(payload, received_at)
    elif kind == "alertmanager":
        alerts, resolved = _from_alertmanager(payload, received_at)
    else:
        alerts, resolved = _from_azure(payload, received_at)
    # Counts and the format only: label values and names are the caller's data and may hold anything.
    log.info("alert intake: %s payload, %d firing, %d resolved skipped", kind, len(alerts), resolved)
    return alerts


_MAPPING_ROWS = (
    (
        "`Alert` field",
        "(a) generic JSON",
        "(b) Alertmanager webhook, per alert of `alerts[]`",
        "(c) Azure Monitor common alert schema",
    ),
    (
        "recognised by",
        "`title` (or `alert`, the spec's name for it)",
        '`alerts[]` beside `version` "4", `groupKey` or `commonLabels`',
        "`schemaId` `azureMonitorCommonAlertSchema`",
    ),
    (
        "which alerts",
        "the one object",
        "`status` `firing` only; `resolved` ones give none",
        "`essentials.monitorCondition` `Fired`; `Resolved` gives none",
    ),
    (
        "`name`",
        "`name`, else `labels.alertname`, else `title`",
        "`labels.alertname` (required)",
        "`essentials.alertRule`",
    ),
    ("`title`", "`title` / `alert`", "`labels.alertname`", "`essentials.alertRule`"),
    (
        "`description`",
        "`description`",
        "`annotations.description`, else `.message`, else `.summary`",
        "`essentials.description`, else the condition summary",
    ),
    (
        "`severity`",
        "`severity`: critical, warning, info, none or a synonym (high, error, low, ...); anything else is refused",
        "`labels.severity`, same words; unknown or missing: warning",
        "`essentials.severity`: Sev0/Sev1 critical, Sev2 warning, Sev3/Sev4 info",
    ),
    (
        "`labels`",
        "`labels`",
        "`groupLabels`, `commonLabels`, then the alert's `labels` (the alert's own win)",
        (
            "`alertname`, `severity` (Sev*), `signal_type`, `monitoring_service`, `resource_group`, `resource_type`,"
            " `resource_name` (the first `alertTargetIDs`), `resource` (`configurationItems`), criteria dimensions"
        ),
    ),
    (
        "`annotations`",
        "`annotations`; a top-level `runbook_url` joins them",
        "`commonAnnotations`, then the alert's `annotations`",
        (
            "`data.customProperties` (put `runbook_url` there), `description`, `alert_target_ids`, `condition`"
            " (metric, aggregation, operator, threshold, value; a log alert's query and result count)"
        ),
    ),
    ("`runbook_url`", "`annotations.runbook_url`", "`annotations.runbook_url`", "`customProperties.runbook_url`"),
    ("`source`", "`source`, else `generic`", "`alertmanager`", "`azure_monitor`"),
    ("`starts_at` (UTC)", "`starts_at` (RFC 3339; no offset means UTC)", "`startsAt`", "`essentials.firedDateTime`"),
    (
        "`cluster`",
        "`cluster`, else `labels.cluster`",
        "`labels.cluster`",
        (
            "the AKS cluster of an `alertTargetIDs` entry `.../managedClusters/<name>`, else a `cluster` dimension or"
            " custom property"
        ),
    ),
    (
        "`namespace`",
        "`namespace`, else `labels.namespace`",
        "`labels.namespace`",
        "a `namespace` dimension or custom property",
    ),
    ("`fingerprint`", "`fingerprint`", "`fingerprint`", "-"),
    ("`external_id`", "`external_id`", "-", "`essentials.alertId`"),
    ("`source_url`", "`source_url`", "`generatorURL`", "-"),
)

MAPPING_DOC = (
    "\n".join(
        ["| " + " | ".join(_MAPPING_ROWS[0]) + " |", "|---|---|---|---|"]
        + ["| " + " | ".join(row) + " |" for row in _MAPPING_ROWS[1:]]
    )
    + f"""

Limits: at most {MAX_ALERTS} alerts in one payload, {MAX_PAYLOAD_CHARS:,} characters of text and
{MAX_PAYLOAD_NODES:,} JSON values in all, {MAX_STRING_CHARS:,} characters in any one string; per alert
{MAX_LABELS} labels (values up to {MAX_LABEL_VALUE_CHARS:,} characters), {MAX_ANNOTATIONS} annotations (up to
{MAX_ANNOTATION_VALUE_CHARS:,}), names up to {MAX_KEY_CHARS} characters, a description up to
{MAX_DESCRIPTION_CHARS:,}. Anything else is refused with `VALIDATION_ERROR` naming the field.
"""
)
