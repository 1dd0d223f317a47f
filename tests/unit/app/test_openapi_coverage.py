"""Every HTTP function the app indexes is in GET /api/openapi.json, but the functions layer's generic ones."""

from __future__ import annotations

from devhost.index import index_functions, load_app
from devhost.stack import ROOT
from shared.app.capabilities import PLATFORM_FUNCTIONS, catalogue
from shared.app.openapi import build

# The functions layer's own HTTP functions that are not REST operations of the app: the readiness probe, MCP,
# the tool name catch-all (each tool has its own documented path) and the page that renders the document.
# (GET /api/tools and GET /api/openapi.json are documented.)
GENERIC = {"health", "mcp", "tools_by_name", "api_docs"}


def test_every_indexed_http_function_but_the_generic_ones_is_documented() -> None:
    paths = build(catalogue())["paths"]
    http = [f for f in index_functions(load_app(ROOT)) if f.trigger["type"] == "httpTrigger"]
    missing = [
        f"{f.name}: {method} /api/{f.trigger['route']}"
        for f in http
        if f.name not in GENERIC
        for method in f.trigger["methods"]
        if method.lower() not in paths.get(f"/api/{f.trigger['route']}", {})
    ]
    assert missing == []
    # The generic ones are the platform's own HTTP functions, nothing a capability declares.
    assert set(PLATFORM_FUNCTIONS) >= GENERIC
    assert len(http) > len(GENERIC)


def test_the_routes_moved_out_of_functions_are_documented() -> None:
    paths = build(catalogue())["paths"]
    for method, path in (
        ("post", "/api/investigations"),
        ("get", "/api/investigations"),
        ("get", "/api/investigations/{investigation_id}"),
        ("post", "/api/investigations/{investigation_id}/cancel"),
        ("get", "/api/runs/{run_id}"),
        ("post", "/api/runs/{run_id}/cancel"),
        ("post", "/api/diagnostics"),
        ("post", "/api/artifacts"),
        ("get", "/api/perf/reports/{file}"),
        ("get", "/api/perf/snapshots/{snapshot_id}/{file}"),
    ):
        assert method in paths.get(path, {}), (method, path)
    upload = paths["/api/artifacts"]["post"]
    assert set(upload["requestBody"]["content"]) == {"application/octet-stream", "multipart/form-data"}
    report = paths["/api/perf/reports/{file}"]["get"]["responses"]["200"]["content"]
    assert "image/svg+xml" in report
    started = paths["/api/investigations"]["post"]["responses"]
    assert {"200", "202"} <= set(started)
