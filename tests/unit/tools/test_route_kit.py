"""What a declared route may be besides JSON in and out: the runs flag, a raw body with its own limit, a file
answer; how each is declared, recorded in the manifest, read at the edge and documented."""

from __future__ import annotations

import json

import azure.functions as func
import pytest
from pydantic import Field

from functions.http import PayloadTooLarge, error_response
from functions.routes_api import file_response, route_body
from shared.app.manifest import render
from shared.app.openapi import build
from shared.core.errors import InvalidRequest
from shared.core.settings import Settings
from shared.tools.capability import Capability, Catalogue
from shared.tools.registry import ToolOutput
from shared.tools.routes import (
    HOST_BODY_LIMIT,
    Answer,
    FileAnswer,
    RawBody,
    Route,
    RouteBody,
    RouteCall,
    RouteParams,
    RouteSet,
)


class Out(ToolOutput):
    ok: bool = True


class NameParams(RouteParams):
    name: str = Field(description="A name.")


class Note(RouteBody):
    text: str


def _upload_limit(settings: Settings) -> int:
    return settings.max_request_bytes // 4


def _demo() -> RouteSet:
    routes = RouteSet("demo")

    @routes.route(
        "POST",
        "demo/files",
        name="demo_upload",
        status=201,
        response=Out,
        accepts=("application/octet-stream", "multipart/form-data"),
        body_limit=_upload_limit,
    )
    async def upload(call: RouteCall, *, params: NameParams, body: RawBody) -> Answer:
        """Upload."""
        return Answer(Out(), 201)

    @routes.route("GET", "demo/files/{name}", name="demo_download", serves=("text/markdown", "image/svg+xml"))
    async def download(call: RouteCall, *, params: NameParams) -> FileAnswer:
        """Download."""
        return FileAnswer(b"# hi", "text/markdown")

    @routes.route("POST", "demo/runs", name="demo_start", status=202, other_statuses=(200,), response=Out, runs=True)
    async def start(call: RouteCall, *, body: Note) -> Answer:
        """Start."""
        return Answer(Out(), 202)

    @routes.route("GET", "demo/plain", name="demo_plain", body_limit=lambda s: HOST_BODY_LIMIT * 2)
    async def plain(call: RouteCall) -> Out:
        """Plain."""
        return Out()

    return routes


def _route(name: str) -> Route:
    return next(r for r in _demo().routes if r.name == name)


def _request(body: bytes, headers: dict[str, str], method: str = "POST") -> func.HttpRequest:
    return func.HttpRequest(method=method, url="http://127.0.0.1/api/demo", headers=headers, body=body)


SETTINGS = Settings.from_env({"FIREBREAK_MAX_REQUEST_BYTES": "4000"})


# ---- declaring -------------------------------------------------------------------------------------------------


def test_a_raw_body_needs_the_media_types_it_accepts() -> None:
    routes = RouteSet("demo")

    async def handler(call: RouteCall, *, body: RawBody) -> Out:
        """Demo."""
        return Out()

    with pytest.raises(TypeError, match="accepts"):
        routes.route("POST", "demo", name="demo_raw")(handler)


def test_accepts_without_a_raw_body_is_refused() -> None:
    routes = RouteSet("demo")

    async def handler(call: RouteCall, *, body: Note) -> Out:
        """Demo."""
        return Out()

    with pytest.raises(TypeError, match="RawBody"):
        routes.route("POST", "demo", name="demo_json", accepts=("text/plain",))(handler)


def test_a_file_answer_needs_the_media_types_it_serves() -> None:
    routes = RouteSet("demo")

    async def handler(call: RouteCall) -> FileAnswer:
        """Demo."""
        return FileAnswer(b"", "text/plain")

    with pytest.raises(TypeError, match="serves"):
        routes.route("GET", "demo", name="demo_file")(handler)


def test_serves_on_a_json_route_is_refused() -> None:
    routes = RouteSet("demo")

    async def handler(call: RouteCall) -> Out:
        """Demo."""
        return Out()

    with pytest.raises(TypeError, match="FileAnswer"):
        routes.route("GET", "demo", name="demo_json", serves=("text/plain",))(handler)


@pytest.mark.parametrize("media_type", ["text", "Text/Plain", "text/plain; charset=utf-8", ""])
def test_a_media_type_must_be_type_and_subtype(media_type: str) -> None:
    routes = RouteSet("demo")

    async def handler(call: RouteCall, *, body: RawBody) -> Out:
        """Demo."""
        return Out()

    with pytest.raises(ValueError, match="media type"):
        routes.route("POST", "demo", name="demo_raw", accepts=(media_type,))(handler)


def test_a_get_route_takes_no_raw_body() -> None:
    routes = RouteSet("demo")

    async def handler(call: RouteCall, *, body: RawBody) -> Out:
        """Demo."""
        return Out()

    with pytest.raises(ValueError, match="takes no body"):
        routes.route("GET", "demo", name="demo_raw", accepts=("text/plain",))(handler)


def test_the_body_limit_comes_from_the_settings_and_stays_under_the_hosts() -> None:
    assert _route("demo_upload").max_body_bytes(SETTINGS) == 1000
    assert _route("demo_start").max_body_bytes(SETTINGS) == 4000  # FIREBREAK_MAX_REQUEST_BYTES
    assert _route("demo_plain").max_body_bytes(SETTINGS) == HOST_BODY_LIMIT


def test_the_manifest_records_which_routes_bind_the_durable_client() -> None:
    manifest = json.loads(render(Catalogue([Capability(name="demo", summary="Demo.", routes=_demo())])))
    runs = {r["name"]: r["runs"] for r in manifest["routes"]}
    assert runs == {"demo_upload": False, "demo_download": False, "demo_start": True, "demo_plain": False}


def test_runs_without_the_flag_is_a_clear_error() -> None:
    call = RouteCall(principal=None, deps=None, correlation_id="c", params=None, body=None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="runs=True"):
        call.runs()


# ---- at the edge -------------------------------------------------------------------------------------------------


def test_a_raw_body_arrives_as_sent_with_its_content_type() -> None:
    data = b"\x00\xff not json"
    body = route_body(_request(data, {"content-type": "application/octet-stream"}), _route("demo_upload"), SETTINGS)
    assert body == RawBody(data, "application/octet-stream")


def test_a_raw_body_over_its_limit_is_413_in_the_envelope() -> None:
    route = _route("demo_upload")
    with pytest.raises(PayloadTooLarge) as caught:
        route_body(_request(b"x" * 1001, {"content-type": "application/octet-stream"}), route, SETTINGS)
    response = error_response(caught.value, "c-413")
    assert response.status_code == 413
    error = json.loads(response.get_body())["error"]
    assert error["code"] == "INVALID_REQUEST"
    assert error["details"] == {"limit_bytes": 1000}
    assert error["correlation_id"] == "c-413"


def test_a_declared_length_over_the_routes_limit_is_refused_before_reading() -> None:
    with pytest.raises(PayloadTooLarge):
        route_body(_request(b"x", {"content-length": "1001"}), _route("demo_upload"), SETTINGS)


def test_a_json_body_that_is_not_an_object_says_what_to_send() -> None:
    with pytest.raises(InvalidRequest) as caught:
        route_body(_request(b"[1]", {"content-type": "application/json"}), _route("demo_start"), SETTINGS)
    assert "must be a JSON object" in caught.value.message
    assert caught.value.recovery_suggestions
    assert caught.value.details["errors"] == [{"field": "(body)", "problem": "expected an object"}]


def test_a_route_without_a_body_refuses_one() -> None:
    with pytest.raises(InvalidRequest, match="takes no body"):
        route_body(_request(b"{}", {"content-type": "application/json"}, "GET"), _route("demo_plain"), SETTINGS)


def test_a_file_answer_carries_its_media_type_and_headers() -> None:
    answer = FileAnswer(
        b"<svg/>",
        "image/svg+xml",
        {"Content-Disposition": 'inline; filename="r.svg"', "Content-Security-Policy": "default-src 'none'"},
    )
    response = file_response(answer, "c-file")
    assert response.get_body() == b"<svg/>"
    assert response.mimetype == "image/svg+xml"
    assert response.headers["Content-Disposition"] == 'inline; filename="r.svg"'
    assert response.headers["Content-Security-Policy"] == "default-src 'none'"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["x-correlation-id"] == "c-file"


# ---- documented --------------------------------------------------------------------------------------------------


def _paths() -> dict:
    return build(Catalogue([Capability(name="demo", summary="Demo.", routes=_demo())]))["paths"]


def test_a_raw_body_is_documented_by_its_media_types_not_as_json() -> None:
    op = _paths()["/api/demo/files"]["post"]
    content = op["requestBody"]["content"]
    assert set(content) == {"application/octet-stream", "multipart/form-data"}
    # Bytes as a binary string: generated clients take them as a file argument.
    assert content["application/octet-stream"]["schema"]["format"] == "binary"
    assert content["multipart/form-data"]["schema"]["type"] == "object"
    assert op["requestBody"]["required"] is True
    assert "415" not in op["responses"]
    assert [p["name"] for p in op["parameters"]] == ["name"]


def test_a_file_answer_is_documented_as_bytes_of_its_media_types() -> None:
    op = _paths()["/api/demo/files/{name}"]["get"]
    assert op["responses"]["200"]["content"] == {"text/markdown": {}, "image/svg+xml": {}}


def test_other_success_statuses_are_documented_with_the_same_model() -> None:
    responses = _paths()["/api/demo/runs"]["post"]["responses"]
    assert responses["202"]["content"] == responses["200"]["content"]
