"""`make run` starts a host that enforces a generated function key (and the Durable system key), keeps
/api/health anonymous and prints how to use the key; a host whose host.json names an unset app setting
does not start, naming the setting, as the Functions host fails to start."""

from __future__ import annotations

import json
import shlex
import subprocess
import time
import uuid
from pathlib import Path

import httpx

from devhost.processes import HostProcess
from devhost.stack import ROOT


def make_run_host_args(data_dir: Path) -> list[str]:
    """The arguments `make run` gives `python -m devhost` (read from `make -n`, so the test follows the Makefile)."""
    out = subprocess.run(
        ["make", "-n", "run", f"DATA={data_dir}", "PORT=7999"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    lines = [line for line in out.splitlines() if " -m devhost " in f"{line} "]
    assert len(lines) == 1, out
    argv = shlex.split(lines[0])
    args = argv[argv.index("devhost") + 1 :]
    i = args.index("--port")
    return args[:i] + args[i + 2 :]  # the test host takes a free port instead of 7071


def test_make_run_keeps_a_generated_system_key_and_leaves_app_routes_to_the_app(
    app_env: dict[str, str], tmp_path: Path
) -> None:
    data_dir = tmp_path / "local"
    args = make_run_host_args(data_dir)
    assert "--keys-file" in args
    host = HostProcess(
        {**app_env, "FIREBREAK_TASK_HUB": f"run{uuid.uuid4().hex[:8]}"}, tmp_path / "host.log", extra_args=args
    )
    try:
        host.wait_ready()  # /api/health answers without a key
        keys = json.loads((data_dir / "keys.json").read_text())
        function_key, system_key = keys["DEVHOST_FUNCTION_KEY"], keys["DEVHOST_SYSTEM_KEY"]
        assert len(function_key) >= 32
        assert function_key != system_key
        assert (data_dir / "keys.json").stat().st_mode & 0o077 == 0  # readable by the owner only
        base = host.base_url
        assert httpx.get(f"{base}/api/health", timeout=30).status_code == 200
        # App routes are anonymous at the host (the app authenticates; here dev mode): the function key is
        # neither needed nor checked. The generated keys guard the host's own endpoints.
        assert httpx.get(f"{base}/api/tools", timeout=30).status_code == 200
        assert httpx.get(f"{base}/api/tools", headers={"x-functions-key": "wrong"}, timeout=30).status_code == 200
        mgmt = f"{base}/runtime/webhooks/durabletask/instances"
        assert httpx.get(mgmt, timeout=30).status_code == 401
        assert (
            httpx.get(mgmt, headers={"x-functions-key": function_key}, timeout=30).status_code == 401
        )  # a function key is not the system key
        assert httpx.get(mgmt, headers={"x-functions-key": system_key}, timeout=30).status_code == 200
        banner = host.log()
        # App routes are anonymous at the host: the banner asks for no function key, and prints no key at all
        # (only the keys file's path, for the Durable management API's system key).
        assert function_key not in banner
        assert system_key not in banner
        assert "/runtime/webhooks/durabletask/" in banner
    finally:
        host.stop()


def test_keys_survive_a_restart_and_an_explicit_setting_wins(tmp_path: Path) -> None:
    from devhost.keys import apply_local_keys, ensure_local_keys

    path = tmp_path / "keys.json"
    first = ensure_local_keys(path)
    assert ensure_local_keys(path) == first
    env = {"DEVHOST_FUNCTION_KEY": "", "DEVHOST_SYSTEM_KEY": "mine"}  # "" as copied from local.settings.example.json
    assert apply_local_keys(path, env) == {
        "DEVHOST_FUNCTION_KEY": first["DEVHOST_FUNCTION_KEY"],
        "DEVHOST_SYSTEM_KEY": "mine",
    }


def test_host_json_setting_that_is_not_set_stops_the_start(app_env: dict[str, str], tmp_path: Path) -> None:
    env = {k: v for k, v in app_env.items() if k != "FIREBREAK_TASK_HUB"}
    host = HostProcess(env, tmp_path / "host.log")
    try:
        deadline = time.monotonic() + 60
        while host.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)  # not a timing assertion: the host must exit, the deadline only bounds a hang
        log = host.log()
        assert host.proc.returncode not in (None, 0), f"host started without FIREBREAK_TASK_HUB:\n{log[-2000:]}"
        assert "'%FIREBREAK_TASK_HUB%' does not resolve to a value" in log
        assert "extensions.durableTask.hubName" in log
        assert "Traceback" not in log
    finally:
        host.stop()


def test_ctrl_c_stops_the_host_without_tracebacks(app_env: dict[str, str], tmp_path: Path) -> None:
    """Ctrl-C in `make run`'s terminal (SIGINT): the host closes its clients and exits quietly (issue #28)."""
    import signal

    data_dir = tmp_path / "local"
    host = HostProcess(
        {**app_env, "FIREBREAK_TASK_HUB": f"run{uuid.uuid4().hex[:8]}"},
        tmp_path / "host.log",
        extra_args=make_run_host_args(data_dir),
    )
    try:
        host.wait_ready()
        key = json.loads((data_dir / "keys.json").read_text())["DEVHOST_FUNCTION_KEY"]
        headers = {"x-functions-key": key, "x-dev-workspace": "ws-ctrl-c", "x-dev-user": "alice"}
        # A tool call that reaches Cosmos and Blob: the clients Ctrl-C must close.
        r = httpx.post(f"{host.base_url}/api/tools/list_incidents", json={}, headers=headers, timeout=60)
        assert r.status_code == 200, r.text
        host.proc.send_signal(signal.SIGINT)
        host.proc.wait(30)
        log = host.log()
        assert "Unclosed" not in log, log[-3000:]
        assert "Traceback" not in log, log[-3000:]
    finally:
        host.stop()
