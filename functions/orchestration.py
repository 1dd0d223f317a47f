"""Lets tools start Durable orchestrations: wraps the request's durable client binding for ToolContext."""

from __future__ import annotations

from typing import Any

import azure.durable_functions as df


class DurableStarter:
    """`await start(name, payload)` -> {"instance_id", "status_query_url"} (Durable's check-status URL)."""

    def __init__(self, client: df.DurableOrchestrationClient) -> None:
        self._client = client

    async def start(self, name: str, payload: dict[str, Any]) -> dict[str, str]:
        instance_id = await self._client.start_new(name, None, payload)
        urls = self._client.create_http_management_payload(instance_id)
        return {"instance_id": instance_id, "status_query_url": urls["statusQueryGetUri"]}
