"""A real host's log, after calls carrying function keys, API keys, Basic credentials, JWTs and tokens, has none."""

from __future__ import annotations

import json

import httpx

from shared.tools.deps import Deps
from tests.support.fake_entra import FakeEntra

FUNCTION_KEY = "fnkey-SECRET-4711"


async def test_host_log_holds_no_secret(start_host, deps: Deps) -> None:
    entra = FakeEntra()
    try:
        host = start_host(
            {
                "FIREBREAK_DEV_MODE": "false",
                "DEVHOST_FUNCTION_KEY": FUNCTION_KEY,
                "FIREBREAK_LOG_LEVEL": "DEBUG",
                **entra.settings(),
            }
        )
        minted = await deps.api_keys.mint("ws-logs", "lee", "log-test")
        jwt_token = entra.token()
        foreign_jwt = entra.token(iss="https://attacker.example/v2.0")
        basic = "dXNlcjpCQVNJQy1TRUNSRVQ="  # user:BASIC-SECRET
        secrets = [
            FUNCTION_KEY,
            minted.key.split("_", 2)[2],
            jwt_token.split(".")[1],
            foreign_jwt.split(".")[2],
            basic,
            "QUERY-TOKEN-SECRET",
            "PASTED-API-KEY-SECRET",
        ]
        base = host.base_url
        calls = [
            (
                "POST",
                "/api/tools/whoami",
                {"x-functions-key": FUNCTION_KEY, "authorization": f"Bearer {minted.key}"},
                {},
            ),
            (
                "POST",
                f"/api/tools/whoami?code={FUNCTION_KEY}&token=QUERY-TOKEN-SECRET",
                {"authorization": f"Bearer {jwt_token}"},
                {},
            ),
            ("POST", f"/api/tools/whoami?code={FUNCTION_KEY}", {"authorization": f"Bearer {foreign_jwt}"}, {}),
            ("POST", f"/api/tools/whoami?code={FUNCTION_KEY}", {"authorization": f"Basic {basic}"}, {}),
            (
                "POST",
                f"/api/tools/whoami?code={FUNCTION_KEY}",
                {"authorization": f"Bearer {minted.key}"},
                {"correlation_id": "a\r\nb"},
            ),
            (
                "POST",
                "/api/tools/ranked_solutions",
                {"x-functions-key": FUNCTION_KEY, "authorization": f"Bearer {minted.key}"},
                {"query_text": "401 from https://api.example/x?api_key=PASTED-API-KEY-SECRET", "env": {}},
            ),
            (
                "POST",
                "/api/mcp",
                {
                    "x-functions-key": FUNCTION_KEY,
                    "authorization": f"Bearer {minted.key}",
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": "2025-06-18",
                },
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}},
            ),
        ]
        statuses = []
        async with httpx.AsyncClient(timeout=60) as http:
            for method, path, headers, body in calls:
                r = await http.request(
                    method,
                    f"{base}{path}",
                    headers={"content-type": "application/json", **headers},
                    content=json.dumps(body),
                )
                statuses.append(r.status_code)
                assert r.status_code < 500, r.text[:300]
        assert statuses[:4] == [200, 200, 401, 401]
        log = host.log()
        # the calls were logged
        assert log.count("tool call whoami") >= 3
        assert "tool call ranked_solutions" in log
        for secret in secrets:
            assert secret not in log, secret
    finally:
        entra.close()
