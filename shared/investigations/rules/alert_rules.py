"""What the alert alone says: a heartbeat alert (Watchdog, dead man's switch) is no issue."""

from __future__ import annotations

from shared.investigations.rules.context import Context, alert_lines
from shared.investigations.rules.planner import is_heartbeat
from shared.investigations.rules.state import Finding


def heartbeat(ctx: Context) -> list[Finding]:
    if not is_heartbeat(ctx.state.alert):
        return []
    name = ctx.target.alertname or "This alert"
    return [
        Finding(
            rule="heartbeat",
            subject=name,
            cause=(
                f"{name} is not an issue: it is a heartbeat alert, always firing by design, that proves the "
                "alerting pipeline (Prometheus to Alertmanager to its receivers) works. It is expected behaviour."
            ),
            evidence=alert_lines(ctx, r"(?i)always (be )?firing|alerting pipeline"),
            remediation=[
                "No action is needed while it fires.",
                (
                    "Route it to a dead man's switch (e.g. DeadMansSnitch, a heartbeat monitor) so that its absence "
                    "pages someone: if it stops firing, the alerting pipeline is broken."
                ),
            ],
            confidence=0.95,
        )
    ]
