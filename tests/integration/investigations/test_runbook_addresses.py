"""Runbook URLs at the hostile addresses (special-purpose blocks and embedded-IPv4 forms Python calls global) are
refused by the runbook fetch, in the one refusal text (plain http allowed, so the address alone decides)."""

from __future__ import annotations

import pytest

from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.investigations.runbooks import RunbookSettings, fetch_runbook
from tests.fixtures.hostile.addresses import GAPS

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true"}


@pytest.mark.parametrize(("address", "why"), GAPS)
async def test_a_runbook_at_a_hostile_address_is_refused(address: str, why: str) -> None:
    host = f"[{address}]" if ":" in address else address
    guard = OutboundGuard(Settings.from_env(LOCAL), "runbooks")
    result = await fetch_runbook(f"http://{host}/runbook.md", RunbookSettings(), guard=guard, blobs=None, workspace="w")
    assert result.status == "refused", why
    assert "non-public address" in (result.error or ""), result
    assert result.text == ""
