"""Outbound allow-lists per feature and port, through the real callers of a running host: an entry for the MCP
server's 127.0.0.1:PORT opens neither that port to runbook or collect.run URLs nor another port to MCP; and a
name that does not resolve is refused in the same words as one that resolves to a private address."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from devhost.processes import HostProcess
from tests.support import scenarios
from tests.support.investigations import investigate
from tests.support.runbook_server import serve_runbook
from tests.support.scenario_mcp_server import serve_scenario
from tests.support.target_site import Site, target_site


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return scenarios.load(next(f for f in scenarios.scenario_files() if f.name.startswith("11_")))


@pytest.fixture(scope="module")
def servers(scenario: dict[str, Any]) -> Iterator[tuple[Any, Any, Site]]:
    with serve_scenario(scenario) as mcp, serve_runbook(scenario) as runbook, target_site() as (site, _):
        yield mcp, runbook, site


@pytest.fixture(scope="module")
def host(start_host: Callable[..., HostProcess], servers: tuple[Any, Any, Site]) -> HostProcess:
    mcp, runbook, site = servers
    return start_host(
        {
            "FIREBREAK_OUTBOUND_ALLOW_HTTP": "true",
            "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "",
            "FIREBREAK_OUTBOUND_MCP_ALLOWED_HOSTS": f"127.0.0.1:{mcp.port}",
            "FIREBREAK_OUTBOUND_RUNBOOKS_ALLOWED_HOSTS": f"127.0.0.1:{_port(runbook.base_url)}",
            "FIREBREAK_OUTBOUND_COLLECT_ALLOWED_HOSTS": f"127.0.0.1:{_port(site.url)}",
            "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}]),
        }
    )


def ws() -> dict[str, str]:
    return {"x-dev-workspace": f"ws-outbound-{uuid.uuid4().hex[:8]}"}


def with_runbook(host: HostProcess, scenario: dict[str, Any], runbook_url: str) -> dict[str, Any]:
    alert = dict(scenario["alert"])
    alert["annotations"] = {**alert.get("annotations", {}), "runbook_url": runbook_url}
    view = investigate(host, alert, ws())
    assert view["status"] == "completed", view
    return view


def collect(host: HostProcess, base_url: str) -> httpx.Response:
    body = {"base_url": base_url, "url_paths": ["/health"], "spx_dirs": [], "sample_count": 1, "warmup_count": 0}
    return httpx.post(f"{host.base_url}/api/tools/collect.run", json=body, headers=ws(), timeout=120)


def test_each_feature_reaches_its_own_host_and_port(host: HostProcess, servers, scenario: dict[str, Any]) -> None:
    _, runbook, site = servers
    view = with_runbook(host, scenario, runbook.runbook_url)
    assert view["runbook"]["status"] == "fetched", view["runbook"]
    assert view["tools"]["servers"][0]["status"] == "ok", view["tools"]
    site.requests.clear()
    r = collect(host, site.url)
    assert r.status_code == 200, r.text
    assert [q["path"] for q in site.requests] == ["/health"]


def test_an_entry_opens_neither_another_feature_nor_another_port(
    host: HostProcess, servers, scenario: dict[str, Any]
) -> None:
    mcp, runbook, site = servers
    site.requests.clear()
    runbook_requests = len(runbook.requests)
    # The MCP server's port, and the collect site's, are not the runbook feature's.
    for url in (f"http://127.0.0.1:{mcp.port}/runbook", f"{site.url}/runbook.md"):
        view = with_runbook(host, scenario, url)
        assert view["tools"]["servers"][0]["status"] == "ok", view["tools"]  # the MCP server is allowed...
        assert view["runbook"]["status"] == "failed", view["runbook"]  # ...a runbook on its port is not
        assert "non-public address" in view["runbook"]["error"]
    # The MCP server's and the runbook server's ports are not collect.run's.
    for base in (f"http://127.0.0.1:{mcp.port}", runbook.base_url):
        r = collect(host, base)
        assert r.status_code == 400, r.text
        assert "non-public address" in r.json()["error"]["message"]
    assert site.requests == []
    assert len(runbook.requests) == runbook_requests


def _without_host(message: str, host: str) -> str:
    return re.sub(r"correlation[^,}]*", "", message.replace(host, "<host>"))


def test_refusals_do_not_tell_a_missing_name_from_a_private_address(
    host: HostProcess, scenario: dict[str, Any]
) -> None:
    names = ["nonexistent.invalid", "localhost", "10.0.0.5"]
    collected = set()
    for name in names:
        r = collect(host, f"https://{name}/")
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        shown = {k: v for k, v in error.items() if k != "correlation_id"}
        collected.add(_without_host(json.dumps(shown, sort_keys=True), name))
    assert len(collected) == 1, collected
    runbooks = {
        _without_host(with_runbook(host, scenario, f"https://{name}/runbook.md")["runbook"]["error"], name)
        for name in names
    }
    assert len(runbooks) == 1, runbooks


@pytest.mark.parametrize("name", ["a" * 64 + ".example.com", "x\u0000y.example.com"])
def test_a_name_the_resolver_cannot_encode_is_refused_not_a_500(host: HostProcess, name: str) -> None:
    r = collect(host, f"https://{name}/")
    assert r.status_code == 400, r.text
    assert "non-public address" in r.json()["error"]["message"]
