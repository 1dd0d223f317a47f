"""A data directory remembers its stack's ports; the host takes that stack's own settings (issue #28)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from devhost import __main__ as devhost_main
from devhost.stack import Stack, main, remembered_port_base


def test_the_port_base_is_remembered_and_read_back(tmp_path: Path) -> None:
    assert remembered_port_base(tmp_path) is None
    Stack.at(tmp_path, 23000).remember_ports()
    assert remembered_port_base(tmp_path) == 23000
    assert Stack.of(tmp_path).cosmos_port == 23003
    Stack.at(tmp_path).remember_ports()  # the default ports are remembered as null
    assert json.loads((tmp_path / "stack.json").read_text()) == {"port_base": None}
    assert Stack.of(tmp_path).cosmos_port == 8081


@pytest.mark.parametrize("content", ["", "{", '{"port_base": "1; rm -rf /"}', '{"port_base": 80}', "[1]"])
def test_a_damaged_ports_file_means_the_default_ports(tmp_path: Path, content: str) -> None:
    (tmp_path / "stack.json").write_text(content)
    assert remembered_port_base(tmp_path) is None


def test_stopping_nothing_says_so_and_writes_no_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Stack.at(tmp_path, 23100).remember_ports()
    assert main(["stop", "--data-dir", str(tmp_path)]) == 0
    assert "nothing was running" in capsys.readouterr().out
    assert not (tmp_path / "cosmos-snapshot.json").exists()


def test_the_host_takes_the_data_directorys_stack_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in devhost_main.STACK_OWNED:
        # setenv first records the key's state, so what load_stack_settings writes is undone after the test.
        monkeypatch.setenv(key, "")
        monkeypatch.delenv(key)
    Stack.at(tmp_path, 23200).remember_ports()
    assert devhost_main.load_stack_settings(tmp_path) == len(devhost_main.STACK_OWNED)
    assert os.environ["COSMOS_ENDPOINT"] == "https://127.0.0.1:23203"
    assert "127.0.0.1:23200" in os.environ["AzureWebJobsStorage"]  # noqa: SIM112 (the host's own setting name)
    # What the process environment already says wins (as with local.settings.json).
    monkeypatch.setenv("COSMOS_ENDPOINT", "https://example.documents.azure.com:443/")
    devhost_main.load_stack_settings(tmp_path)
    assert os.environ["COSMOS_ENDPOINT"] == "https://example.documents.azure.com:443/"


def test_the_banner_gives_the_exact_stop_command(tmp_path: Path) -> None:
    text = devhost_main.local_usage("http://127.0.0.1:7072", "k", tmp_path / "keys.json", "make stop DATA=.local2")
    assert "'make stop DATA=.local2'" in text


def test_the_banner_no_longer_asks_for_a_function_key_on_app_routes(tmp_path: Path) -> None:
    # App routes are anonymous at the host (issue #29): pasting a function key is no longer part of connecting.
    text = devhost_main.local_usage("http://127.0.0.1:7072", "secret-fn-key", tmp_path / "keys.json")
    assert "secret-fn-key" not in text
    assert "x-functions-key" not in text
    assert "/runtime/webhooks/durabletask/" in text
