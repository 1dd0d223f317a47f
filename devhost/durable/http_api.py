"""The Durable Functions HTTP management API (`/runtime/webhooks/durabletask/...`) and the client binding.

`DurableOrchestrationClient` reaches the extension through `rpcBaseUrl`; callers poll the URLs of
`create_check_status_response`. Both land here, with the status codes and JSON of the extension's
HttpApiHandler: 202 + Location + Retry-After while running, 200 when finished (500 for a failed
instance only with `returnInternalServerErrorOnFailure=true`), 404 unknown, 410 for events or
terminate on a finished instance.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from aiohttp import web

from devhost.durable import history as h
from devhost.durable.engine import DurableEngine, InstanceGone, UnknownFunction
from devhost.durable.instances import Instance
from devhost.keys import HostKeys

PREFIX = "/runtime/webhooks/durabletask"
_RUNNING = {"Pending", "Running", "ContinuedAsNew"}
_HIDDEN_EVENTS = {h.ORCHESTRATOR_STARTED, h.ORCHESTRATOR_COMPLETED}
_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _true(value: str | None) -> bool:
    return (value or "").lower() == "true"


def wire_payload(body: str) -> str | None:
    """The JSON text of a start input or event payload as the worker should see it.

    `DurableOrchestrationClient` posts `json=<already serialised JSON>`, so its payloads arrive as a
    JSON string holding JSON; the extension unwraps that layer. A caller posting plain JSON (curl)
    sends the value itself.
    """
    if not body.strip():
        return None
    value = json.loads(body)
    if isinstance(value, str):
        try:
            json.loads(value)
            return value
        except ValueError:
            pass
    return body


def status_payload(
    inst: Instance, *, show_history: bool = False, show_history_output: bool = False, show_input: bool = True
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "name": inst.name,
        "instanceId": inst.instance_id,
        "runtimeStatus": inst.status,
        "input": json.loads(inst.input) if show_input and inst.input else None,
        "customStatus": inst.custom_status,
        "output": inst.output,
        "createdTime": inst.created[:19] + "Z",
        "lastUpdatedTime": inst.updated[:19] + "Z",
    }
    if show_history:
        payload["historyEvents"] = [
            h.public(e, with_output=show_history_output) for e in inst.history if e["EventType"] not in _HIDDEN_EVENTS
        ]
    return payload


class DurableHttpApi:
    """Routes on the public prefix (the system key or the master key required, always) and on a private
    RPC prefix with an unguessable path, which the client binding hands to `DurableOrchestrationClient`."""

    def __init__(self, engine: DurableEngine, base_url: str, keys: HostKeys) -> None:
        self.engine = engine
        self.base_url = base_url.rstrip("/")
        self.keys = keys
        # Like the extension's `durabletask_extension` system key, and unlike the HTTP functions (open
        # under `func start` when no key is set): the management API can read every instance's input
        # and terminate or purge any instance, so it is never open. Random per start unless
        # DEVHOST_SYSTEM_KEY pins it; the client binding and management URLs carry it.
        self.system_key = keys.system or secrets.token_urlsafe(24)
        self.rpc_prefix = f"/durabletask-rpc/{secrets.token_urlsafe(16)}"

    # ---- what functions receive --------------------------------------------------------------

    def management_urls(self, instance_id: str, origin: str | None = None) -> dict[str, str]:
        base = (origin or self.base_url).rstrip("/") + PREFIX
        query = f"taskHub={quote(self.engine.hub)}&connection=Storage&code={quote(self.system_key, safe='')}"
        i = quote(instance_id, safe="")
        return {
            "id": instance_id,
            "purgeHistoryDeleteUri": f"{base}/instances/{i}?{query}",
            "sendEventPostUri": f"{base}/instances/{i}/raiseEvent/{{eventName}}?{query}",
            "statusQueryGetUri": f"{base}/instances/{i}?{query}",
            "terminatePostUri": f"{base}/instances/{i}/terminate?reason={{text}}&{query}",
            "rewindPostUri": f"{base}/instances/{i}/rewind?reason={{text}}&{query}",
            "restartPostUri": f"{base}/instances/{i}/restart?{query}",
            "suspendPostUri": f"{base}/instances/{i}/suspend?reason={{text}}&{query}",
            "resumePostUri": f"{base}/instances/{i}/resume?reason={{text}}&{query}",
        }

    def client_binding(self) -> str:
        """The JSON the `durableClient` binding carries (what the extension gives the worker)."""
        base = self.base_url + PREFIX
        query = f"taskHub={quote(self.engine.hub)}&connection=Storage&code={quote(self.system_key, safe='')}"
        return json.dumps(
            {
                "taskHubName": self.engine.hub,
                "creationUrls": {
                    "createNewInstancePostUri": f"{base}/orchestrators/{{functionName}}[/{{instanceId}}]?{query}",
                    "createAndWaitOnNewInstancePostUri": (
                        f"{base}/orchestrators/{{functionName}}[/{{instanceId}}]"
                        f"?timeout={{timeoutInSeconds}}&pollingInterval={{intervalInSeconds}}&{query}"
                    ),
                },
                "managementUrls": self.management_urls("INSTANCEID"),
                "rpcBaseUrl": f"{self.base_url}{self.rpc_prefix}/",
                "httpBaseUrl": f"{base}/",
            }
        )

    async def binding_provider(self, binding: dict[str, Any], info: Any) -> str:
        return self.client_binding()

    # ---- routes --------------------------------------------------------------------------------

    def add_routes(self, app: web.Application) -> None:
        for prefix, guarded in ((PREFIX, True), (self.rpc_prefix, False)):
            table = [
                ("POST", "/orchestrators/{function}", self.start),
                ("POST", "/orchestrators/{function}/{instance}", self.start),
                ("GET", "/instances", self.list_instances),
                ("GET", "/instances/", self.list_instances),
                ("GET", "/instances/{instance}", self.status),
                ("POST", "/instances/{instance}/raiseEvent/{event}", self.raise_event),
                ("POST", "/instances/{instance}/terminate", self.terminate),
                ("DELETE", "/instances/{instance}", self.purge),
            ]
            for method, path, handler in table:
                app.router.add_route(method, prefix + path, self._guard(handler) if guarded else handler)

    def _guard(self, handler: _Handler) -> _Handler:
        async def guarded(request: web.Request) -> web.StreamResponse:
            presented = request.query.get("code") or request.headers.get("x-functions-key")
            accepted = [k for k in (self.system_key, self.keys.master) if k]
            if not presented or not any(hmac.compare_digest(presented.encode(), k.encode()) for k in accepted):
                return web.Response(status=401)  # bare 401, as the extension answers a missing or wrong key
            return await handler(request)

        return guarded

    async def start(self, request: web.Request) -> web.StreamResponse:
        try:
            payload = wire_payload((await request.read()).decode("utf-8", "replace"))
        except ValueError:
            return web.json_response({"Message": "Invalid JSON content"}, status=400)
        name = request.match_info["function"]
        try:
            inst = await self.engine.start_new(name, request.match_info.get("instance"), payload)
        except UnknownFunction:
            return web.json_response(
                {
                    "ExceptionMessage": (
                        f"The function '{name}' doesn't exist, is disabled, or is not an orchestrator function."
                    )
                },
                status=400,
            )
        links = self.management_urls(inst.instance_id, f"{request.scheme}://{request.host}")
        return web.json_response(
            links, status=202, headers={"Location": links["statusQueryGetUri"], "Retry-After": "10"}
        )

    async def status(self, request: web.Request) -> web.StreamResponse:
        inst = await self.engine.get(request.match_info["instance"])
        if inst is None:
            return web.Response(status=404)
        q = request.query
        payload = status_payload(
            inst,
            show_history=_true(q.get("showHistory")),
            show_history_output=_true(q.get("showHistoryOutput")),
            show_input=q.get("showInput", "true").lower() != "false",
        )
        if inst.status in _RUNNING:
            return web.json_response(payload, status=202, headers={"Location": str(request.url), "Retry-After": "5"})
        failed = inst.status == "Failed" and _true(q.get("returnInternalServerErrorOnFailure"))
        return web.json_response(payload, status=500 if failed else 200)

    async def list_instances(self, request: web.Request) -> web.StreamResponse:
        from dateutil.parser import isoparse

        q = request.query
        statuses = {s for s in q.get("runtimeStatus", "").split(",") if s}
        start = isoparse(q["createdTimeFrom"]) if q.get("createdTimeFrom") else None
        end = isoparse(q["createdTimeTo"]) if q.get("createdTimeTo") else None
        prefix = q.get("instanceIdPrefix", "")
        found = []
        for inst in await self.engine.query():
            created = isoparse(inst.created)
            if statuses and inst.status not in statuses:
                continue
            if (start and created < start) or (end and created > end) or not inst.instance_id.startswith(prefix):
                continue
            found.append(status_payload(inst, show_input=q.get("showInput", "false").lower() == "true"))
        return web.json_response(found, headers={"x-ms-continuation-token": ""})

    async def raise_event(self, request: web.Request) -> web.StreamResponse:
        if request.content_type != "application/json":
            return web.json_response({"Message": "Only application/json request content is supported"}, status=400)
        try:
            payload = wire_payload((await request.read()).decode("utf-8", "replace"))
        except ValueError:
            return web.json_response({"Message": "Invalid JSON content"}, status=400)
        return await _accepted(
            self.engine.raise_event(request.match_info["instance"], request.match_info["event"], payload)
        )

    async def terminate(self, request: web.Request) -> web.StreamResponse:
        return await _accepted(self.engine.terminate(request.match_info["instance"], request.query.get("reason")))

    async def purge(self, request: web.Request) -> web.StreamResponse:
        deleted = await self.engine.purge(request.match_info["instance"])
        if not deleted:
            return web.Response(status=404)
        return web.json_response({"instancesDeleted": 1})


async def _accepted(operation: Any) -> web.Response:
    """202 once the operation is queued; 404 for an unknown instance, 410 for a finished one."""
    try:
        await operation
    except KeyError:
        return web.Response(status=404)
    except InstanceGone:
        return web.Response(status=410)
    return web.Response(status=202)
