"""MCP resources with the real mcp client: a workspace lists and reads its own perf report and profile exports;
another workspace's URI reads as not found, exactly like a made-up one."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import BlobResourceContents, TextResourceContents

from devhost.processes import HostProcess
from shared.investigations.activities.payloads import ReportRequest, StartedBy, StoredPlan
from shared.investigations.activities.report import write_report
from shared.investigations.alerts import Alert
from shared.investigations.loop import Limits
from shared.investigations.models import InvestigationRecord
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import InvestigationStore, new_record_fields
from shared.tools.deps import Deps
from tests.support.investigations import Run
from tests.support.mcp_http import mcp_client

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TINY = FIXTURES / "spx" / "spx-full-20261122_030646-vm-31166-1804289383"


def ws() -> dict[str, str]:
    return {"x-dev-workspace": f"ws-res-{uuid.uuid4().hex[:8]}"}


def tool(host: HostProcess, name: str, body: dict, headers: dict[str, str]) -> dict:
    r = httpx.post(f"{host.base_url}/api/tools/{name}", json=body, headers=headers, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.fixture(scope="module")
def stored(host: HostProcess) -> tuple[dict[str, str], str, dict]:
    """A workspace with one ingested SPX snapshot and one exported report: (headers, snapshot id, report)."""
    headers = ws()
    files = [
        ("file", (f"{TINY.name}.json", Path(f"{TINY}.json").read_bytes())),
        ("file", (f"{TINY.name}.txt.gz", Path(f"{TINY}.txt.gz").read_bytes())),
    ]
    up = httpx.post(f"{host.base_url}/api/artifacts", files=files, headers=headers, timeout=60)
    assert up.status_code == 201, up.text
    refs = [{"blob": a["blob"]} for a in up.json()["artifacts"]]
    sid = tool(host, "artifacts.ingest", {"artifacts": refs}, headers)["normalized_snapshot_id"]
    report = tool(host, "report.export", {"normalized_snapshot_id": sid}, headers)
    return headers, sid, report


async def test_owner_lists_and_reads_its_report_and_profile_exports(host: HostProcess, stored) -> None:
    headers, sid, report = stored
    markdown = f"report_{report['report_id']}.md"
    async with mcp_client(host, headers) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        md = (await client.read_resource(f"firebreak://perf/reports/{markdown}")).contents
        scope = (await client.read_resource(f"firebreak://perf/snapshots/{sid}/profile_1.speedscope.json")).contents
    assert set(report["downloads"]) <= {u.removeprefix("firebreak://perf/reports/") for u in listed}
    assert listed[f"firebreak://perf/reports/{markdown}"].mime_type == "text/markdown"
    assert listed[f"firebreak://perf/snapshots/{sid}/profile_1.collapsed.txt"].mime_type == "text/plain"
    assert "firebreak://perf/reports/{file}" in templates
    assert "firebreak://perf/snapshots/{snapshot_id}/{file}" in templates
    [text] = md
    assert isinstance(text, TextResourceContents)
    assert text.text == report["markdown"]
    assert text.mime_type == "text/markdown"
    [doc] = scope
    assert not isinstance(doc, BlobResourceContents)
    assert doc.mime_type == "application/json"
    assert json.loads(doc.text)["$schema"] == "https://www.speedscope.app/file-format-schema.json"


@pytest.mark.parametrize("which", ["report", "profile", "made-up", "other-scheme"])
async def test_another_workspaces_uri_reads_as_not_found_like_an_unknown_one(
    host: HostProcess, stored, which: str
) -> None:
    _, sid, report = stored
    uri = {
        "report": f"firebreak://perf/reports/report_{report['report_id']}.md",
        "profile": f"firebreak://perf/snapshots/{sid}/profile_1.speedscope.json",
        "made-up": "firebreak://perf/reports/report_0000000000000000.md",
        "other-scheme": "file:///etc/passwd",
    }[which]
    async with mcp_client(host, ws()) as client:
        assert [str(r.uri) for r in (await client.list_resources()).resources] == []
        with pytest.raises(MCPError) as info:
            await client.read_resource(uri)
    assert info.value.code == -32602
    assert info.value.message == "Resource not found"
    assert info.value.data == {"code": "NOT_FOUND", "uri": uri}


async def completed_investigation(deps: Deps) -> tuple[str, str, dict]:
    """A completed investigation written by the report activity into the stores the host reads:
    (workspace, investigation id, report)."""
    alert = Alert(name="KubePodCrashLooping", title="KubePodCrashLooping", source="test", starts_at=datetime.now(UTC))
    workspace, run_id = f"ws-res-inv-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    limits = Limits.of(deps.settings.section(InvestigationSettings))
    started = StartedBy(user_id="alice", source="dev")
    plan = StoredPlan(alert=alert, limits=limits, started_by=started).model_dump(mode="json")
    store = InvestigationStore(deps.cosmos, deps.blobs)
    record = InvestigationRecord(**new_record_fields(workspace, "alice", run_id), alert=alert)
    record.status = "running"
    await store.create(record)
    stopped = ReportRequest(stop="iteration limit (5)", iterations=1, calls=0, data_points=0)
    await write_report(Run(run_id, workspace, "alice", plan), stopped, deps)
    report = (await store.get(workspace, run_id)).report
    assert report is not None
    return workspace, run_id, report


async def test_investigation_reports_are_resources_of_their_workspace_only(host: HostProcess, deps: Deps) -> None:
    workspace, inv_id, report = await completed_investigation(deps)
    md_uri = f"firebreak://investigations/{inv_id}/report.md"
    json_uri = f"firebreak://investigations/{inv_id}/report.json"
    async with mcp_client(host, {"x-dev-workspace": workspace}) as client:
        listed = {str(r.uri): r.mime_type for r in (await client.list_resources()).resources}
        [md] = (await client.read_resource(md_uri)).contents
        [structured] = (await client.read_resource(json_uri)).contents
    assert listed == {md_uri: "text/markdown", json_uri: "application/json"}
    assert isinstance(md, TextResourceContents)
    assert md.text == report["analysis"]
    assert isinstance(structured, TextResourceContents)
    assert json.loads(structured.text) == report
    async with mcp_client(host, ws()) as stranger:
        with pytest.raises(MCPError) as info:
            await stranger.read_resource(md_uri)
    assert info.value.data == {"code": "NOT_FOUND", "uri": md_uri}
