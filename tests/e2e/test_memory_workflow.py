"""The debug-memory workflow of the spec, end to end over MCP with the real v2 client against the local stack."""

from __future__ import annotations

import uuid

from mcp import Client

from devhost.processes import HostProcess

EKS = {
    "os": "Ubuntu 22.04",
    "language": "python 3.11.4",
    "framework": "Django 4.2",
    "runtime": "EKS",
    "kubernetes": "v1.29",
}
LAPTOP = {"os": "macOS 14", "language": "Python 3.12", "framework": "Django 5.0", "runtime": "docker"}


async def call(client: Client, tool: str, **args) -> dict:
    result = await client.call_tool(tool, args)
    assert result.is_error is False, result.structured_content
    return result.structured_content


async def test_full_workflow(host: HostProcess) -> None:
    # Each run gets its own workspace (dev mode lets a header pick it), so earlier runs cannot match.
    workspace = f"ws-flow-{uuid.uuid4().hex[:8]}"
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"x-dev-workspace": workspace}) as http,
        Client(streamable_http_client(f"{host.base_url}/api/mcp", http_client=http), mode="2026-07-28") as client,
    ):
        error = (
            "django.db.utils.OperationalError: FATAL:"
            " remaining connection slots are reserved for non-replication superuser connections"
        )

        # 1. Nothing known yet.
        first = await call(client, "ranked_solutions", query_text=error, env=EKS)
        assert first["next_action"]["type"] == "NO_MATCH_DEBUG_THEN_ADD_INCIDENT"
        assert first["incidents"] == []
        assert first["recommended_solution"] is None
        assert first["env_bucket"] == "linux|py3|django4|k8s1|aws"

        # 2. Debugged it: store incident + fix + outcome in one call.
        added = await call(
            client,
            "add_incident",
            title="Postgres connection slots exhausted by Django workers",
            error_signature=error,
            summary="Each gunicorn worker held persistent connections (CONN_MAX_AGE) and exhausted max_connections.",
            tags=["postgres", "django", "connections"],
            steps=["Put PgBouncer in transaction mode in front of Postgres", "Set CONN_MAX_AGE=0"],
            env=EKS,
            worked=True,
            lookup_id=first["lookup_id"],
        )
        assert added["created"] is True
        assert added["next_action"]["type"] == "DONE_OR_ADD_ENV_VARIANT"
        incident_id, pgbouncer = added["incident_id"], added["solution_id"]
        assert incident_id in added["next_action"]["instructions"]

        # 3. The same incident again is caught by the duplicate guard.
        again = await call(
            client,
            "add_incident",
            title="Another title",
            error_signature=error.replace("FATAL", "FATAL"),
            steps=["x"],
            env=EKS,
            worked=True,
        )
        assert again["created"] is False
        assert again["incident_id"] == incident_id
        assert again["next_action"]["type"] == "USE_ADD_SOLUTION_FOR_EXISTING_INCIDENT"
        assert incident_id in again["next_action"]["instructions"]

        # 4. A colleague on a laptop hits it; the known fix is recommended.
        second = await call(
            client, "ranked_solutions", query_text="remaining connection slots are reserved", env=LAPTOP
        )
        assert second["next_action"]["type"] == "TRY_SOLUTION_AND_RECORD_OUTCOME"
        assert second["recommended_solution"]["solution_id"] == pgbouncer
        assert pgbouncer in second["next_action"]["instructions"]
        assert second["lookup_id"] in second["next_action"]["instructions"]

        # 5. It did not work there.
        failed = await call(
            client,
            "record_outcome",
            solution_id=pgbouncer,
            worked=False,
            env=LAPTOP,
            lookup_id=second["lookup_id"],
            notes="no pgbouncer in compose",
        )
        assert failed["next_action"]["type"] == "DEBUG_FURTHER_THEN_ADD_SOLUTION_OR_INCIDENT"
        assert failed["was_recommended"] is True
        assert failed["stats"]["worked_count"] == 1
        assert failed["stats"]["failed_count"] == 1

        # 6. A different fix for the same incident, then it works.
        laptop_fix = await call(
            client,
            "add_solution",
            incident_id=incident_id,
            steps=["Raise max_connections in the postgres container to 200"],
            env=LAPTOP,
            lookup_id=second["lookup_id"],
        )
        assert laptop_fix["created"] is True
        assert laptop_fix["next_action"]["type"] == "RECORD_OUTCOME_FOR_NEW_SOLUTION"
        worked = await call(
            client,
            "record_outcome",
            solution_id=laptop_fix["solution_id"],
            worked=True,
            env=LAPTOP,
            lookup_id=second["lookup_id"],
        )
        assert worked["next_action"]["type"] == "DONE_OR_ADD_ENV_VARIANT"
        assert worked["was_recommended"] is False
        assert worked["stats"]["buckets"] == [
            {
                "env_bucket": "macos|py3|django5|docker|any",
                "worked_count": 1,
                "failed_count": 0,
                "last_confirmed_at": worked["stats"]["last_confirmed_at"],
            }
        ]

        # 7. The same PgBouncer steps reported for a second environment: the existing solution, new variant.
        variant = await call(
            client,
            "add_solution",
            incident_id=incident_id,
            steps=["1. put pgbouncer in TRANSACTION mode in front of postgres.", "- set conn_max_age=0"],
            env={"runtime": "AKS", "language": "python 3.11"},
        )
        assert variant["created"] is False
        assert variant["solution_id"] == pgbouncer
        assert variant["env_bucket"] == "linux|py3|any|k8s|azure"
        await call(
            client,
            "record_outcome",
            solution_id=pgbouncer,
            worked=True,
            env={"runtime": "AKS", "language": "python 3.11"},
        )

        # 8. Each environment now gets its own best fix first.
        on_laptop = await call(client, "ranked_solutions", query_text=error, env=LAPTOP)
        on_eks = await call(client, "ranked_solutions", query_text=error, env=EKS)
        assert on_laptop["recommended_solution"]["solution_id"] == laptop_fix["solution_id"]
        assert on_eks["recommended_solution"]["solution_id"] == pgbouncer
        assert on_eks["incidents"][0]["exact_signature_match"] is True

        # 9. The read-only views agree.
        detail = await call(client, "get_incident", incident_id=incident_id)
        assert {
            s["solution_id"]: (s["stats"]["worked_count"], s["stats"]["failed_count"]) for s in detail["solutions"]
        } == {pgbouncer: (2, 1), laptop_fix["solution_id"]: (1, 0)}
        listed = await call(client, "list_incidents", tag="postgres")
        assert [i["incident_id"] for i in listed["incidents"]] == [incident_id]
        searched = await call(client, "list_incidents", search="connection slots")
        assert searched["incidents"][0]["incident_id"] == incident_id
