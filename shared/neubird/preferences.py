"""A caller's instance and defaults: neubird_switch_instance and neubird_configure_defaults."""

from __future__ import annotations

from typing import Any

from shared.core.errors import ValidationFailed
from shared.neubird import projects
from shared.neubird.connection import Connection, instance_allowed
from shared.neubird.errors import neubird_error
from shared.neubird.instances import normalise_base_url
from shared.neubird.models import DefaultsResult, SwitchResult
from shared.neubird.timeframe import parse_timeframe
from shared.tools.deps import Deps


async def switch_instance(conn: Connection, deps: Deps, text: str) -> SwitchResult:
    previous = conn.base_url
    try:
        normalised = normalise_base_url(text)
    except ValidationFailed as exc:
        exc.details.setdefault("current_url", previous)
        raise
    if not instance_allowed(conn.settings, normalised):
        raise neubird_error(
            ValidationFailed,
            "validation",
            f"{normalised} is not an allowed NeuBird instance on this deployment; the account's credentials are "
            "only sent to allowed hosts.",
            details={
                "field": "base_url",
                "normalized_url": normalised,
                "current_url": previous,
                "allowed_hosts": list(conn.settings.host_patterns()),
            },
            recovery=[
                "Use a tenant name (e.g. 'prod') or a https://<tenant>.app.neubird.ai URL.",
                "An operator can add the host to FIREBREAK_NEUBIRD_ALLOWED_HOSTS.",
            ],
        )
    configured = conn.settings.base_url
    conn.state.base_url = None if configured and normalised.rstrip("/") == configured.rstrip("/") else normalised
    conn.state.projects = None  # another instance has other projects
    conn.state.defaults.project_uuid = None  # and a project of the old one means nothing there
    await conn.store.save_state(conn.state, deps.clock(), ("base_url", "projects", "defaults.project_uuid"))
    return SwitchResult(
        success=True,
        input_provided=text,
        normalized_url=normalised,
        previous_url=previous,
        new_url=normalised,
        # Tokens are kept per instance in the worker, shared by every caller: switching moves this caller to the
        # new instance's token (a login there if none) and never drops a token others use.
        message=f"Switched from {previous} to {normalised}. Your calls no longer use the old instance's "
        "authentication. You can now use NeuBird tools with the new instance.",
        note="The next NeuBird API call will authenticate against the new instance; list its projects with "
        "neubird_list_projects (your default project was cleared).",
    )


async def configure(conn: Connection, deps: Deps, args: Any) -> DefaultsResult:
    defaults = conn.state.defaults
    changed: list[str] = []
    paths: list[str] = []
    if args.default_project_uuid is not None:
        if args.default_project_uuid == "":
            defaults.project_uuid = None
        else:
            found = await projects.resolve(conn, deps, args.default_project_uuid)
            defaults.project_uuid = str(found["uuid"])
        changed.append("project")
        # With the list resolve may just have fetched: one write for both.
        paths += ["defaults.project_uuid", "projects"]
    if args.default_organization_uuid is not None:
        defaults.organization_uuid = args.default_organization_uuid or None
        changed.append("organization")
        paths.append("defaults.organization_uuid")
    if args.default_timeframe is not None:
        if args.default_timeframe:
            parse_timeframe(args.default_timeframe, now=deps.clock())  # refuse what later calls could not use
        defaults.timeframe = args.default_timeframe or None
        changed.append("timeframe")
        paths.append("defaults.timeframe")
    if args.enable_streaming is not None:
        defaults.streaming_enabled = args.enable_streaming
        changed.append("streaming")
        paths.append("defaults.streaming_enabled")
    if changed:
        await conn.store.save_state(conn.state, deps.clock(), tuple(paths))
    s = conn.settings
    return DefaultsResult(
        status="configured",
        current_defaults={
            "project_uuid": defaults.project_uuid or s.default_project_uuid,
            "organization_uuid": defaults.organization_uuid or s.default_organization_uuid,
            "timeframe": defaults.timeframe or s.default_timeframe,
            "streaming_enabled": s.enable_streaming
            if defaults.streaming_enabled is None
            else defaults.streaming_enabled,
            "instance": conn.base_url,
        },
        message=("Updated: " + ", ".join(changed) + "." if changed else "Nothing changed; these are your defaults.")
        + " They apply to your later NeuBird calls (an empty string resets one to the deployment's).",
    )
