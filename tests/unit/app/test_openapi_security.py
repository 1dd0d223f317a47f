"""GET /api/openapi.json says how callers really authenticate: an Entra ID token (OAuth2 code + PKCE when the Entra
settings give the URLs, else a bearer JWT) or a workspace API key as a bearer token; no function key. Every
authenticated operation documents 401 and 403 with the envelope and WWW-Authenticate; anonymous ones have none."""

from __future__ import annotations

from typing import Any

import pytest

from shared.app.capabilities import CAPABILITIES, PLATFORM_FUNCTIONS, catalogue
from shared.app.openapi import PRM_FUNCTION, PRM_PATH, build, entra_sign_in, operation_id
from shared.core.settings import Settings
from shared.tools.capability import Catalogue

TENANT = "11111111-2222-3333-4444-555555555555"
APP = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
ANONYMOUS = {"/api/openapi.json", "/api/docs", "/api/health", "/api/.well-known/oauth-protected-resource"}


def _operations(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(path, op) for path, item in doc["paths"].items() for op in item.values()]


def test_without_entra_settings_the_token_is_a_bearer_jwt_and_api_keys_are_bearer_too() -> None:
    doc = build(catalogue())
    schemes = doc["components"]["securitySchemes"]
    assert schemes["entraId"] == {**schemes["entraId"], "type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
    assert (schemes["workspaceApiKey"]["type"], schemes["workspaceApiKey"]["scheme"]) == ("http", "bearer")
    assert "fbk_" in schemes["workspaceApiKey"]["description"]
    assert set(schemes) == {"entraId", "workspaceApiKey"}
    assert doc["security"] == [{"entraId": []}, {"workspaceApiKey": []}]


@pytest.mark.parametrize(
    ("settings", "authority"),
    [
        ({"entra_tenant_id": TENANT}, f"https://login.microsoftonline.com/{TENANT}"),
        ({"entra_issuer": f"https://{TENANT}.ciamlogin.com/{TENANT}/v2.0"}, f"https://{TENANT}.ciamlogin.com/{TENANT}"),
        ({"entra_issuer": f"http://127.0.0.1:4567/{TENANT}/v2.0/"}, f"http://127.0.0.1:4567/{TENANT}"),
    ],
)
def test_with_entra_settings_the_token_comes_from_an_authorization_code_flow(
    settings: dict[str, str], authority: str
) -> None:
    sign_in = entra_sign_in(Settings.validated({"entra_audience": APP, **settings}))
    assert sign_in is not None
    doc = build(catalogue(), sign_in)
    flow = doc["components"]["securitySchemes"]["entraId"]["flows"]["authorizationCode"]
    assert flow["authorizationUrl"] == f"{authority}/oauth2/v2.0/authorize"
    assert flow["tokenUrl"] == f"{authority}/oauth2/v2.0/token"
    assert list(flow["scopes"]) == [f"api://{APP}/user_impersonation"]
    assert doc["security"][0] == {"entraId": [f"api://{APP}/user_impersonation"]}


@pytest.mark.parametrize(
    "settings",
    [{}, {"entra_tenant_id": TENANT}, {"entra_audience": APP, "entra_issuer": "https://sts.example.com/issuer"}],
)
def test_no_sign_in_urls_without_validation_or_an_entra_shaped_issuer(settings: dict[str, str]) -> None:
    assert entra_sign_in(Settings.validated(settings)) is None


def test_every_authenticated_operation_documents_the_challenge_and_anonymous_ones_have_no_requirement() -> None:
    doc = build(catalogue())
    missing = []
    for path, op in _operations(doc):
        if path in ANONYMOUS:
            assert op["security"] == [], path
            continue
        assert "security" not in op, path  # the document's requirement applies
        for status in ("401", "403"):
            answer = op["responses"].get(status, {})
            if answer.get("content", {}).get("application/json", {}).get("schema") != {
                "$ref": "#/components/schemas/Error"
            } or "WWW-Authenticate" not in answer.get("headers", {}):
                missing.append(f"{op['operationId']} {status}")
    assert missing == []


def test_the_protected_resource_metadata_is_documented_as_anonymous_when_the_functions_layer_serves_it() -> None:
    assert PRM_FUNCTION in PLATFORM_FUNCTIONS
    assert build(catalogue())["paths"][PRM_PATH]["get"]["security"] == []
    without = Catalogue(CAPABILITIES, tuple(n for n in PLATFORM_FUNCTIONS if n != PRM_FUNCTION))
    assert PRM_PATH not in build(without)["paths"]


def test_operation_ids_are_identifiers_and_component_names_unique_and_their_own_titles() -> None:
    doc = build(catalogue())
    ids = [op["operationId"] for _, op in _operations(doc)]
    assert [i for i in ids if not i.isidentifier()] == []
    assert len(set(ids)) == len(ids)
    assert operation_id("tool_report.export") == "tool_report_export"
    schemas = doc["components"]["schemas"]
    assert {"ChatSessionSummary", "NeubirdSessionSummary", "NeubirdReportRequest", "PerfReportRequest"} <= set(schemas)
    assert [n for n, s in schemas.items() if n != "Error" and s["title"] != n] == []
    refs = {r.split("'")[0] for r in str(doc).split("'$ref': '")[1:]}
    dangling = refs - {f"#/components/schemas/{n}" for n in schemas}
    assert dangling == set()
