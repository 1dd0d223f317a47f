"""One naming rule for tools (README.md "Tool names"): a spec's name exactly where a spec fixes it, else
snake_case verb-first; every tool has a title for clients to show."""

from __future__ import annotations

import re

from shared.app.capabilities import catalogue

# Names fixed by the specs in ../shared/specs (copied here because CI clones the repo alone).
SPEC_NAMES = {
    # debug-memory-tools.md
    "ranked_solutions",
    "record_outcome",
    "add_solution",
    "add_incident",
    # perf-artifacts-mcp.md
    "artifacts.validate",
    "artifacts.ingest",
    "analysis.run",
    "report.export",
    "collect.run",
    "health.check",
    "runs.list",
    "runs.get",
    "ingest.bundle",
    # issue #16 names the comparison tool in the perf spec's namespace, beside analysis.run
    "analysis.compare",
    # neubird-mcp-server.md
    "neubird_investigate_alert",
    "neubird_create_investigation",
    "neubird_get_investigation_status",
    "neubird_continue_investigation",
    "neubird_list_projects",
    "neubird_list_sessions",
    "neubird_inspect_session",
    "neubird_get_session_report",
    "neubird_get_session_summary",
    "neubird_get_incident_report",
    "neubird_switch_instance",
    "neubird_configure_defaults",
    # chat-task-tools.md
    "store_chat_message",
    "get_chat_history",
    "get_all_tasks",
    "search_tasks",
    "get_completed_tasks",
    "get_tasks_summary",
    "get_tasks_by_date",
    "bulk_delete_tasks",
    "update_task_status",
    "create_chat_session",
    "get_recent_chat_sessions",
}
OUR_STYLE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
VERBS = {
    "get",
    "list",
    "add",
    "create",
    "update",
    "delete",
    "cancel",
    "start",
    "search",
    "record",
    "whoami",
    "store",
    "bulk",
    "set",  # set_task_preferences (issue #14 brief)
}


def test_every_name_is_the_specs_or_snake_case_verb_first() -> None:
    offenders = []
    for tool in catalogue().registry:
        if tool.name in SPEC_NAMES:
            continue
        if not OUR_STYLE.match(tool.name) or tool.name.split("_")[0] not in VERBS:
            offenders.append(tool.name)
    assert offenders == [], f"rename to snake_case, verb first (README.md 'Tool names'): {offenders}"


def test_every_tool_has_a_title_clients_can_show() -> None:
    untitled = [t.name for t in catalogue().registry if not (t.annotations.title and t.annotations.title.strip())]
    assert untitled == []


def test_the_style_check_rejects_what_the_rule_forbids() -> None:
    assert not OUR_STYLE.match("runs.status")
    assert not OUR_STYLE.match("getRun")
    assert not OUR_STYLE.match("get-run")
    assert OUR_STYLE.match("get_run_status")
    assert OUR_STYLE.match("whoami")
