"""The NeuBird password and every token the fake issued never appear in a response body, header, MCP result,
progress message or host log. Drives every tool (and a re-login, an error, a failed login) itself, then checks
everything read by this package's tests so far (conftest.SEEN) plus the hosts' logs."""

from __future__ import annotations

from devhost.processes import HostProcess
from tests.e2e.neubird.conftest import PASSWORD, SEEN, call, post, ws
from tests.support.fake_neubird import FakeNeubird

WS = ws("secrets")


async def test_no_password_or_token_anywhere(
    nb_host: HostProcess, fake: FakeNeubird, fault_host: HostProcess, fault_fake: FakeNeubird
) -> None:
    listed = await call(
        nb_host, "neubird_list_sessions", {"only_uninvestigated": True, "limit": 3, "compact": True}, WS
    )
    alert = listed["sessions"][0]["incident_id"]
    started = await call(nb_host, "neubird_investigate_alert", {"alert_id": alert, "wait_for_completion": True}, WS)
    sid, project = started["session_uuid"], started["project_uuid"]
    fake.expire_tokens()  # a re-login happens in the middle
    for name, args in [
        ("neubird_get_investigation_status", {"session_uuid": sid}),
        ("neubird_create_investigation", {"prompt": "Check the API latency please", "wait_for_completion": True}),
        (
            "neubird_continue_investigation",
            {"session_uuid": sid, "follow_up_prompt": "Dig deeper", "wait_for_completion": True},
        ),
        ("neubird_list_projects", {"include_inactive": True}),
        ("neubird_inspect_session", {"session_uuid": sid}),
        ("neubird_get_session_report", {"session_uuids": [sid], "project_uuid": project}),
        ("neubird_get_session_summary", {"session_uuid": sid}),
        ("neubird_get_incident_report", {}),
        ("neubird_configure_defaults", {"default_timeframe": "last 2 hours"}),
        ("neubird_switch_instance", {"base_url": "https://169.254.169.254"}),
        ("neubird_inspect_session", {"session_uuid": "does-not-exist"}),
    ]:
        await call(nb_host, name, args, WS)
        post(nb_host, name, args, WS)
    post(nb_host, "health.check", {}, WS)
    fault_fake.fail(1000, 500)
    await call(fault_host, "neubird_get_incident_report", {}, WS)
    fault_fake.fail(0)

    tokens = fake.issued_tokens() + fault_fake.issued_tokens()
    assert len(tokens) >= 2
    secrets = [PASSWORD, *tokens, *(t.split(".")[2] for t in tokens)]  # whole tokens and their signatures
    everything = [*SEEN, nb_host.log(), fault_host.log()]
    assert len(SEEN) > 20
    for i, text in enumerate(everything):
        for secret in secrets:
            assert secret not in text, f"a secret leaked into item {i}: {text[:200]!r}"
