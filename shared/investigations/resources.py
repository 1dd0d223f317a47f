"""Completed investigations' reports as MCP resources, for the caller's workspace only.

`firebreak://investigations/{investigation_id}/report.md` is the report's analysis (Markdown) and
`.../report.json` the structured report, as get_alert_investigation shows them once the status is
completed. Reads go through the store's workspace-scoped load: another workspace's id, an unknown one and
one still running all read as not found.
"""

from __future__ import annotations

import json

from shared.core.errors import NotFound
from shared.identity.models import Principal
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import InvestigationStore
from shared.tools.deps import Deps
from shared.tools.resources import MAX_LISTED_PER_KIND, ResourceBody, ResourceEntry, ResourceKind

PREFIX = "firebreak://investigations/"
FILES = {"report.md": "text/markdown", "report.json": "application/json"}


def _store(deps: Deps) -> InvestigationStore:
    settings = deps.settings.section(InvestigationSettings)
    return InvestigationStore(deps.cosmos, deps.blobs, inline_output_bytes=settings.inline_output_bytes)


async def list_reports(principal: Principal, deps: Deps) -> list[ResourceEntry]:
    items, _ = await _store(deps).list_summaries(principal.workspace_id, MAX_LISTED_PER_KIND, None)
    return [
        ResourceEntry(
            uri=f"{PREFIX}{item.id}/{name}",
            name=f"{item.alert_name} {name}",
            mime_type=kind,
            description=f"Report of investigation {item.id} of alert {item.alert_name}",
        )
        for item in items
        if item.status == "completed"
        for name, kind in FILES.items()
    ][:MAX_LISTED_PER_KIND]


async def read_report(principal: Principal, deps: Deps, uri: str) -> ResourceBody | None:
    investigation_id, _, name = uri.removeprefix(PREFIX).partition("/")
    if name not in FILES or not investigation_id:
        return None
    try:
        record = await _store(deps).get(principal.workspace_id, investigation_id)
    except NotFound:
        return None
    if record.status != "completed" or not record.report:
        return None
    if name == "report.md":
        return ResourceBody(uri, FILES[name], text=str(record.report.get("analysis") or ""))
    return ResourceBody(uri, FILES[name], text=json.dumps(record.report, indent=1, sort_keys=True))


REPORTS = ResourceKind(
    name="investigation-report",
    uri_template=PREFIX + "{investigation_id}/{file}",
    prefix=PREFIX,
    description="A completed alert investigation's report: report.md (the analysis) or report.json (structured).",
    mime_type="text/markdown",
    list=list_reports,
    read=read_report,
)
