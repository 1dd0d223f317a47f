"""A fake NeuBird (Hawkeye) v1 API: a real HTTP server on 127.0.0.1 with seeded projects and sessions.

Shapes follow /work/shared/docs/neubird-api.md (the contract; sections 4, 5, 11, 12). All routes live under
`/api`; every route but `POST /api/v1/user/login` needs `Authorization: Bearer <a token this server issued>`
(else 401, plain text `unauthorized`). Routes: login, `GET /v1/user`, `GET /v1/project`,
`POST /v1/inference/new_session`, `POST /v1/inference/session:create`, `POST /v1/inference/session` (the SSE
prompt stream), `POST /v1/inference/session/list`, `POST /v1/inference/session/inspect`,
`GET /v1/inference/session/summary/{uuid}`, `GET /v1/inference/session_report` (bare array) and
`GET /v1/inference/incident_report` (bare object). Unmatched paths answer 404 `not found`.

In-process use (tests, benchmarks)::

    with FakeNeubird(sessions=1000, seed=7, investigation_seconds=600, time_scale=0.005) as nb:
        nb.base_url            # http://127.0.0.1:<port>/api
        nb.rate_limit(2, retry_after_s=0)
        nb.stats()["routes"]["POST /v1/inference/session/list"]

From a shell: `python -m devhost.fake_neubird --port 8089` prints the base URL and the env lines.

Control methods (all thread-safe; the `/_fake/<name>` routes call the same ones, see `control`):
`configure(investigation_seconds=, time_scale=, keepalive_seconds=, cot_mode=, done_marker=,
login_failure_status=, fail_prompts=)`, `next_prompt(seconds, fail=, answer=, session_uuid=)`,
`token_policy(lifetime_seconds=, max_calls=)`, `expire_tokens()`, `rate_limit(n, retry_after_s)`,
`fail(n, status)`, `slow(seconds, route=)`, `break_stream_after(k)`, `stats()`, `reset_stats()`, `calls(route)`,
`issued_tokens()`,
`add_session(alert_id=, title=, status=, ...)`, `session_view(uuid)`, `wait_finished(uuid, timeout)`, `env()`.
Every request under /api is counted once per route key (e.g. "POST /v1/inference/session/list"), faulted or
not, before any delay; `/_fake/...` calls are not counted.

Investigations run on a server-side timeline: a prompt call appends a prompt cycle whose events fall due over
`investigation_seconds * time_scale` real seconds. The stream writes the due events, then follows the timeline
(keepalives in between) until the final event, and closes. Inspect/summary/list read the same timeline, so
the cycle is in progress until its last event is due, whether or not anyone is still reading the stream.

Invented behaviour (the contract marks these [GAP]/[INF]; every one is a choice of this fake, not NeuBird's):

- [INF] The investigation runs server-side regardless of the connection: a client that disconnects, or a
  stream broken by `break_stream_after`, does not stop it.
- [GAP] `PROMPT_STATUS_IN_PROGRESS` is the status of a running prompt cycle (only COMPLETED and ERROR are
  documented); a failed prompt leaves the session `INVESTIGATION_STATUS_STOPPED`.
- [GAP] Token lifetime (default 24 h), the "expires after N calls" switch, and the JWT claims (`sub`,
  `email`, `org`, `iat`, `exp`, `jti`; HS256 signature with a per-server secret).
- [GAP] 429 + Retry-After (`rate_limit`), 5xx text bodies (`fail`), per-response delay (`slow`).
- [GAP] Keepalive interval (default 5 s), alternating `: keepalive` comments and `data: :keepalive`.
- [GAP] The final event is a `CONTENT_TYPE_EXECUTION_TIME` message with `status: STATUS_DONE` and
  `end_turn: true`; `data: [DONE]` (optional) comes just before it.
- [GAP] `session:create` does not start an investigation (status NOT_STARTED until a prompt is sent); each
  call makes a new session, even for an alert id that already has one.
- [GAP] New session uuids are never the client's `gendb_spec.uuid`.
- [INF] Lists are newest first; filters are ANDed; `in` on `incident_info.title` is a case-insensitive
  substring; date-only `create_time` values mean 00:00Z of that day (gte) / through 23:59:59.999Z (lte).
- [GAP] Filter key `incident_info.id` (operator `==`, exact match) is invented; an unknown filter key or
  operator, a bad date, or a missing `project_uuid` answers 200 with `response.error_code` 400.
- [GAP] `incident_info` fields other than `id` and `title` (`priority` P1-P4, `status`, `type`, `source`,
  `grouped_incidents {id: [...], reason}`), error codes/messages in the envelope (404 "project <uuid> does
  not exist", "session <uuid> does not exist", "Session UUID not found" on inspect/summary).
- [GAP] An unknown project or session on the prompt call answers 200 with one in-stream `error` event.
- [GAP] A failed prompt: an in-stream `error` event (with `response.error_message`), then the stream ends.
- [GAP] The session-report `time_saved` is seconds; a session without a summary has an empty `summary`.
- [GAP] Summary readiness: seeded completed sessions have a summary with scores and time saved, one without
  them, or none yet (deterministic per seed); a live investigation's summary appears when it completes.
- [GAP] The incident report is computed from the seeded incident sessions.
- `/_fake/...` control routes (no auth, not counted in stats) are this fake's own.

The strict dialect (`strict=True`, or `configure(strict=True)` on a running server), for clients that must not
lean on the fake's inventions:
- an undocumented filter key or operator (`incident_info.id` included) answers HTTP 400 with a gRPC-gateway
  style JSON body `{"code": 3, "message": ..., "details": []}` (INVALID_ARGUMENT), as a server validating its
  request would;
- times are RFC 3339 with offsets other than `Z` and varying precision, one style per session (`+05:30`,
  `-08:00`, `Z`, `+09:00`, `-03:30`; whole seconds, milliseconds, microseconds or nanoseconds), so text order
  is not time order. The instants are the same as in the default dialect.
`extra_fields=True` adds a field the contract does not name (`x_unlisted`) to list rows, `incident_info`,
sources (inspected and streamed), the prompt request, the summary and the incident report: what a newer server
may send.
"""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import hmac
import json
import random
import socket
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, cast
from urllib.parse import parse_qs, urlsplit

JSON = dict[str, Any]
CotMode = Literal["delta", "snapshot"]

IN_PROGRESS_PROMPT = "PROMPT_STATUS_IN_PROGRESS"  # invented ([GAP]): the only documented ones are below
PROMPT_COMPLETED = "PROMPT_STATUS_COMPLETED"
PROMPT_ERROR = "PROMPT_STATUS_ERROR"
NOT_STARTED = "INVESTIGATION_STATUS_NOT_STARTED"
IN_PROGRESS = "INVESTIGATION_STATUS_IN_PROGRESS"
COMPLETED = "INVESTIGATION_STATUS_COMPLETED"
STOPPED = "INVESTIGATION_STATUS_STOPPED"  # a failed prompt (invented choice)
INCIDENT = "SESSION_TYPE_INCIDENT"
CHAT = "SESSION_TYPE_CHAT"
COT_IN_PROGRESS = "CHAIN_OF_THOUGHT_STATUS_IN_PROGRESS"
COT_COMPLETED = "CHAIN_OF_THOUGHT_STATUS_COMPLETED"

# ---------------------------------------------------------------------------------------------------------
# Stories: what an investigation finds. Titles and findings borrow from the alert scenarios of
# shared/fixtures/investigations (HolmesGPT's test cases) plus a few cloud-flavoured ones.
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Story:
    title: str
    alert_slug: str
    root_cause: str
    steps: tuple[tuple[str, str, str, str], ...]  # (category, description, explanation, finding)
    actions: tuple[str, ...]
    follow_ups: tuple[str, ...]


_LOGS = {"id": "src-logs", "category": "logs", "title": "log_datadog.datadog_logs", "description": "Datadog logs"}
_K8S = {"id": "src-k8s", "category": "infrastructure", "title": "k8s_events.kubernetes", "description": "K8s events"}
_METRICS = {
    "id": "src-metrics",
    "category": "metrics",
    "title": "metric_prometheus.prometheus_metrics",
    "description": "Prometheus metrics",
}
_AZMON = {"id": "src-azmon", "category": "metrics", "title": "azure_monitor.metrics", "description": "Azure Monitor"}
_DEPLOYS = {"id": "src-deploys", "category": "changes", "title": "github.deployments", "description": "Deployments"}
SOURCES = (_LOGS, _K8S, _METRICS, _AZMON, _DEPLOYS)

STORIES: tuple[Story, ...] = (
    Story(
        "KubePodCrashLooping analytics-exporter-fast",
        "analytics-exporter-oom",
        "Pod `analytics-exporter-fast` is in `CrashLoopBackOff`: the `memory-eater` container is **OOMKilled** "
        "(exit code 137) because it allocates past its 100Mi memory limit.",
        (
            (
                "CATEGORY_INFRASTRUCTURE",
                "Why is the pod restarting?",
                "Read pod status",
                "Last state Terminated, reason OOMKilled, exit code 137, 6 restarts.",
            ),
            (
                "CATEGORY_METRIC_QUERY",
                "Is memory near the limit?",
                "Query container memory",
                "Working set reached 100Mi within 2 s of each start; limit is 100Mi.",
            ),
            (
                "CATEGORY_LOG_ANALYSIS",
                "What did the container log?",
                "Scan container logs",
                "The process allocates 80Mi then grows by 10Mi per step without freeing.",
            ),
        ),
        ("Raise the memory limit of `memory-eater` to 256Mi", "Fix the unbounded allocation"),
        ("Has this pod been OOMKilled before?", "Which other pods run close to their memory limit?"),
    ),
    Story(
        "Crashing pod logging-agent in namespace default",
        "logging-agent-crashloop",
        "Pod `logging-agent` is in `CrashLoopBackOff`: its command runs `wge`, which is not found (a typo of `wget`).",
        (
            (
                "CATEGORY_INFRASTRUCTURE",
                "What state is the pod in?",
                "Read pod status",
                "Waiting, reason CrashLoopBackOff; exit code 127.",
            ),
            ("CATEGORY_LOG_ANALYSIS", "What fails at start?", "Read container logs", "`/bin/sh: wge: not found`."),
        ),
        ("Change the command to `wget`", "Add a startup smoke test to the image build"),
        ("When was the command changed?", "Which deploy introduced the typo?"),
    ),
    Story(
        "CPUThrottlingHigh frontend-service",
        "frontend-cpu-throttling",
        "The `stress` container of `frontend-service` is **100% CPU throttled**: it needs more CPU than its "
        "limit allows. Increase the CPU limit.",
        (
            (
                "CATEGORY_METRIC_QUERY",
                "How much is the container throttled?",
                "Query CFS throttling",
                "100% of periods throttled for the last 30 minutes.",
            ),
            (
                "CATEGORY_INFRASTRUCTURE",
                "What are its CPU limits?",
                "Read the pod spec",
                "limit 100m, request 100m; the workload asks for 1 CPU.",
            ),
        ),
        ("Increase the CPU limit of `stress` to 1", "Alert on throttling above 50% for 15 minutes"),
        ("Is latency affected by the throttling?",),
    ),
    Story(
        "HighLatencyForCustomerCheckout",
        "checkout-latency",
        "Requests to `/checkout` in `customer-orders` take **more than 3 s** because the database connection pool "
        "is exhausted since deploy `412`.<br>The pool size dropped from 100 to 10.",
        (
            (
                "CATEGORY_METRIC_QUERY",
                "Which endpoints are slow?",
                "Query p90 latency",
                "`/checkout` p90 is 4.2 s, other endpoints are unaffected.",
            ),
            (
                "CATEGORY_LOG_ANALYSIS",
                "What do the slow requests log?",
                "Scan application logs",
                "412 `timeout acquiring connection from pool` errors since 09:58Z.",
            ),
            (
                "CATEGORY_CHANGE_ANALYSIS",
                "What changed before 09:58Z?",
                "List recent deployments",
                "Deploy 412 at 09:55Z set `DB_POOL_SIZE=10` (was 100).",
            ),
        ),
        ("Restore `DB_POOL_SIZE` to 100", "Alert on pool saturation above 80%"),
        ("Has this happened before?", "Which deploy changed the pool size?"),
    ),
    Story(
        "KubeJobFailed product-data-scraper",
        "product-data-scraper-failed",
        "The job `product-data-scraper` failed: its shell script has a syntax error "
        "(`/bin/sh: syntax error: unexpected 'fi'`).",
        (
            (
                "CATEGORY_INFRASTRUCTURE",
                "Why did the job fail?",
                "Read job status",
                "BackoffLimitExceeded after 4 attempts.",
            ),
            (
                "CATEGORY_LOG_ANALYSIS",
                "What did the job log?",
                "Read pod logs",
                "`syntax error: unexpected 'fi'` on line 12.",
            ),
        ),
        ("Fix the `if` block of the job's script", "Lint job scripts in CI"),
        ("Did earlier runs of the job succeed?",),
    ),
    Story(
        "Crashing pod db-certs-authenticator",
        "db-certs-expired",
        "Pod `db-certs-authenticator` is in `CrashLoopBackOff` because **the SSL certificate expired**.",
        (
            (
                "CATEGORY_LOG_ANALYSIS",
                "Why does the app exit?",
                "Read container logs",
                "`certificate has expired` raised while loading `/certs/db.pem`.",
            ),
            (
                "CATEGORY_INFRASTRUCTURE",
                "When does the certificate expire?",
                "Inspect the secret",
                "notAfter is two days ago.",
            ),
        ),
        ("Renew the certificate and restart the deployment", "Monitor certificate expiry 30 days ahead"),
        ("Which other certificates expire this month?",),
    ),
    Story(
        "App Service 5xx spike on checkout-api",
        "checkout-api-5xx",
        "`checkout-api` returns **HTTP 500** because Key Vault references failed to resolve after the managed "
        "identity lost its `get` permission.",
        (
            ("CATEGORY_METRIC_QUERY", "When did 5xx start?", "Query Http5xx", "From 0 to 340/min at 14:02Z."),
            (
                "CATEGORY_LOG_ANALYSIS",
                "What do the errors say?",
                "Scan App Service logs",
                "`Key Vault reference could not be resolved: Forbidden`.",
            ),
            (
                "CATEGORY_CHANGE_ANALYSIS",
                "What changed?",
                "Read the activity log",
                "An access policy update at 14:00Z removed `get` for the app's identity.",
            ),
        ),
        ("Restore the `get` secret permission of the identity", "Move the vault to RBAC with a reviewed role"),
        ("Who changed the access policy?", "Which other apps use this vault?"),
    ),
    Story(
        "KubeDeploymentReplicasMismatch user-profile-resources",
        "user-profile-gpu",
        "The deployment `user-profile-resources` has 0 available pods: its pod cannot be scheduled because of "
        "**insufficient GPU resources** (`nvidia.com/gpu`).",
        (
            (
                "CATEGORY_INFRASTRUCTURE",
                "Why are pods not ready?",
                "Read pod events",
                "FailedScheduling: 0/3 nodes available: insufficient nvidia.com/gpu.",
            ),
            ("CATEGORY_METRIC_QUERY", "Is any GPU free?", "Query node capacity", "No node has an allocatable GPU."),
        ),
        ("Add a GPU node pool or remove the GPU request",),
        ("Which workloads request GPUs?",),
    ),
)

CHAT_QUESTIONS = (
    "Why did error rates rise in the payments service yesterday?",
    "Summarise the incidents of the last week",
    "Which deployments happened before the checkout latency alert?",
    "Is the staging cluster short of memory?",
    "What caused the CPU spike on the API nodes?",
)

# ---------------------------------------------------------------------------------------------------------
# Timeline: events of a prompt cycle and the state they build (folded by inspect, rendered by the stream)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One stream event at `at` real seconds after the cycle started. `kind` says what it carries."""

    at: float
    kind: str  # progress|session_name|sources|cot_start|cot_delta|cot_end|noise|shift|chat|follow_ups|done|final|error
    value: Any = None
    wrapped: bool = False  # sent as {"result": {...}}
    delta_text: bool = False  # chat is_delta as the string "true" (else the boolean)


@dataclass
class Fold:
    """What the due events of a cycle amount to."""

    name: str = ""
    sources: list[JSON] = field(default_factory=list)
    steps: list[JSON] = field(default_factory=list)
    answer: str = ""
    follow_ups: list[str] = field(default_factory=list)
    finished: bool = False
    error: str | None = None
    execution_ms: int = 0

    def apply(self, event: Event) -> None:
        kind, value = event.kind, event.value
        if kind == "session_name":
            self.name = str(value).strip()
        elif kind == "sources":
            known = {s["id"] for s in self.sources}
            self.sources.extend(s for s in value if s["id"] not in known)
        elif kind == "cot_start":
            self.steps.append({**value, "investigation": "", "status": COT_IN_PROGRESS, "cot_status": COT_IN_PROGRESS})
        elif kind == "cot_delta":
            step = self._step(value["id"])
            if step is not None:
                step["investigation"] += value["investigation"]
        elif kind == "cot_end":
            step = self._step(value["id"])
            if step is not None:
                step.update(value, status=COT_COMPLETED, cot_status=COT_COMPLETED)
        elif kind == "chat":
            self.answer += str(value)
        elif kind == "follow_ups":
            self.follow_ups = list(value)
        elif kind == "final":
            self.finished, self.execution_ms = True, int(value)
        elif kind == "error":
            self.finished, self.error = True, str(value)

    def _step(self, step_id: str) -> JSON | None:
        return next((s for s in self.steps if s["id"] == step_id), None)


@dataclass
class Cycle:
    id: str
    create_time: datetime
    request: JSON
    started: float  # time.monotonic() of the start; -inf for a cycle that is over from the beginning
    events: list[Event]
    duration: float  # real seconds to the last event
    nominal_seconds: float
    _settled: Fold | None = field(default=None, repr=False)

    def elapsed(self, now: float) -> float:
        return now - self.started

    def due(self, now: float) -> list[Event]:
        elapsed = self.elapsed(now)
        return [e for e in self.events if e.at <= elapsed]

    def fold(self, now: float) -> Fold:
        """The state the due events build (cached once every event is due: lists of 1,000 stay cheap)."""
        if self._settled is not None:
            return self._settled
        due = self.due(now)
        result = Fold()
        for event in due:
            result.apply(event)
        if len(due) == len(self.events):
            self._settled = result
        return result


def build_timeline(
    rng: random.Random,
    story: Story,
    *,
    duration: float,
    nominal_seconds: float,
    first: bool,
    prompt: str,
    fail: bool = False,
    hung: bool = False,
    done_marker: bool = False,
) -> list[Event]:
    """The events of one prompt cycle spread over `duration` real seconds (fractions of it below)."""
    events: list[Event] = []

    def at(fraction: float) -> float:
        return round(duration * fraction, 6)

    events.append(Event(at(0), "progress", "PromptGate (Preparing Telemetry Sources)"))
    if first:
        events.append(Event(at(0.03), "session_name", story.title + " "))
    sources = [dict(s) for s in rng.sample(SOURCES, k=3)]
    events.append(Event(at(0.06), "sources", sources))
    events.append(Event(at(0.08), "progress", f"(Selected {len(sources)} data sources)"))
    steps = story.steps if first else story.steps[:1]
    span = 0.65 / len(steps)
    for i, (category, description, explanation, finding) in enumerate(steps):
        start = 0.1 + i * span
        step_id = f"cot-{i + 1}"
        involved = [s["title"] for s in sources[: 1 + i % len(sources)]]
        head = {
            "id": step_id,
            "category": category,
            "description": description,
            "explanation": explanation,
            "sources_involved": [],
        }
        events.append(Event(at(start), "cot_start", head))
        words = finding.split(" ")
        third = max(1, len(words) // 3)
        chunks = [" ".join(words[:third]) + " ", " ".join(words[third : 2 * third]) + " ", " ".join(words[2 * third :])]
        for j, chunk in enumerate(c for c in chunks if c.strip()):
            events.append(
                Event(at(start + span * (0.2 + 0.2 * j)), "cot_delta", {"id": step_id, "investigation": chunk})
            )
        events.append(Event(at(start + span * 0.5), "progress", f"(Found {rng.randint(3, 40)} results)"))
        if i == 1:
            events.append(Event(at(start + span * 0.55), "noise", 'SQL error: column "ts" does not exist; retrying'))
        end = {"id": step_id, "sources_involved": involved, "processing_time": str(rng.randint(900, 9000))}
        # A late cot_end (contract 5.5): the first of three or more steps closes after the next one opened.
        late = i == 0 and len(steps) >= 3
        events.append(Event(at(start + span * (1.05 if late else 0.9)), "cot_end", end))
    if hung:
        return sorted(events, key=lambda e: e.at)
    if fail:
        events.append(Event(at(0.8), "error", "investigation failed: the data source query timed out"))
        return sorted(events, key=lambda e: e.at)
    events.append(Event(at(0.78), "shift", ""))
    answer = story.root_cause if first else f"About “{prompt.strip()[:80]}”: {story.root_cause}"
    answer += "<br><br>**Recommended actions:**<br>" + "<br>".join(f"- {a}" for a in story.actions)
    pieces = _chunk(answer, 5)
    for k, piece in enumerate(pieces):
        events.append(Event(at(0.8 + 0.14 * k / len(pieces)), "chat", piece, wrapped=k == 2, delta_text=k % 2 == 1))
    events.append(Event(at(0.96), "follow_ups", list(story.follow_ups)))
    if done_marker:
        events.append(Event(at(0.99), "done"))
    events.append(Event(at(1.0), "final", int(nominal_seconds * 1000)))
    return sorted(events, key=lambda e: e.at)  # stable: same-time events keep their order


def _chunk(text: str, n: int) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


# ---------------------------------------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------------------------------------


@dataclass
class Session:
    uuid: str
    project_uuid: str
    session_type: str
    create_time: datetime
    name: str = ""
    incident_info: JSON | None = None
    pinned: bool = False
    cycles: list[Cycle] = field(default_factory=list)
    failed_cycles: set[str] = field(default_factory=set)
    summary: Literal["scored", "plain", "none"] = "scored"
    story: Story = STORIES[0]
    hung: bool = False
    dialect: Dialect = field(default_factory=lambda: Dialect())
    offset: timedelta | None = None  # writes this session's times at this offset (milliseconds), whatever the dialect

    def time(self, moment: datetime) -> str:
        if self.offset is not None:
            return rfc3339(moment, self.offset, 3)
        return self.dialect.time(moment, self.uuid)

    def status(self, now: float) -> str:
        if not self.cycles:
            return NOT_STARTED
        last = self.cycles[-1].fold(now)
        if not last.finished:
            return IN_PROGRESS
        return STOPPED if last.error is not None else COMPLETED

    def cycle_status(self, cycle: Cycle, now: float) -> str:
        state = cycle.fold(now)
        if not state.finished:
            return IN_PROGRESS_PROMPT
        return PROMPT_ERROR if state.error is not None else PROMPT_COMPLETED

    def current_name(self, now: float) -> str:
        if self.name:
            return self.name
        for cycle in self.cycles:
            folded = cycle.fold(now)
            if folded.name:
                return folded.name
        return ""

    def last_update(self, now: float) -> datetime:
        if not self.cycles:
            return self.create_time
        cycle = self.cycles[-1]
        if cycle.started == float("-inf"):
            return cycle.create_time + timedelta(seconds=cycle.nominal_seconds)
        return cycle.create_time + timedelta(seconds=min(max(cycle.elapsed(now), 0.0), cycle.duration))

    def row(self, now: float) -> JSON:
        row: JSON = {
            "session_uuid": self.uuid,
            "name": self.current_name(now),
            "create_time": self.time(self.create_time),
            "last_update": self.time(self.last_update(now)),
            "project_uuid": self.project_uuid,
            "session_type": self.session_type,
            "investigation_status": self.status(now),
            "pinned": self.pinned,
            "prompt_cycle_ids": [c.id for c in self.cycles],
        }
        if self.incident_info is not None:
            row["incident_info"] = self.dialect.extra(copy.deepcopy(self.incident_info))
        return self.dialect.extra(row)

    def cycle_view(self, cycle: Cycle, now: float) -> JSON:
        state = cycle.fold(now)
        return {
            "id": cycle.id,
            "create_time": self.time(cycle.create_time),
            "status": self.cycle_status(cycle, now),
            "request": self.dialect.extra(cycle.request),
            "final_answer": state.answer.strip() if state.finished and state.error is None else "",
            "rating": "",
            "follow_up_suggestions": state.follow_ups,
            "sources": [self.dialect.extra(source) for source in state.sources],
            "chain_of_thoughts": state.steps,
        }

    def first_prompt(self) -> str:
        if not self.cycles:
            return ""
        return _prompt_text(self.cycles[0].request)

    def summary_view(self, now: float) -> JSON | None:
        """The session_summary object, or None while not ready (no completed cycle, or seeded as not ready)."""
        if self.status(now) != COMPLETED or self.summary == "none":
            return None
        story = self.story
        short = story.root_cause.split("<br>")[0].replace("**", "")
        out: JSON = {
            "short_session_summary": {"question": self.first_prompt(), "analysis": short},
            "analysis": "## Analysis\n" + "\n".join(f"- {s[1]} {s[3]}" for s in story.steps),
            "action_items": list(story.actions),
            "rating": "",
        }
        if self.summary == "scored":
            seed = int(self.uuid[-6:], 16)
            standard = 30 + seed % 60
            spent = max(1, round(self.cycles[-1].nominal_seconds / 60))
            out["analysis_score"] = {
                "accuracy": {"score": 70 + seed % 30, "summary": "Root cause matches the evidence"},
                "completeness": {"score": 60 + seed % 35, "summary": "Timeline partly covered"},
                "qualitative": {"strengths": ["Cited logs and metrics"], "improvements": ["Add a timeline"]},
                "scored_by": "auto",
            }
            out["analysis_score"] = self.dialect.extra(out["analysis_score"])
            out["time_saved"] = {
                "time_saved_minutes": max(0, standard - spent),
                "standard_investigation_time_minutes": standard,
                "hawkeye_investigation_time_minutes": spent,
            }
        return self.dialect.extra(out)


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


# The strict dialect's time styles: RFC 3339 allows any offset and any number of fraction digits.
STRICT_OFFSETS = (
    timedelta(hours=5, minutes=30),
    timedelta(hours=-8),
    timedelta(0),
    timedelta(hours=9),
    timedelta(hours=-3, minutes=-30),
)
STRICT_DIGITS = (3, 0, 9, 6)
UNLISTED = "x_unlisted"  # the field `extra_fields` adds


def rfc3339(moment: datetime, offset: timedelta, digits: int) -> str:
    """`moment` at `offset` ("Z" for zero) with `digits` fraction digits (0: whole seconds, 9: nanoseconds)."""
    local = moment.astimezone(timezone(offset))
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        text += "." + f"{local.microsecond:06d}{'000'}"[:digits]
    if not offset:
        return text + "Z"
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes > 0 else "-"
    return text + f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


@dataclass
class Dialect:
    """How this server writes what it answers: the default, or the strict dialect (see the module docstring)."""

    strict: bool = False
    extra_fields: bool = False

    def time(self, moment: datetime, key: str) -> str:
        """A time of the object `key` (a session id): one style per object, so a session's times agree."""
        if not self.strict:
            return stamp(moment)
        n = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
        return rfc3339(moment, STRICT_OFFSETS[n % len(STRICT_OFFSETS)], STRICT_DIGITS[(n // 7) % len(STRICT_DIGITS)])

    def extra(self, obj: JSON) -> JSON:
        """`obj` with the unlisted field when `extra_fields` (a copy; `obj` is not changed)."""
        return {**obj, UNLISTED: "a field the contract does not name"} if self.extra_fields else obj


def _prompt_text(request: JSON) -> str:
    try:
        return str(request["messages"][0]["content"]["parts"][0])
    except (KeyError, IndexError, TypeError):
        return ""


@dataclass
class PromptPlan:
    """Overrides for one coming prompt call (`FakeNeubird.next_prompt`)."""

    seconds: float | None = None
    fail: bool = False
    answer: str | None = None
    session_uuid: str | None = None


@dataclass
class TokenInfo:
    expires: float  # time.time()
    calls_left: int | None


class FilterError(ValueError):
    pass


# ---------------------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------------------

Route = tuple[str, str]  # (method, template)
ROUTES: tuple[Route, ...] = (
    ("POST", "/v1/user/login"),
    ("GET", "/v1/user"),
    ("GET", "/v1/project"),
    ("POST", "/v1/inference/new_session"),
    ("POST", "/v1/inference/session:create"),
    ("POST", "/v1/inference/session"),
    ("POST", "/v1/inference/session/list"),
    ("POST", "/v1/inference/session/inspect"),
    ("GET", "/v1/inference/session/summary/{uuid}"),
    ("GET", "/v1/inference/session_report"),
    ("GET", "/v1/inference/incident_report"),
)


def match_route(method: str, path: str) -> str | None:
    """The route key ("GET /v1/user") of an /api path, or None."""
    if not path.startswith("/api/"):
        return None
    rest = path[len("/api") :]
    for route_method, template in ROUTES:
        if route_method != method:
            continue
        if "{uuid}" in template:
            prefix = template.split("{uuid}")[0]
            if rest.startswith(prefix) and len(rest) > len(prefix) and "/" not in rest[len(prefix) :]:
                return f"{method} {template}"
        elif rest == template:
            return f"{method} {template}"
    return None


class FakeNeubird:
    """The fake NeuBird server; `start()`/`stop()` or `with FakeNeubird(...) as nb:` (a background thread).

    Constructor: `sessions` seeded sessions (spread over the last ~60 days before `now`), `seed` for every
    generated id/title/status, `investigation_seconds` (nominal length of an investigation) and `time_scale`
    (real seconds per nominal second), `keepalive_seconds`, `cot_mode` ("delta" | "snapshot"), the account
    (`email`, `password`), `port` (0 = any free port), `now` (the clock the seeded dates count back from),
    `strict` and `extra_fields` (the strict dialect and unlisted fields: see the module docstring).
    """

    def __init__(
        self,
        *,
        sessions: int = 200,
        seed: int = 7,
        investigation_seconds: float = 20.0,
        time_scale: float = 1.0,
        keepalive_seconds: float = 5.0,
        cot_mode: CotMode = "delta",
        email: str = "demo@firebreak.local",
        password: str = "demo",
        port: int = 0,
        now: datetime | None = None,
        strict: bool = False,
        extra_fields: bool = False,
    ) -> None:
        self.dialect = Dialect(strict=strict, extra_fields=extra_fields)
        self.email = email
        self.password = password
        self.port = port
        self.investigation_seconds = investigation_seconds
        self.time_scale = time_scale
        self.keepalive_seconds = keepalive_seconds
        self.cot_mode: CotMode = cot_mode
        self.done_marker = False
        self.login_failure_status = 401  # 200: the 200-with-"error" variant
        self.fail_prompts = False
        self.token_lifetime_seconds = 86_400.0
        self.token_max_calls: int | None = None
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self._rng = random.Random(seed)
        self._secret = hashlib.sha256(f"fake-neubird-{seed}".encode()).digest()
        self._tokens: dict[str, TokenInfo] = {}
        self._issued: list[str] = []  # every token ever issued, expired or not (for leak checks)
        self._token_serial = 0
        self._rate_limit = (0, 0.0)
        self._fail = (0, 500)
        self._slow = 0.0
        self._slow_routes: dict[str, float] = {}
        self._break_after: int | None = None
        self._plans: deque[PromptPlan] = deque()
        self._calls: Counter[str] = Counter()
        self._statuses: Counter[int] = Counter()
        self._logins = 0
        self._login_failures = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._now = now or datetime.now(UTC)
        self.org_uuid = self._uuid4()
        self.user_uuid = self._uuid4()
        self.projects = self._seed_projects()
        self.project_uuid = self.projects[0]["uuid"]  # "Production", ready
        self.sessions: dict[str, Session] = {}
        self._seed_sessions(sessions)

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> FakeNeubird:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler(self))
        server.daemon_threads = True
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeNeubird:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The origin (the "console"), http://127.0.0.1:<port>."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The API base the app is configured with (NEUBIRD_BASE_URL)."""
        return self.url + "/api"

    def env(self) -> dict[str, str]:
        """Settings pointing the app at this server."""
        return {
            "NEUBIRD_BASE_URL": self.base_url,
            "NEUBIRD_EMAIL": self.email,
            "NEUBIRD_PASSWORD": self.password,
            "NEUBIRD_DEFAULT_PROJECT_UUID": self.project_uuid,
        }

    # -- control: behaviour -----------------------------------------------------------------------------------

    def configure(
        self,
        *,
        investigation_seconds: float | None = None,
        time_scale: float | None = None,
        keepalive_seconds: float | None = None,
        cot_mode: CotMode | None = None,
        done_marker: bool | None = None,
        login_failure_status: int | None = None,
        fail_prompts: bool | None = None,
        strict: bool | None = None,
        extra_fields: bool | None = None,
    ) -> None:
        """Change global knobs; None leaves a knob as it is. Affects prompts sent afterwards (`strict` and
        `extra_fields`: every answer from now on)."""
        with self.lock:
            if strict is not None:
                self.dialect.strict = strict
            if extra_fields is not None:
                self.dialect.extra_fields = extra_fields
            if investigation_seconds is not None:
                self.investigation_seconds = investigation_seconds
            if time_scale is not None:
                self.time_scale = time_scale
            if keepalive_seconds is not None:
                self.keepalive_seconds = keepalive_seconds
            if cot_mode is not None:
                self.cot_mode = cot_mode
            if done_marker is not None:
                self.done_marker = done_marker
            if login_failure_status is not None:
                self.login_failure_status = login_failure_status
            if fail_prompts is not None:
                self.fail_prompts = fail_prompts

    def next_prompt(
        self,
        seconds: float | None = None,
        *,
        fail: bool = False,
        answer: str | None = None,
        session_uuid: str | None = None,
    ) -> None:
        """Plan the next prompt call (on `session_uuid` when given, else on any session): its nominal length
        in seconds (scaled by time_scale), failure (PROMPT_STATUS_ERROR + in-stream `error`), answer text."""
        with self.lock:
            self._plans.append(PromptPlan(seconds, fail, answer, session_uuid))

    def token_policy(self, *, lifetime_seconds: float | None = None, max_calls: int | None = None) -> None:
        """Tokens issued from now on expire after `lifetime_seconds` and/or after `max_calls` authorised calls."""
        with self.lock:
            if lifetime_seconds is not None:
                self.token_lifetime_seconds = lifetime_seconds
            self.token_max_calls = max_calls

    def expire_tokens(self) -> None:
        """Every token issued so far is stale from now on (401)."""
        with self.lock:
            self._tokens.clear()

    def rate_limit(self, n: int, retry_after_s: float = 1.0) -> None:
        """The next `n` requests answer 429 with `Retry-After: retry_after_s`."""
        with self.lock:
            self._rate_limit = (n, retry_after_s)

    def fail(self, n: int, status: int = 500) -> None:
        """The next `n` requests answer `status` with a plain-text body."""
        with self.lock:
            self._fail = (n, status)

    def slow(self, seconds: float, route: str | None = None) -> None:
        """Delay every response by `seconds` (0 turns it off), or only those of one route key when `route` is
        given (e.g. "POST /v1/inference/session"). A stream's events are not delayed further. The request is
        still handled after the delay, as a server that answers late would."""
        with self.lock:
            if route is None:
                self._slow = seconds
                self._slow_routes.clear()
            else:
                self._slow_routes[route] = seconds

    def break_stream_after(self, k: int) -> None:
        """The next prompt stream closes abruptly after `k` events; the investigation goes on."""
        with self.lock:
            self._break_after = k

    def stats(self) -> JSON:
        """Calls received: `total`, per route key `routes` ("POST /v1/inference/session/list": n; unmatched
        paths under "other"), `statuses` (status code: n), `logins` (tokens issued), `login_failures`."""
        with self.lock:
            return {
                "total": sum(self._calls.values()),
                "routes": dict(self._calls),
                "statuses": dict(self._statuses),
                "logins": self._logins,
                "login_failures": self._login_failures,
            }

    def reset_stats(self) -> None:
        with self.lock:
            self._calls.clear()
            self._statuses.clear()
            self._logins = self._login_failures = 0

    def issued_tokens(self) -> list[str]:
        """Every access token this server issued so far (expired ones too): what must never leak."""
        with self.lock:
            return list(self._issued)

    def calls(self, route: str) -> int:
        """Calls of one route key, e.g. `nb.calls("POST /v1/inference/session/inspect")`."""
        with self.lock:
            return self._calls[route]

    # -- control: data ----------------------------------------------------------------------------------------

    def add_session(
        self,
        *,
        alert_id: str | None = None,
        title: str | None = None,
        status: Literal["not_started", "in_progress", "completed", "failed"] = "completed",
        session_type: str | None = None,
        project_uuid: str | None = None,
        prompt: str | None = None,
        answer: str | None = None,
        priority: str = "P2",
        created: datetime | None = None,
        summary: Literal["scored", "plain", "none"] = "scored",
        offset: timedelta | None = None,
    ) -> str:
        """Add a session and return its uuid. An `alert_id` makes it an incident session (`incident_info.id`);
        `completed`/`failed` sessions have one finished prompt cycle (with `answer` as the final answer when
        given); `in_progress` has a cycle that never finishes. `offset` writes its times at that UTC offset."""
        with self.lock:
            story = self._story_for(title or alert_id or "")
            if answer is not None:
                story = Story(
                    title or story.title, story.alert_slug, answer, story.steps, story.actions, story.follow_ups
                )
            kind = session_type or (INCIDENT if alert_id is not None else CHAT)
            session = Session(
                uuid=self._session_id(),
                project_uuid=project_uuid or self.project_uuid,
                session_type=kind,
                create_time=created or datetime.now(UTC),
                story=story,
                summary=summary,
                dialect=self.dialect,
                offset=offset,
            )
            if kind == INCIDENT:
                session.incident_info = {
                    "id": alert_id or f"/aws/alerts/{story.alert_slug}-{self._rng.randint(1000, 9999)}",
                    "title": title or story.title,
                    "priority": priority,
                    "status": "INCIDENT_STATUS_OPEN",
                    "type": "alert",
                    "source": "azure_monitor" if (alert_id or "").startswith("/subscriptions/") else "cloudwatch",
                }
                session.name = title or story.title
            if status != "not_started":
                text = prompt or (f"Investigate alert {alert_id}" if alert_id else CHAT_QUESTIONS[0])
                self._add_cycle(
                    session, text, over=status != "in_progress", hung=status == "in_progress", fail=status == "failed"
                )
            self.sessions[session.uuid] = session
            return session.uuid

    def session_view(self, session_uuid: str) -> JSON:
        """What inspect answers for a session (`session_info` and `prompt_cycle`)."""
        with self.lock:
            view: JSON = json.loads(json.dumps(self._inspect_view(self.sessions[session_uuid], time.monotonic())))
            return view

    def wait_finished(self, session_uuid: str, timeout: float = 30.0) -> bool:
        """Block until the session's last prompt cycle is over (True) or `timeout` passes (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.sessions[session_uuid].status(time.monotonic()) != IN_PROGRESS:
                    return True
            if self.stopping.wait(0.02):
                return False
        return False

    # -- seeding ----------------------------------------------------------------------------------------------

    def _uuid4(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def _session_id(self) -> str:
        while True:
            candidate = f"{self._rng.getrandbits(96):024x}"
            if candidate not in self.sessions:
                return candidate

    def _seed_projects(self) -> list[JSON]:
        def project(name: str, description: str, state: str, days: int) -> JSON:
            created = self._now - timedelta(days=days)
            return {
                "uuid": self._uuid4(),
                "name": name,
                "ready": state == "PROJECT_STATE_READY",
                "description": description,
                "create_time": stamp(created),
                "update_time": stamp(created + timedelta(days=days // 2)),
                "project_state": state,
                "sync_state": "SYNC_STATE_SYNCED" if state == "PROJECT_STATE_READY" else "SYNC_STATE_SYNCING",
                "training_state": "TRAINING_STATE_TRAINED"
                if state == "PROJECT_STATE_READY"
                else "TRAINING_STATE_PENDING",
            }

        return [
            project("Production", "prod Azure + AWS, Datadog logs, Prometheus", "PROJECT_STATE_READY", 300),
            project("Staging", "staging AKS cluster", "PROJECT_STATE_READY", 200),
            project("Payments sandbox", "new project, connections still syncing", "PROJECT_STATE_CREATING", 1),
            project("SystemGlobalProject", "system project", "PROJECT_STATE_READY", 400),
        ]

    def _story_for(self, text: str) -> Story:
        lowered = text.lower()
        for story in STORIES:
            if story.alert_slug in lowered or story.title.lower() in lowered:
                return story
        return STORIES[self._rng.randrange(len(STORIES))]

    def _seed_sessions(self, count: int) -> None:
        rng = self._rng
        staging = self.projects[1]["uuid"]
        times = sorted((rng.uniform(0, 60 * 86_400) for _ in range(count)), reverse=True)
        for i, age in enumerate(times):
            story = rng.choice(STORIES)
            kind = INCIDENT if rng.random() < 0.8 else CHAT
            roll = rng.random()
            status = "completed" if roll < 0.6 else "not_started" if roll < 0.9 else "in_progress"
            if kind == CHAT and status == "not_started":
                status = "completed"
            session = Session(
                uuid=self._session_id(),
                project_uuid=staging if i % 10 == 9 else self.project_uuid,
                session_type=kind,
                create_time=self._now - timedelta(seconds=age),
                story=story,
                summary=rng.choice(("scored", "scored", "plain", "none")),
                pinned=rng.random() < 0.03,
                dialect=self.dialect,
            )
            if kind == INCIDENT:
                session.incident_info = self._incident_info(story)
                session.name = session.incident_info["title"]
            if status != "not_started":
                question = rng.choice(CHAT_QUESTIONS)
                prompt = f"Investigate alert {session.incident_info['id']}" if session.incident_info else question
                self._add_cycle(
                    session,
                    prompt,
                    over=status == "completed",
                    hung=status == "in_progress",
                    at=session.create_time + timedelta(seconds=5),
                )
                if status == "completed" and rng.random() < 0.2:
                    self._add_cycle(
                        session, rng.choice(story.follow_ups), over=True, at=session.create_time + timedelta(minutes=10)
                    )
            self.sessions[session.uuid] = session

    def _incident_info(self, story: Story) -> JSON:
        rng = self._rng
        ident = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if rng.random() < 0.5:
            sub = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            alert_id = (
                f"/subscriptions/{sub}/resourceGroups/rg-prod/providers/Microsoft.AlertsManagement/alerts/{ident}"
            )
            source = "azure_monitor"
        else:
            alert_id = f"/aws/alerts/{story.alert_slug}-{rng.randint(1000, 99999)}"
            source = "cloudwatch"
        info: JSON = {
            "id": alert_id,
            "title": story.title,
            "priority": rng.choice(("P1", "P2", "P2", "P3", "P3", "P4")),
            "status": rng.choice(("INCIDENT_STATUS_OPEN", "INCIDENT_STATUS_ACKNOWLEDGED", "INCIDENT_STATUS_RESOLVED")),
            "type": "alert",
            "source": source,
        }
        if rng.random() < 0.15:
            info["grouped_incidents"] = {
                "id": [f"/aws/alerts/{story.alert_slug}-{rng.randint(1000, 99999)}" for _ in range(rng.randint(1, 3))],
                "reason": "Same service and root cause within 30 minutes",
            }
        return info

    def _add_cycle(
        self,
        session: Session,
        prompt: str,
        *,
        over: bool = False,
        hung: bool = False,
        fail: bool = False,
        seconds: float | None = None,
        at: datetime | None = None,
    ) -> Cycle:
        nominal = self.investigation_seconds if seconds is None else seconds
        duration = nominal * self.time_scale
        if over:
            nominal = self._rng.uniform(40, 600)
            duration = nominal
        events = build_timeline(
            self._rng,
            session.story,
            duration=duration,
            nominal_seconds=nominal,
            first=not session.cycles,
            prompt=prompt,
            fail=fail,
            hung=hung,
            done_marker=self.done_marker,
        )
        request = {
            "action": "ACTION_NEXT",
            "session_uuid": session.uuid,
            "project_uuid": session.project_uuid,
            "messages": [{"content": {"content_type": "CONTENT_TYPE_CHAT_PROMPT", "parts": [prompt]}}],
        }
        cycle = Cycle(
            id=f"pc-{session.uuid[-8:]}-{len(session.cycles) + 1}",
            create_time=at or datetime.now(UTC),
            request=request,
            started=float("-inf") if over or hung else time.monotonic(),
            events=events,
            duration=duration,
            nominal_seconds=nominal,
        )
        session.cycles.append(cycle)
        return cycle

    # -- request handling (called by the handler thread; returns (status, body, headers)) ---------------------

    def _issue_token(self) -> str:
        self._token_serial += 1
        now = time.time()
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
        claims = {
            "sub": self.user_uuid,
            "email": self.email,
            "org": self.org_uuid,
            "iat": int(now),
            "exp": int(now + self.token_lifetime_seconds),
            "jti": str(self._token_serial),
        }
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        signature = _b64(hmac.new(self._secret, f"{header}.{payload}".encode(), hashlib.sha256).digest())
        token = f"{header}.{payload}.{signature}"
        self._tokens[token] = TokenInfo(now + self.token_lifetime_seconds, self.token_max_calls)
        self._issued.append(token)
        return token

    def authorised(self, authorization: str | None) -> bool:
        if not authorization or not authorization.startswith("Bearer "):
            return False
        info = self._tokens.get(authorization[len("Bearer ") :].strip())
        if info is None or time.time() >= info.expires:
            return False
        if info.calls_left is not None:
            if info.calls_left <= 0:
                return False
            info.calls_left -= 1
        return True

    def login(self, body: JSON) -> tuple[int, JSON]:
        if body.get("email") != self.email or body.get("password") != self.password:
            self._login_failures += 1
            return self.login_failure_status, {"error": "invalid credentials"}
        self._logins += 1
        return 200, {
            "access_token": self._issue_token(),
            "token_type": "Bearer",
            "org_uuid": self.org_uuid,
            "user_uuid": self.user_uuid,
        }

    def _project(self, project_uuid: Any) -> JSON | None:
        return next((p for p in self.projects if p["uuid"] == project_uuid), None)

    def json_route(self, route: str, path: str, query: dict[str, list[str]], body: JSON) -> tuple[int, Any]:
        """(status, JSON body) of an authorised route other than login and the prompt stream."""
        now = time.monotonic()
        if route.startswith("GET "):
            return 200, self._get_route(route, path, query, now)
        project_uuid = body.get("project_uuid")
        if not project_uuid:
            return 200, {"response": _error(400, "project_uuid is required")}
        if self._project(project_uuid) is None:
            return 200, {"response": _error(404, f"project {project_uuid} does not exist")}
        if route == "POST /v1/inference/new_session":
            session = Session(
                self._session_id(),
                project_uuid,
                CHAT,
                datetime.now(UTC),
                story=self._story_for(""),
                dialect=self.dialect,
            )
            self.sessions[session.uuid] = session
            return 200, {"response": _ok(), "session_uuid": session.uuid}
        if route == "POST /v1/inference/session:create":
            return 200, self._session_from_alert(project_uuid, body.get("alert_id"))
        if route == "POST /v1/inference/session/list":
            try:
                return 200, self._list(project_uuid, body, now)
            except FilterError as exc:  # the strict dialect: refused as a validating gRPC gateway would
                return 400, {"code": 3, "message": str(exc), "details": []}
        found = self.sessions.get(str(body.get("session_uuid")))  # inspect
        if found is None or found.project_uuid != project_uuid:
            return 200, {"response": _error(404, "Session UUID not found")}
        pagination = body.get("pagination") or {}
        view = self._inspect_view(found, now)
        start, limit = int(pagination.get("start") or 0), int(pagination.get("limit") or 0)
        cycles = view["prompt_cycle"][start:]
        view["prompt_cycle"] = cycles[:limit] if limit > 0 else cycles
        return 200, view

    def _get_route(self, route: str, path: str, query: dict[str, list[str]], now: float) -> Any:
        project = (query.get("project_uuid") or [""])[0]
        if route == "GET /v1/user":
            user = {
                "uuid": self.user_uuid,
                "email": self.email,
                "first_name": "Demo",
                "last_name": "User",
                "org_uuid": self.org_uuid,
                "user_role": "USER_ROLE_ADMIN",
            }
            return {"response": _ok(), "specs": [user]}
        if route == "GET /v1/project":
            return {"response": _ok(), "specs": json.loads(json.dumps(self.projects))}
        if route == "GET /v1/inference/incident_report":
            return self._incident_report(now)
        if route == "GET /v1/inference/session_report":
            wanted = [self.sessions.get(sid) for sid in query.get("session_uuids", [])]
            return [self._report_row(s, now) for s in wanted if s is not None and s.project_uuid == project]
        found = self.sessions.get(path.rsplit("/", 1)[1])  # summary
        if found is None or found.project_uuid != project:
            return {"response": _error(404, "Session UUID not found")}
        out: JSON = {"response": _ok(), "session_info": found.row(now)}
        summary = found.summary_view(now)
        if summary is not None:
            out["session_summary"] = summary
        return out

    def admit(self, route: str | None) -> tuple[float, tuple[int, str, dict[str, str]] | None]:
        """Count a request and apply the faults: (delay, (status, text, headers) of a fault or None)."""
        with self.lock:
            self._calls[route or "other"] += 1
            delay = self._slow_routes.get(route or "other", self._slow)
            limited, retry_after = self._rate_limit
            if limited > 0:
                self._rate_limit = (limited - 1, retry_after)
                return delay, (429, "rate limited", {"Retry-After": format(retry_after, "g")})
            failing, status = self._fail
            if failing > 0:
                self._fail = (failing - 1, status)
                return delay, (status, f"fake neubird: injected failure {status}", {})
            return delay, None

    def count_status(self, status: int) -> None:
        with self.lock:
            self._statuses[status] += 1

    def take_break_after(self) -> int | None:
        with self.lock:
            k, self._break_after = self._break_after, None
            return k

    def _session_from_alert(self, project_uuid: str, alert_id: Any) -> JSON:
        if not isinstance(alert_id, str) or not alert_id.strip():
            return {"response": _error(400, "alert_id is required")}
        known = next((s for s in self.sessions.values() if s.incident_info and s.incident_info["id"] == alert_id), None)
        story = known.story if known is not None else self._story_for(alert_id)
        if known is not None and known.incident_info is not None:
            info = json.loads(json.dumps(known.incident_info))
        else:
            tail = alert_id.rstrip("/").rsplit("/", 1)[-1]
            info = {
                "id": alert_id,
                "title": f"Alert {tail}",
                "priority": "P3",
                "status": "INCIDENT_STATUS_OPEN",
                "type": "alert",
                "source": "webhook",
            }
        session = Session(
            self._session_id(),
            project_uuid,
            INCIDENT,
            datetime.now(UTC),
            name=info["title"],
            incident_info=info,
            story=story,
            dialect=self.dialect,
        )
        self.sessions[session.uuid] = session
        return {"response": _ok(), "session_uuid": session.uuid}

    def _inspect_view(self, session: Session, now: float) -> JSON:
        return {
            "response": _ok(),
            "session_info": session.row(now),
            "prompt_cycle": [session.cycle_view(c, now) for c in session.cycles],
        }

    def _list(self, project_uuid: str, body: JSON, now: float) -> JSON:
        pagination = body.get("pagination") or {}
        filters = list(body.get("filters") or [])
        if isinstance(pagination.get("filter"), dict):
            filters.append(pagination["filter"])
        try:
            checks = [_filter_check(f, strict=self.dialect.strict) for f in filters]
        except FilterError as exc:
            if self.dialect.strict:
                raise
            return {"response": _error(400, str(exc))}
        matching = [
            session
            for session in sorted(self.sessions.values(), key=lambda s: s.create_time, reverse=True)
            if session.project_uuid == project_uuid and all(check(session, now) for check in checks)
        ]
        start, limit = int(pagination.get("start") or 0), int(pagination.get("limit") or 0)
        page = matching[start : start + limit] if limit > 0 else matching[start:]
        return {"response": _ok(), "sessions": [session.row(now) for session in page]}

    def _report_row(self, session: Session, now: float) -> JSON:
        summary = session.summary_view(now)
        saved = summary.get("time_saved", {}).get("time_saved_minutes", 0) if summary else 0
        return {
            "create_time": session.time(session.create_time),
            "prompt": session.first_prompt(),
            "session_link": f"{self.url}/console/project/{session.project_uuid}/session/{session.uuid}",
            "summary": summary["short_session_summary"]["analysis"] if summary else "",
            "time_saved": int(saved) * 60,
        }

    def _incident_report(self, now: float) -> JSON:
        incidents = [s for s in self.sessions.values() if s.session_type == INCIDENT]
        investigated = [s for s in incidents if s.status(now) == COMPLETED]
        saved = [
            v["time_saved"]["time_saved_minutes"]
            for s in investigated
            if (v := s.summary_view(now)) is not None and "time_saved" in v
        ]
        priorities = []
        for priority in ("P1", "P2", "P3", "P4"):
            group = [s for s in incidents if (s.incident_info or {}).get("priority") == priority]
            done = [s for s in group if s.status(now) == COMPLETED]
            grouped = [s for s in group if "grouped_incidents" in (s.incident_info or {})]
            minutes = [s.cycles[-1].nominal_seconds / 60 for s in done]
            priorities.append(
                {
                    "priority": priority,
                    "total_incidents": len(group),
                    "investigated_incidents": len(done),
                    "percent_grouped": round(100 * len(grouped) / len(group), 1) if group else 0.0,
                    "avg_mttr": round(5 + 3 * int(priority[1]), 1),
                    "avg_investigation_time_minutes": round(sum(minutes) / len(minutes), 1) if minutes else 0.0,
                    "avg_time_saved_minutes": round(30.0 - 2 * int(priority[1]), 1),
                }
            )
        oldest = min((s.create_time for s in incidents), default=self._now)
        grouped_total = sum(1 for s in incidents if "grouped_incidents" in (s.incident_info or {}))
        return self.dialect.extra(
            {
                "avg_investigation_time_saved_minutes": round(sum(saved) / len(saved), 1) if saved else 0.0,
                "avg_mttr": 14.2,
                "noise_reduction": round(100 * grouped_total / len(incidents), 1) if incidents else 0.0,
                "total_incidents": len(incidents),
                "total_investigations": len(investigated),
                "total_investigation_time_saved_hours": round(sum(saved) / 60, 1),
                "start_time": oldest.strftime("%Y-%m-%d"),
                "end_time": self._now.strftime("%Y-%m-%d"),
                "incident_type_reports": [{"incident_type": "alert", "priority_reports": priorities}],
            }
        )

    def start_prompt(self, body: JSON) -> tuple[Session | None, Cycle | None, str | None]:
        """Validate a prompt call and start its cycle; (session, cycle, None) or (None, None, error text)."""
        project_uuid = body.get("project_uuid")
        if not project_uuid or self._project(project_uuid) is None:
            return None, None, f"project {project_uuid} does not exist"
        session = self.sessions.get(str(body.get("session_uuid")))
        if session is None or session.project_uuid != project_uuid:
            return None, None, f"session {body.get('session_uuid')} does not exist"
        prompt = _prompt_text(body)
        if not prompt.strip():
            return None, None, "the prompt is empty"
        plan = next((p for p in self._plans if p.session_uuid == session.uuid), None)
        plan = plan or next((p for p in self._plans if p.session_uuid is None), None)
        if plan is not None:
            self._plans.remove(plan)
        plan = plan or PromptPlan()
        if plan.answer is not None:
            story = session.story
            session.story = Story(
                story.title, story.alert_slug, plan.answer, story.steps, story.actions, story.follow_ups
            )
        cycle = self._add_cycle(session, prompt, fail=plan.fail or self.fail_prompts, seconds=plan.seconds)
        cycle.request = {k: v for k, v in body.items() if k != "request"}
        return session, cycle, None


def _ok() -> JSON:
    return {"request_id": f"r-{uuid.uuid4().hex[:12]}", "error_code": 0}


def _error(code: int, message: str) -> JSON:
    return {"request_id": f"r-{uuid.uuid4().hex[:12]}", "error_code": code, "error_message": message}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _parse_when(value: str, operator: str) -> datetime:
    """A filter time: a date-only value covers its whole day (gte from 00:00Z, lte through its end)."""
    text = value.strip()
    try:
        if len(text) == 10:
            day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
            return day + timedelta(days=1) - timedelta(microseconds=1) if operator in ("lte", "<=") else day
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise FilterError(f"invalid create_time value {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


Check = Callable[[Session, float], bool]


def _filter_check(spec: Any, *, strict: bool = False) -> Check:
    if not isinstance(spec, dict):
        raise FilterError("a filter must be an object {key, value, operator}")
    key, value, operator = spec.get("key"), spec.get("value"), spec.get("operator")
    if key == "investigation_status" and operator == "==":
        return lambda s, now: s.status(now) == value
    if key == "session_type" and operator == "==":
        return lambda s, _now: s.session_type == value
    if key == "create_time" and operator in ("gte", "lte", ">=", "<="):
        bound = _parse_when(str(value), str(operator))
        if operator in ("gte", ">="):
            return lambda s, _now: s.create_time >= bound
        return lambda s, _now: s.create_time <= bound
    if key == "incident_info.title" and operator == "in":
        needle = str(value).lower()
        return lambda s, _now: s.incident_info is not None and needle in str(s.incident_info["title"]).lower()
    if key == "incident_info.id" and operator == "==" and not strict:  # invented filter key
        return lambda s, _now: s.incident_info is not None and s.incident_info["id"] == value
    raise FilterError(f"unsupported filter {key!r} {operator!r}")


# ---------------------------------------------------------------------------------------------------------
# SSE rendering
# ---------------------------------------------------------------------------------------------------------


_SIMPLE_TYPES = {
    "progress": "CONTENT_TYPE_PROGRESS_STATUS",
    "session_name": "CONTENT_TYPE_SESSION_NAME",
    "noise": "CONTENT_TYPE_ERROR_MESSAGE",
    "shift": "CONTENT_TYPE_SHIFT_FOCUS_TO_SUMMARY",
    "chat": "CONTENT_TYPE_CHAT_RESPONSE",
    "final": "CONTENT_TYPE_EXECUTION_TIME",
}


def _content(content_type: str, parts: list[str]) -> JSON:
    return {"content_type": content_type, "parts": parts}


def _cot_message(event: Event, fold: Fold, mode: CotMode) -> tuple[str, JSON]:
    """(event name, message fields) of a chain-of-thought event in delta or snapshot mode."""
    if mode == "snapshot":
        parts = [json.dumps(s) for s in fold.steps]
        return "message", {"content": _content("CONTENT_TYPE_CHAIN_OF_THOUGHT", parts), "metadata": {"is_delta": False}}
    step = dict(event.value)
    if event.kind == "cot_start":
        step.update(status=COT_IN_PROGRESS, investigation="")
    elif event.kind == "cot_end":
        step.update(status=COT_COMPLETED, cot_status=COT_COMPLETED)
    fields: JSON = {"content": _content("CONTENT_TYPE_CHAIN_OF_THOUGHT", [json.dumps(step)])}
    if event.kind == "cot_delta":
        fields["metadata"] = {"is_delta": True}
    return event.kind, fields


def render(event: Event, cycle: Cycle, session: Session, fold: Fold, mode: CotMode) -> str:
    """One SSE event: an `event:` line when named, one `data:` line of JSON, a blank line.

    Chat deltas alternate `is_delta` true and "true"; some events are wrapped as {"result": {...}}; the first
    progress event carries `session_uuid`; the final one `status: STATUS_DONE` and `end_turn: true`."""
    kind, value = event.kind, event.value
    if kind == "done":
        return "data: [DONE]\n\n"
    if kind == "error":
        text = str(value)
        error = {
            "error": text,
            "response": {"error_code": 500, "error_message": text},
            "message": {"id": cycle.id, "status": "STATUS_ERROR"},
        }
        return f"data: {json.dumps(error)}\n\n"
    name = "message"
    message: JSON = {"id": cycle.id}
    if kind in ("cot_start", "cot_delta", "cot_end"):
        name, fields = _cot_message(event, fold, mode)
        message.update(fields)
    elif kind == "sources":
        shown = ({"id": s["id"], "category": s["category"], "title": s["title"]} for s in value)
        parts = [json.dumps(session.dialect.extra(s)) for s in shown]
        message["content"] = _content("CONTENT_TYPE_SOURCES", parts)
    elif kind == "follow_ups":
        message["content"] = _content("CONTENT_TYPE_FOLLOW_UP_SUGGESTIONS", [str(v) for v in value])
    else:
        message["content"] = _content(_SIMPLE_TYPES[kind], [str(value)])
    if kind == "chat":
        message["metadata"] = {"is_delta": "true" if event.delta_text else True}
    if kind == "final":
        message.update(status="STATUS_DONE", end_turn=True)
    payload: JSON = {"message": message}
    if kind == "progress" and event.at == 0:
        payload["session_uuid"] = session.uuid
    if event.wrapped:
        payload = {"result": payload}
    head = f"event: {name}\n" if name != "message" or kind == "progress" else ""
    return f"{head}data: {json.dumps(payload, separators=(',', ':'))}\n\n"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stalls
    nb: FakeNeubird  # set on the per-server subclass (`_handler`)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        is_text = isinstance(body, str)
        data = body.encode() if is_text else json.dumps(body).encode()
        self.nb.count_status(status)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8" if is_text else "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _body(self) -> JSON | None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not raw.strip():
            return {}
        try:
            parsed = json.loads(raw)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        nb = self.nb
        parts = urlsplit(self.path)
        body = self._body()
        if parts.path.startswith("/_fake/"):
            self._control(method, parts.path, body or {})
            return
        route = match_route(method, parts.path)
        delay, fault = nb.admit(route)
        if delay > 0 and nb.stopping.wait(delay):
            return
        if fault is not None:
            self._reply(*fault)
            return
        if route is None:
            self._reply(404, "not found")
            return
        if body is None:
            self._reply(400, "invalid JSON body")
            return
        with nb.lock:
            if route == "POST /v1/user/login":
                self._reply(*nb.login(body))
                return
            if not nb.authorised(self.headers.get("Authorization")):
                self._reply(401, "unauthorized")
                return
            if route != "POST /v1/inference/session":
                self._reply(*nb.json_route(route, parts.path, parse_qs(parts.query), body))
                return
            session, cycle, error = nb.start_prompt(body)
            mode, keepalive, break_after = nb.cot_mode, nb.keepalive_seconds, nb.take_break_after()
        nb.count_status(200)
        self._stream(session, cycle, error, mode, keepalive, break_after)

    def _control(self, method: str, path: str, body: JSON) -> None:
        try:
            result = control(self.nb, method, path[len("/_fake/") :], body)
        except (KeyError, TypeError, ValueError) as exc:
            self._reply(400, f"bad control call: {exc}")
            return
        if result is None:
            self._reply(404, "no such control route")
        else:
            self._reply(200, result)

    # -- the SSE stream (chunked transfer encoding, flushed per event) ------------------------------------

    def _chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _stream(
        self,
        session: Session | None,
        cycle: Cycle | None,
        error: str | None,
        mode: CotMode,
        keepalive: float,
        break_after: int | None,
    ) -> None:
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            if session is None or cycle is None:
                text = error or "error"
                payload = {"error": text, "response": {"error_code": 404, "error_message": text}}
                self._chunk(f"data: {json.dumps(payload)}\n\n")
            elif not self._follow(session, cycle, mode, keepalive, break_after):
                self.connection.shutdown(socket.SHUT_RDWR)  # abrupt: no terminating chunk
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            return  # the client left; the investigation goes on (its timeline is server-side)

    def _follow(self, session: Session, cycle: Cycle, mode: CotMode, keepalive: float, break_after: int | None) -> bool:
        """Write the due events, then follow the timeline with keepalives in the gaps; False = break abruptly."""
        sent, beat = 0, 0
        fold = Fold()
        last_write = time.monotonic()
        while True:
            with self.nb.lock:
                due = [e for e in cycle.events[sent:] if e.at <= cycle.elapsed(time.monotonic())]
            for event in due:
                fold.apply(event)
                self._chunk(render(event, cycle, session, fold, mode))
                sent += 1
                last_write = time.monotonic()
                if break_after is not None and sent >= break_after:
                    return False
            if sent >= len(cycle.events):
                return True
            wait = min(cycle.started + cycle.events[sent].at, last_write + keepalive) - time.monotonic()
            if wait > 0 and self.nb.stopping.wait(wait):
                return False
            if time.monotonic() - last_write >= keepalive:
                self._chunk(": keepalive\n\n" if beat % 2 == 0 else "data: :keepalive\n\n")
                beat += 1
                last_write = time.monotonic()


def _handler(nb: FakeNeubird) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"nb": nb})


def control(nb: FakeNeubird, method: str, name: str, body: JSON) -> JSON | None:
    """The `/_fake/<name>` control routes (manual use): the control methods with a JSON body of their
    keyword arguments. GET stats; POST reset_stats, rate_limit, fail, slow, break_stream, expire_tokens,
    token_policy, configure, next_prompt, sessions (add_session; answers {"session_uuid"})."""
    if method == "GET" and name == "stats":
        return nb.stats()
    if method != "POST":
        return None
    actions: dict[str, Callable[[], object]] = {
        "reset_stats": nb.reset_stats,
        "rate_limit": lambda: nb.rate_limit(int(body["n"]), float(body.get("retry_after_s", 1.0))),
        "fail": lambda: nb.fail(int(body["n"]), int(body.get("status", 500))),
        "slow": lambda: nb.slow(float(body["seconds"]), body.get("route")),
        "break_stream": lambda: nb.break_stream_after(int(body["after"])),
        "expire_tokens": nb.expire_tokens,
        "token_policy": lambda: nb.token_policy(**body),
        "configure": lambda: nb.configure(**body),
        "next_prompt": lambda: nb.next_prompt(**body),
        "sessions": lambda: {"session_uuid": nb.add_session(**body)},
    }
    action = actions.get(name)
    if action is None:
        return None
    result = action()
    return result if isinstance(result, dict) else {"ok": True}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devhost.fake_neubird", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--sessions", type=int, default=200, help="seeded sessions (default 200)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--investigation-seconds", type=float, default=20.0, help="nominal investigation length")
    parser.add_argument("--time-scale", type=float, default=1.0, help="real seconds per nominal second")
    parser.add_argument("--keepalive-seconds", type=float, default=5.0)
    parser.add_argument("--cot-mode", choices=("delta", "snapshot"), default="delta")
    parser.add_argument("--done-marker", action="store_true", help="send data: [DONE] before the final event")
    parser.add_argument(
        "--strict", action="store_true", help="HTTP 400 for undocumented filter keys; RFC 3339 times with offsets"
    )
    parser.add_argument("--extra-fields", action="store_true", help="add a field the contract does not name")
    parser.add_argument("--email", default="demo@firebreak.local")
    parser.add_argument("--password", default="demo")
    args = parser.parse_args(argv)
    nb = FakeNeubird(
        sessions=args.sessions,
        seed=args.seed,
        investigation_seconds=args.investigation_seconds,
        time_scale=args.time_scale,
        keepalive_seconds=args.keepalive_seconds,
        cot_mode=cast(CotMode, args.cot_mode),
        email=args.email,
        password=args.password,
        port=args.port,
        strict=args.strict,
        extra_fields=args.extra_fields,
    )
    nb.configure(done_marker=args.done_marker)
    nb.start()
    print(f"fake NeuBird serving {nb.base_url} ({args.sessions} sessions, seed {args.seed})")
    print("Point the app at it with:")
    for key, value in nb.env().items():
        print(f"  {key}={value}")
    print(f'Control: curl {nb.url}/_fake/stats ; POST /_fake/rate_limit {{"n": 2, "retry_after_s": 1}} ...')
    print("Ctrl-C stops it.", flush=True)
    try:
        while not nb.stopping.wait(3600):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        nb.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
