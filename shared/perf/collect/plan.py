"""collect.run's plan: the request, every parameter of a run fixed and checked, and its Durable-safe half.

Inputs are Blob prefixes (`spx_dirs`) and a Blob name (`slow_log_path`) under the workspace's
artifacts, or local directories and files where local paths are allowed. Probes are GET only,
through the outbound guard, with only allow-listed headers sent; recorded URLs lose their query
string and userinfo by default and recorded header values of secret-looking names are redacted.

The work is split the same way inline and under Durable: `plan()` checks everything and fixes the
parameters (a CollectPlan), `run.run_path()` probes one URL path, `run.finish()` writes the bundle. A run
whose worst case (every sample timing out) exceeds FIREBREAK_PERF_COLLECT_INLINE_SECONDS continues as
the `perf_collect_orchestrator` orchestration and the tool answers at once with its run id and
status route. Under Durable the plan is split first (`split_secrets`): header values and the query
strings that are not recorded go to the run's sealed secrets (PlanSecrets), the rest is the run
record's plan (StoredPlan, re-validated at claim), and only the probe activity joins them again
(`with_secrets`). Manifests name headers, never their values.
"""

from __future__ import annotations

import asyncio
import math
import re
import secrets
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shared.core.errors import ValidationFailed, validation_failed_from_pydantic
from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.perf.artifacts import artifact_blob, blob_name, workspace_prefix
from shared.perf.models import Retention
from shared.perf.settings import PerfSettings
from shared.storage.blob import BlobStore
from shared.tools.registry import ToolInput, ToolOutput

MAX_FILES_PER_DIR = 500
ORCHESTRATOR = "perf_collect_orchestrator"
# Used with fullmatch: `$` would also accept a trailing newline.
_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}")
# RFC 9110 field values, ASCII only: visible characters, spaces and tabs inside (the probe writes latin-1 bytes,
# and anything else either fails there or splits the request).
_HEADER_VALUE = re.compile(r"([\x21-\x7e]([\x20-\x7e\t]{0,4094}[\x21-\x7e])?)?")
# A request target is ASCII without spaces or controls; other characters must be percent-encoded by the caller.
_URL_PATH = re.compile(r"/[\x21-\x7e]{0,2047}")
MAX_URL_PATHS = 50
# Headers the probe itself controls: a caller's Host would front another virtual host behind the checked
# address; the framing headers would desynchronise the request.
_RESERVED_HEADERS = frozenset(
    {
        "host",
        "connection",
        "content-length",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "keep-alive",
        "expect",
        "proxy-authorization",
        "proxy-connection",
    }
)
# Path parameters (";jsessionid=...", also percent-encoded as %3B) carry session tokens like query strings do.
_PATH_PARAMS = re.compile(r"(?:;|%3[bB])[^/]*")
MAX_HEADERS = 50


class RedactionRules(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strip_query_params: bool = Field(
        True,
        description="Record URL paths without their query strings, path parameters (;jsessionid=...) and fragments.",
    )
    redact_url_userinfo: bool = Field(True, description="Record URLs without user:password@.")


class CollectRequest(ToolInput):
    spx_dirs: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Blob prefixes under your artifacts holding SPX .json/.txt.gz files (local directories "
        "where local paths are allowed).",
    )
    slow_log_path: str | None = Field(
        None,
        max_length=1024,
        description="Blob name of the slow log under your artifacts (a local file where local paths are allowed).",
    )
    base_url: str = Field(
        min_length=1, max_length=2048, description="https URL of a non-production deployment to probe."
    )
    url_paths: list[str] = Field(
        min_length=1,
        max_length=MAX_URL_PATHS,
        description="Paths to GET, each starting with '/', ASCII only (percent-encode anything else).",
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        max_length=MAX_HEADERS,
        description="Headers to send; only names in headers_allowlist are sent. Values are kept encrypted "
        "while a long run needs them and never recorded.",
    )
    headers_allowlist: list[str] = Field(
        default_factory=list,
        max_length=MAX_HEADERS,
        description="Header names (case-insensitive) that may be sent; others are dropped.",
    )
    sample_count: int = Field(3, ge=1, le=20, description="Measured samples per path.")
    concurrency: int = Field(1, ge=1, le=4, description="Samples in flight at once per path.")
    timeout_ms: int = Field(
        3000, ge=200, le=15000, description="Per-sample time limit; a slower sample is recorded as an error."
    )
    warmup_count: int = Field(
        1, ge=0, le=5, description="Unmeasured requests per path before the samples (kept in timings.json as warmup)."
    )
    redaction_rules: RedactionRules = Field(
        default_factory=RedactionRules, description="What is left out of recorded URLs."
    )
    output_dir: str | None = Field(
        None,
        max_length=100,
        description="A label for the bundle (letters, digits, '.', '_', '-'); bundles always live under your "
        "workspace's bundles/.",
    )
    retention: Retention | None = Field(
        None, description="Bundle retention for this workspace (keep_last_n, ttl_days)."
    )

    @field_validator("url_paths")
    @classmethod
    def _paths(cls, paths: list[str]) -> list[str]:
        return check_paths(paths)

    @field_validator("headers")
    @classmethod
    def _headers(cls, headers: dict[str, str]) -> dict[str, str]:
        return check_headers(headers)


def check_paths(paths: list[str]) -> list[str]:
    for p in paths:
        if not _URL_PATH.fullmatch(p):
            raise ValueError(
                f"{p[:80]!r}: each path must start with '/' and hold only visible ASCII characters (no "
                f"spaces; percent-encode others), at most 2048"
            )
    return paths


def check_headers(headers: dict[str, str]) -> dict[str, str]:
    for k, v in headers.items():
        if not _HEADER_NAME.fullmatch(k) or not _HEADER_VALUE.fullmatch(v):
            raise ValueError(
                f"header {k[:60]!r} has an invalid name or value (visible ASCII, spaces inside, at most 4096 "
                f"characters)"
            )
        if k.lower() in _RESERVED_HEADERS:
            raise ValueError(f"header {k!r} is set by the probe itself and cannot be sent")
    return headers


class ProbeSettings(BaseModel):
    """How each path is probed: samples, concurrency, time limit, warm-up requests."""

    model_config = ConfigDict(extra="forbid")

    sample_count: int = Field(ge=1, le=20)
    concurrency: int = Field(ge=1, le=4)
    timeout_ms: int = Field(ge=200, le=15000)
    warmup_count: int = Field(ge=0, le=5)


class RecordedValues(BaseModel):
    """What the bundle records of the request: the redacted base URL and header names (never values)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(max_length=2048)
    headers: list[str] = Field(max_length=MAX_HEADERS)
    headers_dropped: list[str] = Field(max_length=MAX_HEADERS)

    @field_validator("headers", "headers_dropped")
    @classmethod
    def _names(cls, names: list[str]) -> list[str]:
        check_headers(dict.fromkeys(names, ""))
        return names


class BundlePlan(BaseModel):
    """What every form of a collect plan holds: enough to write the bundle."""

    model_config = ConfigDict(extra="forbid")

    bundle_id: str
    created_at: str
    base_url: str = Field(max_length=2048)
    url_paths: list[str] = Field(min_length=1, max_length=MAX_URL_PATHS)
    probe: ProbeSettings
    redaction_rules: RedactionRules
    recorded: RecordedValues
    inventory: list[dict[str, str]] = Field(max_length=20 * MAX_FILES_PER_DIR + 1)
    retention: Retention

    @field_validator("url_paths")
    @classmethod
    def _paths(cls, paths: list[str]) -> list[str]:
        return check_paths(paths)

    def recorded_paths(self) -> list[str]:
        """The URL paths as the bundle records them (redaction_rules applied)."""
        return [recorded_path(p, self.redaction_rules.strip_query_params) for p in self.url_paths]


class CollectPlan(BundlePlan):
    """Every parameter of one collect run, header values and unrecorded query strings included.

    Lives in memory only (inline run, or inside the probe activity after `with_secrets`); what a run
    record or Durable history may hold is its `split_secrets` half, the StoredPlan.
    """

    workspace_id: str
    headers: dict[str, str] = Field(max_length=MAX_HEADERS)

    @field_validator("headers")
    @classmethod
    def _headers(cls, headers: dict[str, str]) -> dict[str, str]:
        return check_headers(headers)


class StoredPlan(BundlePlan):
    """A Durable collect run's plan as its record holds it: no workspace (the record's owner is), no header values,
    URL paths as recorded."""

    bundle_id: str = Field(pattern=r"^bundle_\d{8}_\d{6}_[0-9a-f]{10}(_[A-Za-z0-9._-]{1,100})?$")
    header_names: list[str] = Field(max_length=MAX_HEADERS)

    @classmethod
    def from_record(cls, stored: dict[str, Any]) -> StoredPlan:
        """Re-check a record's plan against the same limits as CollectRequest (the record is data, not a promise)."""
        try:
            return cls.model_validate(stored)
        except ValidationError as exc:
            raise ValueError(f"stored collect plan is invalid: {exc.error_count()} problem(s)") from None


class PlanSecrets(BaseModel):
    """What a Durable run keeps sealed: header values, and the URL paths when their recorded form drops a query."""

    model_config = ConfigDict(extra="forbid")

    headers: dict[str, str] = Field(default_factory=dict, max_length=MAX_HEADERS)
    url_paths: list[str] | None = Field(None, min_length=1, max_length=MAX_URL_PATHS)

    @field_validator("headers")
    @classmethod
    def _headers(cls, headers: dict[str, str]) -> dict[str, str]:
        return check_headers(headers)

    @field_validator("url_paths")
    @classmethod
    def _paths(cls, paths: list[str] | None) -> list[str] | None:
        return None if paths is None else check_paths(paths)

    def sealed(self) -> dict[str, Any] | None:
        """The secrets to seal with the run, or None when it needs none (no headers, every path recorded as sent)."""
        return self.model_dump(exclude_defaults=True) or None


class CollectResult(ToolOutput):
    bundle_id: str
    state: str = Field(description="'completed', or 'running' when the run continues as a Durable orchestration.")
    bundle_dir: str
    manifest_path: str
    timings_path: str
    artifact_counts: dict[str, int]
    ingest_artifacts: list[dict[str, str]]
    run_id: str | None = Field(
        None, description="The background run when state is 'running': pass it to get_run_status."
    )
    status_url: str | None = Field(
        None, description="When state is 'running': GET this route (same credentials) for the run's status."
    )
    removed_by_retention: list[str] = Field(default_factory=list)
    correlation_id: str
    next_action: str


def redact_url(url: str, rules: RedactionRules) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if rules.redact_url_userinfo and "@" in netloc:
        netloc = "REDACTED@" + netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, netloc, parts.path, "" if rules.strip_query_params else parts.query, ""))


def recorded_path(path: str, strip_query: bool) -> str:
    """The path as recorded: without query string, path parameters and fragment when stripping."""
    if not strip_query:
        return path
    return _PATH_PARAMS.sub("", path.split("#", 1)[0].split("?", 1)[0]) or "/"


def worst_case_seconds(req: CollectRequest) -> float:
    per_path = math.ceil((req.sample_count + req.warmup_count) / req.concurrency)
    return len(req.url_paths) * per_path * req.timeout_ms / 1000


def _local_spx_files(root: Path) -> list[str] | None:
    """The SPX files of a local directory (at most MAX_FILES_PER_DIR), or None when it is not a directory."""
    if not root.is_dir():
        return None
    return sorted(str(p) for p in root.iterdir() if p.is_file() and p.name.endswith((".json", ".txt.gz")))[
        :MAX_FILES_PER_DIR
    ]


async def _inventory(req: CollectRequest, settings: Settings, blobs: BlobStore, workspace: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    local = settings.section(PerfSettings).allow_local_paths
    for d in req.spx_dirs:
        if local and d.startswith("/"):
            found = await asyncio.to_thread(_local_spx_files, Path(d))
            if found is None:
                raise ValidationFailed.on_field(
                    "spx_dirs",
                    "not a directory",
                    f"SPX directory not found: {d}",
                )
            items += [{"path": p, "type": "spx"} for p in found]
            continue
        prefix = artifact_blob(workspace, blob_name(d.strip("/"))) + "/"
        base = f"{workspace_prefix(workspace)}/artifacts/"
        names = []
        async for n in blobs.list(prefix):
            if n.endswith((".json", ".txt.gz")):
                names.append(n[len(base) :])
            if len(names) >= MAX_FILES_PER_DIR:
                break
        if not names:
            raise ValidationFailed.on_field(
                "spx_dirs",
                "empty or missing prefix",
                f"no SPX files (.json/.txt.gz) under {d!r} in your artifacts",
                suggestions=[
                    "Upload the SPX pairs with names under that prefix (POST /api/artifacts?name=<prefix>/<file>)."
                ],
            )
        items += [{"blob": n, "type": "spx"} for n in sorted(names)]
    if req.slow_log_path:
        if local and req.slow_log_path.startswith("/"):
            if not await asyncio.to_thread(Path(req.slow_log_path).is_file):
                raise ValidationFailed.on_field(
                    "slow_log_path",
                    "not a file",
                    "slow_log_path must point to a readable file",
                )
            items.append({"path": req.slow_log_path, "type": "mysql_slow_log"})
        else:
            name = blob_name(req.slow_log_path.strip("/"))
            full = artifact_blob(workspace, name)
            if not [n async for n in blobs.list(full) if n == full]:
                raise ValidationFailed.on_field(
                    "slow_log_path",
                    "blob not found",
                    f"slow log {name!r} is not in your artifacts",
                )
            items.append({"blob": name, "type": "mysql_slow_log"})
    return items


async def plan(req: CollectRequest, settings: Settings, blobs: BlobStore, workspace: str, now: datetime) -> CollectPlan:
    """Check the request (URL guard, inputs) and fix every parameter of the run."""
    guard = OutboundGuard(settings, "collect")
    await guard.resolve(req.base_url.rstrip("/") + "/", "base_url")
    if req.output_dir is not None:
        blob_name(req.output_dir)
    allowed = {h.lower() for h in req.headers_allowlist}
    sent = {k: v for k, v in req.headers.items() if k.lower() in allowed}
    bundle_id = f"bundle_{now.strftime('%Y%m%d_%H%M%S')}_{secrets.token_hex(5)}"
    # Probes use the scheme, host and port of base_url only; its query and fragment are never kept.
    parts = urlsplit(req.base_url.rstrip("/"))
    base_url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    if req.output_dir:
        bundle_id = f"{bundle_id}_{req.output_dir}"
    rules = req.redaction_rules
    inventory = await _inventory(req, settings, blobs, workspace)
    try:
        return CollectPlan(
            workspace_id=workspace,
            bundle_id=bundle_id,
            created_at=now.isoformat(),
            base_url=base_url,
            url_paths=req.url_paths,
            headers=sent,
            probe=ProbeSettings(
                sample_count=req.sample_count,
                concurrency=req.concurrency,
                timeout_ms=req.timeout_ms,
                warmup_count=req.warmup_count,
            ),
            redaction_rules=rules,
            recorded=RecordedValues(
                base_url=redact_url(base_url, rules),
                headers=sorted(sent),  # names only: a value may be a credential whatever its header is called
                headers_dropped=sorted(k for k in req.headers if k.lower() not in allowed),
            ),
            inventory=inventory,
            retention=req.retention or Retention(),
        )
    except ValidationError as exc:
        # The request was checked already; only a recorded value can still exceed a limit (a redacted base_url near
        # 2,048 characters).
        raise validation_failed_from_pydantic(exc, what="collect plan") from None


def split_secrets(plan: CollectPlan) -> tuple[StoredPlan, PlanSecrets]:
    """(the plan a run record may hold, the secrets it needs): header values, and paths whose query is not recorded."""
    recorded = plan.recorded_paths()
    fields = {name: getattr(plan, name) for name in BundlePlan.model_fields}
    # Not validated here: the record is checked where it is trusted, at claim (StoredPlan.from_record), as before.
    stored = StoredPlan.model_construct(**{**fields, "url_paths": recorded, "header_names": sorted(plan.headers)})
    return stored, PlanSecrets.model_construct(
        headers=plan.headers, url_paths=plan.url_paths if recorded != plan.url_paths else None
    )


def validate_stored_plan(stored: dict[str, Any]) -> dict[str, Any]:
    """RunService.claim's validator: the record's plan re-checked (StoredPlan.from_record), as the JSON
    the orchestration reads."""
    return StoredPlan.from_record(stored).model_dump(mode="json")


def with_secrets(stored: dict[str, Any], secret: dict[str, Any], workspace: str) -> CollectPlan:
    """The full plan again, for the run's owner `workspace` (from the record, never from orchestration input)."""
    plan = StoredPlan.from_record(stored)
    try:
        sealed = PlanSecrets.model_validate(secret)
    except ValidationError as exc:
        raise ValueError(f"the run's secrets are invalid: {exc.error_count()} problem(s)") from None
    if sorted(sealed.headers) != plan.header_names:
        raise ValueError("the run's secret headers do not match its plan")
    paths = sealed.url_paths or plan.url_paths
    if [recorded_path(p, plan.redaction_rules.strip_query_params) for p in paths] != plan.url_paths:
        raise ValueError("the run's secret paths do not match its plan")
    return CollectPlan(
        **plan.model_dump(exclude={"header_names", "url_paths"}),
        workspace_id=workspace,
        headers=sealed.headers,
        url_paths=paths,
    )
