"""Dates in an object's output compared with the alert's time: expired, expiring soon, renewal overdue."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from shared.investigations.rules.object_view import values
from shared.investigations.rules.object_view.signal import label, make, subject
from shared.investigations.rules.object_view.view import ObjectView
from shared.investigations.rules.state import CallRecord, Finding

SOON = timedelta(days=14)
_MAX_LINE = 2000
# A key that names an end of validity or a renewal, then the separator before its value.
_KEY = re.compile(
    r"(?i)(?<![a-z])(not ?after|expiration(?: ?(?:time|timestamp|date))?|renewal ?time|expires?(?: ?(?:at|on))?|"
    r"expiry(?: ?(?:date|time))?|valid ?until)(?![a-z])[\"']?[ \t]{0,40}[:=][ \t]{0,40}"
)


def findings(rec: CallRecord, view: ObjectView, alert_time: datetime | None) -> list[Finding]:
    """The earliest end of validity that passed before the alert or comes within SOON after it, and a renewal time
    that passed while the validity has not ended."""
    if alert_time is None:
        return []
    ends: list[tuple[datetime, str, str]] = []
    renewals: list[tuple[datetime, str, str]] = []
    for line in rec.output[: 512 * 1024].splitlines():
        if len(line) > _MAX_LINE:
            continue
        m = _KEY.search(line)
        if not m:
            continue
        found = values.find_time(line[m.end() :])
        if not found:
            continue
        key = m.group(1)
        (renewals if "renew" in key.lower() else ends).append((found[0], found[1], line.strip()))
    out: list[Finding] = []
    if ends:
        when, shown, quote = min(ends)
        out += _end(rec, view, alert_time, when, shown, quote)
    if renewals and (not ends or min(ends)[0] > alert_time):
        when, shown, quote = min(renewals)
        if when < alert_time:
            cause = (
                f"{label(view)} was due for renewal at {shown}, {values.span(alert_time - when)} before the "
                "alert, and has not been renewed: whatever renews it is failing."
            )
            out.append(make(rec, "renewal_overdue", subject(view, "renewal"), cause, [quote], _fixes(view), 0.6))
    return out


def _end(
    rec: CallRecord, view: ObjectView, alert_time: datetime, when: datetime, shown: str, quote: str
) -> list[Finding]:
    if when < alert_time:
        cause = (
            f"{label(view)} has expired: it was valid until {shown}, {values.span(alert_time - when)} before the alert."
        )
        quotes = [quote]
        failing = next((c for c in view.conditions if c.type == "Issuing" and c.status == "False" and c.message), None)
        if failing:  # why it was not renewed, when the object says it
            cause = cause[:-1] + f", because its renewal fails: {failing.message[:200]}"
            quotes.append(failing.quote)
        return [make(rec, "expired", subject(view, "expiry"), cause, quotes, _fixes(view), 0.85)]
    if when - alert_time <= SOON:
        cause = f"{label(view)} expires at {shown}, {values.span(when - alert_time)} after the alert."
        return [make(rec, "expiring", subject(view, "expiry"), cause, [quote], _fixes(view), 0.6)]
    return []


def _fixes(view: ObjectView) -> list[str]:
    if view.kind == "Certificate":
        issuer = view.fact("issuer")
        secret = view.fact("secret_name")
        return [
            f"Renew Certificate {view.name}: check its issuer"
            + (f" {issuer}" if issuer else "")
            + " and the CertificateRequest/Order it created (their conditions say why issuance fails)"
            + (f"; the Secret {secret} holds the certificate in use." if secret else ".")
        ]
    return [
        (
            f"Renew or rotate what {label(view)} holds before it is used again, and restart what reads it if it "
            "does not reload by itself."
        )
    ]
