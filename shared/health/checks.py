"""The platform's own checks: Cosmos and Blob round trips, LLM reachability; and which checks gate readiness."""

from __future__ import annotations

import uuid

from shared.storage.containers import ContainerSpec
from shared.tools.checks import Check, http_reachable
from shared.tools.deps import Deps

# One probe document/blob per process, overwritten each time, so health checks never grow storage.
PROBE_ID = f"probe-{uuid.uuid4().hex[:12]}"
PROBES_CONTAINER = ContainerSpec("probes", "/id", "Health and diagnostics round-trip documents (overwritten in place).")


def readiness_checks(deps: Deps) -> list[Check]:
    """The checks that gate readiness (the stores every capability needs, and capabilities' own parts of them)."""
    return [c for c in deps.checks if c.readiness]


async def cosmos_round_trip(deps: Deps) -> str:
    container = await deps.cosmos.container(PROBES_CONTAINER.name)
    nonce = uuid.uuid4().hex
    await container.upsert({"id": PROBE_ID, "nonce": nonce, "at": deps.clock().isoformat()})
    doc = await container.read(PROBE_ID, PROBE_ID)
    if not doc or doc.get("nonce") != nonce:
        raise RuntimeError("cosmos probe read back a different document")
    return "wrote a probe and read it back"


async def blob_round_trip(deps: Deps) -> str:
    nonce = uuid.uuid4().hex
    name = f"_probes/{PROBE_ID}.txt"
    await deps.blobs.put(name, nonce, content_type="text/plain")
    if await deps.blobs.get(name) != nonce.encode():
        raise RuntimeError("blob probe read back different bytes")
    return "wrote a probe and read it back"


async def llm_reachable(deps: Deps) -> str:
    """The endpoint of the process's LLM client (`deps.llm()`, the one investigations and chat use) answers."""
    client = deps.llm()
    if client is None:
        raise RuntimeError("no LLM is configured (FIREBREAK_LLM_ENDPOINT and FIREBREAK_LLM_MODEL)")
    return await http_reachable(client.config.endpoint)


COSMOS = Check("cosmos", "Cosmos DB: write a probe document and read it back.", cosmos_round_trip, readiness=True)
BLOB = Check("blob", "Blob storage: write a probe blob and read it back.", blob_round_trip, readiness=True)
LLM = Check(
    "llm", "The configured LLM endpoint answers HTTP (any status).", llm_reachable, applies=lambda s: s.llm_configured
)
