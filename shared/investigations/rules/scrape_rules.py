"""A scrape target that is down while its pods run: Prometheus asks a path or port the app no longer serves.

The app's own access log shows the scraper's requests (`"GET /metrics HTTP/1.1" 404 ... "Prometheus/3.5.0"`);
the ServiceMonitor says which path and port it scrapes; the app's start-up lines often say where it serves its
endpoints now (`Exposing 2 endpoints beneath base path '/actuator'`)."""

from __future__ import annotations

import re
from collections import Counter

from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role

# An access-log request line and its status, when the client is a scraper (its user agent) or asks /metrics.
_REQUEST = re.compile(r"\"(?:GET|HEAD) (/[^\s\"]{0,300}) HTTP/[\d.]{1,3}\" (\d{3})")
_SCRAPER = re.compile(r"(?i)prometheus/|vmagent|otel|opentelemetry|/metrics\b")
_BASE_PATH = re.compile(r"(?i)(?:beneath|under|at) (?:base )?path ['\"`]?(/[\w/.-]{0,100})")
# One run of blanks, then an optional `- ` list marker: no two adjacent runs to backtrack between.
_SM_PATH = re.compile(r"^[ \t]*(?:-[ \t]+)?path:[ \t]*['\"]?(/[\w/.-]{0,200})")
_SM_PORT = re.compile(r"^[ \t]*(?:-[ \t]+)?(?:port|targetPort):[ \t]*['\"]?([\w-]{1,63})")
# Where frameworks put their Prometheus endpoint under a base path.
_METRICS_UNDER = {"actuator": "prometheus"}


def _about_targets(ctx: Context) -> bool:
    name = str((ctx.state.alert.get("labels") or {}).get("alertname") or ctx.state.alert.get("title") or "")
    return bool(re.search(r"(?i)targetdown|scrape|target.?missing", name))


def _monitor(ctx: Context) -> tuple[CallRecord | None, str, str]:
    """The ServiceMonitor (or PodMonitor) read: its output, scraped path and port."""
    for s in ctx.seen:
        if s.kind in ("ServiceMonitor", "PodMonitor") and s.role is Role.DESCRIBE and not s.rec.is_error:
            lines = s.rec.output[:50_000].splitlines()
            path = next((m.group(1) for ln in lines if (m := _SM_PATH.match(ln))), "")
            port = next((m.group(1) for ln in lines if (m := _SM_PORT.match(ln))), "")
            return s.rec, path, port
    return None, "", ""


def scrape_failures(ctx: Context) -> list[Finding]:
    """The scraper's requests that the target answers with an error, and where the app serves metrics now."""
    if not _about_targets(ctx):
        return []
    monitor, path, port = _monitor(ctx)
    for rec in ctx.logs:
        tail = rec.output[-200_000:].splitlines()
        scrapes = [(m.group(1), m.group(2), ln) for ln in tail if _SCRAPER.search(ln) and (m := _REQUEST.search(ln))]
        failed = [(p, status, ln) for p, status, ln in scrapes if status[0] in "45"]
        if not failed or len(failed) * 2 < len(scrapes):
            continue
        (asked, status), times = Counter((p, st) for p, st, _ in failed).most_common(1)[0]
        base = next((m.group(1).rstrip("/") for ln in tail[:2_000] if (m := _BASE_PATH.search(ln))), "")
        where = ""
        if base and not asked.startswith(base + "/"):
            leaf = _METRICS_UNDER.get(base.strip("/").split("/")[-1], "")
            where = f"{base}/{leaf}" if leaf else base
        pod = str(rec.args.get("name") or "")
        cause = f"The scraper's requests for {asked} get HTTP {status} from pod {pod} ({times} times in its log)"
        if monitor is not None and path:
            cause += f"; the ServiceMonitor scrapes path {path}" + (f" on port {port}" if port else "")
        cause += ": the app no longer serves metrics where Prometheus asks, so the target is down though it runs"
        if where:
            line = next(ln for ln in tail[:2_000] if _BASE_PATH.search(ln))
            cause += f" (its log says it serves its endpoints beneath {base}: metrics are likely at {where})"
        evidence = [ev(rec, failed[0][2].strip())]
        if where:
            evidence.append(ev(rec, line.strip()))
        if monitor is not None and path:
            evidence.append(ev(monitor, f"path: {path}"))
        fix = (
            f"Point the ServiceMonitor's endpoint path at {where or 'the path the app serves metrics on'}"
            f" (path: {where or '<metrics path>'}), or restore the old metrics path in the app's configuration "
            "(if a recent rollout moved it); then check the target in Prometheus' targets page."
        )
        return [
            Finding(
                rule="scrape_path", subject=pod, cause=cause + ".", evidence=evidence, remediation=[fix],
                confidence=0.85,
            )
        ]  # fmt: skip
    return []
