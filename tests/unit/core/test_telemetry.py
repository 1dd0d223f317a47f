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
