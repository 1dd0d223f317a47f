"""`python -m benchmarks [NAME ...]`: start a private stack and host, run the benchmarks, print and save the ratios.

With no NAME every benchmark runs and the results go to benchmarks/results/latest.json; with names (the
module names: cold_start, investigations, ...) only those run and the results go to results/partial.json.
"""

from __future__ import annotations

import json
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from benchmarks import (
    cold_start,
    cold_start_first_call,
    durable_engine,
    hostile_inputs,
    hostile_outside_content,
    investigations,
    mcp_overhead,
    memory_ranking,
    memory_semantic,
    neubird,
    perf_roundtrip,
    rule_engine,
    slowlog_parser,
    spx_trace,
    tasks_chat,
)
from devhost.processes import HostProcess, start_stack
from devhost.stack import ROOT
from shared.app.wiring import load_settings

NAMES = (
    "cold_start",
    "slowlog_parser",
    "spx_trace",
    "mcp_overhead",
    "durable_engine",
    "investigations",
    "rule_engine",
    "hostile_inputs",
    "hostile_outside_content",
    "perf_roundtrip",
    "memory_ranking",
    "memory_semantic",
    "neubird",
    "tasks_chat",
)
# cold_start: its import half runs without the stack, its first tools/call (cold_start_first_call) with it.
_NEED_STACK = set(NAMES) - {"slowlog_parser", "spx_trace", "rule_engine"}


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    unknown = sorted(set(names) - set(NAMES))
    if unknown:
        print(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(NAMES)}", file=sys.stderr)
        return 2
    want = set(names or NAMES)
    results: list[dict[str, Any]] = []
    if "cold_start" in want:
        results.append(cold_start.run())
    if "slowlog_parser" in want:
        results += slowlog_parser.run()
    if "spx_trace" in want:
        results += spx_trace.run()
    if "rule_engine" in want:
        results += rule_engine.run()
    if want & _NEED_STACK:
        results += _with_stack(want)
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / ("partial.json" if names else "latest.json")).write_text(json.dumps(results, indent=2) + "\n")
    width = max(len(r["name"]) for r in results)
    for r in results:
        detail = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("name", "ratio", "budget", "ok"))
        budget = f"budget {r['budget']}" if r["budget"] else "reported"
        print(
            f"{r['name']:<{width}}  ratio {r['ratio']:.3f}  ({budget})  {'OK' if r['ok'] else 'OVER BUDGET'}  {detail}"
        )
    return 0 if all(r["ok"] for r in results) else 1


def _with_stack(want: set[str]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="fb-bench-") as tmp:
        stack = start_stack(Path(tmp) / "stack")
        try:
            env = {
                **stack.app_settings(),
                "FIREBREAK_COSMOS_DATABASE": f"bench-{uuid.uuid4().hex[:6]}",
                "FIREBREAK_LOG_LEVEL": "WARNING",
            }
            if "cold_start" in want:
                results += cold_start_first_call.run(env)
            if "mcp_overhead" in want:
                host = HostProcess(env, Path(tmp) / "host.log")
                try:
                    host.wait_ready()
                    results += mcp_overhead.run(host.base_url)
                finally:
                    host.stop()
            if "durable_engine" in want:
                results += durable_engine.run(stack.app_settings(), Path(tmp))
            if "investigations" in want:
                results += investigations.run(stack.app_settings(), Path(tmp))
            if "hostile_inputs" in want:
                results += hostile_inputs.run(env)
            if "hostile_outside_content" in want:
                results += hostile_outside_content.run(env)
            if "perf_roundtrip" in want:
                results += perf_roundtrip.run(
                    load_settings({**env, "FIREBREAK_COSMOS_DATABASE": f"bench-perf-{uuid.uuid4().hex[:6]}"})
                )
            if "memory_ranking" in want:
                results += memory_ranking.run(
                    load_settings({**env, "FIREBREAK_COSMOS_DATABASE": f"bench-memory-{uuid.uuid4().hex[:6]}"})
                )
            if "memory_semantic" in want:
                results += memory_semantic.run(
                    load_settings({**env, "FIREBREAK_COSMOS_DATABASE": f"bench-memsem-{uuid.uuid4().hex[:6]}"})
                )
            if "neubird" in want:
                results += neubird.run(stack.app_settings())
            if "tasks_chat" in want:
                chat_env = {**env, "FIREBREAK_COSMOS_DATABASE": f"bench-chat-{uuid.uuid4().hex[:6]}"}
                host = HostProcess(chat_env, Path(tmp) / "chat-host.log")
                try:
                    host.wait_ready()
                    results += tasks_chat.run(load_settings(chat_env), host.base_url)
                finally:
                    host.stop()
        finally:
            stack.stop()
    return results


if __name__ == "__main__":
    sys.exit(main())
