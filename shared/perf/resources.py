"""Perf reports and snapshots' profile exports as MCP resources, for the caller's workspace only.

`firebreak://perf/reports/{file}` is a file of report.export's `downloads`; `firebreak://perf/snapshots/
{snapshot_id}/{file}` a profile export named in runs.get's profiles[].downloads. Reads go through the same
store checks as GET /api/perf/reports/{file} and /api/perf/snapshots/{snapshot_id}/{file}: another
workspace's file is not found, exactly like an unknown one.
"""

from __future__ import annotations

from shared.core.errors import NotFound
from shared.identity.models import Principal
from shared.perf.service import perf_service
from shared.tools.deps import Deps
from shared.tools.resources import MAX_LISTED_PER_KIND, ResourceBody, ResourceEntry, ResourceKind

REPORTS_PREFIX = "firebreak://perf/reports/"
PROFILES_PREFIX = "firebreak://perf/snapshots/"
# Snapshots whose profile exports resources/list names (each costs one metadata read).
PROFILE_SNAPSHOTS_LISTED = 20

MIME_TYPES = {
    ".md": "text/markdown",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".txt": "text/plain",
}


def mime_type(name: str) -> str:
    return MIME_TYPES.get(name[name.rfind(".") :], "application/octet-stream") if "." in name else "text/plain"


def _body(uri: str, name: str, data: bytes) -> ResourceBody:
    kind = mime_type(name)
    try:
        return ResourceBody(uri, kind, text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return ResourceBody(uri, kind, blob=data)


async def list_reports(principal: Principal, deps: Deps) -> list[ResourceEntry]:
    store = await perf_service(deps).store(principal)
    docs = await store.runs.query_all(
        store.workspace, "c.type = 'report'", {}, order_by="c.created_at DESC", limit=MAX_LISTED_PER_KIND
    )
    entries = [
        ResourceEntry(
            uri=REPORTS_PREFIX + name,
            name=name,
            mime_type=mime_type(name),
            description=f"{doc.get('kind', 'analysis')} report of snapshot {doc.get('snapshot_id')}, "
            f"{doc.get('created_at')}",
        )
        for doc in docs
        for name in doc.get("files", [])
    ]
    return entries[:MAX_LISTED_PER_KIND]


async def read_report(principal: Principal, deps: Deps, uri: str) -> ResourceBody | None:
    name = uri.removeprefix(REPORTS_PREFIX)
    if "/" in name or not name:
        return None
    store = await perf_service(deps).store(principal)
    try:
        return _body(uri, name, await store.report_file(name))
    except NotFound:
        return None


async def list_profiles(principal: Principal, deps: Deps) -> list[ResourceEntry]:
    store = await perf_service(deps).store(principal)
    snapshots, _ = await store.list_runs(PROFILE_SNAPSHOTS_LISTED, None)
    entries: list[ResourceEntry] = []
    for snap in snapshots:
        sid = str(snap.get("snapshot_id") or snap.get("id", "").removeprefix("snapshot_"))
        for key, files in (await store.profile_files(sid)).items():
            entries += [
                ResourceEntry(
                    uri=f"{PROFILES_PREFIX}{sid}/{name}",
                    name=name,
                    mime_type=mime_type(name),
                    description=f"{kind} export of profile {key} of snapshot {sid}",
                )
                for kind, name in sorted(files.items())
            ]
    return entries[:MAX_LISTED_PER_KIND]


async def read_profile(principal: Principal, deps: Deps, uri: str) -> ResourceBody | None:
    sid, _, name = uri.removeprefix(PROFILES_PREFIX).partition("/")
    if not sid or not name or "/" in name:
        return None
    store = await perf_service(deps).store(principal)
    try:
        return _body(uri, name, await store.profile_file(sid, name))
    except NotFound:
        return None


REPORTS = ResourceKind(
    name="perf-report",
    uri_template=REPORTS_PREFIX + "{file}",
    prefix=REPORTS_PREFIX,
    description="A stored perf report file (Markdown, JSON or an SVG chart) from report.export's downloads.",
    mime_type="text/markdown",
    list=list_reports,
    read=read_report,
)
PROFILES = ResourceKind(
    name="perf-profile-export",
    uri_template=PROFILES_PREFIX + "{snapshot_id}/{file}",
    prefix=PROFILES_PREFIX,
    description="A snapshot's SPX profile export: collapsed stacks (text) or speedscope JSON (runs.get).",
    mime_type="application/json",
    list=list_profiles,
    read=read_profile,
)
