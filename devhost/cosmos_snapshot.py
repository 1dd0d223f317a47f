"""Keep the local Cosmos-API server's data across restarts: it holds everything in memory, so the stack
exports every database, container and document to JSON before stopping it and imports them after starting it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

_SYSTEM = ("_rid", "_self", "_etag", "_attachments", "_ts")


def _client(endpoint: str, key: str) -> Any:
    from azure.cosmos import CosmosClient

    warnings.filterwarnings("ignore", message="Unverified HTTPS request")
    # Large local datasets (benchmarks leave 100k+ documents) take a while to page through.
    return CosmosClient(endpoint, credential=key, connection_verify=False, connection_timeout=120, read_timeout=300)


def export(endpoint: str, key: str, path: Path) -> int:
    """Write the whole account to `path`; returns the number of documents."""
    client = _client(endpoint, key)
    snapshot: dict[str, Any] = {"databases": []}
    count = 0
    for db_props in client.list_databases():
        db = client.get_database_client(db_props["id"])
        containers = []
        for c_props in db.list_containers():
            container = db.get_container_client(c_props["id"])
            # The read feed lists documents without a query, which this server would answer by scanning.
            docs = [
                {k: v for k, v in d.items() if k not in _SYSTEM} for d in container.read_all_items(max_item_count=1000)
            ]
            count += len(docs)
            containers.append(
                {
                    "id": c_props["id"],
                    "partitionKey": c_props["partitionKey"]["paths"][0],
                    "indexingPolicy": c_props.get("indexingPolicy"),
                    "documents": docs,
                }
            )
        snapshot["databases"].append({"id": db_props["id"], "containers": containers})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(snapshot))
    tmp.replace(path)
    return count


def restore(endpoint: str, key: str, path: Path) -> int:
    """Load a snapshot written by `export`; returns the number of documents."""
    from azure.cosmos import PartitionKey

    if not path.exists():
        return 0
    client = _client(endpoint, key)
    count = 0
    for db_snap in json.loads(path.read_text())["databases"]:
        db = client.create_database_if_not_exists(db_snap["id"])
        for c_snap in db_snap["containers"]:
            container = db.create_container_if_not_exists(
                c_snap["id"], partition_key=PartitionKey(path=c_snap["partitionKey"])
            )
            for doc in c_snap["documents"]:
                container.upsert_item(doc)
                count += 1
    return count
