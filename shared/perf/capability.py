"""Perf artifacts: SPX profiles, MySQL slow logs and HTTP timings turned into graded findings and reports."""

from __future__ import annotations

from pathlib import Path

from shared.perf.collect.orchestration import COLLECT
from shared.perf.routes import routes
from shared.perf.settings import PerfSettings
from shared.perf.store import PERF_RUNS_CONTAINER
from shared.perf.tools import toolset
from shared.tools.capability import Capability
from shared.tools.checks import Check
from shared.tools.deps import Deps


async def _index_read(deps: Deps) -> str:
    # A point read of an id that never exists: the container answers for this workspace-partitioned index.
    await (await deps.cosmos.container(PERF_RUNS_CONTAINER.name)).read("probe", "probe")
    return "the run index answers"


async def _artifacts_list(deps: Deps) -> str:
    # Artifacts, snapshots and reports live under workspace prefixes of the app's container: it can be listed.
    async for _ in deps.blobs.list("perf/"):
        break
    return "the artifact store can be listed"


CAPABILITY = Capability(
    name="perf",
    summary="Perf artifacts: SPX profiles, MySQL slow logs and TTFB timings into P0/P1/P2 findings and "
    "Markdown/JSON/SVG reports.",
    toolset=toolset,
    routes=routes,
    settings=PerfSettings,
    containers=(PERF_RUNS_CONTAINER,),
    orchestrations=(COLLECT,),
    checks=(
        Check("perf_runs", "The perf run index (Cosmos perf_runs) answers a read.", _index_read, readiness=True),
        Check("perf_artifacts", "The perf artifact store (Blob) can be listed.", _artifacts_list, readiness=True),
    ),
    readme=Path(__file__).with_name("README.md"),
)
