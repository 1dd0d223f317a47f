"""Alert investigations: the alert, its runbook, MCP tools chosen by an LLM or by rules, a root-cause
report (issue #12, in progress: not yet a capability in shared/app/capabilities.py)."""
