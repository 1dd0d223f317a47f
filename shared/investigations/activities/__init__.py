"""The investigation's activities, one module per phase: every read, write, fetch, tool call and model call.

`prepare` (record, runbook, tools, memory), `decide` (the plan activity: the model or the rules), `call`
(one tool), `report` (the final analysis; and the failed mark), over `runtime` (what each needs) and
`state` (the investigation read back); `payloads` holds what they and the orchestrator hand each other.
Each loads its run by id (the functions layer does that before calling here), keeps the bulk in the
record and in Blob (`<workspace>/investigations/<id>/...`) and returns a small summary for the
orchestrator's history. Each is safe to run again: the engine retries a failed attempt, and a host
restart may repeat one that had finished. A failing tool, runbook, MCP server or model never raises:
it is recorded and the investigation goes on.
"""
