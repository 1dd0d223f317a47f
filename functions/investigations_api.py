"""`/api/investigations`: start alert investigations from an alert payload, read, list and cancel them.

Thin adapters over shared/investigations/service.py (the MCP tools use the same service). Answers name
the app's own status route, never Durable's management URLs; reads are scoped to the caller's workspace.
"""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions.http import Call, endpoint

bp = df.Blueprint()


def _service(call: Call):  # type: ignore[no-untyped-def]
    from shared.investigations.service import InvestigationService

    return InvestigationService(call.deps, call.runs())


def _int_param(call: Call, name: str, default: int, low: int, high: int) -> int:
    from shared.core.errors import ValidationFailed

    raw = call.req.params.get(name)
    if raw is None or raw == "":
        return default
    # ASCII digits only: str.isdigit() is also true for "²" (int() then raises) and "٣" (int() reads 3).
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 6) or not low <= int(raw) <= high:
        raise ValidationFailed.on_field(
            name,
            f"not a whole number in {low}..{high}",
            f"{name} must be a whole number from {low} to {high}",
        )
    return int(raw)


def _alert_body(call: Call) -> dict[str, object]:
    """The body as an alert payload; a JSON value that is not an object says which objects are accepted."""
    from shared.core.errors import InvalidRequest
    from shared.investigations.alerts import ACCEPTED_FORMATS

    try:
        return call.json_body()
    except InvalidRequest as exc:
        problems = [e.get("problem") for e in exc.details.get("errors", []) if isinstance(e, dict)]
        if problems != ["expected an object"]:
            raise
        raise InvalidRequest(
            "The alert payload must be a JSON object", details=exc.details, recovery_suggestions=[ACCEPTED_FORMATS]
        ) from None


@bp.function_name("investigations_start")
@bp.route(route="investigations", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def investigations_start(call: Call) -> func.HttpResponse:
    """Start investigations from an alert payload: 202 {format, started: [{investigation_id, status_url}], ...}.

    The body is a generic alert, an Alertmanager webhook payload (one investigation per firing alert) or
    an Azure Monitor common-alert-schema payload. Only resolved alerts: 200 with `started` empty. A
    malformed or unknown payload is 400 VALIDATION_ERROR naming the field, and nothing starts.
    """
    result = await _service(call).start(call.caller, _alert_body(call), call.correlation_id)
    body = result.model_dump(mode="json")
    if not result.started:
        return call.json(body)
    return call.json(body, status=202, headers={"Location": result.started[0].status_url, "Retry-After": "5"})


@bp.function_name("investigations_list")
@bp.route(route="investigations", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def investigations_list(call: Call) -> func.HttpResponse:
    """Your workspace's investigations, newest first: ?limit=1..100 (20), ?continuation=<from the last page>."""
    limit = _int_param(call, "limit", 20, 1, 100)
    page = await _service(call).list(call.caller, limit, call.req.params.get("continuation") or None)
    return call.json(page.model_dump(mode="json"), headers={"Cache-Control": "no-store"})


@bp.function_name("investigations_get")
@bp.route(route="investigations/{investigation_id}", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def investigations_get(call: Call) -> func.HttpResponse:
    """One investigation: status, phase, live progress, iterations (calls with reasons and previews), the report
    when completed. Another workspace's id is 404 NOT_FOUND, like an unknown one."""
    view = await _service(call).get(call.caller, call.route("investigation_id"))
    return call.json(view.model_dump(mode="json"), headers={"Cache-Control": "no-store"})


@bp.function_name("investigations_cancel")
@bp.route(route="investigations/{investigation_id}/cancel", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def investigations_cancel(call: Call) -> func.HttpResponse:
    """Cancel a pending or running investigation: 200 with its state (cancelled). Optional body {"reason"}.
    A completed or failed one is 409 CONFLICT."""
    from pydantic import ValidationError

    from shared.core.errors import ValidationFailed, validation_failed_from_pydantic
    from shared.investigations.tools import CancelRequest

    body = call.json_body()
    route_id = call.route("investigation_id")
    if "investigation_id" in body and body["investigation_id"] != route_id:
        # The path names the investigation; a body naming another one is a mistake, not silently overruled.
        raise ValidationFailed.on_field(
            "investigation_id",
            "differs from the path",
            "investigation_id in the body differs from the one in the path",
            suggestions=['Send only {"reason"} in the body; the path names the investigation.'],
        )
    try:
        args = CancelRequest.model_validate({**body, "investigation_id": route_id})
    except ValidationError as exc:
        raise validation_failed_from_pydantic(exc) from None
    view = await _service(call).cancel(call.caller, args.investigation_id, args.reason)
    return call.json(view.model_dump(mode="json"))
