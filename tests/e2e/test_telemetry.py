"""The app's spans through the real host, the real Azure Monitor distro and OpenTelemetry's in-memory exporter.

tests/fixtures/telemetry_app is the Firebreak app with an InMemorySpanExporter given to its telemetry set-up
(shared/core/telemetry.py) beside the distro's Application Insights exporter, which sends to a local stand-in for
the ingestion endpoint. Requests carry secrets in headers, query strings and tool arguments, and NeuBird's password
and tokens cross the outbound transport: none may appear in any span or in what the exporter sends, and each
request's spans carry its correlation id, through the Durable activities of the run it starts.

With the host's OpenTelemetry mode the worker streams its own telemetry (PYTHON_ENABLE_OPENTELEMETRY) and the host
no longer forwards the worker's logs: the app then exports its log records itself, redacted like every record.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from devhost.processes import HostProcess
from tests.support.fake_neubird import FakeNeubird

APP = Path(__file__).resolve().parents[1] / "fixtures" / "telemetry_app"
SECRET_HEADER = f"hdr-{uuid.uuid4().hex}"
SECRET_QUERY = f"qry-{uuid.uuid4().hex}"
SECRET_ARG = f"arg-{uuid.uuid4().hex}"
PASSWORD = f"nb-pw-{uuid.uuid4().hex}"
QUIET = {  # the exporter's own calls home (statsbeat, dynamic configuration): none from a test
    "APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL": "true",
    "APPLICATIONINSIGHTS_SDKSTATS_DISABLED": "true",
    "APPLICATIONINSIGHTS_CONTROLPLANE_DISABLED": "true",
}


class Ingestion:
    """A stand-in for Application Insights' ingestion endpoint: accepts every batch and keeps its text."""

    def __init__(self) -> None:
        self.bodies: list[str] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                text = body.decode("utf-8", "replace")
                received.append(text)
                count = text.count('"iKey"')
                answer = json.dumps({"itemsReceived": count, "itemsAccepted": count, "errors": []}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def ingestion() -> Iterator[Ingestion]:
    endpoint = Ingestion()
    yield endpoint
    endpoint.server.shutdown()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeNeubird]:
    with FakeNeubird(sessions=20, seed=5, time_scale=0.01, password=PASSWORD) as nb:
        yield nb


@pytest.fixture(scope="module")
def traced(start_host: Callable[..., HostProcess], ingestion: Ingestion, fake: FakeNeubird) -> HostProcess:
    return start_host(
        {
            "APPLICATIONINSIGHTS_CONNECTION_STRING": (
                f"InstrumentationKey={uuid.UUID(int=0)};IngestionEndpoint={ingestion.url}"
            ),
            "OTEL_BSP_SCHEDULE_DELAY": "100",  # the distro's batch exporter sends within 0.1 s, not 5 s
            "FIREBREAK_TELEMETRY_SAMPLING_RATIO": "1",  # every trace (the distro's default samples by rate)
            **QUIET,
            **fake.env(),
            "FIREBREAK_OUTBOUND_ALLOW_HTTP": "true",
            "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1",
        },
        app_dir=APP,
    )


def _spans(host: HostProcess) -> list[dict[str, Any]]:
    return httpx.get(f"{host.base_url}/api/test/spans", timeout=30).json()


def _wait_for(host: HostProcess, found: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        spans = _spans(host)
        if found(spans):
            return spans
        time.sleep(0.2)
    raise AssertionError(f"spans never arrived: {[s['name'] for s in _spans(host)]}")


def _with_id(spans: list[dict[str, Any]], correlation_id: str) -> list[dict[str, Any]]:
    return [s for s in spans if s["attributes"].get("firebreak.correlation_id") == correlation_id]


@pytest.fixture(scope="module")
def driven(traced: HostProcess, fake: FakeNeubird) -> dict[str, Any]:
    """Requests with secrets everywhere a caller can put one; the spans and exported batches they made."""
    base = traced.base_url
    hostile = {"X-Api-Key": SECRET_HEADER, "Cookie": f"session={SECRET_HEADER}", "X-Correlation-Id": "corr-rest"}
    rest = httpx.post(
        f"{base}/api/tools/neubird_create_investigation?code={SECRET_QUERY}&sig={SECRET_QUERY}",
        json={"prompt": f"why is checkout slow? token={SECRET_ARG}", "wait_for_completion": False},
        headers=hostile,
        timeout=60,
    )
    mcp_headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    mcp = [
        httpx.post(
            f"{base}/api/mcp?api_key={SECRET_QUERY}",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "neubird_list_projects", "arguments": arguments},
            },
            headers={**mcp_headers, "X-Correlation-Id": correlation_id, "X-Api-Key": SECRET_HEADER},
            timeout=60,
        )
        # A valid call (NeuBird's token crosses the transport), and one refused for an argument holding a secret.
        for correlation_id, arguments in [
            ("corr-mcp", {"include_inactive": True}),
            ("corr-mcp-bad", {"include_inactive": True, "note": SECRET_ARG}),
        ]
    ]
    refused = httpx.post(
        f"{base}/api/tools/whoami", json={}, headers={"Authorization": f"Bearer {SECRET_HEADER}"}, timeout=30
    )
    started = httpx.post(f"{base}/api/diagnostics", headers={"X-Correlation-Id": "corr-run"}, timeout=30)
    assert rest.status_code == 200, rest.text
    assert [r.status_code for r in mcp] == [200, 200]
    assert refused.status_code == 401
    assert started.status_code == 202
    spans = _wait_for(traced, lambda spans: any(s["name"].startswith("activity ") for s in _with_id(spans, "corr-run")))
    return {"spans": spans, "tokens": fake.issued_tokens()}


def test_no_secret_in_any_span(driven: dict[str, Any]) -> None:
    text = json.dumps(driven["spans"])
    assert driven["tokens"]  # NeuBird logged in: its token crossed the transport
    for secret in (SECRET_HEADER, SECRET_QUERY, SECRET_ARG, PASSWORD, *driven["tokens"]):
        assert secret not in text


def test_no_secret_in_what_the_exporter_sends(driven: dict[str, Any], ingestion: Ingestion) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "corr-run" not in "".join(ingestion.bodies):
        time.sleep(0.2)
    sent = "".join(ingestion.bodies)
    assert "corr-rest" in sent
    assert "corr-run" in sent
    for secret in (SECRET_HEADER, SECRET_QUERY, SECRET_ARG, PASSWORD, *driven["tokens"]):
        assert secret not in sent


def test_a_tool_call_over_http_is_a_request_span_with_its_tool_span_inside(driven: dict[str, Any]) -> None:
    spans = _with_id(driven["spans"], "corr-rest")
    by_name = {s["name"]: s for s in spans}
    request = by_name["POST /api/tools/neubird_create_investigation"]
    tool = by_name["tool neubird_create_investigation"]
    assert request["kind"] == "SERVER"  # no host span to be a child of in the dev host
    assert request["attributes"]["url.path"] == "/api/tools/neubird_create_investigation"
    assert request["attributes"]["http.response.status_code"] == 200
    assert tool["trace_id"] == request["trace_id"]
    assert tool["parent_id"] == request["span_id"]
    assert tool["attributes"]["firebreak.tool.transport"] == "http"


def test_outbound_calls_are_client_spans_in_the_request_trace(driven: dict[str, Any]) -> None:
    spans = driven["spans"]
    (request,) = [s for s in _with_id(spans, "corr-mcp") if s["name"] == "POST /api/mcp"]
    in_trace = [s for s in spans if s["kind"] == "CLIENT" and s["trace_id"] == request["trace_id"]]
    outbound = [s for s in in_trace if s["scope"] == "firebreak"]  # the others: Cosmos DB calls (Azure SDK)
    assert outbound
    assert {s["attributes"]["firebreak.outbound.setting"] for s in outbound} == {"NEUBIRD_BASE_URL"}
    assert {s["attributes"]["server.address"] for s in outbound} == {"127.0.0.1"}
    assert all("url.full" not in s["attributes"] for s in outbound)


def test_mcp_tool_calls_carry_the_correlation_id(driven: dict[str, Any]) -> None:
    (tool,) = [s for s in _with_id(driven["spans"], "corr-mcp") if s["name"] == "tool neubird_list_projects"]
    assert tool["attributes"]["firebreak.tool.transport"] == "mcp"
    assert tool["status"] == "UNSET"
    (bad,) = [s for s in _with_id(driven["spans"], "corr-mcp-bad") if s["name"] == "tool neubird_list_projects"]
    assert bad["status"] == "ERROR"
    assert bad["attributes"]["error.type"] == "VALIDATION_ERROR"


def test_the_durable_activities_carry_the_request_correlation_id(driven: dict[str, Any]) -> None:
    names = {s["name"] for s in _with_id(driven["spans"], "corr-run")}
    assert "POST /api/diagnostics" in names
    assert any(name.startswith("activity ") for name in names)


def test_a_refused_request_is_a_failed_span_without_the_token(driven: dict[str, Any]) -> None:
    (refused,) = [s for s in driven["spans"] if s["name"] == "POST /api/tools/whoami"]
    assert refused["status"] == "ERROR"
    assert refused["attributes"]["error.type"]


@pytest.fixture(scope="module")
def streaming_ingestion() -> Iterator[Ingestion]:
    endpoint = Ingestion()
    yield endpoint
    endpoint.server.shutdown()


@pytest.fixture(scope="module")
def streaming(start_host: Callable[..., HostProcess], streaming_ingestion: Ingestion) -> HostProcess:
    """The app as infra/modules/function-app.bicep runs it with openTelemetryEnabled."""
    return start_host(
        {
            "APPLICATIONINSIGHTS_CONNECTION_STRING": (
                f"InstrumentationKey={uuid.UUID(int=0)};IngestionEndpoint={streaming_ingestion.url}"
            ),
            "PYTHON_ENABLE_OPENTELEMETRY": "true",
            "OTEL_BLRP_SCHEDULE_DELAY": "100",  # the distro's batch log exporter sends within 0.1 s, not 5 s
            **QUIET,
        },
        app_dir=APP,
    )


def test_with_the_worker_streaming_telemetry_the_apps_warnings_are_exported_redacted(
    streaming: HostProcess, streaming_ingestion: Ingestion
) -> None:
    marker = f"warned-{uuid.uuid4().hex}"
    answer = httpx.post(
        f"{streaming.base_url}/api/test/warn?code={SECRET_QUERY}",
        content=f"{marker} Authorization: Bearer {SECRET_HEADER} password={PASSWORD}",
        timeout=30,
    )
    assert answer.status_code == 204
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and marker not in "".join(streaming_ingestion.bodies):
        time.sleep(0.2)
    (envelope,) = [e for body in streaming_ingestion.bodies for e in json.loads(body) if marker in json.dumps(e)]
    assert envelope["data"]["baseType"] == "MessageData"
    assert envelope["data"]["baseData"]["severityLevel"] == 2  # Warning
    assert "[REDACTED]" in envelope["data"]["baseData"]["message"]
    assert envelope["data"]["baseData"]["properties"]["api_key"] == "[REDACTED]"
    sent = "".join(streaming_ingestion.bodies)
    for secret in (SECRET_HEADER, SECRET_QUERY, PASSWORD):
        assert secret not in sent
