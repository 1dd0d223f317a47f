"""The NeuBird tools on a host configured like Azure: dev mode off, function keys configured (they guard only
the host's own endpoints: app routes are anonymous at the host), workspaces known only from their API keys.
The dev headers mean nothing there, a missing API key is 401 from the app before any NeuBird call,
and a session one workspace created is NOT_FOUND for another, over per-tool HTTP and over MCP alike.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from devhost.processes import HostProcess
from shared.tools.deps import Deps
from tests.e2e.neubird.conftest import OUTBOUND, PASSWORD, mcp, ws
from tests.support.fake_neubird import FakeNeubird

FUNCTION_KEY = "fk-neubird-keyed-3b7e"
PROMPT = "Why did checkout latency double after the 14:00 deploy?"


@pytest.fixture(scope="module")
def keyed_host(start_host: Callable[..., HostProcess], fake: FakeNeubird) -> HostProcess:
    return start_host(
        {
            **fake.env(),
            **OUTBOUND,
            "FIREBREAK_DEV_MODE": "false",
            "DEVHOST_FUNCTION_KEY": FUNCTION_KEY,
            "FIREBREAK_NEUBIRD_SYNC_WAIT_SECONDS": "2",
        }
    )


def _post(host: HostProcess, tool: str, args: dict, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/tools/{tool}", json=args, headers=headers, timeout=60)


async def test_keys_decide_who_calls_and_sessions_stay_with_their_workspace(
    keyed_host: HostProcess, fake: FakeNeubird, deps: Deps
) -> None:
    a_ws, b_ws = ws("keyed-a"), ws("keyed-b")
    key_a = (await deps.api_keys.mint(a_ws, "alice", "keyed-a")).key
    key_b = (await deps.api_keys.mint(b_ws, "bob", "keyed-b")).key
    as_a = {"x-functions-key": FUNCTION_KEY, "authorization": f"Bearer {key_a}"}
    as_b = {"x-functions-key": FUNCTION_KEY, "authorization": f"Bearer {key_b}"}

    # App routes are anonymous at the host: the API key alone is enough, no function key. A function key
    # without credentials, or with the dev headers only, is 401 from the app: dev mode is off.
    assert _post(keyed_host, "neubird_list_projects", {}, {"authorization": f"Bearer {key_a}"}).status_code == 200
    upstream = fake.calls("POST /v1/user/login"), fake.calls("GET /v1/project")
    for headers in ({"x-functions-key": FUNCTION_KEY}, {"x-functions-key": FUNCTION_KEY, "x-dev-workspace": a_ws}):
        r = _post(keyed_host, "neubird_list_projects", {}, headers)
        assert r.status_code == 401, r.text
        assert r.json()["error"]["code"] == "UNAUTHORIZED"
    assert (fake.calls("POST /v1/user/login"), fake.calls("GET /v1/project")) == upstream  # nothing reached NeuBird

    created = _post(keyed_host, "neubird_create_investigation", {"prompt": PROMPT, "timeframe": "last 2 hours"}, as_a)
    assert created.status_code == 200, created.text
    sid = created.json()["session_uuid"]
    assert fake.wait_finished(sid, 30)
    mine = _post(keyed_host, "neubird_get_investigation_status", {"session_uuid": sid}, as_a)
    assert mine.status_code == 200, mine.text
    assert mine.json()["status"] == "completed"

    for tool in ("neubird_get_investigation_status", "neubird_inspect_session", "neubird_get_session_summary"):
        theirs = _post(keyed_host, tool, {"session_uuid": sid}, as_b)
        assert theirs.status_code == 404, (tool, theirs.text)
        assert theirs.json()["error"]["code"] == "NOT_FOUND"
    # B's dev headers claiming A's workspace change nothing: the key decides.
    spoof = _post(keyed_host, "neubird_inspect_session", {"session_uuid": sid}, {**as_b, "x-dev-workspace": a_ws})
    assert spoof.status_code == 404

    # Over MCP with B's key: the same answer.
    async with mcp(keyed_host, as_b) as client:
        result = await client.call_tool("neubird_inspect_session", {"session_uuid": sid})
    assert result.is_error
    assert (result.structured_content or {})["error"]["code"] == "NOT_FOUND"

    # Nothing the callers read holds the NeuBird password, the function key or an API key.
    for r in (created, mine, theirs, spoof):
        for secret in (PASSWORD, FUNCTION_KEY, key_a, key_b):
            assert secret not in r.text
            assert secret not in str(dict(r.headers))
