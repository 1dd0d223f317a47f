"""Telemetry's settings and safe values, and that it costs nothing when Application Insights is not configured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shared.app.wiring import load_settings
from shared.core.telemetry import safe_url
from shared.core.telemetry_settings import TelemetrySettings

ROOT = Path(__file__).resolve().parents[3]
CONNECTION = "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://x.example/"


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("https://user:pw@mcp.example.com:8443/mcp/v1?api_key=k&sig=s#frag", "https://mcp.example.com:8443/mcp/v1"),
        ("http://127.0.0.1/api/tools/x?code=secret", "http://127.0.0.1/api/tools/x"),
        ("https://[fd00::5]:443/p", "https://[fd00::5]:443/p"),
        ("/api/health?x=1", "/api/health"),
    ],
)
def test_safe_url_keeps_no_user_info_query_or_fragment(url: str, safe: str) -> None:
    assert safe_url(url) == safe


def test_the_platform_names_configure_it() -> None:
    section = load_settings(
        {
            "APPLICATIONINSIGHTS_CONNECTION_STRING": CONNECTION,
            "APPLICATIONINSIGHTS_AUTHENTICATION_STRING": "ClientId=abc-123;Authorization=AAD",
        }
    ).section(TelemetrySettings)
    assert section.configured
    assert section.ingestion_identity() == (True, "abc-123")


@pytest.mark.parametrize(
    ("env", "configured"),
    [
        ({}, False),
        ({"APPLICATIONINSIGHTS_CONNECTION_STRING": " "}, False),
        ({"APPLICATIONINSIGHTS_CONNECTION_STRING": CONNECTION, "FIREBREAK_TELEMETRY_ENABLED": "false"}, False),
        # An unresolved Key Vault reference is unset, like any other setting.
        ({"APPLICATIONINSIGHTS_CONNECTION_STRING": "@Microsoft.KeyVault(VaultName=v;SecretName=ai)"}, False),
        ({"FIREBREAK_TELEMETRY_CONNECTION_STRING": CONNECTION}, True),
    ],
)
def test_configured_only_with_a_connection_string_and_not_switched_off(env: dict[str, str], configured: bool) -> None:
    assert load_settings(env).section(TelemetrySettings).configured is configured


@pytest.mark.parametrize(
    ("env", "streams"),
    [
        ({}, False),
        ({"PYTHON_ENABLE_OPENTELEMETRY": "true"}, True),
        ({"PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY": "1"}, True),
        ({"PYTHON_ENABLE_OPENTELEMETRY": " Yes "}, True),  # the worker's is_true_like
        ({"PYTHON_ENABLE_OPENTELEMETRY": "false", "PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY": "0"}, False),
        ({"PYTHON_ENABLE_OPENTELEMETRY": "@Microsoft.KeyVault(VaultName=v;SecretName=s)"}, False),
    ],
)
def test_whether_the_worker_streams_its_own_telemetry_is_read_as_the_worker_reads_it(
    env: dict[str, str], streams: bool
) -> None:
    """With it, the host stops forwarding the worker's logs: the app must export its own."""
    assert load_settings(env).section(TelemetrySettings).worker_streams_telemetry is streams


@pytest.mark.parametrize(
    ("auth", "identity"),
    [
        (None, (False, None)),
        ("Authorization=AAD", (True, None)),
        (" authorization = aad ; clientid = 42 ", (True, "42")),
        ("ClientId=42", (False, "42")),
    ],
)
def test_ingestion_identity(auth: str | None, identity: tuple[bool, str | None]) -> None:
    assert TelemetrySettings(authentication_string=auth).ingestion_identity() == identity


def test_without_a_connection_string_the_distro_is_never_imported() -> None:
    # A fresh process, as a worker: index the app, load the settings as the first request does.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("APPLICATIONINSIGHTS_", "FIREBREAK_TELEMETRY_"))}
    script = (
        "import sys, function_app\n"
        "from functions import wiring\n"
        "wiring.settings()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('azure.monitor', 'opentelemetry.sdk'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("env", "exported"), [({}, False), ({"PYTHON_ENABLE_OPENTELEMETRY": "true"}, True)])
def test_the_app_exports_its_log_records_only_when_the_host_no_longer_forwards_them(
    env: dict[str, str], exported: bool
) -> None:
    """Without the worker streaming its telemetry the host sends the worker's records on: a second copy from the
    distro would double them. A fresh process, configured as the first request configures it."""
    quiet = {
        "APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL": "true",
        "APPLICATIONINSIGHTS_SDKSTATS_DISABLED": "true",
        "APPLICATIONINSIGHTS_CONTROLPLANE_DISABLED": "true",
    }
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("APPLICATIONINSIGHTS_", "FIREBREAK_TELEMETRY_", "PYTHON_", "OTEL_"))
    }
    connection = "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/"
    script = (
        "import logging\n"
        "from functions import wiring\n"
        "wiring.settings()\n"
        "print(sorted(type(h).__name__ for h in logging.getLogger().handlers))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**base, **quiet, "APPLICATIONINSIGHTS_CONNECTION_STRING": connection, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert ("LoggingHandler" in out.stdout) is exported, out.stdout + out.stderr
