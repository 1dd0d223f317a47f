"""The local stack itself: reuse of a running stack, and Cosmos data that survives a stop/start."""

from __future__ import annotations

import uuid
from pathlib import Path

from azure.cosmos import ContainerProxy

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


def _cli(*args: str) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "devhost.stack", *args], capture_output=True, text=True, timeout=180, check=True
    )
    return done.stdout


def _container(stack: Stack) -> ContainerProxy:
    from azure.cosmos import PartitionKey

    db = _client(f"https://127.0.0.1:{stack.cosmos_port}", COSMOS_EMULATOR_KEY).create_database_if_not_exists("two")
    return db.create_container_if_not_exists("things", partition_key=PartitionKey(path="/workspace_id"))


def test_two_stacks_on_their_own_ports_each_keep_their_own_data(tmp_path: Path) -> None:
    """The quick start's second stack (issue #28): started with a port base beside a first one, both stopped with
    their data directory alone (the ports are remembered there), and both stacks' data back after a restart."""
    first, second = tmp_path / "first", tmp_path / "second"
    bases = {first: free_port_block(4)}
    bases[second] = next(b for b in iter(lambda: free_port_block(4), None) if abs(b - bases[first]) > 4)
    ids = {first: uuid.uuid4().hex, second: uuid.uuid4().hex}
    try:
        for data in (first, second):
            _cli("start", "--data-dir", str(data), "--port-base", str(bases[data]))
            stack = Stack.of(data)  # no port base given: the remembered one
            assert stack.cosmos_port == bases[data] + 3
            _container(stack).upsert_item({"id": ids[data], "workspace_id": "w", "v": data.name})
        for data in (first, second):
            assert "emulators stopped" in _cli("stop", "--data-dir", str(data))
            assert "nothing was running" in _cli("stop", "--data-dir", str(data))
        # Each snapshot holds its own stack's document and not the other's.
        for data, other in ((first, second), (second, first)):
            saved = (data / "cosmos-snapshot.json").read_text()
            assert ids[data] in saved
            assert ids[other] not in saved
        for data in (first, second):
            _cli("start", "--data-dir", str(data))  # restarted on the remembered ports
            stack = Stack.of(data)
            got = _container(stack).read_item(ids[data], partition_key="w")
            assert got["v"] == data.name
    finally:
        for data in (first, second):
            Stack.of(data).stop()


def test_a_running_stack_refuses_another_port_base(tmp_path: Path) -> None:
    import pytest

    base = free_port_block(4)
    _cli("start", "--data-dir", str(tmp_path), "--port-base", str(base))
    try:
        with pytest.raises(SystemExit, match="stop it first"):
            Stack.of(tmp_path, base + 100)
        assert Stack.of(tmp_path, base).cosmos_port == base + 3
    finally:
        Stack.of(tmp_path).stop()
