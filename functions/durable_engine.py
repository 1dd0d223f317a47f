"""The Durable client binding as the runs service's engine: start, status, terminate by instance id.

Only `shared/runs` calls this, so nothing Durable hands back (management URLs carrying the system key)
can reach a caller: tools and routes see `RunStarted(run_id, status_url="/api/runs/<id>")`.
"""

from __future__ import annotations

import logging
from typing import Any

import azure.durable_functions as df

from functions import wiring
from shared.runs.service import InstanceStatus, RunService

log = logging.getLogger("firebreak.runs")


class DurableEngine:
    def __init__(self, client: df.DurableOrchestrationClient) -> None:
        self._client = client

    async def start_instance(self, orchestrator: str, instance_id: str, payload: dict[str, Any]) -> None:
        try:
            await self._client.start_new(orchestrator, instance_id, payload)
        except Exception as exc:
            # The SDK raises a bare Exception when the host has no such orchestrator ("... doesn't exist, is
            # disabled, or is not an orchestrator function"): typically a deployment whose manifest.json
            # predates the orchestration. Say so instead of answering INTERNAL_ERROR; anything else stays as is.
            if "is not an orchestrator function" not in str(exc):
                raise
            from shared.core.errors import NotConfigured

            log.warning("orchestrator %s could not be started: %s", orchestrator, exc)
            raise NotConfigured(
                f"The background work of this tool ({orchestrator}) is not deployed, or is disabled, in this app.",
                recovery_suggestions=[
                    "Operators: run `make manifest` and deploy again (shared/app/manifest.json is stale)."
                ],
            ) from None

    async def instance_status(self, instance_id: str) -> InstanceStatus | None:
        status = await self._client.get_status(instance_id, show_input=False)
        runtime = getattr(status, "runtime_status", None)
        if runtime is None:
            return None  # not (yet) known to the engine
        updated = status.last_updated_time
        return InstanceStatus(
            runtime_status=runtime.value if hasattr(runtime, "value") else str(runtime),
            custom_status=status.custom_status,
            output=status.output,
            updated_at=updated.isoformat() if updated is not None else None,
        )

    async def terminate_instance(self, instance_id: str, reason: str) -> None:
        try:
            await self._client.terminate(instance_id, reason)
        except Exception as exc:  # the SDK raises a bare Exception for 404 (never started); 410 (finished) is no error
            if "found" not in str(exc):
                raise


def run_service(client: df.DurableOrchestrationClient) -> RunService:
    """The runs service of this request, over its durable client binding."""
    return RunService.from_deps(wiring.deps(), DurableEngine(client))
