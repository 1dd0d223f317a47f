"""A runbook server for one scenario: a real HTTP server on 127.0.0.1 answering the alert's runbook_url path.

Re-exported from devhost/scenario_servers.py (where the scenario command finds it): GET on the path of the
alert's `annotations.runbook_url` (or on `/runbook`) answers the scenario's `runbook_markdown`; any other path,
and a scenario without one, answer 404. `RunbookServer.runbook_url` is the alert's runbook URL pointed at this
server, for a harness that rewrites the alert.
"""

from __future__ import annotations

from devhost.scenario_servers import RunbookServer, runbook_path, serve_runbook

__all__ = ["RunbookServer", "runbook_path", "serve_runbook"]
