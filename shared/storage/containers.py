"""The catalogue of Cosmos containers every capability uses: name, partition key, indexing, purpose."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ContainerSpec:
    name: str
    partition_key: str
    purpose: str
    # Large free-text fields are never filtered on; leaving them out of the index saves RU on every write.
    excluded_paths: tuple[str, ...] = field(default=())
    # -1 turns Cosmos TTL on without a default, so items expire only where they set their own `ttl`.
    default_ttl: int | None = None

    @property
    def pk_field(self) -> str:
        return self.partition_key.lstrip("/")

    def indexing_policy(self) -> dict:
        return {
            "indexingMode": "consistent",
            "automatic": True,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": '/"_etag"/?'}] + [{"path": p} for p in self.excluded_paths],
        }


# Partition keys follow the principal: data is reachable only through its workspace (or user / chat session),
# so no query ever crosses principals and every read is single-partition.
CONTAINERS: tuple[ContainerSpec, ...] = (
    ContainerSpec("api_keys", "/id", "Workspace API keys: key id, SHA-256 of the secret, principal; point-read by key id."),
    ContainerSpec("probes", "/id", "Health and diagnostics round-trip documents (overwritten in place)."),
    ContainerSpec(
        "memory",
        "/workspace_id",
        "Debug memory: incidents, solutions, outcomes (append-only) and lookups, discriminated by `type`.",
        excluded_paths=("/steps/*", "/notes/?", "/summary/?"),
    ),
    ContainerSpec(
        "investigations",
        "/workspace_id",
        "Alert investigation records and their analyses; large tool outputs live in Blob.",
        excluded_paths=("/analysis/*", "/iterations/*"),
    ),
    ContainerSpec("perf_runs", "/workspace_id", "Perf snapshot and report index for runs.list / runs.get."),
    # Keyed by run id (= the Durable instance id, minted server-side) rather than by workspace: the
    # orchestration that claims a record knows only its own instance id and must not take a workspace
    # from its input, so "load by instance id" has to be a point read. The owner fields are checked in
    # code on every caller-facing read instead. Secrets documents (`secrets-<run id>`) live here too.
    ContainerSpec("runs", "/id", "Durable run records: owner, validated plan, state and output; encrypted run secrets with a short TTL.",
                  excluded_paths=("/plan/*", "/output/*", "/ciphertext/?"), default_ttl=-1),
    ContainerSpec("neubird", "/workspace_id", "NeuBird caller defaults (project, instance) and session bookkeeping."),
    ContainerSpec("tasks", "/user_id", "Tasks of the mobile app and the task tools."),
    ContainerSpec("chat", "/chat", "Chat messages, partitioned by chat session id as the chat spec requires.", excluded_paths=("/content/?",)),
)

BY_NAME: dict[str, ContainerSpec] = {c.name: c for c in CONTAINERS}


def spec_for(name: str) -> ContainerSpec:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown container {name!r}; add it to shared/storage/containers.py") from None
