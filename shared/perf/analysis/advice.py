"""What every piece of advice is made of, and what the advice rules may look at besides their subject.

An `Advice` names the pattern its rule recognised (`pattern`, stable codes listed in shared/perf/README.md),
the numbers it was decided on (`facts`, the evidence an engineer can check) and the text (`text`) that
says what to do. The rules live in span_advice.py, query_advice.py and endpoint_advice.py; each takes
its subject and an `AdviceContext` (the rest of the snapshot: profiles, spans, endpoints, servers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Advice:
    pattern: str
    text: str
    facts: dict[str, Any] = field(default_factory=dict)

    def diagnosis(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "facts": self.facts}


def ms(value: float) -> str:
    """Milliseconds as a person reads them: 1,240 ms, 8.3 ms, 0.05 ms."""
    if value >= 100:
        return f"{value:,.0f} ms"
    if value >= 1:
        return f"{value:,.1f} ms"
    return f"{value:.2g} ms"


def pct(share: float) -> str:
    """A share as a percentage, never rounded up to 100 % or down to 0 % when it is not."""
    value = 100.0 * share
    if 99.5 <= value < 100:
        return f"{value:.1f} %"
    if 0 < value < 0.5:
        return "<1 %"
    return f"{value:.0f} %"


class AdviceContext:
    """The snapshot around a subject: its profile's endpoint, the spans beside it, the other endpoints."""

    def __init__(self, snapshot: dict[str, Any]) -> None:
        self.profiles: dict[str, dict[str, Any]] = {p["key"]: p for p in snapshot.get("profiles", [])}
        self.spans: dict[tuple[str, str], dict[str, Any]] = {
            (s["profile"], s["function"]): s for s in snapshot.get("spans", [])
        }
        self.endpoints: list[dict[str, Any]] = snapshot.get("endpoints", [])
        self.servers: list[dict[str, Any]] = snapshot.get("slow_log_servers", [])
        self._labels = self._profile_labels()

    def _profile_labels(self) -> dict[str, str]:
        """Per profile key, the request it profiled (`GET /tag/blue`, `cli bin/console x`), numbered when repeated."""
        by_where: dict[str, list[str]] = {}
        for key in sorted(self.profiles):
            by_where.setdefault(self._where(self.profiles[key]), []).append(key)
        labels = {}
        for where, keys in by_where.items():
            for i, key in enumerate(keys):
                labels[key] = where if len(keys) == 1 else f"{where}, profile {i + 1} of {len(keys)}"
        return labels

    @staticmethod
    def _where(profile: dict[str, Any]) -> str:
        if profile.get("endpoint"):
            return str(profile["endpoint"])
        command = " ".join(str(profile.get("command") or "").split())
        return f"cli {command[:80]}" if command else str(profile.get("key", "?"))

    def request(self, profile_key: str) -> str:
        """What a profile measured, for people: the endpoint (method and path) or the CLI command."""
        return self._labels.get(profile_key, profile_key)

    def span(self, profile_key: str, function: str) -> dict[str, Any] | None:
        return self.spans.get((profile_key, function))
