"""The local stack itself: reuse of a running stack, and Cosmos data that survives a stop/start."""

from __future__ import annotations

import uuid
from pathlib import Path

from devhost.cosmos_snapshot import _client
from devhost.processes import free_port_block
from devhost.stack import COSMOS_EMULATOR_KEY, Stack


def test_cosmos_data_survives_stop_and_start(tmp_path: Path) -> None:
    stack = Stack.at(tmp_path, free_port_block(4), persist_cosmos=True)
    endpoint = f"https://127.0.0.1:{stack.cosmos_port}"
    doc_id = uuid.uuid4().hex
    try:
        stack.start()
        from azure.cosmos import PartitionKey

        db = _client(endpoint, COSMOS_EMULATOR_KEY).create_database_if_not_exists("persist")
        container = db.create_container_if_not_exists("things", partition_key=PartitionKey(path="/workspace_id"))
        container.upsert_item({"id": doc_id, "workspace_id": "w", "v": 42})
        stack.stop()
        assert stack.status() == {"azurite": False, "cosmos": False}
        assert stack.cosmos_snapshot.exists()
        stack.start()
        again = _client(endpoint, COSMOS_EMULATOR_KEY).get_database_client("persist").get_container_client("things")
        assert again.read_item(doc_id, partition_key="w")["v"] == 42
        pid_before = stack._pid("azurite")
        stack.start()  # a second start reuses the running emulators
        assert stack._pid("azurite") == pid_before
    finally:
        stack.stop()
