"""Run alert-investigation scenario files through the whole orchestration on the local Durable engine.

    python -m shared.investigations scenario FILE.json [FILE.json ...] [--format json|md]
    python -m devhost.scenarios FILE.json [FILE.json ...] [--format json|md]      (the same)

One emulator stack (Azurite, the Cosmos-API server) and one offline app host (`python -m devhost`, the app
`make run` serves) for all the files, started on free ports and stopped at the end. Beside them on 127.0.0.1:
two scenario MCP servers (`k8s`: the kubernetes-mcp-server tools; `extras`: the scenario's prometheus_* /
tempo_* data) and a runbook server, all swappable: the host's MCP server setting is fixed when it starts, so
the servers load each scenario in turn. For each file, one after another: the alert's
`annotations.runbook_url` is pointed at the runbook server, `POST /api/investigations` starts the
investigation and `GET /api/investigations/{id}` is polled until it ends.

The path is the app's: the rule path, or the LLM path when FIREBREAK_LLM_* / OPENAI_* / AZURE_OPENAI_* (or
DEFAULT_LLM_PROVIDER with GEMINI_API_KEY / GROK_API_KEY) are set in this environment (they are passed to the
host; so are FIREBREAK_INVESTIGATIONS_* limits).

Per scenario: id, path (rule|llm|llm->rule), analysis, score (the fixtures' keyword score of the analysis
alone, only for files with expected_keywords), tool_calls [{tool, args}], iterations, stopped_because; then
the mean score. Exit 0 when every investigation completed, 1 when one did not, 2 for a missing or invalid file
or bad arguments (nothing is started then) or for an alert the app refuses (400; the other files still run).

Tests use `offline_runner(..., app_settings=app_env)`: the same servers, host and runner on the test session's
running stack (no second stack). Nothing here imports tests.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from devhost.scenario_data import load, score, split_scenario

if TYPE_CHECKING:
    from devhost.processes import HostProcess
    from devhost.scenario_servers import RunbookServer, ScenarioServer

# Settings passed from this environment to the host: the LLM (so the same command runs the LLM path when
# one is configured, DEFAULT_LLM_PROVIDER and its key included) and the investigation limits. HostProcess
# drops the parent's FIREBREAK_*/OPENAI_* on purpose (tests must not inherit a developer's settings); the
# command hands these on explicitly.
PASS_PREFIXES = (
    "FIREBREAK_LLM_",
    "OPENAI_",
    "AZURE_OPENAI_",
    "FIREBREAK_INVESTIGATIONS_",
    "DEFAULT_LLM_PROVIDER",
    "GEMINI_API_KEY",
    "GROK_API_KEY",
)
TERMINAL = ("completed", "failed", "cancelled")
EMPTY_SCENARIO: dict[str, Any] = {"id": "none", "alert": {}, "available_tools": [], "tool_responses": []}


class AlertRejected(RuntimeError):
    """POST /api/investigations answered 400: the scenario's alert is not one the app accepts."""


class ScenarioFileError(Exception):
    """A scenario file that cannot be run: missing, not JSON, or not the fixtures' schema."""


def _problem(scenario: Any) -> str | None:
    """What is wrong with a loaded scenario, or None (the fields the runner and the servers rely on)."""
    if not isinstance(scenario, dict):
        return "the file's JSON is not an object"
    alert = scenario.get("alert")
    if not isinstance(alert, dict) or not alert:
        return "no `alert` object"
    if not isinstance(alert.get("annotations", {}), dict):
        return "`alert.annotations` is not an object"
    responses = scenario.get("tool_responses", [])
    if not isinstance(responses, list):
        return "`tool_responses` is not a list"
    for i, entry in enumerate(responses):
        if not isinstance(entry, dict) or not isinstance(entry.get("tool"), str):
            return f"`tool_responses[{i}]` has no `tool` name"
        if not isinstance(entry.get("output"), str):
            return f"`tool_responses[{i}]` has no `output` text"
        if not isinstance(entry.get("match", {}), dict):
            return f"`tool_responses[{i}].match` is not an object"
    tools = scenario.get("available_tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
        return "`available_tools` is not a list of tool names"
    groups = scenario.get("expected_keywords")
    if groups is not None and not (
        isinstance(groups, list)
        and all(isinstance(g, list) and g and all(isinstance(a, str) for a in g) for g in groups)
    ):
        return "`expected_keywords` is not a list of non-empty lists of strings"
    runbook = scenario.get("runbook_markdown")
    if runbook is not None and not isinstance(runbook, str):
        return "`runbook_markdown` is not text"
    return None


def load_scenario(path: Path) -> dict[str, Any]:
    """A scenario file, checked; ScenarioFileError says what is wrong in one line."""
    if not path.is_file():
        raise ScenarioFileError(f"{path}: no such file")
    try:
        scenario: Any = load(path)
    except UnicodeDecodeError:
        raise ScenarioFileError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ScenarioFileError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except OSError as exc:
        raise ScenarioFileError(f"{path}: cannot be read ({exc.strerror})") from None
    problem = _problem(scenario)
    if problem:
        raise ScenarioFileError(f"{path}: not a scenario file ({problem}; see the fixtures' README for the schema)")
    if not isinstance(scenario.get("id"), str) or not scenario["id"]:
        scenario["id"] = path.stem
    return dict(scenario)


@dataclass
class ScenarioResult:
    id: str
    path: str | None
    analysis: str
    score: float | None
    tool_calls: list[dict[str, Any]]
    iterations: int
    stopped_because: str | None
    status: str
    file: str = ""
    token_usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    investigation_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        body = asdict(self)
        if self.score is None:
            del body["score"]  # only files with expected_keywords are scored
        if self.error is None:
            del body["error"]
        return body


@dataclass
class Servers:
    """The swappable servers a host is configured with: the kubernetes tools, the extras, the runbook."""

    k8s: ScenarioServer
    extras: ScenarioServer
    runbook: RunbookServer

    def load(self, scenario: dict[str, Any]) -> None:
        self.k8s.load(split_scenario(scenario))
        self.extras.load(scenario)
        self.runbook.load(scenario)


@contextmanager
def serve_servers() -> Iterator[Servers]:
    """The two scenario MCP servers and the runbook server on free ports, serving nothing until `load`."""
    # Imported here: the MCP SDK and uvicorn take seconds to import, and a command with a bad file argument
    # must answer at once.
    from devhost.scenario_servers import serve_runbook, serve_scenario

    with (
        serve_scenario(EMPTY_SCENARIO) as k8s,
        serve_scenario(EMPTY_SCENARIO, toolset="extras") as extras,
        serve_runbook(EMPTY_SCENARIO) as runbook,
    ):
        yield Servers(k8s, extras, runbook)


def passed_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The settings of `environ` the host is given (PASS_PREFIXES), minus the MCP server list (ours)."""
    return {
        k: v for k, v in environ.items() if k.startswith(PASS_PREFIXES) and k != "FIREBREAK_INVESTIGATIONS_MCP_SERVERS"
    }


def host_overrides(servers: Servers, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The host's settings for the servers (both MCP servers; 127.0.0.1 over http allowed), plus `environ`'s
    LLM and limit settings (`passed_env`)."""
    return {
        **passed_env(environ if environ is not None else {}),
        "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps(
            [{"name": "k8s", "url": servers.k8s.url}, {"name": "extras", "url": servers.extras.url}]
        ),
        "FIREBREAK_OUTBOUND_ALLOW_HTTP": "true",
        "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32",
    }


class ScenarioRunner:
    """Runs scenarios one after another against a running host configured with `host_overrides(servers)`."""

    def __init__(
        self,
        base_url: str,
        servers: Servers,
        *,
        workspace: str | None = None,
        timeout_s: float = 180.0,
        poll_s: float = 0.2,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.servers = servers
        self.headers = {"x-dev-workspace": workspace or f"ws-scenarios-{uuid.uuid4().hex[:8]}"}
        self.timeout_s, self.poll_s = timeout_s, poll_s
        self.http = httpx.Client(timeout=60.0)

    def close(self) -> None:
        self.http.close()

    def alert_of(self, scenario: dict[str, Any]) -> dict[str, Any]:
        """The scenario's alert with its runbook_url pointed at the runbook server (serving this scenario)."""
        alert = dict(scenario["alert"])
        annotations = dict(alert.get("annotations") or {})
        if annotations.get("runbook_url"):
            annotations["runbook_url"] = self.servers.runbook.runbook_url
            alert["annotations"] = annotations
        return alert

    def start(self, scenario: dict[str, Any]) -> str:
        """Load the scenario into the servers and start its investigation; the investigation id."""
        self.servers.load(scenario)
        r = self.http.post(f"{self.base_url}/api/investigations", json=self.alert_of(scenario), headers=self.headers)
        if r.status_code == 400:
            raise AlertRejected(f"the app refused the scenario's alert: {r.text[:1000]}")
        if r.status_code != 202:
            raise RuntimeError(f"POST /api/investigations answered {r.status_code}: {r.text[:500]}")
        started = r.json()["started"]
        if len(started) != 1:
            raise RuntimeError(f"POST /api/investigations started {len(started)} investigations, not 1")
        return str(started[0]["investigation_id"])

    def wait(self, investigation_id: str) -> dict[str, Any]:
        """GET the investigation until it ends; at the timeout, cancel it (its calls must not reach the next
        scenario's servers) and return its last view, still running or cancelled."""
        view = self._poll(investigation_id, self.timeout_s)
        if view["status"] in TERMINAL:
            return view
        self.http.post(f"{self.base_url}/api/investigations/{investigation_id}/cancel", headers=self.headers)
        cancelled = self._poll(investigation_id, 15.0)
        return cancelled if cancelled["status"] in TERMINAL else view

    def _poll(self, investigation_id: str, seconds: float) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        url = f"{self.base_url}/api/investigations/{investigation_id}"
        while True:
            r = self.http.get(url, headers=self.headers)
            if r.status_code != 200:
                raise RuntimeError(f"GET {url} answered {r.status_code}: {r.text[:500]}")
            view: dict[str, Any] = r.json()
            if view["status"] in TERMINAL or time.monotonic() > deadline:
                return view
            time.sleep(self.poll_s)

    def run(self, scenario: dict[str, Any], file: str = "") -> ScenarioResult:
        """One scenario through the whole orchestration; never raises for a failed investigation."""
        try:
            investigation_id = self.start(scenario)
            view = self.wait(investigation_id)
        except (RuntimeError, httpx.HTTPError) as exc:
            status = "rejected" if isinstance(exc, AlertRejected) else "error"
            return ScenarioResult(
                id=scenario["id"],
                path=None,
                analysis="",
                score=None,
                tool_calls=[],
                iterations=0,
                stopped_because=None,
                status=status,
                file=file,
                error=str(exc)[:1000],
            )
        return result_of(scenario, view, file)


def result_of(scenario: dict[str, Any], view: dict[str, Any], file: str = "") -> ScenarioResult:
    """The result of a finished (or timed out) investigation's view."""
    report = view.get("report") or {}
    analysis = str(report.get("analysis") or "")
    status = str(view["status"])
    error = None
    if status not in TERMINAL:
        error = f"still {status} at the timeout"
    elif status != "completed":
        error = str(view.get("error") or status)
    return ScenarioResult(
        id=scenario["id"],
        path=report.get("path") or view.get("path"),
        analysis=analysis,
        score=score(analysis, scenario)
        if status == "completed"
        else (0.0 if scenario.get("expected_keywords") else None),
        tool_calls=[{"tool": c["tool"], "args": c["args"]} for it in view.get("iterations", []) for c in it["calls"]],
        iterations=len(view.get("iterations", [])),
        stopped_because=report.get("stopped_because"),
        status=status,
        file=file,
        token_usage=dict(view.get("token_usage") or {}),
        error=error,
        investigation_id=str(view.get("investigation_id")),
    )


def mean_score(results: list[ScenarioResult]) -> float | None:
    scored = [r.score for r in results if r.score is not None]
    return sum(scored) / len(scored) if scored else None


def summary(results: list[ScenarioResult]) -> dict[str, Any]:
    """The JSON output: every scenario's result, the mean score and how many scenarios it is over."""
    mean = mean_score(results)
    return {
        "scenarios": [r.to_json() for r in results],
        "mean_score": round(mean, 4) if mean is not None else None,
        "scored": sum(1 for r in results if r.score is not None),
        "completed": sum(1 for r in results if r.status == "completed"),
    }


def table(results: list[ScenarioResult]) -> str:
    """The per-scenario Markdown table and the mean."""
    lines = ["| scenario | score | path | calls | analysis chars |", "|---|---:|---|---:|---:|"]
    for r in results:
        shown = f"{r.score:.2f}" if r.score is not None else "-"
        status = "" if r.status == "completed" else f" ({r.status})"
        lines.append(f"| {r.id}{status} | {shown} | {r.path or '-'} | {len(r.tool_calls)} | {len(r.analysis)} |")
    mean = mean_score(results)
    scored = sum(1 for r in results if r.score is not None)
    lines.append("")
    lines.append(f"Mean score: {mean:.3f} over {scored} scored scenario(s)." if mean is not None else "Mean score: -")
    return "\n".join(lines)


def markdown(results: list[ScenarioResult]) -> str:
    """The table, the mean, then each scenario's analysis."""
    parts = [table(results)]
    for r in results:
        head = f"## {r.id}\n\n_path {r.path or '-'}, {r.iterations} iteration(s), {len(r.tool_calls)} call(s)"
        head += f"; stopped: {r.stopped_because}_" if r.stopped_because else "_"
        body = r.analysis if r.status == "completed" else f"**{r.status}**: {r.error or 'no report'}"
        parts.append(f"{head}\n\n{body}")
    return "\n\n".join(parts) + "\n"


@contextmanager
def offline_runner(
    environ: Mapping[str, str],
    work_dir: Path,
    *,
    app_settings: Mapping[str, str] | None = None,
    timeout_s: float = 180.0,
) -> Iterator[tuple[ScenarioRunner, HostProcess]]:
    """The servers, a host, a runner on them, all stopped after the block: the command's setup.

    Without `app_settings` an emulator stack is started too (in `work_dir`); with them (a test session's
    `app_env`) the host uses that running stack, on a task hub of its own.
    """
    from devhost.processes import HostProcess, start_stack

    with ExitStack() as stack:
        if app_settings is None:
            emulators = start_stack(work_dir / "stack")
            stack.callback(emulators.stop)
            app_settings = emulators.app_settings()
        servers = stack.enter_context(serve_servers())
        env = {
            **app_settings,
            "FIREBREAK_TASK_HUB": f"scenarios{uuid.uuid4().hex[:10]}",
            **host_overrides(servers, environ),
        }
        host = HostProcess(env, work_dir / f"host-{uuid.uuid4().hex[:6]}.log")
        stack.callback(host.stop)
        try:
            host.wait_ready()
        except RuntimeError as exc:
            raise RuntimeError(f"the app host did not start: {str(exc)[-2000:]}") from None
        runner = ScenarioRunner(host.base_url, servers, timeout_s=timeout_s)
        stack.callback(runner.close)
        yield runner, host


def error_lines(log: str, limit: int = 10) -> list[str]:
    """The host log's last ERROR records, one line each (for a run where an investigation did not complete)."""
    found = []
    for line in log.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("level") in ("ERROR", "CRITICAL"):
            last = str(record.get("exception") or "").strip().splitlines()[-1:]
            found.append(f"{record.get('logger')}: {record.get('message')}" + (f" ({last[0]})" if last else ""))
    return [f[:500] for f in found[-limit:]]


def run_files(
    files: list[tuple[Path, dict[str, Any]]], runner: ScenarioRunner, quiet: bool = False
) -> list[ScenarioResult]:
    results = []
    for i, (path, scenario) in enumerate(files, 1):
        started = time.monotonic()
        result = runner.run(scenario, str(path))
        results.append(result)
        if not quiet:
            shown = f"{result.score:.2f}" if result.score is not None else "-"
            print(
                f"[{i}/{len(files)}] {result.id}: {result.status}, path {result.path}, score {shown}, "
                f"{len(result.tool_calls)} calls, {time.monotonic() - started:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shared.investigations scenario",
        description="Run alert-investigation scenario files through the whole orchestration on the local "
        "Durable engine (one emulator stack and one app host for all files) and score the reports.",
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE.json", help="scenario files (fixtures schema)")
    parser.add_argument("--format", choices=["json", "md"], default="json", help="output format (default json)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for one investigation")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)

    files: list[tuple[Path, dict[str, Any]]] = []
    for path in args.files:
        try:
            files.append((path, load_scenario(path)))
        except ScenarioFileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2

    with tempfile.TemporaryDirectory(prefix="firebreak-scenarios-") as tmp:
        try:
            with offline_runner(os.environ, Path(tmp), timeout_s=args.timeout) as (runner, host):
                results = run_files(files, runner, args.quiet)
                if any(r.status != "completed" for r in results):
                    for line in error_lines(host.log()):
                        print(f"host error: {line}", file=sys.stderr)
        except (RuntimeError, SystemExit) as exc:
            print(f"error: could not run the scenarios: {exc}", file=sys.stderr)
            return 1
    if args.format == "md":
        sys.stdout.write(markdown(results))
    else:
        sys.stdout.write(json.dumps(summary(results), indent=2) + "\n")
    if any(r.status == "rejected" for r in results):
        return 2  # an alert the app refuses is an invalid scenario file, found once the app could read it
    return 0 if all(r.status == "completed" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
